"""What the wider fuzz campaign (benchmarks/fuzz.py) found, each ending now in a value equal to
the reference's or in one line on stderr with exit 2:

- a JSON topic id holding a lone surrogate (``"\\ud800"``) given to ``search``;
- ``fuse --method probfuse --params n_segments=0`` (or -1), and SlideFuse's window;
- an iKAT run whose score is a JSON integer too large for a double (``convert ikat``,
  ``validate ikat``);
- a relevance grade of 2**31 with an ndcg measure (trec_eval lists one gain entry per grade);
- a UTF-8 byte-order mark in a qrels or run file (trec_eval reads it into the first topic id);
- ``-m utility.1,2`` (pytrec_eval prints a line per topic and gives 0);
- a run dict whose scores are all lists (``{"q": {"d": [1.0]}}``; fuzz_api seed 31): numpy read
  them as rows, ``evaluate`` scored them and ``fuse`` stopped with numpy's ValueError;
- ``report -m P.99999999999999999999`` (campaign seed 3121): per-topic values near 1e-17, whose
  plot axis rounded every tick to 0 and divided by zero (an internal error).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, data_path, run_cli

FX = ROOT / "fixtures" / "cast2021"
TE = ("trec_eval-test",)


def _one_line_error(res) -> str:
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.exit_code == 2, (res.exit_code, res.stderr)
    assert len(lines) == 1, res.stderr
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
    return lines[0]


# ---------------------------------------------------------------------------- search
def test_search_refuses_a_lone_surrogate_in_a_topic(tmp_path):
    """A topic id or query that no UTF-8 run (nor Lucene) can hold is named in one line, and
    no run is written."""
    idx = tmp_path / "idx"
    res = run_cli(["index", ROOT / "fixtures" / "cast2021-demo" / "collection.jsonl", "-o", idx,
                   "--quiet"])
    assert res.exit_code == 0, res.stderr
    topics = tmp_path / "topics.jsonl"
    topics.write_text('{"qid": "\\ud800", "query": "rhymed prose"}\n'
                      '{"qid": "2", "query": "rhymed prose"}\n')
    out = tmp_path / "s.run"
    line = _one_line_error(run_cli(["search", idx, topics, "-k", "3", "-o", out, "--quiet"]))
    assert "topic id '\\ud800' is not valid Unicode" in line
    assert not out.exists()
    # in a query (an utterance): Lucene's Java strings cannot hold it (an internal error),
    # bm25s dropped it silently; every backend now says so before searching
    topics.write_text('{"qid": "1", "query": "rhymed \\ud800 prose"}\n')
    line = _one_line_error(run_cli(["search", idx, topics, "-k", "3", "-o", out, "--quiet"]))
    assert line == (f"{topics}: query of topic '1' 'rhymed \\ud800 prose' is not valid Unicode "
                    "(it holds a lone surrogate, a JSON \\ud800-\\udfff escape); correct it")
    assert not out.exists()


# ---------------------------------------------------------------------------- fuse
@pytest.mark.parametrize("value", ["-1", "0", "1.5", "nan", "1000001"])
def test_probfuse_n_segments_out_of_range(tmp_path, value):
    """n_segments counts segments: outside 1..1,000,000 (or not whole) is one line."""
    line = _one_line_error(run_cli(
        ["fuse", FX / "manual_bm25.run", FX / "convdr.run", "-o", tmp_path / "f.run",
         "--method", "probfuse", "--params", f"n_segments={value}",
         "--train-qrels", FX / "qrels.txt"]))
    assert line == ("trecqr: probfuse: n_segments must be a whole number from 1 to 1,000,000, "
                    f"got {float(value) if '.' in value or value == 'nan' else int(value)!r}")
    assert not (tmp_path / "f.run").exists()


@pytest.mark.parametrize("value", ["-1", "2.5"])
def test_slidefuse_window_out_of_range(tmp_path, value):
    line = _one_line_error(run_cli(
        ["fuse", FX / "manual_bm25.run", FX / "convdr.run", "-o", tmp_path / "f.run",
         "--method", "slidefuse", "--params", f"w={value}", "--train-qrels", FX / "qrels.txt"]))
    assert line.startswith("trecqr: slidefuse: w must be a whole number >= 0, got ")


def test_slidefuse_window_wider_than_the_runs_is_ranx_value_and_fast():
    """A window wider than every ranking covers the whole ranking: the same scores as ranx's
    slidefuse with that window, with work that does not grow with w (before: 81 s for
    w = 100,000, and memory for 2w floats)."""
    ranx = pytest.importorskip("ranx")
    from ranx_fusion_oracle import ranx_run
    from test_fuse_ranx import assert_same

    from trecqr.formats.run import read_run
    from trecqr.fusion import fuse

    runs = [read_run(FX / "manual_bm25.run"), read_run(FX / "convdr.run")]
    probs = [[0.5, 0.25, 0.125, 0.1] + [0.01] * 96, [0.4, 0.3, 0.2] + [0.02] * 97]
    for w in (3, 1000, 10 ** 9):
        mine = fuse(runs, method="slidefuse", norm="min-max", params={"w": w, "probs": probs})
        expected = ranx.fuse([ranx_run(r) for r in runs], norm="min-max", method="slidefuse",
                             params={"w": w, "probs": [np.array(p) for p in probs]})
        assert_same(expected, mine)


# ---------------------------------------------------------------------------- iKAT
def _huge_score_run(tmp_path):
    doc = json.loads(data_path("ikat", "2024_sample_run.json").read_text())
    text = json.dumps(doc)
    text = re.sub(r'"score": [-0-9.eE+]+', '"score": 1' + "0" * 400, text, count=1)
    path = tmp_path / "huge.json"
    path.write_text(text)
    return path


def test_ikat_score_too_large_for_a_double(tmp_path):
    """A JSON integer score of 401 digits is not a score (the official validator holds a
    double): validate and convert both say so in one line, its digits cut short."""
    run = _huge_score_run(tmp_path)
    for args in (["validate", "ikat", run],
                 ["convert", "ikat", "--run", run, "--run-out", tmp_path / "r.run"]):
        line = _one_line_error(run_cli(args))
        assert "score 100000000000... (401 digits) is too large for a double (the validator's " \
            "score type)" in line
    assert not (tmp_path / "r.run").exists()


# ---------------------------------------------------------------------------- gains
_TREE = os.path.dirname(os.path.dirname(__import__("trecqr").__file__))  # the trecqr tested


def _eval_subprocess(tmp_path, qrels_text, run_text, measures, timeout=120):
    qrels, run = tmp_path / "q.txt", tmp_path / "r.run"
    qrels.write_text(qrels_text)
    run.write_text(run_text)
    args = [sys.executable, "-m", "trecqr", "eval", "-q"]
    for m in measures:
        args += ["-m", m]
    return subprocess.run(args + [str(qrels), str(run)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, PYTHONPATH=_TREE))


RUN2 = ("1 Q0 d2 1 3 r\n1 Q0 d1 2 2 r\n1 Q0 d3 3 1 r\n"
        "2 Q0 d4 1 2 r\n2 Q0 d5 2 1 r\n")


def test_huge_grade_with_ndcg_ends():
    """A grade of 2**31 (trec_eval 9.0.8 crashes; pytrec_eval runs for hours) is scored in
    seconds: the gain table holds the judged grades, not one entry per level below them."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        res = _eval_subprocess(Path(tmp), "1 0 d1 2147483648\n1 0 d2 1\n1 0 d3 0\n2 0 d4 3\n",
                               "1 Q0 d2 1 3 r\n1 Q0 d1 2 2 r\n1 Q0 d3 3 1 r\n2 Q0 d4 1 1 r\n",
                               ["ndcg", "ndcg_cut.10"], timeout=60)
    assert res.returncode == 0, res.stderr
    assert "ndcg                  \tall\t0.8155" in res.stdout


