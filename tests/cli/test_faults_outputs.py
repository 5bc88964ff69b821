"""Outputs that cannot be written are refused before the command's work, in the words the write
itself would use: every output option of every command (a file in a missing folder, under a
file, in a read-only folder; a folder where a file goes; a runs folder under a file), checked
with inputs that do not exist, so the output's line proves nothing was read first. And the
options that name an output are declared as outputs (:class:`trecqr.cli.types.OutputFile`,
:class:`~trecqr.cli.types.OutputFolder`), so a new one is checked too.
"""

from __future__ import annotations

import os
import subprocess

import click
import pytest

from conftest import run_cli
from fault_cases import AS_USER, CMD, nothing_left
from fault_cases import read_only_folder  # noqa: F401 (a fixture)

from trecqr.cli import main
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.types import OutputFile, OutputFolder

IN = "missing-input"  # never created: an output refused first shows no input was read
OUT = "<out>"

# (command, its arguments with one output OUT; the other outputs left out)
CASES = [
    ["agree", "labels", IN, IN, "-o", OUT],
    ["agree", "rankings", IN, IN, IN, "-m", "map", "-o", OUT],
    ["agree", "repro", IN, IN, "--qrels", IN, "-o", OUT],
    ["breakdown", IN, IN, "-m", "map", "-o", OUT],
    ["collapse", IN, "-o", OUT],
    ["compare", IN, IN, "-m", "map", "-o", OUT],
    ["convert", "cast", "--topics", IN, "--query-field", "raw", "--topics-out", OUT],
    ["convert", "cast", "--topics", IN, "--provenance-run", OUT],
    ["convert", "cast", "--topics", IN, "--meta-out", OUT],
    ["convert", "cast", "--topics", IN, "--qrels", IN, "--qrels-out", OUT],
    ["convert", "ikat", "--topics", IN, "--query-field", "resolved", "--topics-out", OUT],
    ["convert", "ikat", "--topics", IN, "--meta-out", OUT],
    ["convert", "ikat", "--topics", IN, "--run", IN, "--run-out", OUT],
    ["convert", "ikat", "--topics", IN, "--ptkb-run-out", OUT],
    ["convert", "irds", "no-such/dataset", "--topics-out", OUT],
    ["convert", "irds", "no-such/dataset", "--qrels-out", OUT],
    ["convert", "qrecc", "--qrels", IN, "--qrels-out", OUT],
    ["convert", "qrecc", "--turns", IN, "--topics-out", OUT],
    ["convert", "qrecc", "--scai-run", IN, "--run-out", OUT],
    ["convert", "rewrites", IN, OUT],
    ["convert", "sessions", "aol", IN, "--topics", OUT],
    ["convert", "sessions", "aol", IN, "--qrels", OUT],
    ["convert", "sessions", "marco", IN, "--scores", IN, "--run", OUT],
    ["convert", "sessions", "trec-session", IN, "--results-out", OUT],
    ["convert", "topics", IN, OUT],
    ["convert", "topiocqa", "--qrels", IN, "--qrels-out", OUT],
    ["convert", "topiocqa", "--turns", IN, "--topics-out", OUT],
    ["cqr", "--qrels", IN, "--index", IN, "--topics", IN, "-o", OUT],
    ["cqr", "--qrels", IN, "--index", IN, "--topics", IN, "--html", OUT],
    ["diff", IN, IN, "-o", OUT],
    ["eval", IN, IN, "-o", OUT],
    ["fuse", IN, IN, "-o", OUT],
    ["gen", IN, IN, "--per-instance", OUT],
    ["plot", "depth", IN, IN, "-m", "map", "-o", OUT + ".png"],
    ["plot", "diff", IN, IN, IN, "-m", "map", "-o", OUT + ".png"],
    ["plot", "dist", IN, IN, "-m", "map", "-o", OUT + ".png"],
    ["report", IN, IN, "-m", "map", "-o", OUT],
    ["search", IN, IN, "-o", OUT],
    ["suggest", "aol", IN, "--per-instance", OUT],
]


def _filled(args, out: str) -> list:
    return [a.replace(OUT, out) for a in args]


def _output_at(args) -> int:
    """Where the case's output is in its arguments."""
    return next(i for i, a in enumerate(args) if OUT in a)


def _output_name(args) -> str:
    """The case's output file name, ``out`` with its extension."""
    return args[_output_at(args)].replace(OUT, "out")


def _commands(group=main, path=()):
    ctx = click.Context(main)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, (*path, name))
        else:
            yield (*path, name), cmd


def _names_an_output(param) -> bool:
    """Outputs are named so: ``-o``/``--output``, ``--*-out`` (dest ``*_out``), ``OUT``
    arguments, ``--html``, ``--per-instance``, ``--runs-dir``."""
    return param.name in ("output", "output_path", "out_path", "out_dir", "html_page",
                          "per_instance", "runs_dir") or param.name.endswith("_out")


