"""ir_measures names on single hand-made cases, each against ir_measures itself: the tie orders
of each provider, how names split between trec_eval and ir_measures, refusals, averaging over
topics without judgments or with no topic in common, diversity qrels, the provider's
registration and claims, PyTerrier's Experiment, compare / breakdown / plot with ir_measures
names. The matrix of doors and inputs is tests/api/test_oracle_matrix.py."""

from __future__ import annotations

import re
import warnings

import ir_measures
import numpy as np
import pytest

import trecqr
from conftest import ROOT, data_path, run_cli
from compat_cases import make_case
from oracle_cases import cast2021, irm_oracle, own_pipeline
from oracle_sets import ACCURACY, AD_HOC, INTENT_AWARE, cut_case
from trecqr.engine.names import split_measures
from trecqr.errors import InputError, UsageError


def test_every_registry_name_is_listed():
    assert set(ir_measures.measures.registry) == set(AD_HOC) | set(INTENT_AWARE)


def test_python_order_of_ties_for_rr_and_judged():
    """msmarco's RR@k and Judged@k sort ties by docno ascending, on float64 scores; trec_eval
    (and so RR without cutoff) ties 1.0 and 1.0+1e-9 and puts docno "b" first."""
    qrels = {"q": {"a": 0, "b": 1}, "other": {"z": 1}}
    run = {"q": {"b": 1.0, "a": 1.0 + 1e-9, "c": 0.5}}
    got = trecqr.evaluate(qrels, run, ["RR", "RR@2", "RR@1", "Judged@1", "Judged@3"]).aggregate()
    assert got == {"RR": 1.0 / 2, "RR@2": 0.5 / 2, "RR@1": 0.0, "Judged@1": 1.0 / 2,
                   "Judged@3": (2 / 3) / 2}
    assert got == irm_oracle(list(got), qrels, run)[0]


def test_tie_orders_of_the_native_families():
    """Two documents tied on score, one relevant: cwl_eval and accuracy keep the input order,
    compat puts docno "a" first, gdeval docno "b" first."""
    qrels = {"q": {"a": 1, "b": 0, "c": 2}}
    for order in (["a", "b"], ["b", "a"]):
        run = {"q": {order[0]: 1.0, order[1]: 1.0}}
        got = trecqr.evaluate(qrels, run, ["RBP(p=0.5,rel=1)", "Accuracy", "ERR@1",
                                           "Compat(p=0.5,normalize=False)"]).aggregate()
        # RBP: the relevant "a" at rank 1 weighs (1 - p) = 0.5, at rank 2 (1 - p) p = 0.25
        assert got["RBP(p=0.5,rel=1)"] == (0.5 if order[0] == "a" else 0.25)
        assert got["Accuracy"] == (1.0 if order[0] == "a" else 0.0)
        assert got["ERR@1"] == 0.0  # "b" (grade 0) first, whatever the input order
        # ranking a, b; ideal c, a: overlaps 0 then 1 at depth 2 -> (0 + 0.5 * 1/2) / 1.5
        assert got["Compat(p=0.5,normalize=False)"] == 0.25 / 1.5


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("run_name", ["docrun_org_convdr.run", "docrun_org_manual_bm25.run"])
def test_accuracy_topic_by_topic(run_name, ties, tmp_path):
    """The native accuracy function: NaN where the provider divides by zero (a topic whose
    documents within the cutoff are all relevant) and so reports nothing; its mean is over
    the reported topics (its iter_calc adds no defaults)."""
    from trecqr.api.evaluation import load_qrels, load_run
    from trecqr.measures.accuracy import accuracy

    case = cut_case(run_name, ties, tmp_path)
    irm_q = list(ir_measures.read_trec_qrels(str(case[0])))
    irm_r = list(ir_measures.read_trec_run(str(case[1])))
    q, r = load_qrels(str(case[0])), load_run(str(case[1]))
    judged = set(q.qid.to_pylist())
    topics = [t for t in dict.fromkeys(r.qid.to_pylist()) if t in judged]
    for name in ACCURACY:
        measure = ir_measures.parse_measure(name)
        expected, crashed = {}, []
        for qid in dict.fromkeys(row.query_id for row in irm_r):
            try:
                for metric in ir_measures.iter_calc([measure], irm_q,
                                                    [x for x in irm_r if x.query_id == qid]):
                    expected[metric.query_id] = metric.value
            except ZeroDivisionError:
                crashed.append(qid)
        got = accuracy(r, q, topics, measure)
        assert {t: v for t, v in zip(topics, got) if not np.isnan(v)} == expected
        assert all(np.isnan(got[topics.index(t)]) for t in crashed if t in judged)
        if not crashed:
            agg = ir_measures.calc_aggregate([measure], irm_q, irm_r)
            values = got[~np.isnan(got)]
            assert list(agg.values()) == [float(np.cumsum(values)[-1]) / len(values)]


