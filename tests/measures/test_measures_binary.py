"""Binary-relevance measures: Rprec, Rprec_mult, bpref, gm_bpref, infAP, iprec_at_recall,
11pt_avg, recall, relative_P, success, map_cut, set_*, utility, relstring, yaap, unj, and the
core map, gm_map, P, recip_rank and counts.

Hand-checked values are written as trec_eval computes them (the same operations in the same
order), so every comparison is exact; each was also confirmed with trec_eval binaries built
from the 9.0.8 and 10.0 sources. Then: our rows of trec_eval's own conformance outputs, for
both versions, and exact per-topic agreement with pytrec_eval (trec_eval 9.0.8 inside).
"""

from __future__ import annotations

import math
from functools import reduce
from operator import add

import pytest

from conftest import DATA, TE, run_cli
from trecqr.api.evaluation import evaluate, score_trec
from trecqr.errors import UsageError
from trecqr.rankings.options import Options

# q1 ranking (score order): c a x e b f with grades 0 2 (not in qrels) -1 1 0; d (grade 1) is
# not retrieved, so R = 3 (a, b, d), relevant retrieved = 2 (ranks 2 and 5).
# q2: only non-relevant judgments; ranking n1 (grade 0), y (not in qrels).
QRELS = {"q1": {"a": 2, "b": 1, "c": 0, "d": 1, "e": -1, "f": 0}, "q2": {"n1": 0, "n2": 0}}
RUN = {"q1": {"c": 6.0, "a": 5.0, "x": 4.0, "e": 3.0, "b": 2.0, "f": 1.0},
       "q2": {"n1": 2.0, "y": 1.0}}


def values(measures, compat="9.0.8", qrels=QRELS, run=RUN, **opts):
    """{value name: {qid: per-topic value}} as trec_eval would store them."""
    ev = score_trec(qrels, run, measures, Options(compat=compat, **opts))
    return {c.name: dict(zip(ev.qids, c.values.tolist())) for c in ev.columns}


def seq(*xs):
    """Left-to-right float sum, as trec_eval's loops add."""
    return reduce(add, xs, 0.0)


BOTH = pytest.mark.parametrize("compat", ["9.0.8", "10.0"])


# --------------------------------------------------------------------------- R-based precision
@BOTH
def test_rprec(compat):
    assert values(["Rprec"], compat)["Rprec"] == {"q1": 1 / 3, "q2": 0.0}


def test_rprec_mult_cutoffs_are_truncated_multiples_of_r():
    # (long)(m * 3 + 0.9): 0.2 -> 1, 0.6 -> 2 (2.6999...), 1.4 -> 5 (5.0999...), 3.0 -> 9 > 6
    v = values(["Rprec_mult.0.2,0.6,1.4,3.0"])
    assert v["Rprec_mult_0.20"]["q1"] == 0.0
    assert v["Rprec_mult_0.60"]["q1"] == 1 / 2
    assert v["Rprec_mult_1.40"]["q1"] == 2 / 5
    assert v["Rprec_mult_3.00"]["q1"] == 2 / 9      # past the ranking: missing docs nonrelevant
    assert v["Rprec_mult_3.00"]["q2"] == 0.0         # R = 0


# --------------------------------------------------------------------------- bpref, infAP
@BOTH
def test_bpref_counts_only_judged_documents(compat):
    # judged order: c (nonrel) a (rel) [x, e skipped] b (rel) f (nonrel); num_nonrel = 2
    v = values(["bpref", "gm_bpref"], compat)
    one = 1.0 - min(1, 3) / min(2, 3)
    assert v["bpref"] == {"q1": seq(one, one) / 3, "q2": 0.0}
    assert v["gm_bpref"] == {"q1": math.log(seq(one, one) / 3), "q2": math.log(0.00001)}


