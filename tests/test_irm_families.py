"""ir_measures measures that trec_eval lacks, computed natively (trecqr/measures/irm_native.py),
against ir_measures 0.4.3's own providers on CAsT 2021 document runs: the cwl_eval family
(cwl-eval package), gdeval's ERR@k and nDCG(dcg='exp-log2')@k (gdeval.pl under perl), Compat
and Accuracy. Per topic and aggregate, exact float equality.

The inputs are real lines of ``qrels-docs.2021.qrel`` and ``docrun_org_*.run``, cut to the
first 45 topics of the run (judged and unjudged turns) plus two judged turns the cut run lacks
(ir_measures counts them as 0), so that the providers' pure-Python loops stay fast. A second
version of each run has coarse scores (``floor(score / 7)``, many ties) and each topic's lines
in reverse order, so the providers' different tie orders are exercised: input order (cwl_eval,
accuracy), docno ascending (compat), docno descending (gdeval).

gdeval.pl accepts only numeric topic ids (CAsT's ``106_1`` stops it with "format error on line
1"), so its oracle reads the same files with topics renumbered in run order.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import ir_measures
import trecqr
from conftest import data_path
from trecqr.errors import UsageError

pytestmark = pytest.mark.filterwarnings("ignore")

RUNS = ["docrun_org_convdr.run", "docrun_org_manual_bm25.run"]

CWL = ["BPM(max_rel=4)@10", "BPM(T=2.0,min_rel=1,max_rel=3)@20", "INST(max_rel=4)",
       "INST(T=2.5,max_rel=4)", "INSQ(max_rel=4)", "INSQ(T=3.0,max_rel=2)", "SDCG(max_rel=4)@10",
       "SDCG(max_rel=4)@3", "NERR8(max_rel=4)@10", "NERR9(max_rel=4)@5", "NERR10(max_rel=4)",
       "NERR10(p=0.5,max_rel=3)", "NERR11(max_rel=4)", "NERR11(T=2.0,max_rel=4)",
       "RBP(rel=1)", "RBP(p=0.95,rel=3)"]
GDEVAL = ["ERR@10", "ERR@1", "ERR@1000", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@5",
          "nDCG(dcg='exp-log2')@100"]
COMPAT = ["Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)"]
ACCURACY = ["Accuracy", "Accuracy@10", "Accuracy(rel=2)", "Accuracy(rel=3)@20"]


def _cut(run_name: str, ties: bool, folder):
    """(qrels path, run path) of the cut inputs (see the module docstring)."""
    run_lines = data_path("cast2021", run_name).read_text().splitlines()
    qrels_lines = data_path("cast2021", "qrels-docs.2021.qrel").read_text().splitlines()
    run_topics = list(dict.fromkeys(line.split()[0] for line in run_lines))
    keep = set(run_topics[:45])
    judged = list(dict.fromkeys(line.split()[0] for line in qrels_lines))
    absent = [t for t in judged if t not in set(run_topics[:45])][-2:]
    run_out = [line for line in run_lines if line.split()[0] in keep]
    if ties:
        by_topic: dict = {}
        for line in run_out:
            f = line.split()
            f[4] = str(math.floor(float(f[4]) / 7))
            by_topic.setdefault(f[0], []).append(" ".join(f))
        run_out = [line for lines in by_topic.values() for line in reversed(lines)]
    qrels_out = [line for line in qrels_lines if line.split()[0] in keep | set(absent)]
    q = folder / "qrels.txt"
    r = folder / ("ties.run" if ties else "cut.run")
    q.write_text("\n".join(qrels_out) + "\n")
    r.write_text("\n".join(run_out) + "\n")
    return q, r


@pytest.fixture(scope="module", params=[(name, ties) for name in RUNS for ties in (False, True)],
                ids=lambda p: p[0].split("_", 2)[-1][:-4] + ("-ties" if p[1] else ""))
def case(request, tmp_path_factory):
    return _cut(*request.param, tmp_path_factory.mktemp("irm"))


def _oracle(names, qrels_path, run_path, renumber=False):
    """ir_measures' default pipeline: ({name: aggregate}, {(name, qid): value})."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    back = {}
    if renumber:  # gdeval: digits only; numbered in run order, so it adds topics in that order
        ids: dict = {}
        for row in run + qrels:
            ids.setdefault(row.query_id, str(len(ids) + 1))
        back = {v: k for k, v in ids.items()}
        qrels = [row._replace(query_id=ids[row.query_id]) for row in qrels]
        run = [row._replace(query_id=ids[row.query_id]) for row in run]
    measures = [ir_measures.parse_measure(n) for n in names]
    result = ir_measures.calc(measures, qrels, run)
    name_of = dict(zip(measures, names))
    per_topic = {(name_of[m.measure], back.get(m.query_id, m.query_id)): m.value
                 for m in result.per_query}
    return {name_of[m]: v for m, v in result.aggregated.items()}, per_topic


def _compare(names, qrels_path, run_path, renumber=False):
    expected_agg, expected = _oracle(names, qrels_path, run_path, renumber)
    res = trecqr.evaluate(str(qrels_path), str(run_path), names)
    got_agg, per_query = res.aggregate(), res.per_query()
    checked = 0
    for (name, qid), value in expected.items():
        if qid in per_query:  # qrels topics the run lacks: only in the aggregate
            assert per_query[qid][name] == value, (name, qid)
            checked += 1
    for qid in set(per_query) & {q for _, q in expected}:  # the same names, topic by topic
        assert set(per_query[qid]) == {n for n, q in expected if q == qid}, qid
    assert {n: got_agg[n] for n in names} == expected_agg
    return checked


