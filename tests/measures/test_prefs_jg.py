"""Preference (-R prefs, -R qrels_prefs) and judgment-group (-R qrels_jg) evaluation.

Conformance rows against trec_eval's own expected outputs (9.0.8 and 10.0), small cases whose
values are worked out by hand below (and were checked against both trec_eval builds), and bad
inputs.
"""

from __future__ import annotations

import pytest

from conftest import TE, run_cli

# The conformance outputs (out.test.prefs, .qrels_prefs, .qrels_jg) are compared whole in
# test_conformance.py.


def test_prefs_with_comments_10():
    """10.0 skips '#' lines in prefs and qrels_jg files: same output as without them."""
    result = run_cli(["eval", "--quiet", "--compat", "10.0", "-m", "all_prefs", "-q", "-R",
                      "prefs", "prefs.comment.test", "prefs.results.test"], cwd=TE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (TE / "out.test.prefs").read_text()
    result = run_cli(["eval", "--quiet", "--compat", "10.0", "-m", "qrels_jg", "-q", "-R",
                      "qrels_jg", "qrels.comments.123", "results.test"], cwd=TE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (TE / "out.test.qrels_jg").read_text()


# Topic A, jg u1 (one sub-group): d1 (2) > d2 (1) > d3 (0): 3 preferences; jg u2: d2 > d1.
#   Run order of the judged documents: d3, d1, d2 (x is unjudged), so docid ranks d3=0, d1=1,
#   d2=2: u1 fulfils only d1 > d2 (1 of 3), u2 fulfils nothing (0 of 1).
#   prefs_simp = 1/4; prefs_avgjg = (1/3 + 0) / 2 = 1/6; prefs_pair: pairs (d3,d1) 0/1,
#   (d3,d2) 0/1, (d1,d2) 1/2 (u1 for, u2 against) -> 0.5 / 3 = 1/6.
# Topic B: e1 (1) > e2 (0), e3 (0); only e1 retrieved: both preferences are implied and
#   fulfilled: prefs_simp = 1, prefs_simp_ret = 0 (no pair of retrieved documents).
#   prefs_avgjg_Rnonrel (R=1 < N=2) keeps the first nonrelevant document (e2, docid 1) and,
#   as trec_eval does, pairs it with every class including its own: e1>e2 fulfilled,
#   (e2,e2) and (e3,e2) not -> 1/3.
# Topic C: sub-groups a (2) > b (1) and b (1) > c (0): the transitive a > c makes 3
#   preferences; the run ranks c, b, a: none fulfilled.
PREFS = """A u1 s d1 2
A u1 s d2 1
A u1 s d3 0
A u2 s d2 1
A u2 s d1 0
B u1 s e1 1
B u1 s e2 0
B u1 s e3 0
C g s1 a 2
C g s1 b 1
C g s2 b 1
C g s2 c 0
"""
PREFS_RUN = """A Q0 d3 1 3 r1
A Q0 x 2 2.5 r1
A Q0 d1 3 2 r1
A Q0 d2 4 1 r1
B Q0 e1 1 5 r1
B Q0 u 2 4 r1
C Q0 c 1 3 r1
C Q0 b 2 2 r1
C Q0 a 3 1 r1
"""


def _write(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / name).write_text(text)


def _table(stdout: str) -> dict:
    out = {}
    for line in stdout.splitlines():
        name, qid, value = line.split("\t")
        out[(name.strip(), qid)] = value
    return out


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_prefs_by_hand(tmp_path, compat):
    _write(tmp_path, prefs=PREFS, run=PREFS_RUN)
    result = run_cli(["eval", "--quiet", "--compat", compat, "-q", "-m", "all_prefs", "-R",
                      "prefs", "prefs", "run"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    v = _table(result.stdout)
    assert v[("prefs_num_prefs_poss", "A")] == "4"
    assert v[("prefs_num_prefs_ful", "A")] == "1"
    assert v[("prefs_simp", "A")] == "0.2500"
    assert v[("prefs_avgjg", "A")] == "0.1667"
    assert v[("prefs_pair", "A")] == "0.1667"
    assert v[("prefs_simp", "B")] == "1.0000"
    assert v[("prefs_simp_ret", "B")] == "0.0000"
    assert v[("prefs_num_prefs_ful_ret", "B")] == "0"
    assert v[("prefs_avgjg_Rnonrel", "B")] == "0.3333"
    assert v[("prefs_avgjg_Rnonrel_ret", "B")] == "1.0000"
    assert v[("prefs_num_prefs_poss", "C")] == "3"
    assert v[("prefs_num_prefs_ful", "C")] == "0"
    assert v[("num_q", "all")] == "3"
    assert v[("prefs_num_prefs_poss", "all")] == "9"  # counts are summed
    assert v[("prefs_simp", "all")] == "0.4167"     # (1/4 + 1 + 0) / 3
    assert v[("prefs_pair", "all")] == "0.3889"     # (1/6 + 1 + 0) / 3


def test_prefs_ties_break_on_docno_ascending(tmp_path):
    """form_prefs_counts breaks score ties by docno ascending (form_res_rels: descending)."""
    _write(tmp_path, prefs="q j s b 1\nq j s a 0\n", run="q Q0 a 1 1.0 r\nq Q0 b 2 1.0 r\n")
    result = run_cli(["eval", "--quiet", "-q", "-m", "prefs_simp", "-R", "prefs", "prefs",
                      "run"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert _table(result.stdout)[("prefs_simp", "q")] == "0.0000"  # a ranked first


def test_prefs_levels_are_floats_in_908(tmp_path):
    """9.0.8 keeps rel_level in a C float: 0.1 and 0.100000001 are one level, no preference."""
    _write(tmp_path, prefs="q j s a 0.1\nq j s b 0.100000001\n", run="q Q0 a 1 1.0 r\n")
    out = {}
    for compat in ("9.0.8", "10.0"):
        result = run_cli(["eval", "--quiet", "--compat", compat, "-q", "-m",
                          "prefs_num_prefs_poss", "-R", "prefs", "prefs", "run"], cwd=tmp_path)
        assert result.exit_code == 0, result.stderr
        out[compat] = _table(result.stdout)[("prefs_num_prefs_poss", "q")]
    assert out == {"9.0.8": "0", "10.0": "1"}


def test_qrels_prefs_reads_iter_as_judgment_group(tmp_path):
    """Two iter values are two jgs: prefs_avgjg averages them, prefs_simp pools them."""
    _write(tmp_path, qrels="q 0 a 1\nq 0 b 0\nq 1 a 0\nq 1 b 1\nq 1 c 0\n",
           run="q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 c 3 1 r\n")
    result = run_cli(["eval", "--quiet", "-q", "-m", "prefs_simp", "-m", "prefs_avgjg",
                      "-R", "qrels_prefs", "qrels", "run"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    v = _table(result.stdout)
    assert v[("prefs_simp", "q")] == "0.6667"   # jg 0: a>b yes; jg 1: b>a no, b>c yes
    assert v[("prefs_avgjg", "q")] == "0.7500"  # (1/1 + 1/2) / 2


# Topic T, jg u1: d1 (1), d3 (2) relevant, d4 (0); jg u2: d2 (1). Run d1 d2 d3 d4.
#   AP(u1) = (1/1 + 2/3) / 2 = 0.8333, AP(u2) = (1/2) / 1 = 0.5 -> map_avgjg 0.6667.
#   P_5: 2/5 and 1/5 -> 0.3. Rprec_mult 1.0: u1 cutoff 2 -> 1/2, u2 cutoff 1 -> 0 -> 0.25.
#   With -J each jg keeps only its judged documents: AP 1 and 1; P_2 = (2/2 + 1/2) / 2.
QRELS_JG = "T u1 d1 1\nT u1 d3 2\nT u1 d4 0\nT u2 d2 1\n"
JG_RUN = "T Q0 d1 1 4 r2\nT Q0 d2 2 3 r2\nT Q0 d3 3 2 r2\nT Q0 d4 4 1 r2\n"


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_qrels_jg_by_hand(tmp_path, compat):
    _write(tmp_path, qrels=QRELS_JG, run=JG_RUN)
    args = ["eval", "--quiet", "--compat", compat, "-q", "-m", "map_avgjg", "-m",
            "P_avgjg.1,2,5", "-m", "Rprec_mult_avgjg.1.0", "-R", "qrels_jg", "qrels", "run"]
    result = run_cli(args, cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    v = _table(result.stdout)
    assert v[("map_avgjg", "T")] == "0.6667"
    assert v[("P_avgjg_1", "T")] == "0.5000"
    assert v[("P_avgjg_5", "T")] == "0.3000"
    assert v[("Rprec_mult_avgjg_1.00", "T")] == "0.2500"
    result = run_cli(args[:4] + ["-J"] + args[4:], cwd=tmp_path)
    v = _table(result.stdout)
    assert v[("map_avgjg", "T")] == "1.0000"
    assert v[("P_avgjg_2", "T")] == "0.7500"


def test_missing_topic_908_skips_10_fails_without_c(tmp_path):
    """A judged topic missing from the run: 9.0.8 skips it; 10.0 stops unless -c."""
    _write(tmp_path, prefs=PREFS, run="A Q0 d1 1 1 r\n")
    base = ["eval", "--quiet", "-m", "prefs_simp", "-m", "num_q", "-R", "prefs", "prefs", "run"]
    result = run_cli(base[:1] + ["--compat", "9.0.8"] + base[1:], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert _table(result.stdout)[("num_q", "all")] == "1"
    result = run_cli(base[:1] + ["--compat", "10.0"] + base[1:], cwd=tmp_path)
    assert result.exit_code == 2
    assert "topic 'B'" in result.stderr and "-c" in result.stderr
    result = run_cli(base[:1] + ["--compat", "10.0", "-c", "-q"] + base[1:], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    v = _table(result.stdout)
    assert v[("num_q", "all")] == "3"
    assert v[("prefs_simp", "B")] == "0.0000"  # scored on trec_eval's empty bogus ranking
    assert v[("prefs_simp", "A")] == "0.5000"  # d1 retrieved: d1>d2, d1>d3 yes, d2>d3, d2>d1 no


@pytest.mark.parametrize("fmt,text,where,message", [
    ("prefs", "q j s a 1\nq j s b\n", "rel:2:", "expected 5 fields"),
    ("prefs", "q j s a 1\nq j s b 1 extra\n", "rel:2:", "expected 5 fields"),
    ("prefs", "q j s a high\n", "rel:1:", "rel_level 'high' is not a number"),
    ("qrels_prefs", "q 0 a 1\nq 0 b\n", "rel:2:", "expected 4 fields"),
    ("qrels_jg", "q u a 1\nq u a 0\n", "rel:2:", "duplicate judgment"),
    ("qrels_jg", "q u a x\n", "rel:1:", "grade 'x' is not an integer"),
    ("prefs", "q j s a 1\nq j s a 0\n", "rel:", "two different rel_levels"),
    ("prefs", "q j s1 a 2\nq j s1 b 1\nq j s2 b 2\nq j s2 a 1\n", "rel:",
     "inconsistent preferences"),
    ("prefs", "q j s1 a 1\nq j s2 a 0\nq j s2 b 1\n", "rel:", "both 0 and non-0"),
])
def test_bad_relevance_files(tmp_path, fmt, text, where, message):
    _write(tmp_path, rel=text, run="q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    m = "qrels_jg" if fmt == "qrels_jg" else "all_prefs"
    result = run_cli(["eval", "--quiet", "-m", m, "-R", fmt, "rel", "run"], cwd=tmp_path)
    assert result.exit_code == 2
    error = [line for line in result.stderr.splitlines() if message in line]
    assert error and error[0].startswith(where), result.stderr


def test_908_reads_hash_lines_as_data(tmp_path):
    _write(tmp_path, rel="# a comment\nq j s a 1\n", run="q Q0 a 1 2 r\n")
    result = run_cli(["eval", "--quiet", "-m", "all_prefs", "-R", "prefs", "rel", "run"],
                     cwd=tmp_path)
    assert result.exit_code == 2
    assert "rel:1: expected 5 fields" in result.stderr
    result = run_cli(["eval", "--quiet", "--compat", "10.0", "-m", "all_prefs", "-R", "prefs",
                      "rel", "run"], cwd=tmp_path)
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("args,message", [
    (["-R", "nope", "qrels.test", "results.test"], "unknown relevance format 'nope'"),
    (["-m", "map", "-R", "prefs", "prefs.test", "prefs.results.test"],
     "measure 'map' cannot be computed from -R prefs"),
    (["-R", "prefs", "prefs.test", "prefs.results.test"],  # official measures need qrels
     "cannot be computed from -R prefs"),
    (["-m", "prefs_simp", "qrels.test", "results.test"],
     "measure 'prefs_simp' cannot be computed from -R qrels"),
    (["-m", "map_avgjg", "-R", "qrels_prefs", "qrels.test", "results.test"],
     "needs -R qrels_jg"),
])
def test_measure_and_format_mismatch(args, message):
    result = run_cli(["eval", "--quiet", *args], cwd=TE)
    assert result.exit_code == 2
    assert message in result.stderr


def test_api_rejects_prefs_measure_on_qrels():
    from trecqr import evaluate
    from trecqr.errors import UsageError

    with pytest.raises(UsageError, match="-R prefs"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["prefs_simp"])
