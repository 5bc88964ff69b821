"""trec_eval's own conformance suite, byte for byte, for trec_eval 9.0.8 and 10.0.

Commands from ../shared/data/README.md; 10.0 expected files at the top level of
trec_eval-test/, 9.0.8 ones in trec_eval-test/v9.0.8/.
"""

from __future__ import annotations

import pytest

from conftest import TE, run_cli

CASES = [
    ("out.test", ["qrels.test", "results.test"]),
    ("out.test.a", ["-m", "all_trec", "qrels.test", "results.test"]),
    ("out.test.aq", ["-m", "all_trec", "-q", "qrels.test", "results.test"]),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"]),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"]),
    ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level",
                      "results.test"]),
    ("out.test.meas_params", [
        "-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
        "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
        "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "qrels.test",
        "results.test"]),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test",
                        "prefs.results.test"]),
    ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test",
                              "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123",
                           "results.test"]),
    ("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test",
                      "results.test"]),
]
V10_ONLY = [
    ("out.test", ["qrels.test.with-comments", "results.test"]),
    ("out.comment.test", ["qrels.comment.test", "results.comment.test"]),
]


def _check(expected_file, args, compat):
    result = run_cli(["eval", "--quiet", "--compat", compat, *args], cwd=TE)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected_file.read_text()


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
def test_trec_eval_908(name, args):
    _check(TE / "v9.0.8" / name, args, "9.0.8")


@pytest.mark.parametrize("name,args", CASES + V10_ONLY,
                         ids=[c[0] for c in CASES] + ["with-comments", "comment.test"])
def test_trec_eval_10(name, args):
    _check(TE / name, args, "10.0")


def test_908_rejects_comment_lines():
    """9.0.8 has no comment lines: '# comment here' is a malformed 3-field qrels line."""
    result = run_cli(["eval", "--quiet", "qrels.test.with-comments", "results.test"], cwd=TE)
    assert result.exit_code == 2
    assert "qrels.test.with-comments:1:" in result.stderr