def test_cwl_eval_family(case):
    pytest.importorskip("cwl", reason="the oracle is ir_measures' cwl_eval provider "
                        "(pip install cwl-eval)")
    assert ir_measures.cwl_eval.is_available()
    assert _compare(CWL, *case) > 30 * len(CWL)


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
def test_gdeval_err_and_exp_log2_ndcg(case):
    assert _compare(GDEVAL, *case, renumber=True) > 30 * len(GDEVAL)


def test_compat(case):
    assert _compare(COMPAT, *case) > 30 * len(COMPAT)


def _accuracy_oracle(name, qrels_path, run_path):
    """The accuracy provider topic by topic: it divides by zero on a topic whose documents
    within the cutoff are all relevant (trecqr leaves that topic out, as if not reported)."""
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    m = ir_measures.parse_measure(name)
    values, crashed = {}, []
    for qid in dict.fromkeys(r.query_id for r in run):
        try:
            for metric in ir_measures.iter_calc([m], qrels, [r for r in run if r.query_id == qid]):
                values[metric.query_id] = metric.value
        except ZeroDivisionError:
            crashed.append(qid)
    return values, crashed


def test_accuracy_values(case):
    """The native function: NaN where the provider reports nothing; the provider's mean is
    over the reported topics (its iter_calc adds no defaults)."""
    from trecqr.api.evaluation import load_qrels, load_run
    from trecqr.measures.accuracy import accuracy

    q, r = load_qrels(str(case[0])), load_run(str(case[1]))
    judged = set(q.qid.to_pylist())
    topics = [t for t in dict.fromkeys(r.qid.to_pylist()) if t in judged]
    for name in ACCURACY:
        expected, crashed = _accuracy_oracle(name, *case)
        got = accuracy(r, q, topics, ir_measures.parse_measure(name))
        assert {t: v for t, v in zip(topics, got) if not np.isnan(v)} == expected
        assert all(np.isnan(got[topics.index(t)]) for t in crashed if t in judged)
        if not crashed:
            agg = ir_measures.calc_aggregate([ir_measures.parse_measure(name)],
                                             list(ir_measures.read_trec_qrels(str(case[0]))),
                                             list(ir_measures.read_trec_run(str(case[1]))))
            values = got[~np.isnan(got)]
            assert list(agg.values()) == [float(np.cumsum(values)[-1]) / len(values)]


def test_accuracy_through_evaluate(case):
    assert _compare(["Accuracy", "Accuracy(rel=2)"], *case) > 0


def test_tie_orders_by_hand():
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


def test_refusals_match_the_default_pipeline():
    """Names ir_measures parses but no provider of its default pipeline computes. ranx's
    provider is left out: it joins the pipeline only where ranx is installed (the test extra
    has it, as the fusion oracle), and under pandas 3 it fails on ir_measures' own DataFrames
    (an AssertionError on the string dtype) instead of declining."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0}}
    pipeline = ir_measures.providers.FallbackProvider(
        [p for p in ir_measures.DefaultPipeline.providers if p.NAME != "ranx"])
    for name in ["ERR", "nDCG(dcg='exp-log2')", "RBP", "RBP(rel=1)@10"]:
        with pytest.raises(ValueError, match="Unsupported measures"):
            pipeline.calc_aggregate([ir_measures.parse_measure(name)], qrels, run)
        with pytest.raises(UsageError, match="not supported by its provider"):
            trecqr.evaluate(qrels, run, [name])
    with pytest.raises(UsageError, match="grades up to 4"):
        trecqr.evaluate({"q": {"a": 5}}, run, ["ERR@10"])
    with pytest.raises(UsageError, match="min_rel must be less than max_rel"):
        trecqr.evaluate(qrels, run, ["INST(min_rel=2,max_rel=2)"])


GENERATED = ["BPM(max_rel=3)@5", "INST(max_rel=3)", "INSQ(max_rel=2)", "SDCG(max_rel=3)@5",
             "NERR8(max_rel=3)@4", "NERR9(max_rel=3)@4", "NERR10(max_rel=3)", "NERR11(max_rel=3)",
             "RBP(rel=1)", "RBP(p=0.5,rel=2)", "ERR@5", "ERR@50", "nDCG(dcg='exp-log2')@5",
             "Compat", "Compat(p=0.7,normalize=False)"]


@pytest.mark.parametrize("seed", range(12))
def test_generated_cases(seed):
    """compat_cases' seeded dicts: exact ties and 1e-9 gaps, grades -1..3, missing topics,
    numeric and URL docnos (numeric topic ids, so gdeval.pl runs as it is)."""
    pytest.importorskip("cwl")
    if shutil.which("perl") is None:
        pytest.skip("gdeval.pl needs perl")
    from compat_cases import make_case

    qrels, run = make_case(seed)
    run = {q: d for q, d in run.items() if d}
    measures = [ir_measures.parse_measure(n) for n in GENERATED]
    expected = ir_measures.calc(measures, qrels, run)
    res = trecqr.evaluate(qrels, run, GENERATED)
    per_query = res.per_query()
    per_topic = {(str(m.measure), m.query_id): m.value for m in expected.per_query}
    for m, name in zip(measures, GENERATED):
        for qid in per_query:
            assert per_query[qid][name] == per_topic[(str(m), qid)], (name, qid)
    agg = res.aggregate()
    # gdeval yields topics in numeric order, trecqr adds them in run order: the last bit may
    # differ (the per-topic values are equal)
    assert all(agg[n] == pytest.approx(expected.aggregated[m], rel=1e-15, abs=1e-15)
               for m, n in zip(measures, GENERATED))
