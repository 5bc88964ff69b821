"""ir_measures names in trecqr.evaluate against ir_measures.calc_aggregate / iter_calc.

Exact float equality: ir_measures adds per-topic values in the run's topic order and divides
by the number of qrels topics (a judged topic without results counts 0).
"""

from __future__ import annotations

import ir_measures
import pytest

import trecqr
from compat_cases import make_case, same
from conftest import TE
from trecqr.errors import UsageError
from trecqr.engine.names import split_measures

NAMES = ["RR", "RR@3", "AP", "AP@5", "nDCG", "nDCG@3", "R@100", "P@10", "P(rel=2)@5",
         "Rprec(rel=1)", "Bpref", "infAP(rel=1)", "Success@5", "Judged@10", "Judged", "NumQ",
         "NumRet", "NumRel", "NumRelRet", "SetP", "SetR", "SetF", "IPrec@0.5", "RR(rel=2)@2",
         "SetF(beta=0.5)", "AP(rel=2)", "SetP(relative=True)", "R(rel=2)@5", "NumRet(rel=2)",
         "IPrec@0.0", "Success(rel=2)@1", "Judged@1"]
# ir_measures computes NumRet and gain-less nDCG in whichever pytrec_eval invocation its set
# iteration meets first (so under -J, or with another nDCG's gains, depending on the hash
# seed): measures with judged_only or gains are compared in a separate call.
NAMES_WITH_OPTIONS = [["nDCG(judged_only=True)@3", "P(judged_only=True)@5",
                       "SetF(judged_only=True)", "P@5"],
                      ["nDCG(gains={0:0,1:1,2:5})@10", "nDCG(gains={0:0,1:2,2:3})", "P@5"]]


def _ir_measures_aggregate(names, qrels, run):
    measures = [ir_measures.parse_measure(n) for n in names]
    result = ir_measures.calc_aggregate(measures, qrels, run)
    return {n: result[m] for n, m in zip(names, measures)}


@pytest.mark.parametrize("seed", range(40))
def test_generated_cases(seed):
    qrels, run = make_case(seed)
    run = {q: d for q, d in run.items() if d}  # a DataFrame or file has no empty topics
    assert set(run) & set(qrels), "the generator must give qrels and run a topic in common"
    for names in (NAMES, *NAMES_WITH_OPTIONS):
        got = trecqr.evaluate(qrels, run, names).aggregate()
        expected = _ir_measures_aggregate(names, qrels, run)
        wrong = {n: (expected[n], got[n]) for n in names if not same(expected[n], got[n])}
        assert not wrong
        assert list(got) == names  # keyed by the names as written


def test_trec_eval_test_data_and_per_topic_values():
    qrels = list(ir_measures.read_trec_qrels(str(TE / "qrels.test")))
    run = list(ir_measures.read_trec_run(str(TE / "results.test")))
    res = trecqr.evaluate(TE / "qrels.test", TE / "results.test", NAMES)
    got = res.aggregate()
    expected = _ir_measures_aggregate(NAMES, qrels, run)
    assert {n: got[n] for n in NAMES} == expected
    per_query = res.per_query()
    measures = {ir_measures.parse_measure(n): n for n in NAMES}
    checked = 0
    for metric in ir_measures.iter_calc(list(measures), qrels, run):
        if metric.query_id in per_query:
            assert per_query[metric.query_id][measures[metric.measure]] == metric.value
            checked += 1
    assert checked == len(per_query) * len(NAMES)


def test_python_order_of_ties_for_rr_and_judged():
    """msmarco's RR@k and Judged@k sort ties by docno ascending, on float64 scores; trec_eval
    (and so RR without cutoff) ties 1.0 and 1.0+1e-9 and puts docno "b" first."""
    qrels = {"q": {"a": 0, "b": 1}, "other": {"z": 1}}
    run = {"q": {"b": 1.0, "a": 1.0 + 1e-9, "c": 0.5}}
    got = trecqr.evaluate(qrels, run, ["RR", "RR@2", "RR@1", "Judged@1", "Judged@3"]).aggregate()
    assert got == {"RR": 1.0 / 2, "RR@2": 0.5 / 2, "RR@1": 0.0, "Judged@1": 1.0 / 2,
                   "Judged@3": (2 / 3) / 2}
    assert got == _ir_measures_aggregate(list(got), qrels, run)


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


def test_cli_accepts_ir_measures_names(tmp_path):
    """`trecqr eval -m RR@3 -m nDCG@3` prints the API's values in trec_eval's layout, after the
    trec_eval measures of the same call; per-topic rows with -q."""
    from conftest import ROOT, run_cli

    q, r = ROOT / "fixtures/cast2021/qrels.txt", ROOT / "fixtures/cast2021/manual_bm25.run"
    res = run_cli(["eval", "-m", "recip_rank", "-m", "RR@3", "-m", "nDCG@3", q, r])
    assert res.exit_code == 0, res.stderr
    api = trecqr.evaluate(str(q), str(r), ["RR@3", "nDCG@3"]).aggregate()
    assert res.stdout == ("recip_rank            \tall\t0.6725\n"
                          f"RR@3                  \tall\t{api['RR@3']:.4f}\n"
                          f"nDCG@3                \tall\t{api['nDCG@3']:.4f}\n")
    assert f"{api['RR@3']:.4f}" == "0.6422"
    res = run_cli(["eval", "-q", "-m", "RR(rel=2)@3", q, r])
    lines = res.stdout.splitlines()
    assert lines[0] == "RR(rel=2)@3           \t106_1\t0.5000" and len(lines) == 35
    res = run_cli(["eval", "-R", "prefs", "-m", "RR@3", q, r])
    assert res.exit_code == 2 and "ir_measures names (RR@3) need -R qrels" in res.stderr
