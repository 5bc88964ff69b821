"""trecqr where pipelines call pytrec_eval or ir_measures: the behaviours issue 11 found missing.

Each test failed before the fix it names: the empty measure set, the top-level pytrec_eval
surface ir_measures reads (supported_nicknames, __version__), ir_measures' averaging over
topics without judgments, runs and qrels with no topic in common, ir_measures names in
compare, and the dict fast path (formats/_dicts.c) against the columnar path, bit for bit.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import trecqr
from conftest import data_path as shared_data
from trecqr.api.pytrec import RelevanceEvaluator


def _dicts(qrels_path, run_path):
    import pytrec_eval

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    return qrels, run


QREL = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
RUN = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {}}


def test_empty_measure_set_gives_empty_dicts():
    # before: the 30 'official' measures (trec_eval's CLI default) came back
    assert RelevanceEvaluator(QREL, set()).evaluate(RUN) == {"q1": {}, "q2": {}}
    assert RelevanceEvaluator({}, set()).evaluate(RUN) == {}
    assert RelevanceEvaluator(QREL, set()).evaluate({}) == {}


def test_top_level_has_pytrec_eval_surface():
    import pytrec_eval

    for name in ("RelevanceEvaluator", "supported_measures", "supported_nicknames",
                 "parse_run", "parse_qrel", "compute_aggregated_measure", "__version__"):
        assert hasattr(trecqr, name), name
    assert trecqr.supported_nicknames == pytrec_eval.supported_nicknames
    assert trecqr.supported_measures == pytrec_eval.supported_measures


def test_ir_measures_accepts_trecqr_as_pytrec_eval(monkeypatch):
    """ir_measures' pytrec_eval provider and parse_trec_measure run on trecqr as pytrec_eval
    (before: no supported_nicknames, and no __version__, so the provider refused it)."""
    import ir_measures
    from ir_measures.providers.pytrec_eval_provider import PytrecEvalProvider

    qrels, run = _dicts(shared_data("cast2021", "qrels-docs.2021.qrel"),
                        shared_data("cast2021", "docrun_org_manual_bm25.run"))
    measures = [ir_measures.AP, ir_measures.nDCG @ 3, ir_measures.P(rel=2) @ 5,
                ir_measures.R @ 100, ir_measures.SetF(beta=0.5)]
    real = PytrecEvalProvider().calc_aggregate(measures, qrels, run)
    nicknamed = [str(m) for m in ir_measures.util.parse_trec_measure("official")]
    monkeypatch.setitem(sys.modules, "pytrec_eval", trecqr)
    provider = PytrecEvalProvider()
    assert provider.is_available()
    assert provider.pytrec_eval is trecqr
    assert provider.calc_aggregate(measures, qrels, run) == real  # bit for bit
    assert [str(m) for m in ir_measures.util.parse_trec_measure("official")] == nicknamed
    assert len(nicknamed) == 28


def test_evaluate_averages_topics_without_judgments_as_ir_measures():
    import ir_measures

    q = {"a": {"d1": 1}, "b": {}}
    r = {"a": {"d1": 1.0}}
    res = trecqr.evaluate(q, r, ["P@5"])
    assert res.aggregate() == {"P@5": 0.1}  # before: 0.2 (b was dropped)
    assert ir_measures.calc_aggregate([ir_measures.P @ 5], q, r)[ir_measures.P @ 5] == 0.1
    assert res.per_query() == {"a": {"P@5": 0.2}, "b": {"P@5": 0.0}}


def test_evaluate_with_no_topic_in_common_returns_defaults_with_a_warning():
    import ir_measures

    q, r = {"a": {"d1": 1}}, {"x": {"d1": 1.0}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = trecqr.evaluate(q, r, ["P@5", "nDCG@3"])  # before: InputError
    assert res.aggregate() == {"P@5": 0.0, "nDCG@3": 0.0}
    agg = ir_measures.calc_aggregate([ir_measures.P @ 5, ir_measures.nDCG @ 3], q, r)
    assert agg == {ir_measures.P @ 5: 0.0, ir_measures.nDCG @ 3: 0.0}
    assert any("no topic in common" in str(w.message) for w in caught)
    with pytest.raises(trecqr.InputError):  # trec_eval names keep trec_eval's refusal
        trecqr.evaluate(q, r, ["map"])


def test_compare_takes_ir_measures_names_with_their_values():
    import ir_measures

    qrels = shared_data("cast2021", "qrels-docs.2021.qrel")
    runs = [shared_data("cast2021", "docrun_org_manual_bm25.run"),
            shared_data("cast2021", "docrun_org_manual_ance.run")]
    report = trecqr.compare(qrels, runs, ["RR@3", "nDCG@3"], permutations=100)
    for run, row in zip(runs, report.means.values()):
        expect = ir_measures.calc_aggregate(
            [ir_measures.RR @ 3, ir_measures.nDCG @ 3],
            list(ir_measures.read_trec_qrels(str(qrels))), list(ir_measures.read_trec_run(str(run))))
        # compare averages over the topics both runs have (158 judged of 239 here), which are
        # the qrels topics: ir_measures' mean over qrels topics is the same number
        assert row["RR@3"] == pytest.approx(expect[ir_measures.RR @ 3], abs=1e-12)
        assert row["nDCG@3"] == pytest.approx(expect[ir_measures.nDCG @ 3], abs=1e-12)


@pytest.mark.parametrize("measures", [["all_trec"], ["RR", "nDCG@3", "P(rel=2)@5",
                                                     "nDCG(judged_only=True)@10", "R@100",
                                                     "AP(rel=3)"]])
def test_evaluate_dict_fast_path_equals_columnar_path(measures, monkeypatch):
    """trecqr.evaluate on dicts ranks them with formats/_dicts.c: the same Results, bit for
    bit, as the columnar path, on a real run (trec_eval's topics: sorted, an empty dict a
    topic with an empty ranking, as pytrec_eval scores it; ir_measures' defaults and run-order
    means)."""
    from trecqr.engine import rankings as core_rankings

    qrels, run = _dicts(shared_data("cast2021", "qrels-docs.2021.qrel"),
                        shared_data("cast2021", "docrun_org_convdr.run"))
    run = dict(reversed(list(run.items())))  # not in strcmp order
    run["no-such-topic"] = {"d": 1.0}
    empty = next(iter(qrels))
    run[empty] = {}  # a judged topic without documents: an empty ranking, for pytrec_eval
    qrels["unjudged-topic"] = {}
    fast = trecqr.evaluate(qrels, run, measures)
    monkeypatch.setattr(core_rankings, "rank_run", None)
    slow = trecqr.evaluate(qrels, run, measures)
    assert fast.evaluation.qids == slow.evaluation.qids
    assert len(fast.evaluation.qids) == 158 and empty in fast.evaluation.qids
    assert empty not in fast.evaluation.rankings.qrels_only
    # repr: the same doubles, NaN included (pytrec_eval's iprec_at_recall_0.00 and 11pt_avg
    # of an empty ranking are NaN)
    assert {m: repr(v) for m, v in fast.aggregate().items()} == \
        {m: repr(v) for m, v in slow.aggregate().items()}
    assert {q: {m: repr(v) for m, v in vals.items()} for q, vals in fast.per_query().items()} \
        == {q: {m: repr(v) for m, v in vals.items()} for q, vals in slow.per_query().items()}
    assert fast.evaluation.rankings.qrels_only == slow.evaluation.rankings.qrels_only
    assert fast.evaluation.rankings.run_only == slow.evaluation.rankings.run_only
    assert "no-such-topic" in fast.evaluation.rankings.run_only


def test_dict_fast_path_ties_and_scores():
    """trec_eval 9.0.8 ties: scores equal as C floats tie, broken by docno descending; ints,
    floats and numpy scalars are scores; a str score or a NaN is refused."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    near = 1.0 + 1e-9  # the same C float as 1.0
    ev = RelevanceEvaluator(qrels, {"recip_rank", "P.1"})
    assert ev.evaluate({"q": {"a": 1.0, "c": near}}) == {"q": {"recip_rank": 1.0, "P_1": 1.0}}
    assert ev.evaluate({"q": {"b": 2, "c": np.float32(1.0), "a": np.float64(0.5)}}) == \
        {"q": {"recip_rank": 0.5, "P_1": 0.0}}
    with pytest.raises(TypeError, match="Unable to extract"):
        ev.evaluate({"q": {"a": "1.0"}})
    with pytest.raises(ValueError, match="NaN"):
        ev.evaluate({"q": {"a": float("nan")}})


