"""Each number states the topics it averages, and every scoring door agrees on them.

A trec_eval name (recip_rank) averages the topics in both run and qrels (-c: every qrels topic,
0 without results); an ir_measures name (RR@3) every qrels topic, a topic without results
counting 0. Per-topic outputs (eval -q, Results.per_query(), the DataFrames, JSON) list, for
each measure, the topics its mean averages; the coverage line, Results.n / populations() and the
JSON say which. An empty ranking in a run dict is scored as pytrec_eval scores it. The
ir_measures provider gives its rows in ir_measures' own order, whatever PYTHONHASHSEED.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import trecqr
from conftest import run_cli

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures" / "cast2021"
# trec_eval binaries built from the official source, when a developer names them (CI has none:
# the test then checks trecqr's line against the values pytrec_eval and the docs give)
TE = {"9.0.8": Path(os.environ.get("TRECQR_TE908", "/nonexistent")),
      "10.0": Path(os.environ.get("TRECQR_TE10", "/nonexistent"))}

# the minimal case: q1 judges d1=1, d2=0; q2 judges d3=1; the run ranks d2, d1 for q1 only
QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
RUN = {"q1": {"d2": 2.0, "d1": 1.0}}


def _files(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    run.write_text("q1 Q0 d2 1 2 r1\nq1 Q0 d1 2 1 r1\n")
    return qrels, run


def _eval(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "trecqr", "eval", *map(str, args)],
                          capture_output=True, text=True, env=env, check=False)


def _lacking_nine(tmp_path):
    """The README's CAsT 2021 manual_bm25 run without its first 9 judged topics."""
    judged = list(dict.fromkeys(line.split()[0] for line in
                                (FIX / "qrels.txt").read_text().splitlines()))
    gone = set(judged[:9])
    run = tmp_path / "lacking.run"
    run.write_text("".join(line + "\n" for line in (FIX / "manual_bm25.run").read_text()
                           .splitlines() if line.split()[0] not in gone))
    return run


def test_the_minimal_case_keeps_each_reference_value(tmp_path):
    """RR@3 = 0.25 (ir_measures: both qrels topics), recip_rank = 0.5 (trec_eval: the one
    evaluated), recip_rank under -c = 0.25, through eval and evaluate alike."""
    qrels, run = _files(tmp_path)
    out = _eval("-m", "recip_rank", "-m", "RR@3", qrels, run).stdout
    assert out == "recip_rank            \tall\t0.5000\nRR@3                  \tall\t0.2500\n"
    assert _eval("-c", "-m", "recip_rank", qrels, run).stdout.endswith("\tall\t0.2500\n")
    assert trecqr.evaluate(QRELS, RUN, ["recip_rank", "RR@3"]).aggregate() == \
        {"recip_rank": 0.5, "RR@3": 0.25}
    assert trecqr.evaluate(QRELS, RUN, "recip_rank", complete=True).aggregate() == \
        {"recip_rank": 0.25}


def test_eval_q_lists_the_topics_each_mean_averages(tmp_path):
    """eval -q lists q2 = 0 for RR@3 (its mean counts it) and not for recip_rank, as
    Results.per_query() does; the mean of each measure's rows is its summary."""
    qrels, run = _files(tmp_path)
    result = _eval("-q", "--format", "json", "-m", "recip_rank", "-m", "RR@3", qrels, run)
    doc = json.loads(result.stdout)
    per_query = trecqr.evaluate(QRELS, RUN, ["recip_rank", "RR@3"]).per_query()
    assert doc["per_query"] == per_query == {"q1": {"recip_rank": 0.5, "RR@3": 0.5},
                                             "q2": {"RR@3": 0.0}}
    for m, value in doc["summary"].items():
        rows = [v[m] for v in doc["per_query"].values() if m in v]
        assert sum(rows) / len(rows) == value
    text = _eval("-q", "-m", "RR@3", "-m", "recip_rank", qrels, run).stdout
    assert "RR@3                  \tq2\t0.0000\n" in text
    assert "recip_rank            \tq2" not in text


def test_coverage_line_names_both_rules(tmp_path):
    """One output, two populations: the stderr line names both, on the README's CAsT 2021
    qrels and a run lacking 9 judged topics."""
    run = _lacking_nine(tmp_path)
    result = _eval("-m", "recip_rank", "-m", "RR@3", "-m", "ndcg_cut.3", "-m", "nDCG@3",
                   FIX / "qrels.txt", run)
    assert result.returncode == 0
    assert result.stderr.startswith(
        "trecqr: recip_rank, ndcg_cut_3: 25 evaluated (-c counts the 9 as 0); RR@3, nDCG@3: "
        "34 qrels topics (ir_measures: a topic without results counts 0); 9 only in qrels (")
    doc = json.loads(_eval("--format", "json", "-m", "recip_rank", "-m", "RR@3",
                           FIX / "qrels.txt", run).stdout)
    assert doc["averaged_over"] == {
        "recip_rank": {"n": 25, "rule": "trec_eval", "without_results": 0},
        "RR@3": {"n": 34, "rule": "ir_measures", "without_results": 9}}
    lines = _eval("--format", "jsonl", "-m", "recip_rank", "-m", "RR@3", FIX / "qrels.txt",
                  run).stdout.splitlines()
    assert [json.loads(line)["n"] for line in lines] == [25, 34]


