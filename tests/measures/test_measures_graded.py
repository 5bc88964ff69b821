"""Graded measures: ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg, ndcg_cut, G, binG, rbp, rbp_resid.

Hand-checked values are written as trec_eval computes them (same additions in the same order),
so equality is exact; each was also confirmed against trec_eval binaries built from the 9.0.8
and 10.0 sources. Cross-checks against pytrec_eval (trec_eval 9.0.8 inside) use exact float
equality on real data.
"""

from __future__ import annotations

from math import log2

import pytest

from conftest import DATA, TE
from trecqr.api.evaluation import score_trec
from trecqr.errors import UsageError
from trecqr.rankings.options import Options

# q1: grades a=2, b=1, c=0, d=1 (not retrieved), e=-1 (judged "unjudged"); ranking c a x b
# (x not in the qrels). q2: only non-relevant judgments.
QRELS = {"q1": {"a": 2, "b": 1, "c": 0, "d": 1, "e": -1}, "q2": {"n1": 0, "n2": 0}}
RUN = {"q1": {"c": 4.0, "a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"n1": 2.0, "y": 1.0}}

DCG_Q1 = 2 / log2(3) + 1 / log2(5)           # gains 0 2 0 1 at ranks 1..4
IDCG_Q1 = (2 / 1 + 1 / log2(3)) + 1 / 2       # ideal gains 2 1 1


def values(measures, compat="9.0.8", qrels=QRELS, run=RUN, **opts):
    ev = score_trec(qrels, run, measures, Options(compat=compat, **opts))
    return {c.name: dict(zip(ev.qids, c.values.tolist())) for c in ev.columns}


# --------------------------------------------------------------------------- hand-checked
@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_ndcg_default_gains_are_grades(compat):
    v = values(["ndcg"], compat)["ndcg"]
    assert v == {"q1": DCG_Q1 / IDCG_Q1, "q2": 0.0}
    assert DCG_Q1 / IDCG_Q1 == 0.5405857679450102


def test_ndcg_ignores_relevance_level():
    assert values(["ndcg"], relevance_level=2) == values(["ndcg"], relevance_level=1)


def test_ndcg_custom_gains():
    # sorted gains 0 (level 0), 3 (level 1), 4.5 (level 4, no document), 9 (level 2)
    v = values(["ndcg.1=3,2=9,4=4.5"])["ndcg_1=3,2=9,4=4.5"]
    expected = (9 / log2(3) + 3 / log2(5)) / ((9 / 1 + 3 / log2(3)) + 3 / 2)
    assert v == {"q1": expected, "q2": 0.0}


def test_ndcg_gain_order_uses_truncated_comparator():
    """qsort compares (int)(g1 - g2): 0.5 ties with level 0 and stays below it, so the ideal
    ranking stops at the grade-0 document: level-1 documents earn 0.5 in the ranking but
    nothing in the ideal."""
    v = values(["ndcg.1=0.5"])["ndcg_1=0.5"]
    assert v["q1"] == (2 / log2(3) + 0.5 / log2(5)) / 2
    assert v["q1"] == 0.7385988930898058


def test_ndcg_non_integer_gain_name_differs_between_versions():
    """9.0.8 reads the level with atol ("x" -> level 0, gain 5); 10.0 skips the pair."""
    old = values(["ndcg.x=5"], "9.0.8")["ndcg_x=5"]
    new = values(["ndcg.x=5"], "10.0")["ndcg_x=5"]
    assert old["q1"] == ((5 / 1 + 2 / log2(3)) + 1 / log2(5)) / (
        ((5 / 1 + 2 / log2(3)) + 1 / 2) + 1 / log2(5))
    assert old["q2"] == 5 / (5 / 1 + 5 / log2(3))  # non-relevant documents now have gain 5
    assert new == {"q1": DCG_Q1 / IDCG_Q1, "q2": 0.0}


def test_dcg_and_ideal_dcg_are_10_only():
    v = values(["dcg", "ideal_dcg"], "10.0")
    assert v["dcg"] == {"q1": DCG_Q1, "q2": 0.0}
    assert v["ideal_dcg"] == {"q1": IDCG_Q1, "q2": 0.0}
    with pytest.raises(UsageError):
        values(["dcg"], "9.0.8")


def test_ndcg_cut_beyond_ranking_and_ideal_length():
    v = values(["ndcg_cut.2,10"])
    assert v["ndcg_cut_2"] == {"q1": (2 / log2(3)) / (2 + 1 / log2(3)), "q2": 0.0}
    # 10 > 4 retrieved and > 3 relevant: whole ranking over whole ideal
    assert v["ndcg_cut_10"] == {"q1": DCG_Q1 / IDCG_Q1, "q2": 0.0}


def test_ndcg_cut_name_uses_atol_of_cutoff():
    assert list(values(["ndcg_cut.10,20,23.4"])) == ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]


def test_binG_depends_on_relevance_level():
    # relevant a at rank 2 (0 nonrel before it... log2(3 + 1 - 1)), b at rank 4 (log2(4))
    assert values(["binG"])["binG"] == {"q1": (1 / log2(3) + 1 / log2(4)) / 3, "q2": 0.0}
    assert values(["binG"], relevance_level=2)["binG"] == {"q1": 1 / log2(3), "q2": 0.0}


def test_G():
    # cost so far 2, 3, 4, 5 (ideal gain, at least 1); gain so far 0, 2, 2, 3
    assert values(["G"])["G"] == {"q1": (2 / log2(2 + 3 - 2) + 1 / log2(2 + 5 - 3)) / 4,
                                  "q2": 0.0}


def test_Rndcg_averages_at_ideal_gain_changes():
    # ideal 2 1 1: changes after rank 1 (ndcg 0/2) and at its end, rank 3
    at3 = (2 / log2(3)) / ((2 + 1 / log2(3)) + 0.5)
    assert values(["Rndcg"])["Rndcg"] == {"q1": (0.0 + at3) / 2, "q2": 0.0}


def test_ndcg_rel_counts_unretrieved_relevant_at_the_end():
    at_a = (2 / log2(3)) / (2 + 1 / log2(3))
    at_b = DCG_Q1 / IDCG_Q1
    missing_d = (1 * DCG_Q1) / IDCG_Q1
    assert values(["ndcg_rel"])["ndcg_rel"] == {"q1": (at_a + at_b + missing_d) / 3, "q2": 0.0}


def test_rbp_rescales_gains_and_multiplies_powers():
    # grades up to 2: gains rescaled to g/2; p^i as repeated products
    v = values(["rbp"], "10.0")["rbp"]
    assert v == {"q1": (1.0 - 0.9) * (0.9 * 1.0 + 0.5 * (0.9 * 0.9 * 0.9)), "q2": 0.0}
    assert v["q1"] == 0.12644999999999998
    p5 = values(["rbp.p=0.5"], "10.0")["rbp_p=0.5"]
    assert p5["q1"] == (1.0 - 0.5) * (0.5 * 1.0 + 0.5 * 0.125)


def test_rbp_resid_counts_unjudged_documents():
    v = values(["rbp_resid"], "10.0")["rbp_resid"]
    assert v == {"q1": ((0.9 * 0.9) * 0.9) * 0.9 + (1 - 0.9) * (0.9 * 0.9),
                 "q2": 0.9 * 0.9 + (1 - 0.9) * 0.9}


def test_rbp_resid_bogus_zeroing_only_under_default_name():
    """10.0 -c zeroes the value named exactly "rbp_resid" for topics missing from the run."""
    run = {"q1": RUN["q1"]}
    assert values(["rbp_resid"], "10.0", run=run, complete=True)["rbp_resid"]["q2"] == 0.0
    # rbp_resid.p=0.8 keeps the bogus one-document ranking's value: 0.8 + 0.2 * 1
    named = values(["rbp_resid.p=0.8"], "10.0", run=run, complete=True)["rbp_resid_p=0.8"]
    assert named["q2"] == 0.8 + (1 - 0.8) * 1.0
    # -J drops the bogus (unjudged) document: empty ranking, nothing unjudged
    judged = values(["rbp_resid.p=0.8"], "10.0", run=run, complete=True, judged_only=True)
    assert judged["rbp_resid_p=0.8"]["q2"] == 0.0


def test_gain_measures_on_bogus_ranking_with_unjudged_gain():
    """A -1=gain pair gives the bogus unjudged document a gain unless -J removes it."""
    run = {"q1": RUN["q1"]}
    plain = values(["ndcg.-1=1"], "10.0", run=run, complete=True)["ndcg_-1=1"]
    assert plain["q2"] == 0.0  # no ideal gain: q2 has no relevant document
    dcg = values(["dcg.-1=1"], "10.0", run=run, complete=True)["dcg_-1=1"]
    assert dcg["q2"] == 1.0
    dcg_j = values(["dcg.-1=1"], "10.0", run=run, complete=True, judged_only=True)["dcg_-1=1"]
    assert dcg_j["q2"] == 0.0
    dcg_m0 = values(["dcg.-1=1"], "10.0", run=run, complete=True, max_docs=0)["dcg_-1=1"]
    assert dcg_m0 == {"q1": 0.0, "q2": 0.0}  # -M0 empties every ranking, the bogus one too


# trec_eval's expected outputs are compared whole, byte for byte, in test_conformance.py.


# --------------------------------------------------------------------------- pytrec_eval
def _read_dicts(qrels_path, run_path):
    qrels, run = {}, {}
    for line in open(qrels_path):
        f = line.split()
        qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    for line in open(run_path):
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    return qrels, run


PYTREC_MEASURES = ["ndcg", "ndcg_rel", "Rndcg", "G", "binG", "ndcg_cut.3,10,23,1000,5000"]
DATASETS = [
    (TE / "qrels.test", TE / "results.test"),
    (TE / "qrels.rel_level", TE / "results.test"),
    (DATA / "cast2021" / "qrels-docs.2021.qrel", DATA / "cast2021" / "docrun_org_manual_bm25.run"),
]


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("qrels_path,run_path", DATASETS, ids=["test", "rel_level", "cast2021"])
def test_per_topic_values_equal_pytrec_eval(qrels_path, run_path, level):
    import pytrec_eval
    qrels, run = _read_dicts(qrels_path, run_path)
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC_MEASURES),
                                              relevance_level=level).evaluate(run)
    ev = score_trec(qrels_path, run_path, PYTREC_MEASURES, Options(relevance_level=level))
    assert sorted(ev.qids) == sorted(expected)
    compared = 0
    for col in ev.columns:
        for qid, value in zip(ev.qids, col.values.tolist()):
            assert value == expected[qid][col.name], (col.name, qid)
            compared += 1
    assert compared == len(ev.qids) * 10