def test_bpref_nonrelevant_count_follows_relevance_level():
    # -l2: only a is relevant (R = 1); c, b, f are judged nonrelevant (num_nonrel = 4: c f b d)
    v = values(["bpref"], relevance_level=2)
    assert v["bpref"]["q1"] == 1.0 - min(1, 1) / min(4, 1)


@BOTH
def test_infap(compat):
    eps = 0.00001
    # a at 0-based rank 1: 0 relevant and 1 judged nonrelevant above it
    a = (1.0 / (1.0 + 1.0)
         + (1.0 / (1.0 + 1.0)) * ((0 + 1 + 0) / 1.0) * ((0 + eps) / (0 + 1 + 2 * eps)))
    # b at rank 4: 1 relevant, 1 nonrelevant, 1 pooled-unjudged (e) above it; x not in pool
    b = (1.0 / (4.0 + 1.0)
         + (4.0 / (4.0 + 1.0)) * ((1 + 1 + 1) / 4.0) * ((1 + eps) / (1 + 1 + 2 * eps)))
    assert values(["infAP"], compat)["infAP"] == {"q1": seq(a, b) / 3, "q2": 0.0}


def test_infap_relevant_first_document_counts_one():
    v = values(["infAP"], run={"q1": {"a": 2.0, "b": 1.0}})
    assert v["infAP"]["q1"] == seq(
        1.0, 1.0 / 2.0 + (1.0 / 2.0) * (1 / 1.0) * ((1 + 1e-5) / (1 + 2e-5))) / 3


# --------------------------------------------------------------------------- interpolated
# precision at ranks 1..6 of q1: 0 .5 1/3 .25 .4 1/3; best from the 1st relevant (rank 2)
# on is .5, from the 2nd (rank 5) on .4; there is no 3rd.
IPREC_908 = [.5, .5, .5, .5, .4, .4, .4, .4, 0.0, 0.0, 0.0]   # cutoffs 0 1 1 1 2 2 2 2 3 3 3
IPREC_10 = [.5, .5, .5, .5, .5, .4, .4, .4, .4, 0.0, 0.0]     # lround: 0 0 1 1 1 2 2 2 2 3 3


@pytest.mark.parametrize("compat,expected", [("9.0.8", IPREC_908), ("10.0", IPREC_10)])
def test_iprec_at_recall_cutoff_rounding_differs_between_versions(compat, expected):
    v = values(["iprec_at_recall"], compat)
    names = [f"iprec_at_recall_{p / 10:3.2f}" for p in range(11)]
    assert [v[n]["q1"] for n in names] == expected
    assert [v[n]["q2"] for n in names] == [0.0] * 11  # nothing relevant retrieved


@pytest.mark.parametrize("compat,expected", [("9.0.8", IPREC_908), ("10.0", IPREC_10)])
def test_11pt_avg_adds_from_the_last_point(compat, expected):
    v = values(["11pt_avg"], compat)
    assert v["11pt_avg"]["q1"] == seq(*reversed(expected)) / 11


def test_11pt_avg_unsorted_points_follow_trec_eval_walk():
    """Parameters are not sorted: cutoffs 2, 1 (for .5, .1) are taken from the last; 1 is met
    at the first relevant document, after which 2 can no longer be met and gets the final
    interpolated precision (.5), not its own (.4)."""
    assert values(["11pt_avg.0.5,0.1"])["11pt_avg_0.5,0.1"]["q1"] == seq(.5, .5) / 2
    assert values(["11pt_avg.0.1,0.5"])["11pt_avg_0.1,0.5"]["q1"] == seq(.4, .5) / 2