def test_evaluate_reads_diversity_qrels_for_the_intent_aware_family():
    """Diversity qrels (topic subtopic docno grade) in the API: read as ndeval reads them when
    an intent-aware name is asked for (before: "duplicate judgment"), values pyndeval's."""
    import ir_measures

    qrels = str(shared_data("sessions", "tasks2016-qrels-suggestions.txt"))
    run = str(shared_data("sessions", "tasks2016-run-QS.txt"))
    res = trecqr.evaluate(qrels, run, ["alpha_nDCG@10", "ERR_IA@20"])
    assert res.aggregate() == {"alpha_nDCG@10": 0.5188593785076385,
                               "ERR_IA@20": 0.41804371967955795}
    assert trecqr.evaluate(qrels, run, ["alpha_nDCG@10"], diversity=True).aggregate() == \
        {"alpha_nDCG@10": 0.5188593785076385}
    q, r = {"a": {"d1": 1, "d2": 0}}, {"a": {"d1": 0.5, "d2": 1.0}}  # one subtopic per topic
    expect = ir_measures.calc_aggregate([ir_measures.alpha_nDCG @ 5], q, r)
    assert trecqr.evaluate(q, r, ["alpha_nDCG@5"]).aggregate()["alpha_nDCG@5"] == \
        expect[ir_measures.alpha_nDCG @ 5]


