"""Every measure name in ir_measures' registry, computed by trecqr.evaluate with the value
ir_measures' own default pipeline gives, per topic and in aggregate, on real runs: the CAsT 2021
document run of ConvDR for the ad hoc families, the TREC Tasks 2016 suggestion runs (diversity qrels)
for the intent-aware family.

The topic ids are renumbered (1, 2, ...) for both sides, in the run's order: gdeval.pl, the
provider of ERR and exp-log2 nDCG, accepts only numeric ids and adds topics in numeric order.
"""

from __future__ import annotations

import ir_measures
import pytest

import trecqr
from conftest import data_path
from trecqr.engine.names import _TREC_NAMES

# registry NAME -> instances covering its parameters; a name added to ir_measures' registry
# and missing here fails test_every_registry_name_is_listed
AD_HOC = {
    "AP": ["AP", "AP@10", "AP(rel=2)", "AP(judged_only=True)"],
    "MAP": ["MAP@5"],
    "Accuracy": ["Accuracy", "Accuracy(rel=2)@20"],
    "BPM": ["BPM(max_rel=4)@10", "BPM(T=2.0,max_rel=4)@20"],
    "BPref": ["BPref"], "Bpref": ["Bpref(rel=2)"],
    "Compat": ["Compat", "Compat(p=0.8,normalize=False)"],
    "ERR": ["ERR@10", "ERR@20"],
    "INSQ": ["INSQ(max_rel=4)", "INSQ(T=2.0,max_rel=4)"],
    "INST": ["INST(max_rel=4)", "INST(T=3.0,max_rel=4)"],
    "IPrec": ["IPrec@0.2", "IPrec(rel=2)@0.5"],
    "Judged": ["Judged@10", "Judged"],
    "MRR": ["MRR@10"], "RR": ["RR", "RR@3", "RR(rel=2)@10"],
    "NDCG": ["NDCG@3"], "nDCG": ["nDCG", "nDCG@3", "nDCG@10", "nDCG(dcg='exp-log2')@10",
                                 "nDCG(judged_only=True)@5", "nDCG(gains={0:0,1:1,2:3,3:7,4:15})@5"],
    "NERR10": ["NERR10(max_rel=4)", "NERR10(p=0.8,max_rel=4)"],
    "NERR11": ["NERR11(max_rel=4)", "NERR11(T=3.0,max_rel=4)"],
    "NERR8": ["NERR8(max_rel=4)@10"], "NERR9": ["NERR9(max_rel=4)@10"],
    "NumQ": ["NumQ"], "NumRel": ["NumRel"], "NumRelRet": ["NumRelRet"],
    "NumRet": ["NumRet", "NumRet(rel=2)"],
    "P": ["P@5", "P(rel=2)@10", "P(judged_only=True)@10"], "Precision": ["Precision@3"],
    "R": ["R@100", "R@10"], "Recall": ["Recall@20"],
    "RBP": ["RBP(rel=1)", "RBP(p=0.5,rel=2)"],
    "RPrec": ["RPrec"], "Rprec": ["Rprec(rel=2)"],
    "SDCG": ["SDCG(max_rel=4)@10"],
    "SetAP": ["SetAP"], "SetF": ["SetF", "SetF(beta=0.5)"], "SetP": ["SetP", "SetP(rel=2)"],
    "SetR": ["SetR"], "SetRelP": ["SetRelP"],
    "Success": ["Success@1", "Success(rel=2)@5"],
    "infAP": ["infAP", "infAP(rel=2)"],
}
INTENT_AWARE = {
    "AP_IA": ["AP_IA"], "MAP_IA": ["MAP_IA"],
    "ERR_IA": ["ERR_IA@10", "ERR_IA@20"], "nERR_IA": ["nERR_IA@10", "nERR_IA@20"],
    "NRBP": ["NRBP", "NRBP(alpha=0.3,beta=0.8)"], "nNRBP": ["nNRBP"],
    "P_IA": ["P_IA@10", "P_IA@5"], "StRecall": ["StRecall@10", "StRecall@20"],
    "alpha_DCG": ["alpha_DCG@10"], "α_DCG": ["α_DCG@5"],
    "alpha_nDCG": ["alpha_nDCG@10", "alpha_nDCG(alpha=0.8)@20"], "α_nDCG": ["α_nDCG@5"],
}


