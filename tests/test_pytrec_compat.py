"""trecqr.RelevanceEvaluator against pytrec_eval, and ``trecqr eval`` against the pytrec_eval
oracle (tests/oracles/pytrec_engine.py).

Every measure pytrec_eval supports is compared (minus KNOWN_EXCEPTIONS), with exact float
equality, per topic, on seeded random cases (compat_cases.py) and trec_eval's test data.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import pytrec_eval

import trecqr
from compat_cases import make_case, same, write_case
from conftest import TE, run_cli
from oracles.pytrec_engine import pytrec_eval_output
from trecqr.api.pytrec import normalize_measures

# measures pytrec_eval supports that trecqr does not reproduce (none today)
KNOWN_EXCEPTIONS: set = set()
MEASURES = set(pytrec_eval.supported_measures) - KNOWN_EXCEPTIONS
SEEDS = range(40)


def assert_same_results(expected: dict, got: dict):
    assert list(got) == list(expected)  # same topics, in the run's order
    for qid, values in expected.items():
        assert list(got[qid]) == list(values), qid  # same keys, in trec_eval's table order
        wrong = {k: (v, got[qid][k]) for k, v in values.items() if not same(v, got[qid][k])}
        assert not wrong, (qid, wrong)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_cases_all_measures(seed):
    qrels, run = make_case(seed)
    for level in (1, 2):
        for judged in (False, True):
            expected = pytrec_eval.RelevanceEvaluator(qrels, MEASURES, relevance_level=level,
                                                      judged_docs_only_flag=judged)
            got = trecqr.RelevanceEvaluator(qrels, MEASURES, relevance_level=level,
                                            judged_docs_only_flag=judged)
            assert_same_results(expected.evaluate(run), got.evaluate(run))


def test_generated_cases_exercise_what_matters():
    """The cases contain what the comparison is meant to cover."""
    cases = [make_case(s) for s in SEEDS]
    assert any(set(q) - set(r) for q, r in cases)  # judged topics without results
    assert any(set(r) - set(q) for q, r in cases)  # result topics without judgments
    assert any(any(not d for d in r.values()) for q, r in cases)  # empty rankings
    assert any(any(g < 0 for d in q.values() for g in d.values()) for q, r in cases)
    scores = [s for q, r in cases for d in r.values() for s in d.values()]
    assert any(abs(a - b) < 1e-8 and a != b for a, b in zip(sorted(scores), sorted(scores)[1:]))


def test_float32_ties_and_docno_order():
    """Scores 1.0 and 1.0+1e-9 tie as C floats: broken by docno descending ("b" before "a"),
    where a float64 ranking would put "a" first."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0 + 1e-9, "b": 1.0}}
    got = trecqr.RelevanceEvaluator(qrels, {"recip_rank", "P_1"}).evaluate(run)
    assert got == {"q": {"recip_rank": 0.5, "P_1": 0.0}}
    assert got == pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "P_1"}).evaluate(run)


def test_measure_spellings_keys_and_nicknames():
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"a": 1}}
    run = {"q1": {"d1": 1.0, "d2": 2.0, "d4": 1.0}, "q2": {"a": 3}, "q3": {"x": 1.0}}
    for measures in (["P_5"], ["P.5"], {"P.5,10", "P_20"}, ["P.5", "P"], ["official"],
                     ["ndcg_cut.3"], ["iprec_at_recall.0.123"], ["P_5x"], ["map_cut_5"],
                     ["gm_map", "num_q", "runid", "relstring"], ["set_F.0.5"],
                     ["Rprec_mult.2"], ["P.3.7"]):
        expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert_same_results(expected, trecqr.RelevanceEvaluator(qrels, measures).evaluate(run))
    assert normalize_measures({"P.5,10", "P_20"}) == {"P.10,20,5"}
    assert normalize_measures({"P", "P.5"}) == {"P.5"}
    got = trecqr.RelevanceEvaluator(qrels, ["gm_map", "num_q", "runid"]).evaluate(run)["q1"]
    # d2 (grade 0), then the tie d4, d1 by docno descending: AP = (1/3) / 2
    assert got == {"runid": 0.0, "num_q": 1.0, "gm_map": float(np.log((1 / 3) / 2))}