def test_iprec_nothing_judged_retrieved_is_nan_as_trec_eval(tmp_path):
    """With -J and no judged document retrieved, trec_eval divides 0 by 0 at recall 0."""
    v = values(["iprec_at_recall.0,0.5"], run={"q1": {"x": 1.0}}, judged_only=True)
    assert math.isnan(v["iprec_at_recall_0.00"]["q1"])
    assert v["iprec_at_recall_0.50"]["q1"] == 0.0
    (tmp_path / "q").write_text("q1 0 a 1\n")
    (tmp_path / "r").write_text("q1 Q0 x 1 1.0 r\n")
    out = run_cli(["eval", "--quiet", "-q", "-J", "-m", "iprec_at_recall.0", "q", "r"],
                  cwd=tmp_path).stdout
    assert out == ("iprec_at_recall_0.00  \tq1\t  -nan\n"
                   "iprec_at_recall_0.00  \tall\t  -nan\n")


# --------------------------------------------------------------------------- cutoff measures
@BOTH
def test_recall_relative_p_success_map_cut(compat):
    v = values(["recall.1,2,5,10", "relative_P.1,2,5", "success.1,2", "map_cut.2,5,100"], compat)
    assert [v[f"recall_{k}"]["q1"] for k in (1, 2, 5, 10)] == [0.0, 1 / 3, 2 / 3, 2 / 3]
    assert [v[f"relative_P_{k}"]["q1"] for k in (1, 2, 5)] == [0 / 1, 1 / 2, 2 / 3]
    assert [v[f"success_{k}"]["q1"] for k in (1, 2)] == [0.0, 1.0]
    assert [v[f"map_cut_{k}"]["q1"] for k in (2, 5, 100)] == [
        0.5 / 3, seq(0.5, 2 / 5) / 3, seq(0.5, 2 / 5) / 3]
    assert all(v[n]["q2"] == 0.0 for n in v)


@BOTH
def test_map_gm_map_p_recip_rank_counts(compat):
    v = values(["map", "gm_map", "P.1,2,10", "recip_rank", "num_ret", "num_rel", "num_rel_ret",
                "num_nonrel_judged_ret"], compat)
    ap = seq(1 / 2, 2 / 5) / 3
    assert v["map"] == {"q1": ap, "q2": 0.0}
    assert v["gm_map"] == {"q1": math.log(ap), "q2": math.log(0.00001)}
    assert [v[f"P_{k}"]["q1"] for k in (1, 2, 10)] == [0.0, 0.5, 2 / 10]
    assert v["recip_rank"] == {"q1": 0.5, "q2": 0.0}
    assert (v["num_ret"], v["num_rel"], v["num_rel_ret"], v["num_nonrel_judged_ret"]) == (
        {"q1": 6, "q2": 2}, {"q1": 3, "q2": 0}, {"q1": 2, "q2": 0}, {"q1": 2, "q2": 1})


def test_unj_is_10_only():
    v = values(["unj"], "10.0")
    assert v["unj_5"] == {"q1": 2 / 5, "q2": 1 / 5}     # x (not in qrels) and e (grade -1)
    assert v["unj_20"] == {"q1": 2 / 20, "q2": 1 / 20}  # missing ranks count as judged
    with pytest.raises(UsageError):
        values(["unj"], "9.0.8")


def test_unj_params():
    v = values(["unj.2,4"], "10.0")
    assert v["unj_2"]["q1"] == 0.0 and v["unj_4"]["q1"] == 2 / 4


# --------------------------------------------------------------------------- set measures
@BOTH
def test_set_measures(compat):
    v = values(["set_P", "set_relative_P", "set_recall", "set_map", "set_F"], compat)
    v.update(values(["set_F.0.5"], compat))  # the first -m giving a measure its params wins
    p, r = 2 / 6, 2 / 3
    assert v["set_P"] == {"q1": p, "q2": 0 / 2}
    assert v["set_relative_P"] == {"q1": 2 / 3, "q2": 0.0}
    assert v["set_recall"] == {"q1": r, "q2": 0.0}
    assert v["set_map"] == {"q1": (2.0 * 2.0) / (6.0 * 3.0), "q2": 0.0}
    assert v["set_F"] == {"q1": (1.0 + 1.0) * p * r / (1.0 * p + r), "q2": 0.0}
    assert v["set_F_0.5"] == {"q1": (0.5 + 1.0) * p * r / (0.5 * p + r), "q2": 0.0}