def test_every_registry_name_is_listed():
    assert set(ir_measures.measures.registry) == set(AD_HOC) | set(INTENT_AWARE)


def _renumbered(qrels_path, run_path, subtopics=False):
    """Both sides as DataFrames, topic ids renumbered in the run's order."""
    import pandas as pd

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    ids = {}
    for r in run:
        ids.setdefault(r.query_id, str(len(ids) + 1))
    for q in qrels:
        ids.setdefault(q.query_id, str(len(ids) + 1))
    qf = pd.DataFrame({"query_id": [ids[q.query_id] for q in qrels],
                       "doc_id": [q.doc_id for q in qrels],
                       "relevance": [q.relevance for q in qrels]})
    if subtopics:
        qf["iteration"] = [q.iteration for q in qrels]
    rf = pd.DataFrame({"query_id": [ids[r.query_id] for r in run],
                       "doc_id": [r.doc_id for r in run],
                       "score": [r.score for r in run]})
    return qf, rf


def _check(names, qf, rf):
    measures = [ir_measures.parse_measure(n) for n in names]
    agg, metrics = {}, []
    for m in measures:  # one call each: some providers mix up a batch of parameter sets
        a, ms = ir_measures.calc([m], qf, rf)
        agg.update(a)
        metrics += ms
    # a name that is also trec_eval's (infAP) keeps trec_eval's meaning as a string; the
    # measure object asks for ir_measures'
    asked = [m if n.partition(".")[0] in _TREC_NAMES else n for n, m in zip(names, measures)]
    res = trecqr.evaluate(qf, rf, asked)
    got_agg, per_query = res.aggregate(), res.per_query()
    by_str = {str(m): n for n, m in zip(names, measures)}
    expected = {(by_str[str(m.measure)], m.query_id): m.value for m in metrics}
    for (name, qid), value in expected.items():
        if qid in per_query:
            assert per_query[qid][name] == value, (name, qid)
    assert {n: got_agg[n] for n in names} == {n: agg[m] for n, m in zip(names, measures)}
    return len(expected)


@pytest.mark.parametrize("run", ["docrun_org_convdr.run"])  # (bm25 too: test_irm_families)
@pytest.mark.parametrize("family", sorted(AD_HOC))
def test_ad_hoc_names_equal_ir_measures_on_cast2021(family, run, cast_frames):
    qf, rf = cast_frames[run]
    assert _check(AD_HOC[family], qf, rf) >= 130 * len(AD_HOC[family])  # 158 judged topics


@pytest.mark.parametrize("run", ["tasks2016-run-QS.txt", "tasks2016-run-WD.txt"])
@pytest.mark.parametrize("family", sorted(INTENT_AWARE))
def test_intent_aware_names_equal_ir_measures_on_tasks2016(family, run, tasks_frames):
    qf, rf = (frame.copy() for frame in tasks_frames[run])  # each test its own copy
    assert _check(INTENT_AWARE[family], qf, rf) >= 40 * len(INTENT_AWARE[family])


@pytest.fixture(scope="module")
def tasks_frames():
    """The two TREC Tasks 2016 runs and the diversity qrels, renumbered once for the module's
    24 intent-aware cases (reading and renumbering 47,689 qrels rows is a third of a case)."""
    qrels = data_path("sessions", "tasks2016-qrels-suggestions.txt")
    return {run: _renumbered(qrels, data_path("sessions", run), subtopics=True)
            for run in ("tasks2016-run-QS.txt", "tasks2016-run-WD.txt")}


@pytest.fixture(scope="module")
def cast_frames():
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    return {run: _renumbered(qrels, data_path("cast2021", run))
            for run in ("docrun_org_convdr.run",)}
