"""What a new user met on a fresh clone (issue 15), each pinned: cqr leaves no runs behind unless
asked to keep them, the dense bar counts encoded passages, writing commands say what they wrote,
counts are pluralised."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, run_cli

CAST = ROOT / "fixtures" / "cast2021-demo"


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


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _bar_counts(text):
    return [int(m) for m in re.findall(r"encoding passages: (\d+) passages", text)]


def test_dense_bar_counts_encoded_passages(tmp_path, monkeypatch):
    """The bar moves when passages are encoded (not read) and ends at the number encoded; it is
    silent when stderr is not a terminal and under show_progress=False (--quiet). The CAsT demo
    collection's 234 passages cut to their first 8 words: the bar counts passages, not words,
    and encoding short texts takes a second where the whole passages take about 20."""
    from trecqr.retrieval import dense

    collection = tmp_path / "short.jsonl"
    with open(CAST / "collection.jsonl", encoding="utf-8") as fh:
        collection.write_text("".join(json.dumps({"id": d["id"], "contents": " ".join(
            d["contents"].split()[:8])}) + "\n" for d in map(json.loads, fh)), encoding="utf-8")
    encoded = []
    real = dense._encode

    def counting(model, texts, *a, **kw):
        encoded.append(len(texts))
        return real(model, texts, *a, **kw)

    monkeypatch.setattr(dense, "_encode", counting)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    manifest = dense.build_index(collection, tmp_path / "idx", chunk_size=100)
    shown = _bar_counts(term.getvalue().replace("\r", "\n"))
    assert encoded == [100, 100, 34] and manifest["documents"] == 234
    assert shown[-1] == 234 == sum(encoded)
    assert set(shown) <= {0, 100, 200, 234}  # never ahead of the encoder
    assert "Batches" not in term.getvalue()

    index = dense.load_index(tmp_path / "idx")
    term2 = _Terminal()
    monkeypatch.setattr(sys, "stderr", term2)
    run = dense.search(tmp_path / "idx", {"1": "breast cancer", "2": "lung cancer"}, k=5,
                       show_progress=True, index=index)
    assert len(run.qid) == 10 and "encoding queries: 100%" in term2.getvalue()
    assert re.search(r"encoding queries: 100%\S* 2/2 ", term2.getvalue().replace("\r", "\n"))

    term3 = _Terminal()  # --quiet: silent on a terminal too
    monkeypatch.setattr(sys, "stderr", term3)
    dense.search(tmp_path / "idx", {"1": "breast cancer"}, k=5, show_progress=False, index=index)
    assert term3.getvalue() == ""

    pipe = io.StringIO()  # not a terminal: silent even when asked for progress
    monkeypatch.setattr(sys, "stderr", pipe)
    dense.search(tmp_path / "idx", {"1": "breast cancer"}, k=5, show_progress=True, index=index)
    assert pipe.getvalue() == ""


FIX = ROOT / "fixtures" / "cast2021"


def test_counts_are_pluralised():
    result = run_cli(["compare", FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run",
                      "-m", "map", "--permutations", "100", "--bootstrap", "100"])
    assert result.exit_code == 0, result.output
    assert "family: 1 run vs baseline manual_bm25.run x 1 measure = 1 t-test; " in result.stdout
    bd = run_cli(["breakdown", FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run",
                  "-m", "map", "--max-depth", "2"])
    assert bd.exit_code == 0, bd.output
    assert "2 groups x 1 run vs baseline manual_bm25.run x 1 measure = 2 t-tests" in bd.stdout


def test_writing_commands_say_what_they_wrote(tmp_path):
    png = tmp_path / "d.png"
    result = run_cli(["plot", "diff", FIX / "qrels.txt", FIX / "manual_bm25.run",
                      FIX / "convdr.run", "-m", "map", "-o", png])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"trecqr: plot written to {png}\n" and png.stat().st_size > 0
    topics = tmp_path / "t.tsv"
    topics.write_text("1_2\tq one\n1_3\tq two\n")
    out = tmp_path / "o.jsonl"
    result = run_cli(["convert", "topics", topics, out, "--qid-style", "QReCC-Test"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"trecqr: 2 topics written to {out}\n"
    assert out.read_text().splitlines()[0] == '{"qid": "QReCC-Test_1_2", "query": "q one"}'


def test_help_names_what_the_options_do():
    plot = run_cli(["plot", "-h"]).stdout
    assert "PNG, SVG or PDF" in " ".join(plot.split())
    from trecqr.cli.convert_files import topics_command

    style = next(p.help for p in topics_command.params if p.name == "qid_style")
    for name, example in (("QReCC-Test", "QReCC-Test_31_4"), ("topiocqa-dev", "topiocqa-dev_31_4"),
                          ("TopiOCQA-Dev", "TopiOCQA-Dev_31_4"), ("dev-dash", "dev-31-4")):
        assert f"{name} ({example})" in style
    cqr = " ".join(run_cli(["cqr", "-h"]).stdout.split())
    assert "--qrels FILE Qrels to score every row against" in cqr
    assert "(default: a temporary folder, removed at exit)" in cqr


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


def test_reports_written_to_a_file_say_so(tmp_path):
    runs = [FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run", "-m", "map"]
    for cmd, what in (("compare", "comparison"), ("breakdown", "breakdown")):
        out = tmp_path / f"{cmd}.txt"
        result = run_cli([cmd, *runs, "-o", out])
        assert result.exit_code == 0, result.output
        assert result.stdout == "" and out.stat().st_size > 0
        assert result.stderr.endswith(f"trecqr: {what} written to {out}\n")
    assert run_cli(["eval", "--quiet", *runs[:2], "-m", "map", "-o", tmp_path / "e.txt"]).exit_code == 0
    result = run_cli(["diff", tmp_path / "e.txt", tmp_path / "e.txt", "-o", tmp_path / "d.txt"])
    assert result.exit_code == 0 and result.stderr == f"trecqr: diff written to {tmp_path / 'd.txt'}\n"
    topics = tmp_path / "t.tsv"
    topics.write_text("106_1\tbreast cancer\n")
    result = run_cli(["cqr", "--qrels", CAST / "qrels.txt", "--collection", CAST / "collection.jsonl",
                      "--topics", topics, "-o", tmp_path / "r.json", "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"trecqr: report written to {tmp_path / 'r.json'}\n"
    result = run_cli(["search", tmp_path / "nothing", topics, "-o", tmp_path / "x.run"])
    assert result.exit_code == 2 and "written to" not in result.stderr  # only on success
