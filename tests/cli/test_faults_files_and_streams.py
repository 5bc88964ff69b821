"""Missing, unreadable, unwritable and special files and streams: missing files, folders,
unreadable and read-only places, endless devices, FIFOs with and without a writer, stdin,
closed and full stdout, non-UTF-8 file names (as trec_eval takes them). And what a failed or
finished command leaves behind: no partial, temporary or clobbered output, no runs folder, no
index folder, nothing under $HOME, no CI virtual environment unless asked.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from conftest import DATA, ROOT, TE, run_cli
from fault_cases import (FX, Q, R, CMD, trecqr, one_line, nothing_left, AS_USER, RUN_LINES,
                        bad_file, edited, eval_error, CAST)
from fault_cases import built_index, qrels, read_only_folder, run  # noqa: F401 (fixtures)


def test_index_into_a_folder_without_write_permission(read_only_folder):
    ro = read_only_folder
    res = subprocess.run(AS_USER + CMD + ["index", str(FX / "cast2021-demo/collection.jsonl"),
                                          "-o", str(ro / "idx"), "--quiet"],
                         capture_output=True, timeout=300)
    line = one_line(res)
    assert line == f"{ro}: cannot write into this folder (Permission denied)", line
    assert os.listdir(ro) == []


def test_non_utf8_file_names_work_as_trec_evals_do(tmp_path):
    q = os.fsencode(tmp_path) + b"/q\xff\xfe.txt"
    r = os.fsencode(tmp_path) + b"/r\xe9.run"
    with open(q, "wb") as fh:
        fh.write(Q.read_bytes())
    with open(r, "wb") as fh:
        fh.write(R.read_bytes())
    res = trecqr(["eval", "-m", "map", "-m", "P.5", q, r, "--quiet"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == trecqr(["eval", "-m", "map", "-m", "P.5", Q, R, "--quiet"]).stdout
    # breakdown / compare name runs after their files
    res = trecqr(["compare", q, r, r, "-m", "map", "--permutations", "10", "--bootstrap", "10"])
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    # an error names the file with the bytes it was given
    bad = os.fsencode(tmp_path) + b"/bad\xff.run"
    with open(bad, "wb") as fh:
        fh.write(b"1 Q0 d 1\n")
    res = trecqr(["eval", q, bad])
    assert res.returncode == 2
    assert res.stderr == bad + b":1: expected at least 6 fields (qid Q0 docno rank score " \
                              b"runid), found 4\n"


def test_non_utf8_name_printed_on_stdout_under_a_strict_utf8_locale(tmp_path):
    s = DATA / "sessions"
    ctx = os.fsencode(tmp_path) + b"/x\xff\xfe.ctx"
    with open(ctx, "wb") as fh:
        fh.write((s / "hredqs-test.ctx").read_bytes())
    gen = tmp_path / "g.tsv"
    gen.write_text("".join(f"hredqs-{i}\tsome query\n" for i in range(1, 6)))
    res = trecqr(["suggest", "hredqs", ctx, "--rnk", s / "hredqs-test.rnk", "--generated", gen,
                  "--metric", "per"], env={"PYTHONIOENCODING": "utf-8"})  # errors=strict
    assert res.returncode == 0, res.stderr
    assert b"# sessions: " + ctx + b"\n" in res.stdout


def test_closed_stdout(tmp_path):
    res = subprocess.run(CMD + ["eval", "-m", "map", str(Q), str(R)], capture_output=False,
                         stdout=None, stderr=subprocess.PIPE, timeout=120,
                         preexec_fn=lambda: os.close(1))
    assert res.returncode == 2
    assert res.stderr == b"<stdout>: cannot write: stdout is closed (>&-)\n"
    out = tmp_path / "out.txt"
    res = subprocess.run(CMD + ["eval", "-m", "map", "-o", str(out), str(Q), str(R)],
                         stderr=subprocess.PIPE, timeout=120, preexec_fn=lambda: os.close(1))
    assert res.returncode == 0, res.stderr
    assert out.read_text() == "map                   \tall\t0.1785\n"


def test_full_stdout():
    with open("/dev/full", "wb") as full:
        res = subprocess.run(CMD + ["eval", "-m", "map", str(Q), str(R)], stdout=full,
                             stderr=subprocess.PIPE, timeout=120)
    assert res.returncode == 2
    assert res.stderr == b"<stdout>: cannot write: No space left on device\n"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_devices_are_refused(device):
    # refused before reading: reading it would never end (the timeout is the net)
    line = one_line(trecqr(["eval", Q, device], timeout=300))
    assert line == f"{device}: a device that never ends; give a file"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_stdin_stops_at_its_first_chunk(device):
    with open(device, "rb") as fh:
        res = trecqr(["eval", Q, "-"], stdin=fh, timeout=60)
    assert one_line(res) == "<stdin>: binary data (NUL bytes), not text"


def test_stdin_and_fifo_with_a_writer(tmp_path):
    want = trecqr(["eval", "-m", "map", Q, R, "--quiet"]).stdout
    res = trecqr(["eval", "-m", "map", Q, "-", "--quiet"], input=R.read_bytes())
    assert res.returncode == 0 and res.stdout == want
    for which in ("run", "qrels"):
        fifo = tmp_path / f"{which}.fifo"
        os.mkfifo(fifo)
        src = R if which == "run" else Q

        def write(fifo=fifo, src=src):
            # a blocking open: the writer comes exactly when trecqr opens the FIFO to read
            with open(fifo, "wb") as fh:
                fh.write(src.read_bytes())
        t = threading.Thread(target=write, daemon=True)
        t.start()
        args = [Q, fifo] if which == "run" else [fifo, R]
        res = trecqr(["eval", "-m", "map", *args, "--quiet"], timeout=60)
        if t.is_alive():  # trecqr never opened it: a reader of ours lets the writer go
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        t.join()
        assert res.returncode == 0, res.stderr
        assert res.stdout == want


def test_fifo_without_a_writer_is_refused(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    line = one_line(trecqr(["eval", Q, fifo], env={"TRECQR_FIFO_WAIT": "1"}, timeout=300))
    assert line == f"{fifo}: a FIFO with no writer after 1 s (TRECQR_FIFO_WAIT)"


def test_failed_ir_datasets_lookup_creates_nothing_under_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    e = dict(os.environ)
    e.pop("IR_DATASETS_HOME", None)
    e.update(env)
    for dataset in ("no-such/dataset", "msmarco-passage/dev/small"):
        res = subprocess.run(CMD + ["convert", "irds", dataset, "--topics-out",
                                    str(tmp_path / "t.tsv")], env=e, capture_output=True,
                             timeout=300)
        line = one_line(res)
        assert dataset in line
        assert sorted(os.listdir(home)) == []
    assert not (tmp_path / "t.tsv").exists()
    # a documents look-up writes irds_version.txt into the dataset's new folder (fuzz seed 23)
    res = subprocess.run(CMD + ["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--topics",
                                FX / "cast2021-demo/topics-raw.tsv", "--collection",
                                "irds:msmarco-passage", "--runs-dir", tmp_path / "runs",
                                "--quiet"], env=e, capture_output=True, timeout=300)
    assert "the documents files are not available locally" in one_line(res)
    assert sorted(os.listdir(home)) == []
    nothing_left(tmp_path, keep={"home"})


def test_outputs_of_a_failed_command_are_removed(tmp_path):
    from trecqr.formats.writer import atomic_write_text
    from trecqr.runtime.transactions import new_output_dir, output_transaction

    old = tmp_path / "old.txt"
    old.write_text("old\n")
    with pytest.raises(RuntimeError), output_transaction():
        atomic_write_text(tmp_path / "a.txt", "a\n")
        atomic_write_text(old, "new\n")
        d = new_output_dir(tmp_path / "runs" / "x")
        atomic_write_text(Path(d) / "r.run", "r\n")
        raise RuntimeError("late failure")
    assert sorted(os.listdir(tmp_path)) == ["old.txt"]
    assert old.read_text() == "new\n"  # replaced whole: the new content, never a part
    with output_transaction():
        atomic_write_text(tmp_path / "a.txt", "a\n")
    assert (tmp_path / "a.txt").read_text() == "a\n"


def test_convert_cast_leaves_nothing_when_its_qrels_are_bad(tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("garbage line\n")
    line = one_line(trecqr(["convert", "cast", "--topics",
                            DATA / "cast2021/2021_manual_evaluation_topics_v1.0.json",
                            "--query-field", "manual", "--topics-out", tmp_path / "c.tsv",
                            "--meta-out", tmp_path / "meta.jsonl", "--qrels", bad,
                            "--qrels-out", tmp_path / "c.qrels"]))
    assert line == f"{bad}:1: expected 4 fields (qid iter docno grade), found 2"
    nothing_left(tmp_path, keep={"bad.qrels"})


def test_failed_cqr_removes_its_runs_folder(tmp_path, built_index):
    bad = tmp_path / "bad.tsv"
    bad.write_text("x\n")
    line = one_line(trecqr(["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--index",
                            built_index, "--topics", FX / "cast2021-demo/topics-raw.tsv",
                            "--topics", bad, "--runs-dir", tmp_path / "runs" / "sub",
                            "--quiet"]))
    assert line == f"{bad}:1: expected qid<TAB>query"
    nothing_left(tmp_path, keep={"bad.tsv"})


def test_plots_and_cqr_runs_named_after_non_utf8_files(tmp_path, built_index):
    run = os.fsencode(tmp_path) + b"/x\xffc.run"
    with open(run, "wb") as fh:
        fh.write((FX / "cast2021/convdr.run").read_bytes())
    for kind, runs in (("dist", [run]), ("depth", [run]),
                       ("diff", [FX / "cast2021/manual_bm25.run", run])):
        out = tmp_path / f"{kind}.png"
        res = trecqr(["plot", kind, FX / "cast2021/qrels.txt", *runs, "-m", "map", "-o", out])
        assert res.returncode == 0, res.stderr
        assert out.read_bytes()[:4] == b"\x89PNG"
    topics = os.fsencode(tmp_path) + b"/t\xff.tsv"
    with open(topics, "wb") as fh:
        fh.write((FX / "cast2021-demo/topics-raw.tsv").read_bytes())
    res = trecqr(["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--index", built_index,
                  "--topics", topics, "-k", "10", "--runs-dir", tmp_path / "runs", "--quiet"])
    assert res.returncode == 0, res.stderr
    written = os.listdir(os.fsencode(tmp_path / "runs"))
    assert written == [b"t\xff.run"]
    first = open(os.path.join(os.fsencode(tmp_path / "runs"), written[0]), "rb").readline()
    assert first.split()[1] == b"Q0" and first.rstrip().endswith("t\ufffd".encode())


def test_failed_index_removes_the_folders_it_made(tmp_path):
    coll = tmp_path / "c.jsonl"
    coll.write_text("[]\n")
    line = one_line(trecqr(["index", coll, "-o", tmp_path / "no" / "such" / "idx", "--quiet"]))
    assert line == f"{coll}:1: expected a JSON object per line"
    nothing_left(tmp_path, keep={"c.jsonl"})


def test_diff_against_an_evaluation_of_non_utf8_files(tmp_path):
    q = os.fsencode(tmp_path) + b"/x\xffq.test"
    with open(q, "wb") as fh:
        fh.write(b"# a comment\n" + Q.read_bytes())  # 9.0.8 reads '#' as a qrels line
    res = trecqr(["diff", TE / "out.test", "--qrels", q, "--run", R, "--eval-args", "-m map"])
    one_line(res)
    assert res.stderr == b"trecqr: " + q + b":1: expected 4 fields (qid iter docno grade), " \
                                           b"found 3\n"


def test_diff_of_gzip_data_on_stdin(tmp_path):
    """fuzz seed 25: `diff -` read stdin as text, and gzip bytes there were an internal error."""
    import gzip

    out = tmp_path / "a.txt"
    out.write_bytes(trecqr(["eval", "-m", "map", FX / "cast2021/qrels.txt",
                            FX / "cast2021/convdr.run"]).stdout)
    line = one_line(trecqr(["diff", "-", out, "--ignore", "runid"],
                           input=gzip.compress(out.read_bytes())))
    assert line == "<stdin>: not UTF-8 text (invalid start byte)"
    res = trecqr(["diff", "-", out], input=out.read_bytes())
    assert (res.returncode, res.stdout.splitlines()[-1]) == (0, b"agree")


def test_missing_file(tmp_path, qrels):
    missing = tmp_path / "nope.run"
    assert eval_error([qrels, missing]) == f"{missing}: no such file"


def test_directory(tmp_path, run):
    assert eval_error([tmp_path, run]) == f"{tmp_path}: is a directory, not a file"


def test_unreadable_file(tmp_path, qrels, monkeypatch):
    """Root reads any file (CI runs as root), so the denial is simulated at open() and at
    the C scanner's open(2)."""
    import builtins

    locked = bad_file(tmp_path, "locked", RUN_LINES)
    real_open = builtins.open

    def deny(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    from trecqr.formats import _scan

    real_scan = _scan.scan_run

    def denied_scan(path, *args):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scan(path, *args)

    monkeypatch.setattr(_scan, "scan_run", denied_scan)
    assert eval_error([qrels, locked]) == f"{locked}: permission denied"


def test_both_inputs_from_stdin():
    assert eval_error(["-", "-"], input=b"1 0 a 1\n") == (
        "trecqr: QRELS and RUN cannot both be '-' (stdin)")


def test_failure_leaves_no_output_file(tmp_path, qrels):
    bad = bad_file(tmp_path, "run", edited(RUN_LINES, 3, lambda f: f[:5]))
    result = run_cli(["eval", "-o", "out.txt", qrels, bad], cwd=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_failure_after_reading_leaves_existing_file_untouched(tmp_path, qrels):
    """The no-common-topic error comes after both files are parsed: still nothing written."""
    other = bad_file(tmp_path, "other", ["9" + line for line in RUN_LINES])
    (tmp_path / "out.txt").write_text("previous results\n")
    result = run_cli(["eval", "-o", "out.txt", qrels, other], cwd=tmp_path)
    assert result.exit_code == 2
    assert (tmp_path / "out.txt").read_text() == "previous results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "out.txt"]


def test_output_into_missing_directory(tmp_path, qrels, run):
    target = tmp_path / "no" / "out.txt"
    assert eval_error(["-o", target, qrels, run]) == (
        f"{target}: cannot write: No such file or directory")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's folder moved to a private one, so what cqr leaves there can be listed (other
    processes share /tmp)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


def _cqr_args(*extra):
    return ["cqr", "--qrels", CAST / "qrels.txt", "--collection", CAST / "collection.jsonl",
            "--topics", CAST / "topics-raw.tsv", *extra]


def test_cqr_python_removes_its_runs(private_tmp, tmp_path):
    from trecqr.workflows.cqr import cqr

    report = cqr(CAST / "qrels.txt", [CAST / "topics-raw.tsv"],
                 collection=CAST / "collection.jsonl")
    assert round(report.rows[0].scores["NDCG@3"], 4) == 0.4713
    assert report.runs_dir is None and report.rows[0].run is None
    assert "runs not kept" in report.table()
    assert list(private_tmp.iterdir()) == []  # no trecqr-cqr-runs-*, no trecqr-cqr-index-*
    kept = cqr(CAST / "qrels.txt", [CAST / "topics-raw.tsv"],
               collection=CAST / "collection.jsonl", runs_dir=tmp_path / "runs")
    assert kept.rows[0].run == str(tmp_path / "runs" / "topics-raw.run")
    assert (tmp_path / "runs" / "topics-raw.run").stat().st_size > 0
    assert kept.rows[0].scores == report.rows[0].scores
    assert list(private_tmp.iterdir()) == []


def test_cqr_command_removes_its_runs(private_tmp, tmp_path):
    """A real process (its own temporary folder, TMPDIR), as a user runs it."""
    env = dict(os.environ, TMPDIR=str(private_tmp))
    proc = subprocess.run([sys.executable, "-m", "trecqr", *map(str, _cqr_args())],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^topics-raw\s+0\.4435\s+0\.4813\s+0\.4713\s+0\.7448\s+0\.8661\s+239",
                     proc.stdout, re.M)
    assert "runs not kept" in proc.stdout
    assert list(private_tmp.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tmp"]  # nothing in the cwd either
    result = run_cli(_cqr_args("--runs-dir", tmp_path / "runs"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "runs" / "topics-raw.run").is_file()
    assert result.stderr.endswith(f"trecqr: runs kept in {tmp_path / 'runs'}\n")


def _fake_python(bin_dir: Path) -> None:
    """python3 that makes a 'virtual environment' (an activate script putting bin_dir first) and
    python that fails, as a failed pip install would: .ci/run stops at its first install."""
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(
        "#!/usr/bin/env bash\n"
        '[ "$1 $2" = "-m venv" ] || exit 1\n'
        f'mkdir -p "$3/bin" && echo \'PATH="{bin_dir}:$PATH"\' > "$3/bin/activate"\n')
    (bin_dir / "python").write_text("#!/usr/bin/env bash\necho 'pip: no network' >&2; exit 1\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)


@pytest.mark.parametrize("keep", [False, True])
def test_ci_script_removes_its_venv_unless_asked_to_keep_it(tmp_path, keep):
    _fake_python(tmp_path / "bin")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}", TMPDIR=str(tmp))
    env.pop("TRECQR_CI_VENV", None)
    if keep:
        env["TRECQR_CI_VENV"] = str(tmp_path / "kept")
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "pip: no network" in proc.stderr
    assert list(tmp.iterdir()) == []
    assert (tmp_path / "kept" / "bin" / "activate").is_file() == keep
