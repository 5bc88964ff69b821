"""The pytrec_eval drop-in on single hand-made cases, each against pytrec_eval itself: C-float
ties, measure spellings and nicknames, argument errors, the parsers and aggregation, the
module surface ir_measures reads, an empty measure set, scores of every numeric type, G's
sparse integral sums against trec_eval's dense ones, one evaluator called from several threads.
The matrix of doors and inputs is tests/api/test_oracle_matrix.py."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest
import pytrec_eval

import trecqr
from compat_cases import make_case
from conftest import TE, cast2021_dicts, data_path
from oracle_cases import dicts_of_files
from trecqr.api.pytrec import RelevanceEvaluator, normalize_measures

SEEDS = range(40)


def test_generated_cases_exercise_what_matters():
    """The matrix's seeded cases contain what the comparison is meant to cover."""
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


def test_ties_and_score_types():
    """Scores equal as C floats tie, broken by docno descending; ints, floats and numpy
    scalars are scores; a str score or a NaN is refused."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    ev = RelevanceEvaluator(qrels, {"recip_rank", "P.1"})
    assert ev.evaluate({"q": {"a": 1.0, "c": 1.0 + 1e-9}}) == \
        {"q": {"recip_rank": 1.0, "P_1": 1.0}}
    assert ev.evaluate({"q": {"b": 2, "c": np.float32(1.0), "a": np.float64(0.5)}}) == \
        {"q": {"recip_rank": 0.5, "P_1": 0.0}}
    with pytest.raises(TypeError, match="Unable to extract"):
        ev.evaluate({"q": {"a": "1.0"}})
    with pytest.raises(ValueError, match="NaN"):
        ev.evaluate({"q": {"a": float("nan")}})


def test_measure_spellings_keys_and_nicknames():
    qrels = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"a": 1}}
    run = {"q1": {"d1": 1.0, "d2": 2.0, "d4": 1.0}, "q2": {"a": 3}, "q3": {"x": 1.0}}
    for measures in (["P_5"], ["P.5"], {"P.5,10", "P_20"}, ["P.5", "P"], ["official"],
                     ["ndcg_cut.3"], ["iprec_at_recall.0.123"], ["P_5x"], ["map_cut_5"],
                     ["gm_map", "num_q", "runid", "relstring"], ["set_F.0.5"],
                     ["Rprec_mult.2"], ["P.3.7"]):
        expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
        got = trecqr.RelevanceEvaluator(qrels, measures).evaluate(run)
        assert got == expected and [list(v) for v in got.values()] == \
            [list(v) for v in expected.values()], measures
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


def test_empty_measure_set_gives_empty_dicts():
    """Not the 30 'official' measures (trec_eval's command-line default)."""
    qrels = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
    run = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}
    assert RelevanceEvaluator(qrels, set()).evaluate(run) == {"q1": {}, "q2": {}}
    assert RelevanceEvaluator({}, set()).evaluate(run) == {}
    assert RelevanceEvaluator(qrels, set()).evaluate({}) == {}


def test_parsers_aggregation_and_module_surface():
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
    for name in ("RelevanceEvaluator", "supported_measures", "supported_nicknames",
                 "parse_run", "parse_qrel", "compute_aggregated_measure", "__version__"):
        assert hasattr(trecqr, name), name
    assert trecqr.supported_measures == pytrec_eval.supported_measures
    assert trecqr.supported_nicknames == pytrec_eval.supported_nicknames