def test_results_state_each_population(tmp_path):
    """Results: n per measure, the topics each averages, the rule; the DataFrames carry
    them (attrs), the repr names both populations; the wide frame's NaN are the topics a
    measure does not average."""
    res = trecqr.evaluate(FIX / "qrels.txt", _lacking_nine(tmp_path),
                          ["recip_rank", "RR@3", "ndcg_cut.3", "nDCG@3"])
    assert res.n == {"recip_rank": 25, "ndcg_cut_3": 25, "RR@3": 34, "nDCG@3": 34}
    pops = res.populations()
    assert pops["RR@3"].rule == "ir_measures" and len(pops["RR@3"].without_results) == 9
    assert pops["recip_rank"].rule == "trec_eval" and len(pops["recip_rank"].left_out) == 9
    assert res.topics("RR@3") == sorted(res.per_query())
    per_query = res.per_query()
    for m, value in res.aggregate().items():
        listed = [q for q in per_query if m in per_query[q]]
        assert listed == res.topics(m)
        assert sum(per_query[q][m] for q in listed) / len(listed) == pytest.approx(value,
                                                                                   abs=1e-15)
    wide = res.to_dataframe(wide=True)
    assert wide.attrs["n"] == res.n
    assert wide["recip_rank"].notna().sum() == 25 and wide["RR@3"].notna().sum() == 34
    assert res.to_dataframe().attrs["populations"]["recip_rank"] == \
        "25 evaluated (complete=True counts the 9 as 0)"
    assert "RR@3, nDCG@3: 34 qrels topics" in repr(res)


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_complete_coverage_describes_the_mean(tmp_path, compat):
    """eval -c: the line says the mean is over 2 qrels topics, 1 with results (9.0.8 said
    "1 topics evaluated" beside a mean over 2); stdout stays trec_eval's own bytes."""
    qrels, run = _files(tmp_path)
    args = ["-c", "-q", "-m", "recip_rank", "-m", "num_q", qrels, run]
    result = _eval("--compat", compat, *args)
    assert result.stderr == ("trecqr: 2 qrels topics (-c: a topic without results counts 0), "
                             "1 with results; 1 only in qrels (q2); 0 only in run\n")
    if TE[compat].exists():
        ref = subprocess.run([str(TE[compat]), *map(str, args)], capture_output=True,
                             text=True, check=True).stdout
        assert result.stdout == ref
    res = trecqr.evaluate(QRELS, RUN, "recip_rank", complete=True, compat=compat)
    assert res.n == {"recip_rank": 2}
    assert res.populations()["recip_rank"].without_results == ("q2",)


def test_an_empty_ranking_is_scored_as_pytrec_eval_scores_it():
    """{"q2": {}}: pytrec_eval scores q2 on an empty ranking; evaluate, evaluate_many and
    RelevanceEvaluator give its values, and the means count it."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = {"q1": {"d2": 2.0, "d1": 1.0}, "q2": {}, "q9": {}}
    names = {"recip_rank", "num_rel", "num_ret", "P_5", "map"}
    expected = pytrec_eval.RelevanceEvaluator(QRELS, names).evaluate(run)
    assert trecqr.RelevanceEvaluator(QRELS, names).evaluate(run) == expected
    args = ["recip_rank", "num_rel", "num_ret", "P.5", "map"]
    for res in (trecqr.evaluate(QRELS, run, args),
                trecqr.evaluate({q: {d: float(g) for d, g in docs.items()}
                                 for q, docs in QRELS.items()}, run, args),
                trecqr.evaluate_many(QRELS, [run], args)[0]):
        assert res.per_query() == expected
        assert res.aggregate()["recip_rank"] == 0.25 and res.n["recip_rank"] == 2
    # ir_measures names: the same value (its default, 0, for the providers reading rows)
    assert trecqr.evaluate(QRELS, run, ["RR@3", "Judged@3", "AP"]).per_query() == \
        {"q1": {"RR@3": 0.5, "Judged@3": 1.0, "AP": 0.5},
         "q2": {"RR@3": 0.0, "Judged@3": 0.0, "AP": 0.0}}


_ORDER = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import ir_measures, pandas as pd
import pyterrier as pt
import trecqr
from ir_measures import AP, RR, P, nDCG, R
qrels = list(ir_measures.read_trec_qrels(sys.argv[1]))
run = [r for r in ir_measures.read_trec_run(sys.argv[2]) if r.query_id not in sys.argv[3:]]
measures = [RR@3, AP, RR, P@5, nDCG@3, R@100]
qf = pd.DataFrame([q._asdict() for q in qrels]).rename(
    columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
rf = pd.DataFrame([r._asdict() for r in run]).rename(columns={"query_id": "qid", "doc_id": "docno"})
topics = pd.DataFrame({"qid": sorted(set(qf.qid) | set(rf.qid)), "query": "unused"})
system = pt.Transformer.from_df(rf)
out = []
for provider in (False, True):  # ir_measures' own pipeline, then with trecqr's provider first
    if provider:
        trecqr.register_ir_measures()
    rows = [(m.query_id, str(m.measure)) for m in ir_measures.iter_calc(measures, qrels, run)]
    mean = pt.Experiment([system], topics, qf, measures, names=["r"])
    per = pt.Experiment([system], topics, qf, measures, names=["r"], perquery=True)
    out.append({"rows": rows, "columns": list(mean.columns),
                "per_query": list(zip(per.qid, per.measure))})
assert [p.NAME for p in ir_measures.DefaultPipeline.providers][0] == "trecqr"
print(json.dumps(out))
"""