def test_split_between_trec_eval_and_ir_measures_names():
    trec, irm = split_measures(["map", "P.5,10", "ndcg_cut.3", "all_trec", "Rprec", "infAP",
                                "nDCG@3", "P(rel=2)@5", ir_measures.RR @ 3, "IPrec@0.5"])
    assert trec == ["map", "P.5,10", "ndcg_cut.3", "all_trec", "Rprec", "infAP"]
    assert [name for name, _ in irm] == ["nDCG@3", "P(rel=2)@5", "RR@3", "IPrec@0.5"]
    assert split_measures(["no_such_measure"]) == (["no_such_measure"], [])


def test_mixed_names_and_refusals():
    qrels, run = make_case(5)
    run = {q: d for q, d in run.items() if d}
    res = trecqr.evaluate(qrels, run, ["map", "P.5", "nDCG@3", "NumQ"]).aggregate()
    assert set(res) == {"map", "P_5", "nDCG@3", "NumQ"}
    assert res["NumQ"] == len(set(qrels) & set(run))
    with pytest.raises(UsageError, match="relevance_level"):
        trecqr.evaluate(qrels, run, ["nDCG@3"], relevance_level=2)
    with pytest.raises(UsageError, match="ir_measures measure 'R'"):
        trecqr.evaluate(qrels, run, ["R"])  # "P" alone is trec_eval's P
    with pytest.raises(UsageError, match="not supported"):  # no provider takes gains here
        trecqr.evaluate(qrels, run, ['nDCG(dcg="exp-log2",gains={0:1,1:3})@5'])