def test_ir_measures_runs_on_trecqr_as_pytrec_eval(monkeypatch):
    """ir_measures' pytrec_eval provider and parse_trec_measure run on trecqr in pytrec_eval's
    place, bit for bit (they need supported_nicknames and __version__)."""
    import ir_measures
    from ir_measures.providers.pytrec_eval_provider import PytrecEvalProvider

    qrels, run = dicts_of_files(data_path("cast2021", "qrels-docs.2021.qrel"),
                                data_path("cast2021", "docrun_org_manual_bm25.run"))
    measures = [ir_measures.AP, ir_measures.nDCG @ 3, ir_measures.P(rel=2) @ 5,
                ir_measures.R @ 100, ir_measures.SetF(beta=0.5)]
    real = PytrecEvalProvider().calc_aggregate(measures, qrels, run)
    nicknamed = [str(m) for m in ir_measures.util.parse_trec_measure("official")]
    monkeypatch.setitem(sys.modules, "pytrec_eval", trecqr)
    provider = PytrecEvalProvider()
    assert provider.is_available() and provider.pytrec_eval is trecqr
    assert provider.calc_aggregate(measures, qrels, run) == real
    assert [str(m) for m in ir_measures.util.parse_trec_measure("official")] == nicknamed
    assert len(nicknamed) == 28


def test_odd_dicts_through_evaluate_equal_pytrec_eval():
    """evaluate on dicts not in strcmp order, with a run topic the qrels lack, an empty ranking
    of a judged topic (scored, as pytrec_eval scores it: NaN for iprec_at_recall_0.00 and
    11pt_avg) and a qrels topic without judgments: every all_trec value per topic is
    pytrec_eval's (repr: the same doubles, NaN included), topics as trec_eval counts them."""
    qrels, run = dicts_of_files(data_path("cast2021", "qrels-docs.2021.qrel"),
                                data_path("cast2021", "docrun_org_convdr.run"))
    run = dict(reversed(list(run.items())))
    run["no-such-topic"] = {"d": 1.0}
    empty = next(iter(qrels))
    run = {empty: {}, **{q: d for q, d in run.items() if q != empty}}  # not first for pytrec
    run = dict(list(run.items())[1:] + [(empty, {})])
    qrels["unjudged-topic"] = {}
    res = trecqr.evaluate(qrels, run, ["all_trec"])
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"all_trec"}).evaluate(run)
    per_query = res.per_query()
    assert len(res.evaluation.qids) == 158 and empty in res.evaluation.qids
    assert empty not in res.evaluation.rankings.qrels_only
    assert "no-such-topic" in res.evaluation.rankings.run_only
    for qid, values in per_query.items():
        numbers = [k for k, v in values.items() if k in expected[qid] and isinstance(v, float)]
        assert len(numbers) > 90 and {k: repr(values[k]) for k in numbers} == \
            {k: repr(expected[qid][k]) for k in numbers}, qid


def test_g_integral_fast_path_equals_dense_sums(monkeypatch):
    """G's running sums from the sparse gains (integral gains: exact integers) equal trec_eval's
    dense left-to-right sums, bit for bit, on a real run; fractional gains take the dense path."""
    from trecqr.measures import normalized_gain

    qrels = str(data_path("cast2021", "qrels-docs.2021.qrel"))
    run = str(data_path("cast2021", "docrun_org_convdr.run"))
    measures = ["G", "G.1=2,2=5,3=9,4=20", "G.1=0.5,2=2.25,4=9.1"]  # one G column a call
    fast = [trecqr.evaluate(qrels, run, [m]) for m in measures]
    monkeypatch.setattr(normalized_gain, "_exact_integers", lambda values: False)
    dense = [trecqr.evaluate(qrels, run, [m]) for m in measures]
    for f, d in zip(fast, dense):
        assert f.per_query() == d.per_query()
        assert f.aggregate() == d.aggregate()
    assert 0.1 < fast[0].aggregate()["G"] < 0.9


def test_one_evaluator_shared_by_threads_gives_pytrec_evals_values():
    """A training loop or a thread pool may call one evaluator from several threads at once, its
    first call included: each call gives pytrec_eval's values for its own run, whatever the
    interleaving (the values are compared, not the timing)."""
    from concurrent.futures import ThreadPoolExecutor

    qrels, run = cast2021_dicts()
    topics = sorted(run)
    runs = [{q: run[q] for q in topics[i::4]} for i in range(4)] * 3
    measures = {"map", "ndcg_cut.3,10", "recip_rank", "P.5", "bpref"}
    want = [pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(r) for r in runs]
    shared = RelevanceEvaluator(qrels, measures)
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(shared.evaluate, runs)) == want