def test_every_output_option_is_declared_an_output():
    declared, named = set(), set()
    for path, cmd in _commands():
        for p in cmd.params:
            key = (" ".join(path), p.name)
            if isinstance(p.type, (OutputFile, OutputFolder)):
                declared.add(key)
            if _names_an_output(p):
                named.add(key)
    # `index -o` is checked by the index's own start (an existing folder must be an index),
    # before the collection is read: trecqr/retrieval/indexdir.py's atomic_index_dir
    assert declared == named - {("index", "out_dir")}
    commands = dict(_commands())
    for command, name in declared - {("cqr", "runs_dir")}:  # every file output has a case
        words = command.split()
        param = next(p for p in commands[tuple(words)].params if p.name == name)
        assert any(args[:len(words)] == words and (isinstance(param, click.Argument)
                                                   or args[_output_at(args) - 1] in param.opts)
                   for args in CASES), (command, name)


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a[:3]))
def test_output_in_a_missing_folder_is_refused_first(tmp_path, args):
    res = run_cli(_filled(args, "no/out"), cwd=tmp_path)
    target = os.path.join(os.path.realpath(tmp_path), "no", _output_name(args))
    assert res.exit_code == 2, res.stderr
    assert res.stderr == f"{target}: cannot write: No such file or directory\n"
    assert res.stdout == ""
    nothing_left(tmp_path)


def test_output_faults_in_the_writers_words(tmp_path):
    (tmp_path / "afile").write_text("")
    (tmp_path / "folder").mkdir()
    real = os.path.realpath(tmp_path)
    for out, line in [("afile/x", f"{real}/afile/x: cannot write: Not a directory"),
                      ("folder", f"{real}/folder: cannot write: is a folder"),
                      ("", "'': cannot write: an empty file name; give the file's path")]:
        res = run_cli(["eval", IN, IN, "-o", out], cwd=tmp_path)
        assert (res.exit_code, res.stderr) == (2, line + "\n"), out
    cqr = ["cqr", "--qrels", IN, "--index", IN, "--topics", IN]
    for extra, line in [(["--runs-dir", "afile/runs"], f"{real}/afile/runs: cannot create "
                                                       "folder: Not a directory"),
                        (["--runs-dir", "afile"], f"{real}/afile: not a folder")]:
        res = run_cli(cqr + extra, cwd=tmp_path)
        assert (res.exit_code, res.stderr) == (2, line + "\n"), extra
    nothing_left(tmp_path, keep={"afile", "folder"})


def test_a_report_inside_the_runs_folder_it_makes_is_not_refused(tmp_path):
    # cqr makes --runs-dir (and its parents) before writing -o into it: the input is the fault
    res = run_cli(["cqr", "--qrels", IN, "--index", IN, "--topics", IN, "--runs-dir",
                   "new/runs", "-o", "new/runs/report.txt"], cwd=tmp_path)
    assert res.exit_code == 2 and "cannot write" not in res.stderr, res.stderr
    nothing_left(tmp_path)


def test_output_in_a_read_only_folder_is_refused_first(read_only_folder):
    ro = read_only_folder
    cqr = ["cqr", "--qrels", IN, "--index", IN, "--topics", IN, "--runs-dir"]
    for args, line in [(["eval", IN, IN, "-o", ro / "x"],
                        f"{ro}/x: cannot write: Permission denied"),
                       (cqr + [ro / "runs"], f"{ro}/runs: cannot create folder: Permission denied"),
                       (cqr + [ro], f"{ro}: cannot write into this folder (Permission denied)")]:
        res = subprocess.run(AS_USER + CMD + [str(a) for a in args], cwd=ro.parent,
                             capture_output=True, timeout=120)
        assert (res.returncode, res.stderr.decode()) == (2, line + "\n"), args
    assert os.listdir(ro) == []


def test_the_check_comes_before_the_work(tmp_path):
    worked = []

    @click.command()
    @click.option("-o", "output", type=OutputFile())
    def command(output):
        run_guarded(lambda: worked.append(output))

    res = click.testing.CliRunner().invoke(command, ["-o", str(tmp_path / "no" / "x")])
    assert (res.exit_code, worked) == (2, [])
    res = click.testing.CliRunner().invoke(command, ["-o", str(tmp_path / "x")])
    assert (res.exit_code, worked) == (0, [str(tmp_path / "x")])


def test_access_saying_no_is_checked_by_making_a_file(tmp_path, monkeypatch):
    """access(2) can say no where a file can be made (NFS, some ACLs): a folder is refused only
    when making a file in it fails, and the probe leaves nothing."""
    from trecqr.runtime import output_paths

    monkeypatch.setattr(output_paths.os, "access", lambda *args, **kwargs: False)
    output_paths.check_outputs([tmp_path / "x.txt"], [tmp_path / "runs"])
    assert list(tmp_path.iterdir()) == []