def test_refusals_match_the_default_pipeline():
    """Names ir_measures parses but no provider of its own pipeline computes (ranx's left
    out: under pandas 3 it fails on ir_measures' own DataFrames instead of declining)."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    for name in ["ERR", "nDCG(dcg='exp-log2')", "RBP", "RBP(rel=1)@10"]:
        with pytest.raises(ValueError, match="Unsupported measures"):
            own_pipeline().calc_aggregate([ir_measures.parse_measure(name)], qrels, run)
        with pytest.raises(UsageError, match="not supported by its provider"):
            trecqr.evaluate(qrels, run, [name])
    with pytest.raises(UsageError, match="grades up to 4"):
        trecqr.evaluate({"q": {"a": 5}}, run, ["ERR@10"])
    with pytest.raises(UsageError, match="min_rel must be less than max_rel"):
        trecqr.evaluate(qrels, run, ["INST(min_rel=2,max_rel=2)"])


def test_topics_without_judgments_count_as_ir_measures_counts_them():
    q, r = {"a": {"d1": 1}, "b": {}}, {"a": {"d1": 1.0}}
    res = trecqr.evaluate(q, r, ["P@5"])
    assert res.aggregate() == {"P@5": 0.1} == irm_oracle(["P@5"], q, r)[0]  # b counts 0
    assert res.per_query() == {"a": {"P@5": 0.2}, "b": {"P@5": 0.0}}


def test_topics_without_judgments_under_keys_that_are_not_text(provider):
    """A qrels dict keyed by ints goes through the general reader, which names every topic
    as a DataFrame's id column does (1 and 1.0: "1"); its topics without judgments were kept
    as the raw keys, and sorting them beside the others' text raised a bare TypeError for
    ir_measures names, in evaluate and in the provider. A key that is no id (None, a bool,
    1.5) is refused, as in a DataFrame, where it was read as the text "None"."""
    q, r = {1: {"d1": 1}, 2: {}, 3.0: {}}, {1: {"d1": 1.0}}
    res = trecqr.evaluate(q, r, ["RR@3", "map"])
    assert res.aggregate() == {"RR@3": 1 / 3, "map": 1.0}
    assert res.per_query() == {"1": {"RR@3": 1.0, "map": 1.0}, "2": {"RR@3": 0.0},
                               "3": {"RR@3": 0.0}}
    rr3 = ir_measures.parse_measure("RR@3")
    assert ir_measures.calc_aggregate([rr3], q, r) == {rr3: 1 / 3}
    assert sorted((m.query_id, m.value) for m in ir_measures.iter_calc([rr3], q, r)) \
        == [("1", 1.0), ("2", 0.0), ("3", 0.0)]
    for key in (None, False, 1.5):
        with pytest.raises(InputError, match=re.escape(
                f"<qrels dict>: query id {key!r} is not an id (text or an integer)")):
            trecqr.evaluate({**q, key: {}}, r, ["RR@3"])
    with pytest.raises(InputError, match=re.escape(
            "<run dict>: query '1': docno b'\\xff' is not UTF-8 text")):
        trecqr.evaluate(q, {1: {b"\xff": 1.0}}, ["RR@3"])
    bytes_ids = trecqr.evaluate({"q": {b"d1": 1, "d2": 0}}, {b"q": {"d1": 1.0}}, ["bpref"])
    assert bytes_ids.aggregate() == {"bpref": 1.0}  # bytes read as UTF-8, as in a DataFrame


@pytest.mark.filterwarnings("error")  # no "no topic in common" either
def test_int_keys_of_a_run_dict_are_its_topics_text_on_every_route(provider):
    """A run dict keyed by ints is read with str(key) as its topic ids, so topic 1 is the
    qrels' "1": map said so, but the ir_measures names (evaluate and the provider) looked up
    the raw key, found no topic in common, and gave 0."""
    q, r = {"1": {"d1": 1}}, {1: {"d1": 1.0}}
    for names in (["map"], ["RR@3"], ["nDCG@3", "Judged@5"], ["map", "RR@3"]):
        assert set(trecqr.evaluate(q, r, names).aggregate().values()) == {1.0}, names
    rr3 = ir_measures.parse_measure("RR@3")
    assert list(ir_measures.iter_calc([rr3], q, r)) == [ir_measures.Metric("1", rr3, 1.0)]


def test_a_topic_without_judgments_counts_whatever_rr_is_asked_beside():
    """Finding (ir_measures 0.4.3): its msmarco provider, which computes RR@k, reads a qrels
    dict's topics from its rows, so a topic without judgments ({"b": {}}) is not among them
    when RR@3 is asked alone (1.0 here); asked beside a pytrec_eval measure, the pipeline's
    topics are the dict's keys and it counts 0 (0.5). trecqr counts it in both, the rule it
    states for every ir_measures name, so a value does not depend on its neighbours."""
    q, r = {"a": {"d1": 2}, "b": {}}, {"a": {"d1": 0.76}}
    assert irm_oracle(["RR@3"], q, r)[0] == {"RR@3": 1.0}
    assert irm_oracle(["RR@3", "AP"], q, r)[0] == {"RR@3": 0.5, "AP": 0.5}
    assert trecqr.evaluate(q, r, ["RR@3"]).aggregate() == {"RR@3": 0.5}
    assert trecqr.evaluate(q, r, ["RR@3", "AP"]).aggregate() == {"RR@3": 0.5, "AP": 0.5}


def test_no_topic_in_common_gives_defaults_and_warns_once():
    """ir_measures' defaults, one warning (when the means are read, not again when the
    per-topic Evaluation is built); trec_eval names keep trec_eval's refusal."""
    q, r = {"a": {"d1": 1}}, {"x": {"d1": 1.0}}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = trecqr.evaluate(q, r, ["P@5", "nDCG@3"])
        assert res.aggregate() == {"P@5": 0.0, "nDCG@3": 0.0} == \
            irm_oracle(["P@5", "nDCG@3"], q, r)[0]
        assert res.per_query() == {"a": {"P@5": 0.0, "nDCG@3": 0.0}}
    assert [str(w.message)[:19] for w in seen] == ["no topic in common:"]
    with pytest.raises(trecqr.InputError):
        trecqr.evaluate(q, r, ["map"])