def test_utility_default_and_collection_size():
    assert values(["utility"])["utility"] == {"q1": 2 - 4.0, "q2": 0 - 2.0}
    v = values(["utility.2,-1,0,0.5"], num_docs_in_coll=100)["utility_2,-1,0,0.5"]
    assert v["q1"] == 2 * 2 - 1 * 4 + 0 * 1 + 0.5 * (100 + 2 - 6 - 3)
    with pytest.raises(UsageError):
        values(["utility.1,2"])


def test_utility_reads_dash_n(tmp_path):
    (tmp_path / "q").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 z 2 1.0 r\n")
    out = run_cli(["eval", "--quiet", "-N", "50", "-m", "utility.1,-1,-1,0.25", "q", "r"],
                  cwd=tmp_path).stdout
    # a=1 b=1 c=0 d=50+1-2-1=48 -> 1 - 1 + 12
    assert out == "utility_1,-1,-1,0.25  \tall\t12.0000\n"


# --------------------------------------------------------------------------- relstring, yaap
@BOTH
def test_relstring(compat):
    v = {**values(["relstring"], compat), **values(["relstring.3"], compat)}
    assert v["relstring"] == {"q1": "02-.10", "q2": "0-"}
    assert v["relstring_3"] == {"q1": "02-", "q2": "0-"}
    high = values(["relstring"], compat, qrels={"q1": {"a": 12, "b": 9}},
                  run={"q1": {"a": 2.0, "b": 1.0}})
    assert high["relstring"] == {"q1": ">9"}


def test_relstring_prints_quoted_per_topic_only(tmp_path):
    (tmp_path / "q").write_text("q1 0 a 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 z 2 1.0 r\n")
    out = run_cli(["eval", "--quiet", "-q", "-m", "relstring", "q", "r"], cwd=tmp_path).stdout
    assert out == "relstring             \tq1\t'1-'\n"


def test_yaap():
    s = seq(1 / 2, 2 / 5)
    v = values(["yaap"])["yaap"]
    assert v == {"q1": math.log((1.0 + s) / (1.0 + 3.0 - s)), "q2": math.log(1.0 / 1.0)}


# --------------------------------------------------------------------------- negative -l
@BOTH
def test_negative_level_two_counts_of_relevant_retrieved(compat):
    """With -l -1, rank loops call x (not in the qrels, -1) relevant: 5 of q1's documents (c a
    x b f); form_res_rels' num_rel_ret counts judged ones only (c a b f = 4), and R counts
    grades >= 0 (a b c d f = 5). iprec and Rprec_mult start their backward walk from 4 but
    step down at all 5, so precision at rank i is (loop count - 1) / i."""
    v = values(["num_rel_ret", "num_rel", "set_P", "iprec_at_recall.0.5,1.0",
                "Rprec_mult.1.0,2.0", "map"], compat, relevance_level=-1)
    assert (v["num_rel_ret"]["q1"], v["num_rel"]["q1"]) == (4, 5)
    assert v["set_P"]["q1"] == 4 / 6
    # walk precision at ranks 1..6: 0/1 1/2 2/3 2/4 3/5 4/6; cutoff for .5 is 3 (4th doc
    # counted relevant, rank 5); 1.0 -> 5 is above 4, never met
    assert v["iprec_at_recall_0.50"]["q1"] == max(3 / 5, 4 / 6)
    assert v["iprec_at_recall_1.00"]["q1"] == 0.0
    assert v["Rprec_mult_1.00"]["q1"] == (4 - 1) / 5     # rank 5: 4 counted, minus the offset
    assert v["Rprec_mult_2.00"]["q1"] == 4 / 10          # cutoff 10 past the ranking
    assert v["map"]["q1"] == seq(1 / 1, 2 / 2, 3 / 3, 4 / 5, 5 / 6) / 5