def test_g_integral_fast_path_equals_dense_sums(monkeypatch):
    """G's running sums from the sparse gains (integral gains: exact integers) equal trec_eval's
    dense left-to-right sums, bit for bit, on a real run; fractional gains take the dense path."""
    from trecqr.measures import normalized_gain

    qrels = str(shared_data("cast2021", "qrels-docs.2021.qrel"))
    run = str(shared_data("cast2021", "docrun_org_convdr.run"))
    measures = ["G", "G.1=2,2=5,3=9,4=20", "G.1=0.5,2=2.25,4=9.1"]  # one G column a call
    fast = [trecqr.evaluate(qrels, run, [m]) for m in measures]
    monkeypatch.setattr(normalized_gain, "_exact_integers", lambda values: False)
    dense = [trecqr.evaluate(qrels, run, [m]) for m in measures]
    for f, d in zip(fast, dense):
        assert f.per_query() == d.per_query()
        assert f.aggregate() == d.aggregate()
    assert 0.1 < fast[0].aggregate()["G"] < 0.9


def test_breakdown_and_plot_take_ir_measures_names(tmp_path, cli):
    """breakdown and plot score through score_table (diff through eval): RR@3 with ir_measures'
    per-topic values (before: "unknown measure 'RR@3'")."""
    import ir_measures
    from trecqr.report.breakdown import score_table

    qrels = str(shared_data("cast2021", "qrels-docs.2021.qrel"))
    run = str(shared_data("cast2021", "docrun_org_manual_ance.run"))
    table = score_table(qrels, [run], ["RR@3"])
    expected = {m.query_id: m.value for m in ir_measures.iter_calc(
        [ir_measures.RR @ 3], list(ir_measures.read_trec_qrels(qrels)),
        list(ir_measures.read_trec_run(run)))}
    got = table.values[0]["RR@3"]
    assert len(got) == 158 and all(got[q] == expected[q] for q in got)
    plot = tmp_path / "rr3.png"
    res = cli(["plot", "depth", qrels, run, "-m", "RR@3", "-o", str(plot)])
    assert res.exit_code == 0, res.output
    assert plot.stat().st_size > 1000


@pytest.mark.parametrize("options", [{}, {"relevance_level": 2}, {"judged_only": True},
                                     {"relevance_level": 3, "judged_only": True,
                                      "compat": "10.0"}, {"complete": True}])
def test_evaluate_c_pass_equals_columnar_path_under_options(options, monkeypatch):
    """trec_eval names on dicts in formats/_dicts.c's one pass (-l, -J, 10.0's doubles, -c):
    the Results of the columnar path, bit for bit, on a real run."""
    from trecqr.engine import rankings as core_rankings

    qrels, run = _dicts(shared_data("cast2021", "qrels-docs.2021.qrel"),
                        shared_data("cast2021", "org_convdr.trec"))
    measures = ["map", "P.5,10", "recall.100", "recip_rank", "ndcg_cut.3,10", "map_cut.10"]
    calls = []
    real = core_rankings.dict_values
    monkeypatch.setattr(core_rankings, "dict_values", lambda *a: calls.append(1) or real(*a))
    fast = trecqr.evaluate(qrels, run, measures, **options)
    assert calls == [1]
    monkeypatch.setattr(core_rankings, "rank_run", None)
    slow = trecqr.evaluate(qrels, run, measures, **options)
    assert fast.aggregate() == slow.aggregate()
    assert fast.per_query() == slow.per_query()
    assert fast.evaluation.rankings.qrels_only == slow.evaluation.rankings.qrels_only