def test_diversity_qrels_for_the_intent_aware_family():
    """Diversity qrels (topic subtopic docno grade) read as ndeval reads them when an
    intent-aware name is asked for; pyndeval's values."""
    qrels = str(data_path("sessions", "tasks2016-qrels-suggestions.txt"))
    run = str(data_path("sessions", "tasks2016-run-QS.txt"))
    res = trecqr.evaluate(qrels, run, ["alpha_nDCG@10", "ERR_IA@20"])
    assert res.aggregate() == {"alpha_nDCG@10": 0.5188593785076385,
                               "ERR_IA@20": 0.41804371967955795}
    assert trecqr.evaluate(qrels, run, ["alpha_nDCG@10"], diversity=True).aggregate() == \
        {"alpha_nDCG@10": 0.5188593785076385}
    q, r = {"a": {"d1": 1, "d2": 0}}, {"a": {"d1": 0.5, "d2": 1.0}}  # one subtopic per topic
    assert trecqr.evaluate(q, r, ["alpha_nDCG@5"]).aggregate() == \
        irm_oracle(["alpha_nDCG@5"], q, r)[0]


def test_cli_prints_ir_measures_names_in_trec_eval_layout():
    """After the trec_eval measures of the same call; per-topic rows with -q; -R prefs
    refused for them."""
    q, r = ROOT / "fixtures/cast2021/qrels.txt", ROOT / "fixtures/cast2021/manual_bm25.run"
    res = run_cli(["eval", "-m", "recip_rank", "-m", "RR@3", "-m", "nDCG@3", q, r])
    assert res.exit_code == 0, res.stderr
    api = trecqr.evaluate(str(q), str(r), ["RR@3", "nDCG@3"]).aggregate()
    assert res.stdout == ("recip_rank            \tall\t0.6725\n"
                          f"RR@3                  \tall\t{api['RR@3']:.4f}\n"
                          f"nDCG@3                \tall\t{api['nDCG@3']:.4f}\n")
    assert f"{api['RR@3']:.4f}" == "0.6422"
    lines = run_cli(["eval", "-q", "-m", "RR(rel=2)@3", q, r]).stdout.splitlines()
    assert lines[0] == "RR(rel=2)@3           \t106_1\t0.5000" and len(lines) == 35
    res = run_cli(["eval", "-R", "prefs", "-m", "RR@3", q, r])
    assert res.exit_code == 2 and "ir_measures names (RR@3) need -R qrels" in res.stderr


def test_compare_breakdown_and_plot_take_ir_measures_names(tmp_path, cli):
    """compare's means, score_table's per-topic values (breakdown, plot) are ir_measures'."""
    from trecqr.report.breakdown import score_table

    qrels = cast2021()[0]
    runs = [cast2021()[1], cast2021("docrun_org_manual_ance.run")[1]]
    report = trecqr.compare(qrels, runs, ["RR@3", "nDCG@3"], permutations=100)
    for run, row in zip(runs, report.means.values()):
        means, _ = irm_oracle(["RR@3", "nDCG@3"], list(ir_measures.read_trec_qrels(str(qrels))),
                              list(ir_measures.read_trec_run(str(run))))
        # compare averages over the topics both runs have, here the qrels topics
        assert row == pytest.approx(means, abs=1e-12)
    table = score_table(str(qrels), [str(runs[1])], ["RR@3"])
    _, expected = irm_oracle(["RR@3"], list(ir_measures.read_trec_qrels(str(qrels))),
                             list(ir_measures.read_trec_run(str(runs[1]))))
    got = table.values[0]["RR@3"]
    assert len(got) == 158 and all(got[q] == expected[("RR@3", q)] for q in got)
    plot = tmp_path / "rr3.png"
    res = cli(["plot", "depth", str(qrels), str(runs[1]), "-m", "RR@3", "-o", str(plot)])
    assert res.exit_code == 0, res.output
    assert plot.stat().st_size > 1000


# ----------------------------------------------------- the provider
def test_registering_puts_trecqr_first_once(provider):
    assert trecqr.register_ir_measures() is provider
    names = [p.NAME for p in ir_measures.DefaultPipeline.providers]
    assert names[0] == "trecqr" and names.count("trecqr") == 1
    assert ir_measures.providers.registry["trecqr"] is provider