def test_big_grades_equal_trec_eval(tmp_path):
    """Grades of 100,000 and 70,000, with and without fractional gain parameters (the
    fractional ones sort the whole list as glibc's merge sort does): trec_eval 9.0.8's own
    output, byte for byte (recorded from a trec_eval 9.0.8 binary built from its source; it takes
    90 s there)."""
    res = _eval_subprocess(tmp_path, "1 0 d1 100000\n1 0 d2 1\n1 0 d3 0\n2 0 d4 3\n2 0 d5 70000\n",
                           RUN2, ["ndcg", "ndcg_cut.1", "ndcg.1=0.5,3=70001"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == (
        "ndcg_1=0.5,3=70001    \t1\t0.6309\n"
        "ndcg_cut_1            \t1\t0.0000\n"
        "ndcg_1=0.5,3=70001    \t2\t1.0000\n"
        "ndcg_cut_1            \t2\t0.0000\n"
        "ndcg_1=0.5,3=70001    \tall\t0.8155\n"
        "ndcg_cut_1            \tall\t0.0000\n")


def test_big_grades_equal_pytrec_eval():
    """The CAsT 2021 judgments with some grades raised to 3,000 and 777: every ndcg value
    equals pytrec_eval's bit for bit."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    import trecqr

    qrels: dict = {}
    for n, line in enumerate((FX / "qrels.txt").read_text().splitlines()):
        q, _, d, g = line.split()
        g = int(g)
        if g > 0 and n % 37 == 0:
            g = 3000
        elif g > 0 and n % 53 == 0:
            g = 777
        qrels.setdefault(q, {})[d] = g
    run: dict = {}
    for line in (FX / "manual_bm25.run").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    measures = {"ndcg", "ndcg_cut.3,10", "ndcg_rel", "Rndcg"}  # (gain parameters abort it)
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert trecqr.RelevanceEvaluator(qrels, measures).evaluate(run) == expected


# ---------------------------------------------------------------------------- BOM
@pytest.mark.parametrize("which", ["qrels", "run", "run.gz", "stdin"])
def test_byte_order_mark_in_a_trec_eval_file_is_refused(tmp_path, which):
    """trec_eval reads a BOM into the first topic id (``\\ufeff106_1``, a topic of its own:
    map 0.2053 where the file without it gives 0.2047); trecqr refuses it in one line that
    says how to remove it (docs/fidelity.md)."""
    import gzip

    bom = b"\xef\xbb\xbf"
    qrels, run = FX / "qrels.txt", FX / "manual_bm25.run"
    stdin = None
    if which == "qrels":
        qrels = tmp_path / "q.txt"
        qrels.write_bytes(bom + (FX / "qrels.txt").read_bytes())
    elif which == "run":
        run = tmp_path / "r.run"
        run.write_bytes(bom + (FX / "manual_bm25.run").read_bytes())
    elif which == "run.gz":
        run = tmp_path / "r.run.gz"
        run.write_bytes(gzip.compress(bom + (FX / "manual_bm25.run").read_bytes()))
    else:
        stdin, run = bom + (FX / "manual_bm25.run").read_bytes(), "-"
    line = _one_line_error(run_cli(["eval", "-m", "map", qrels, run], input=stdin))
    assert line.endswith(":1: starts with a UTF-8 byte-order mark, which trec_eval reads as "
                         "part of the first topic id; save the file without it "
                         "(sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)")


# ---------------------------------------------------------------------------- pytrec_eval
def test_utility_with_two_coefficients():
    """pytrec_eval prints "improper number of coefficients" once per topic and returns 0:
    trecqr refuses it, in one line."""
    line = _one_line_error(run_cli(["eval", "-m", "utility.1,2",
                                    data_path(*TE, "qrels.test"),
                                    data_path(*TE, "results.test")]))
    assert line == "trecqr: measure 'utility': improper number of coefficients (need 4, got 2)"


# ---------------------------------------------------------------------------- cqr
def test_refused_cqr_with_html_leaves_no_temporary_folder(tmp_path, monkeypatch):
    """``cqr --html`` refused for an option (``--model`` without ``--backend dense``) used to
    leave its ``trecqr-cqr-html-*`` folder of runs in TMPDIR."""
    import tempfile

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)
    demo = ROOT / "fixtures" / "cast2021-demo"
    line = _one_line_error(run_cli(
        ["cqr", "--qrels", demo / "qrels.txt", "--collection", demo / "collection.jsonl",
         "--topics", demo / "topics-raw.tsv", "--topics", demo / "topics-manual.tsv",
         "--html", tmp_path / "c.html", "--model", "x", "--quiet"]))
    assert line == "trecqr: --model is for --backend dense"
    assert list(tmp.iterdir()) == []
    assert not (tmp_path / "c.html").exists()


def test_search_min_results_that_leaves_every_turn_out(tmp_path):
    """``search --min-results`` above ``-k`` wrote an empty run and said "run of 239 topics
    written", exit 0; now one line, and no file."""
    idx = tmp_path / "idx"
    assert run_cli(["index", ROOT / "fixtures" / "cast2021-demo" / "collection.jsonl", "-o",
                    idx, "--quiet"]).exit_code == 0
    out = tmp_path / "s.run"
    line = _one_line_error(run_cli(
        ["search", idx, ROOT / "fixtures" / "cast2021-demo" / "topics-raw.tsv", "-k", "5",
         "--min-results", "9223372036854775808", "-o", out, "--quiet"]))
    assert line == ("trecqr: --min-results 9223372036854775808 leaves out every turn (a turn "
                    "has at most -k 5 results): nothing to write; lower --min-results")
    assert not out.exists()


def test_search_where_no_topic_retrieves_anything(tmp_path):
    """Topics none of whose words are in the index wrote an empty run, exit 0 ("run of 2
    topics written"); now one line, and no file."""
    idx = tmp_path / "idx"
    assert run_cli(["index", ROOT / "fixtures" / "cast2021-demo" / "collection.jsonl", "-o",
                    idx, "--quiet"]).exit_code == 0
    topics = tmp_path / "t.tsv"
    topics.write_text("1\tzzzqqq\n2\tqqqzzz xxyyzz\n")
    out = tmp_path / "s.run"
    line = _one_line_error(run_cli(["search", idx, topics, "-o", out, "--quiet"]))
    assert line == (f"trecqr: none of the 2 topics retrieved anything from {idx}: nothing to "
                    "write; check that the topics go with this index")
    assert not out.exists()


def test_no_summary_without_per_topic_rows_is_refused(tmp_path):
    """eval -n without -q: trec_eval prints nothing and exits 0; trecqr refuses in one line
    (an empty output from a non-empty input), and writes no -o file."""
    out = tmp_path / "o.txt"
    res = run_cli(["eval", "-n", "-m", "map", "-o", str(out), str(FX / "qrels.txt"),
                   str(FX / "manual_bm25.run")])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [
        "trecqr: -n leaves out the summary rows, and without -q there is nothing else to "
        "print: add -q for the per-topic rows, or leave -n out"]
    assert not out.exists()


# ------------------------------------------------------------------------- run dicts
@pytest.mark.parametrize("score", [[1.0], np.array([0.5]), [], {"a": 1}])
def test_a_list_where_a_score_goes_is_refused(score):
    import trecqr
    from trecqr.errors import InputError

    run = {"q": {"d1": score, "d2": score}}
    expected = rf"^<run dict>: query 'q' doc 'd1': score {re.escape(repr(score))} is not a number$"
    for call in (lambda: trecqr.evaluate({"q": {"d1": 1}}, run, ["map"]),
                 lambda: trecqr.fuse([run, {"q": {"d1": 1.0}}])):
        with pytest.raises(InputError, match=expected):
            call()


@pytest.mark.parametrize("max_docs", [None, 10])  # the C pass over dicts, and the numpy route
def test_text_scores_in_a_dict_are_refused_as_pytrec_eval_refuses_them(max_docs):
    """A dict's scores are numbers (any type float() takes but text): ``"1.5"`` was read by
    numpy's parser, where the same dict's text grade was refused and the drop-in raised
    pytrec_eval's TypeError. A DataFrame's text column keeps its own documented rule."""
    from decimal import Decimal

    import trecqr
    from trecqr.errors import InputError

    qrels = {"q": {"d1": 1}}
    with pytest.raises(InputError, match=r"^<run dict>: query 'q' doc 'd1': score '1.5' is "
                                         r"text, not a number: a dict's scores are numbers"):
        trecqr.evaluate(qrels, {"q": {"d1": "1.5", "d2": 2.0}}, ["map"], max_docs=max_docs)
    numbers = {"q": {"d1": Decimal("0.5"), "d2": np.float32(2.0), "d3": True}}
    assert trecqr.evaluate(qrels, numbers, ["map"], max_docs=max_docs).aggregate() == {
        "map": 1 / 3}


def test_report_of_values_near_zero_draws_its_axes(tmp_path):
    """P at a cutoff of 2**63 - 1 gives per-topic values near 1e-17: the page is written."""
    page = tmp_path / "r.html"
    res = run_cli(["report", FX / "qrels.txt", FX / "manual_bm25.run", FX / "convdr.run", "-m",
                   "P.99999999999999999999", "--permutations", "20", "--bootstrap", "20",
                   "-o", page])
    assert res.exit_code == 0, res.stderr
    assert "internal error" not in res.stderr and page.stat().st_size > 1000