# --------------------------------------------------------------------------- -c bogus topics
def test_10_complete_missing_topic_bogus_ranking():
    """10.0 -c scores a topic missing from the run on a one-document unjudged ranking, then
    zeroes only values named exactly "utility" and "relstring" (and every unj_*)."""
    qrels = {**QRELS, "q3": {"a": 1, "b": 0}}
    v = values(["relstring", "utility", "unj", "set_P", "Rprec_mult.1.0"], "10.0",
               qrels=qrels, complete=True)
    assert v["relstring"]["q3"] == "" and v["utility"]["q3"] == 0.0 and v["unj_5"]["q3"] == 0.0
    w = values(["relstring.5", "utility.1,-1,0,0"], "10.0", qrels=qrels, complete=True)
    assert w["relstring_5"]["q3"] == "-"            # its bogus document, not in the qrels
    assert w["utility_1,-1,0,0"]["q3"] == -1.0      # one nonrelevant retrieved
    old = values(["relstring", "utility"], "9.0.8", qrels=qrels, complete=True)
    assert "q3" not in old["utility"]               # 9.0.8: not evaluated, only averaged over


# trec_eval's expected outputs are compared whole, byte for byte, in test_conformance.py.
MINE = ["Rprec_mult", "Rprec", "bpref", "gm_bpref", "infAP", "iprec_at_recall", "11pt_avg",
        "recall", "relative_P", "success", "map_cut", "set_P", "set_relative_P", "set_recall",
        "set_map", "set_F", "utility", "relstring", "yaap", "unj", "map", "gm_map", "P",
        "recip_rank", "runid", "num_q", "num_ret", "num_rel", "num_rel_ret",
        "num_nonrel_judged_ret"]


# --------------------------------------------------------------------------- pytrec_eval
def _read(path, run=False):
    out = {}
    for line in open(path):
        f = line.split()
        out.setdefault(f[0], {})[f[2]] = float(f[4]) if run else int(f[3])
    return out


PYTREC_CASES = [
    (TE / "qrels.test", TE / "results.test", 1, False),
    (TE / "qrels.rel_level", TE / "results.test", 2, False),
    (TE / "qrels.test", TE / "results.trunc", 1, True),
    (DATA / "cast2021" / "qrels-docs.2021.qrel", DATA / "cast2021" / "org_convdr.trec", 1, False),
    (DATA / "cast2021" / "qrels-docs.2021.qrel", DATA / "cast2021" / "org_manual_bm25.trec", 3,
     False),
    (DATA / "cast2021" / "qrels-docs.2021.qrel", DATA / "cast2021" / "org_manual_bm25.trec", 2,
     True),
]


@pytest.mark.parametrize("qrels,run,level,judged_only", PYTREC_CASES,
                         ids=[f"{c[1].name}-l{c[2]}{'-J' if c[3] else ''}" for c in PYTREC_CASES])
def test_per_topic_equals_pytrec_eval(qrels, run, level, judged_only):
    import pytrec_eval
    measures = sorted(set(MINE) & set(pytrec_eval.supported_measures) - {"runid", "relstring"})
    evaluator = pytrec_eval.RelevanceEvaluator(_read(qrels), set(measures),
                                               relevance_level=level,
                                               judged_docs_only_flag=judged_only)
    theirs = evaluator.evaluate(_read(run, run=True))
    ours = evaluate(str(qrels), str(run), measures, relevance_level=level,
                    judged_only=judged_only).per_query()
    assert set(ours) == set(theirs)
    compared = 0
    for qid, vals in theirs.items():
        for name, value in vals.items():
            mine = ours[qid][name]
            assert mine == value or (math.isnan(mine) and math.isnan(value)), (qid, name)
            compared += 1
    assert compared > 70 * len(theirs)  # 79 values a topic: every P_, recall_, iprec_ ...