def test_provider_claims_every_ad_hoc_measure_and_not_the_intent_aware(provider):
    measures = [ir_measures.parse_measure(n) for names in AD_HOC.values() for n in names]
    assert [str(m) for m in measures if not provider.supports(m)] == []
    assert not provider.supports(ir_measures.parse_measure("alpha_nDCG@10"))
    assert not provider.supports(ir_measures.parse_measure("RBP(rel=1)@10"))  # trecqr refuses


def test_provider_numret_follows_the_first_invocation(provider):
    """Why the matrix's NumRet oracle is the run: ir_measures 0.4.3's pytrec_eval provider puts
    NumRet into whichever pytrec_eval invocation it built first, judged_only flag included, so
    NumRet counts only judged documents when a judged_only measure comes first (a set's order,
    which follows the hash seed). trecqr counts every retrieved document in any order."""
    pte = ir_measures.providers.registry["pytrec_eval"]
    qrels = {"1": {"a": 1, "b": 0}}
    run = {"1": {"a": 0.9, "x": 0.5, "y": 0.4, "b": 0.1}}
    judged_p, numret = (ir_measures.parse_measure(m) for m in ("P(judged_only=True)@5",
                                                                "NumRet"))
    assert pte.calc_aggregate([judged_p, numret], qrels, run)[numret] == 2.0  # a, b only
    assert pte.calc_aggregate([numret, judged_p], qrels, run)[numret] == 4.0
    for order in ([judged_p, numret], [numret, judged_p]):
        assert ir_measures.calc_aggregate(order, qrels, run)[numret] == 4.0  # trecqr first


def test_pyterrier_experiment_gives_the_same_table(provider):
    """pt.Experiment on the five CAsT 2021 organiser runs (pt.Transformer.from_df), with
    ir_measures' own providers and with trecqr's first: the same table, mean and per query,
    trecqr called once per system and table. No Java, nothing downloaded."""
    pt = pytest.importorskip("pyterrier")
    import pandas as pd

    from trecqr.api import irm_provider

    names = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
             "org_manual_bm25"]
    qrels = pd.DataFrame([q._asdict() for q in ir_measures.read_trec_qrels(
        str(cast2021()[0]))]).rename(columns={"query_id": "qid", "doc_id": "docno",
                                              "relevance": "label"})
    systems, topics = [], set()
    for name in names:
        run = pd.DataFrame([r._asdict() for r in ir_measures.read_trec_run(
            str(data_path("cast2021", f"docrun_{name}.run")))]).rename(
            columns={"query_id": "qid", "doc_id": "docno"})
        topics |= set(run.qid)
        systems.append(pt.Transformer.from_df(run))
    topics = pd.DataFrame({"qid": sorted(topics), "query": "unused"})
    measures = [ir_measures.parse_measure(m) for m in
                ("AP", "nDCG@3", "nDCG@10", "RR", "RR@10", "R@100", "P@10", "Judged@10",
                 "NumRet", "Bpref", "infAP", "SetF", "Success@5", "Compat")]
    calls, tables = [], {}
    original = irm_provider.TrecqrEvaluator._iter_calc

    def counted(self, run):
        calls.append(len(self.measures))
        yield from original(self, run)

    for first in (False, True):
        providers = ir_measures.DefaultPipeline.providers
        if provider in providers:
            providers.remove(provider)
        if first:
            trecqr.register_ir_measures()
        irm_provider.TrecqrEvaluator._iter_calc = counted
        try:
            tables[first] = (pt.Experiment(systems, topics, qrels, measures, names=names),
                             pt.Experiment(systems, topics, qrels, measures, names=names,
                                           perquery=True))
        finally:
            irm_provider.TrecqrEvaluator._iter_calc = original
        assert len(calls) == (10 if first else 0)
    # column order follows the iteration of a set of measures in ir_measures' own pipeline
    # (PYTHONHASHSEED): values are compared column by column
    own, mine = tables[False][0], tables[True][0]
    pd.testing.assert_frame_equal(own, mine[list(own.columns)], check_exact=True)
    rows = (lambda t: t.sort_values(["name", "qid", "measure"], ignore_index=True))
    pd.testing.assert_frame_equal(rows(tables[False][1]), rows(tables[True][1]),
                                  check_exact=True)
    assert len(tables[True][1]) == 5 * 239 * len(measures)  # every topic, NaN if unjudged
    mean = tables[True][0].set_index("name")
    assert mean.shape == (5, len(measures)) and mean.loc["org_manual_bm25", "AP"] > 0.1