def test_provider_order_does_not_depend_on_the_hash_seed(tmp_path):
    """iter_calc's rows and pt.Experiment's columns and per-query rows, with the provider,
    are those of ir_measures' own pipeline under PYTHONHASHSEED 0 and 1 (they came in an
    order that changed with the seed; two seeds show it, one process per seed, each paying a
    pyterrier import, computing ir_measures' own order and then the provider's)."""
    pytest.importorskip("pyterrier")
    script = tmp_path / "order.py"
    script.write_text(_ORDER)
    judged = list(dict.fromkeys(line.split()[0] for line in
                                (FIX / "qrels.txt").read_text().splitlines()))
    outputs = {}
    for seed in ("0", "1"):
        env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED=seed)
        done = subprocess.run([sys.executable, str(script), FIX / "qrels.txt",
                               FIX / "manual_bm25.run", *judged[:3]], capture_output=True,
                              text=True, env=env, check=True)
        for provider, output in enumerate(json.loads(done.stdout.splitlines()[-1])):
            outputs[seed, str(provider)] = output
    own = outputs["0", "0"]
    assert own["columns"] == ["name", "AP", "RR", "P@5", "R@100", "nDCG@3", "RR@3"]
    assert {json.dumps(o, sort_keys=True) for o in outputs.values()} == \
        {json.dumps(own, sort_keys=True)}


def test_duplicated_judgments_refused_in_ir_measures_terms():
    """With the provider, qrels that judge (q1, d1) twice (1, then 0) are refused where
    ir_measures alone gives RR@3 = 1.0 above RR = 0.5: the message says what is duplicated,
    why a value would be wrong and what to do, in ir_measures' terms."""
    import ir_measures
    from ir_measures import RR, Qrel, ScoredDoc

    qrels = [Qrel("q1", "d1", 1), Qrel("q1", "d2", 1), Qrel("q1", "d1", 0)]
    run = [ScoredDoc("q1", "d1", 2.0), ScoredDoc("q1", "d2", 1.0)]
    own = ir_measures.providers.FallbackProvider(
        [p for p in ir_measures.DefaultPipeline.providers if p.NAME not in ("trecqr", "ranx")])
    assert own.calc_aggregate([RR@3, RR], qrels, run) == {RR@3: 1.0, RR: 0.5}
    provider = trecqr.register_ir_measures()
    try:
        with pytest.raises(ValueError) as caught:
            ir_measures.calc_aggregate([RR@3, RR], qrels, run)
    finally:
        ir_measures.DefaultPipeline.providers.remove(provider)
    message = str(caught.value)
    assert "duplicate judgment for topic 'q1' and docno 'd1'" in message
    assert "RR@3 = 1.0 beside RR = 0.5" in message
    assert "drop_duplicates(['query_id', 'doc_id']" in message


def test_complete_beside_ir_measures_names_gives_one_population(tmp_path):
    """-c next to ir_measures names changes only the trec_eval names: each keeps the value
    eval gives it alone (RR@3 as without -c, recip_rank as with -c alone), and the whole
    output averages the qrels topics. Before, -c was refused beside an ir_measures name,
    while compare accepted it."""
    q, r = tmp_path / "q.txt", tmp_path / "r.run"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    r.write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\n")
    mixed = run_cli(["eval", "-c", "-m", "RR@3", "-m", "recip_rank", str(q), str(r)])
    assert mixed.exit_code == 0, mixed.stderr
    assert mixed.stdout == ("recip_rank            \tall\t0.2500\n"
                            "RR@3                  \tall\t0.2500\n")
    assert "recip_rank: 2 qrels topics (-c: " in mixed.stderr
    assert "RR@3: 2 qrels topics (ir_measures: " in mixed.stderr
    res = trecqr.evaluate(str(q), str(r), ["RR@3", "recip_rank"], complete=True)
    assert res.aggregate() == {"RR@3": 0.25, "recip_rank": 0.25}
    assert res.n == {"RR@3": 2, "recip_rank": 2}
