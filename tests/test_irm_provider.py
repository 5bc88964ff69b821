"""trecqr as an ir_measures provider (trecqr.register_ir_measures): first in ir_measures'
default pipeline, it computes every ad hoc measure of ir_measures' registry, and
``ir_measures.calc_aggregate`` / ``iter_calc`` give what ir_measures' own pipeline gives, on
TREC CAsT 2021's five organiser runs (document level) and the official qrels."""

from __future__ import annotations

import ir_measures
import pytest

import trecqr
from conftest import data_path
from test_irm_registry import AD_HOC, _renumbered

RUNS = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
        "org_manual_bm25"]
MEASURES = [ir_measures.parse_measure(n) for names in AD_HOC.values() for n in names]


@pytest.fixture(scope="module")
def pipelines():
    """(ir_measures' own default pipeline, the pipeline with trecqr first). ranx's provider is
    left out of the oracle: it joins the pipeline only where ranx is installed (the test extra
    has it), and in a shuffled run, after the fusion tests had run ranx in the same process,
    the pipeline's nDCG@3 on org_manual_bm25 came out 0.3207 against trec_eval's 0.3974;
    without ranx's provider it is trec_eval's whatever ran before."""
    own = ir_measures.providers.FallbackProvider(
        [p for p in ir_measures.DefaultPipeline.providers if p.NAME not in ("trecqr", "ranx")])
    provider = trecqr.register_ir_measures()
    yield own, provider
    if provider in ir_measures.DefaultPipeline.providers:
        ir_measures.DefaultPipeline.providers.remove(provider)


def test_registering_puts_trecqr_first_once(pipelines):
    _, provider = pipelines
    assert trecqr.register_ir_measures() is provider
    names = [p.NAME for p in ir_measures.DefaultPipeline.providers]
    assert names[0] == "trecqr" and names.count("trecqr") == 1
    assert ir_measures.providers.registry["trecqr"] is provider


def test_it_claims_every_ad_hoc_measure_and_not_the_intent_aware(pipelines):
    _, provider = pipelines
    assert [str(m) for m in MEASURES if not provider.supports(m)] == []
    assert not provider.supports(ir_measures.parse_measure("alpha_nDCG@10"))
    assert not provider.supports(ir_measures.parse_measure("RBP(rel=1)@10"))  # trecqr refuses


@pytest.mark.parametrize("name", RUNS)
def test_calc_aggregate_and_iter_calc_equal_ir_measures_own(name, pipelines):
    own, provider = pipelines
    qrels, run = _renumbered(data_path("cast2021", "qrels-docs.2021.qrel"),
                             data_path("cast2021", f"docrun_{name}.run"))
    evaluator = ir_measures.evaluator(MEASURES, qrels)
    assert type(evaluator).__module__ == "trecqr.api.irm_provider"  # trecqr alone
    # the oracle in one pass: ir_measures' Evaluator.calc is its calc_aggregate and iter_calc
    # together (the same per-topic metrics, aggregated by the same aggregators)
    expected, own_metrics = own.calc(MEASURES, qrels, run)
    # NumRet's oracle is the run itself: ir_measures' own pipeline counts only judged documents
    # for it whenever the measure set reaches its pytrec_eval provider in an order that puts
    # a judged_only measure first (test_ir_measures_numret_follows_the_first_invocation)
    judged = set(qrels.query_id)
    numret = ir_measures.parse_measure("NumRet")
    expected[numret] = float(run.query_id.isin(judged).sum())
    got = ir_measures.calc_aggregate(MEASURES, qrels, run)
    assert got == expected and len(got) == len(set(MEASURES)) == 67
    # (cwl_eval's CwlMetric adds its expected utilities and costs: trecqr yields Metric)
    triples = (lambda ms: sorted((str(m.measure), m.query_id, float(m.value)) for m in ms))
    retrieved = run[run.query_id.isin(judged)].query_id.value_counts()
    oracle = [m for m in own_metrics if m.measure != numret] + \
        [ir_measures.Metric(q, numret, float(n)) for q, n in retrieved.items()]
    assert triples(ir_measures.iter_calc(MEASURES, qrels, run)) == triples(oracle)