def test_errors_and_edge_arguments():
    qrels = {"q": {"a": 1, "b": 2}, "empty": {}}
    run = {"q": {"a": 1.0, "b": 0.5}}
    with pytest.raises(ValueError, match="unsupported measure bogus"):
        trecqr.RelevanceEvaluator(qrels, ["bogus"])
    with pytest.raises(ValueError, match="unsupported measure"):
        trecqr.RelevanceEvaluator(qrels, ["prefs"])  # a nickname of unsupported measures
    with pytest.raises(TypeError, match="positive"):
        trecqr.RelevanceEvaluator(qrels, ["map"], relevance_level=0)
    with pytest.raises(TypeError):
        trecqr.RelevanceEvaluator({"q": {"a": 1.5}}, ["map"])
    assert trecqr.RelevanceEvaluator(qrels, ["map"]).evaluate({}) == {}
    assert trecqr.RelevanceEvaluator(qrels, ["map"]).evaluate({"zz": {"a": 1.0}}) == {}
    # a level read as a C int into a long: -1 is 2**32 - 1, so nothing is relevant
    for level in (-1, 2, True):
        expected = pytrec_eval.RelevanceEvaluator(qrels, ["map", "num_rel"],
                                                  relevance_level=level).evaluate(run)
        assert trecqr.RelevanceEvaluator(qrels, ["map", "num_rel"],
                                         relevance_level=level).evaluate(run) == expected
    assert expected["q"]["num_rel"] == 2.0  # level True == 1
    ints = {"q": {"a": 3, "b": 2}}
    assert trecqr.RelevanceEvaluator(qrels, ["map"]).evaluate(ints) == \
        pytrec_eval.RelevanceEvaluator(qrels, ["map"]).evaluate(ints)


def test_parsers_and_aggregation():
    with open(TE / "results.test") as f:
        lines = f.readlines()
    assert trecqr.parse_run(io.StringIO("".join(lines))) == pytrec_eval.parse_run(lines)
    with open(TE / "qrels.test") as f:
        qlines = f.readlines()
    qrels = trecqr.parse_qrel(qlines)
    assert qrels == pytrec_eval.parse_qrel(qlines)
    assert type(qrels) is type(pytrec_eval.parse_qrel(qlines))
    values = list(np.random.default_rng(0).random(1001) * 1e3)
    for measure in ("map", "num_ret", "gm_map"):
        agg = trecqr.compute_aggregated_measure(measure, values)
        assert agg == pytrec_eval.compute_aggregated_measure(measure, values)
    assert trecqr.supported_measures == pytrec_eval.supported_measures


def test_trec_eval_test_data_all_measures():
    with open(TE / "qrels.test") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(TE / "results.test") as f:
        run = pytrec_eval.parse_run(f)
    for level in (1, 2):
        expected = pytrec_eval.RelevanceEvaluator(qrels, MEASURES, relevance_level=level)
        got = trecqr.RelevanceEvaluator(qrels, MEASURES, relevance_level=level)
        assert_same_results(expected.evaluate(run), got.evaluate(run))


# --------------------------------------------------------------------------- CLI engine
def _supported_rows(text: str) -> list:
    """Rows of measures pytrec_eval supports (all of all_trec today)."""
    def base(name):
        return next((m for m in sorted(MEASURES, key=len, reverse=True)
                     if name == m or name.startswith(m + "_")), None)
    return [line for line in text.splitlines() if base(line.split("\t")[0].strip())]


CLI_OPTIONS = [["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"],
               ["-q", "-J", "-m", "all_trec"], ["-q", "-l", "2", "-m", "all_trec"],
               ["-q", "-M", "5", "-m", "all_trec"], ["-m", "official", "-m", "P.3,7"],
               ["-q", "-Z", TE / "zscores_file", "-m", "official"]]


@pytest.mark.parametrize("options", CLI_OPTIONS)
def test_cli_engine_on_trec_eval_test_data(options):
    """trecqr eval's output equals the pytrec_eval oracle's (its values, trecqr's printing)."""
    native = run_cli(["eval", "--quiet", *options, TE / "qrels.test", TE / "results.test"])
    via = pytrec_eval_output(TE / "qrels.test", TE / "results.test", options)
    assert native.exit_code == 0, native.stderr
    assert len(_supported_rows(native.stdout)) > 100 or "all_trec" not in options
    assert _supported_rows(via) == _supported_rows(native.stdout)
    assert via == native.stdout


@pytest.mark.parametrize("seed", [3, 7, 11])
def test_cli_engine_on_generated_case(seed, tmp_path):
    qrels, run = make_case(seed)
    qpath, rpath = write_case(qrels, {q: d for q, d in run.items() if d}, tmp_path)
    for options in (["-q", "-m", "all_trec"], ["-q", "-c", "-J", "-M", "20", "-m", "all_trec"]):
        native = run_cli(["eval", "--quiet", *options, qpath, rpath])
        assert native.exit_code == 0, native.stderr
        assert pytrec_eval_output(qpath, rpath, options) == native.stdout