def test_ir_measures_numret_follows_the_first_invocation(pipelines):
    """Why NumRet's oracle above is the run: ir_measures 0.4.3's pytrec_eval provider puts
    NumRet (no rel) into whichever pytrec_eval invocation it built first
    (``_build_invokers``: ``invocation_key = next(iter(invocations))``), judged_only flag
    included, so NumRet counts only the judged documents when a ``judged_only`` measure comes
    first; the measures reach it as a set, whose order follows the hash seed. trecqr counts
    every retrieved document, as trec_eval's num_ret does, in any order."""
    own, _ = pipelines
    pte = ir_measures.providers.registry["pytrec_eval"]
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 0.9, "x": 0.5, "y": 0.4, "b": 0.1}}
    judged_p, numret = (ir_measures.parse_measure(m) for m in ("P(judged_only=True)@5",
                                                                "NumRet"))
    assert pte.calc_aggregate([judged_p, numret], qrels, run)[numret] == 2.0  # a, b only
    assert pte.calc_aggregate([numret, judged_p], qrels, run)[numret] == 4.0
    for order in ([judged_p, numret], [numret, judged_p]):
        assert ir_measures.calc_aggregate(order, qrels, run)[numret] == 4.0  # trecqr first


def test_inputs_are_taken_as_ir_measures_gives_them(pipelines):
    """dicts (an empty topic gets the defaults), namedtuple iterators, DataFrames."""
    own, _ = pipelines
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 2}, "3": {}}
    run = {"1": {"a": 0.2, "b": 0.9, "x": 0.5}, "2": {"c": 0.1}, "9": {"a": 1.0}}
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@3", "RR", "P@2", "Judged@2")]
    expected = own.calc_aggregate(measures, qrels, run)
    assert ir_measures.calc_aggregate(measures, qrels, run) == expected
    assert expected[ir_measures.parse_measure("RR")] == pytest.approx((1 / 3 + 1) / 3)
    rows = (ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items())
    scored = (ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items())
    two = {m: v for m, v in own.calc_aggregate(measures, {k: v for k, v in qrels.items() if v},
                                                run).items()}
    assert ir_measures.calc_aggregate(measures, rows, scored) == two
    assert ir_measures.calc_aggregate(measures, qrels, {}) == {m: 0.0 for m in measures}


def test_pyterrier_experiment_gives_the_same_table(pipelines):
    """pt.Experiment on the five CAsT 2021 organiser runs (pt.Transformer.from_df), with
    ir_measures' own providers and with trecqr's first: the same table, mean and per query.
    PyTerrier's Experiment needs no Java and downloads nothing."""
    pt = pytest.importorskip("pyterrier")
    import pandas as pd

    from trecqr.api import irm_provider

    qrels = pd.DataFrame([q._asdict() for q in ir_measures.read_trec_qrels(
        str(data_path("cast2021", "qrels-docs.2021.qrel")))]).rename(
        columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    systems, topics = [], set()
    for name in RUNS:
        run = pd.DataFrame([r._asdict() for r in ir_measures.read_trec_run(
            str(data_path("cast2021", f"docrun_{name}.run")))]).rename(
            columns={"query_id": "qid", "doc_id": "docno"})
        topics |= set(run.qid)
        systems.append(pt.Transformer.from_df(run))
    topics = pd.DataFrame({"qid": sorted(topics), "query": "unused"})
    measures = [ir_measures.parse_measure(m) for m in
                ("AP", "nDCG@3", "nDCG@10", "RR", "RR@10", "R@100", "P@10", "Judged@10",
                 "NumRet", "Bpref", "infAP", "SetF", "Success@5", "Compat")]
    provider = pipelines[1]
    calls = []
    original = irm_provider.TrecqrEvaluator._iter_calc

    def counted(self, run):
        calls.append(len(self.measures))
        yield from original(self, run)

    tables = {}
    for first in (False, True):
        providers = ir_measures.DefaultPipeline.providers
        if provider in providers:
            providers.remove(provider)
        if first:
            trecqr.register_ir_measures()
        irm_provider.TrecqrEvaluator._iter_calc = counted
        try:
            tables[first] = (pt.Experiment(systems, topics, qrels, measures, names=RUNS),
                             pt.Experiment(systems, topics, qrels, measures, names=RUNS,
                                           perquery=True))
        finally:
            irm_provider.TrecqrEvaluator._iter_calc = original
        assert len(calls) == (10 if first else 0)
    # the order of the measure columns (and per-query rows) is the order in which metrics are
    # first yielded: in ir_measures' own pipeline it follows the iteration of a set of
    # measures, which changes with PYTHONHASHSEED; values are compared column by column
    own, mine = tables[False][0], tables[True][0]
    pd.testing.assert_frame_equal(own, mine[list(own.columns)], check_exact=True)
    rows = (lambda t: t.sort_values(["name", "qid", "measure"], ignore_index=True))
    pd.testing.assert_frame_equal(rows(tables[False][1]), rows(tables[True][1]),
                                  check_exact=True)
    assert len(tables[True][1]) == 5 * 239 * len(measures)  # every topic, NaN if unjudged
    mean = tables[True][0].set_index("name")
    assert mean.shape == (5, len(measures)) and mean.loc["org_manual_bm25", "AP"] > 0.1
