"""One route from input to number: every door decides each input's kind once
(trecqr.formats.inputs.decide), and every door reaches the same engine function.

Spies wrap the deciding function and record the objects it is given: a door that looked at
an input's type a second time, or read it twice, shows up as a second call on the same input.
"""

from __future__ import annotations

import os
import sys

import ir_measures
import pandas as pd
import pytest

import trecqr
from conftest import cast2021_dicts, data_path, run_cli
from trecqr.api import many
from trecqr.formats import inputs

QRELS = str(data_path("cast2021", "qrels-docs.2021.qrel"))
RUN = str(data_path("cast2021", "docrun_org_convdr.run"))
OTHER_RUN = str(data_path("cast2021", "docrun_org_manual_bm25.run"))
TE_QRELS = str(data_path("trec_eval-test", "qrels.test"))
TE_RUN = str(data_path("trec_eval-test", "results.test"))


@pytest.fixture
def decided(monkeypatch):
    """The inputs :func:`inputs.decide` was called on, in call order (paths as strings)."""
    seen = []
    real = inputs.decide

    def spy(obj, **kw):
        seen.append(os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else obj)
        return real(obj, **kw)

    monkeypatch.setattr(inputs, "decide", spy)
    monkeypatch.setattr(many, "_RELEVANCE", {})  # evaluate_many reads its qrels afresh
    return seen


def _once_each(seen, *given) -> bool:
    """Each given input was decided exactly once, and nothing else was."""
    return len(seen) == len(given) and all(
        sum(s is g or (isinstance(g, str) and s == g) for s in seen) == 1 for g in given)


def test_evaluate_decides_each_input_once(decided):
    """trecqr.evaluate on paths, on dicts and on DataFrames: one decision per input."""
    trecqr.evaluate(QRELS, RUN, ["map", "nDCG@3", "RR@3"])
    assert _once_each(decided, QRELS, RUN)
    qrels, run = cast2021_dicts()
    decided.clear()
    trecqr.evaluate(qrels, run, ["map", "P.5"])
    assert _once_each(decided, qrels, run)
    frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                         columns=["query_id", "doc_id", "score"])
    decided.clear()
    trecqr.evaluate(qrels, frame, ["map", "nDCG@10"])
    assert _once_each(decided, qrels, frame)


def test_relevance_evaluator_decides_each_input_once(decided):
    """RelevanceEvaluator: the qrels in its constructor, each run in evaluate, once each."""
    qrels, run = cast2021_dicts()
    evaluator = trecqr.RelevanceEvaluator(qrels, {"map", "bpref"})
    assert _once_each(decided, qrels)
    decided.clear()
    evaluator.evaluate(run)
    assert _once_each(decided, run)


def test_evaluate_many_decides_the_qrels_once_for_every_run(decided):
    """evaluate_many: the qrels decided once for all runs, each run once."""
    results = trecqr.evaluate_many(QRELS, [RUN, OTHER_RUN], ["map"], jobs=1)
    assert len(results) == 2
    assert _once_each(decided, QRELS, RUN, OTHER_RUN)


@pytest.mark.parametrize("names", [["map"], ["map", "nDCG@3"]])
def test_trecqr_eval_decides_each_input_once(decided, names):
    """trecqr eval, with trec_eval names and with ir_measures names: once per input."""
    args = ["eval"] + [a for n in names for a in ("-m", n)] + [QRELS, RUN]
    assert run_cli(args).exit_code == 0
    assert _once_each(decided, QRELS, RUN)


def test_ir_measures_provider_decides_each_input_once(decided):
    """The provider: the qrels when its evaluator is made, the run when it is scored."""
    trecqr.register_ir_measures()
    qrels, run = cast2021_dicts()
    measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@10", "RR@10")]
    ir_measures.calc_aggregate(measures, qrels, run)  # the provider's one-off probes
    decided.clear()
    ir_measures.calc_aggregate(measures, qrels, run)
    assert _once_each(decided, qrels, run)


@pytest.fixture
def parsed(monkeypatch):
    """How often each measure name is read: ir_measures names parsed (names._parse), trec_eval
    measures looked up (selection.load_family), with the plan cache emptied."""
    from trecqr.engine import names, plan, selection

    seen = {"irm": [], "trec": []}
    real_parse, real_load = names._parse, selection.load_family
    monkeypatch.setattr(names, "_parse", lambda n: seen["irm"].append(n) or real_parse(n))
    monkeypatch.setattr(selection, "load_family",
                        lambda n: seen["trec"].append(n) or real_load(n))
    monkeypatch.setattr(plan, "_PLANS", {})
    return seen


@pytest.mark.parametrize("args", [
    ["-m", "map", "-m", "P.5"], ["-m", "map", "-m", "nDCG@3"], ["-m", "RR@3"],
    ["-R", "qrels_prefs", "-m", "prefs_simp"]])
def test_trecqr_eval_reads_each_measure_name_once(parsed, args):
    """trecqr eval reads its names once, into one plan, whatever the names and -R format
    (it used to sniff them for ir_measures names, then split and select them again)."""
    res = run_cli(["eval", *args, TE_QRELS, TE_RUN])
    assert res.exit_code == 0, res.stderr
    assert sorted(parsed["trec"]) == sorted(set(parsed["trec"]))
    assert sorted(parsed["irm"]) == sorted(set(parsed["irm"]))
    assert parsed["trec"] or parsed["irm"]


def test_evaluate_reads_each_measure_name_once(parsed):
    """trecqr.evaluate: each name read once per call."""
    trecqr.evaluate(TE_QRELS, TE_RUN, ["map", "P.5", "nDCG@3", "RR@3"])
    assert sorted(parsed["trec"]) == ["P", "map", "ndcg_cut"]  # nDCG@3: ndcg_cut.3
    assert sorted(parsed["irm"]) == ["RR@3", "nDCG@3"]


def _callers(depth: int = 6) -> set:
    """The code objects of the frames above a spy."""
    frame, out = sys._getframe(2), set()
    while frame is not None and len(out) < depth:
        out.add(frame.f_code)
        frame = frame.f_back
    return out


@pytest.fixture
def executed(monkeypatch):
    """Per ranking of a call: whether engine.execute.execute is above it; and per C pass over
    dicts, whether engine.rankings.rank (the ranking layer) is."""
    from trecqr.engine import execute as core
    from trecqr.engine import rankings

    seen = {"rank": [], "c_pass": []}
    real_rank, real_values = core.rank, rankings.dict_values

    def rank(*args, **kw):
        seen["rank"].append(core.execute.__code__ in _callers())
        return real_rank(*args, **kw)

    def dict_values(*args):
        seen["c_pass"].append(real_rank.__code__ in _callers())
        return real_values(*args)

    monkeypatch.setattr(core, "rank", rank)
    monkeypatch.setattr(rankings, "dict_values", dict_values)
    return seen


def test_every_door_reaches_the_same_execute(executed):
    """trecqr eval, evaluate, RelevanceEvaluator (C measures and numpy ones), evaluate_many
    and the ir_measures provider: each run is ranked once, inside engine.execute; the C pass
    over dicts is chosen inside the ranking layer."""
    qrels, run = cast2021_dicts()
    trecqr.register_ir_measures()
    measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@10")]
    ir_measures.calc_aggregate(measures, qrels, run)  # the provider's one-off probes
    doors = {
        "trecqr eval": (lambda: run_cli(["eval", "-m", "map", QRELS, RUN]), 1),
        "trecqr eval, ir_measures names": (
            lambda: run_cli(["eval", "-m", "map", "-m", "nDCG@3", QRELS, RUN]), 1),
        "evaluate, files": (lambda: trecqr.evaluate(QRELS, RUN, ["map", "RR@3"]), 1),
        "evaluate, dicts": (lambda: trecqr.evaluate(qrels, run, ["map", "nDCG@3"]), 1),
        "RelevanceEvaluator, C measures": (
            lambda: trecqr.RelevanceEvaluator(qrels, {"map", "P_5"}).evaluate(run), 1),
        # the C pass computes every pytrec_eval measure but 11pt_avg at unsorted recall points
        # (pytrec_eval sorts them as text: 10 before 9), which trec_eval's walk treats apart
        "RelevanceEvaluator, numpy measures": (
            lambda: trecqr.RelevanceEvaluator(qrels, {"map", "11pt_avg.10,9"}).evaluate(run), 1),
        "evaluate_many": (lambda: trecqr.evaluate_many(QRELS, [RUN, OTHER_RUN], ["map"],
                                                       jobs=1), 2),
        "ir_measures provider": (lambda: ir_measures.calc_aggregate(measures, qrels, run), 1),
    }
    for door, (call, runs) in doors.items():
        executed["rank"].clear()
        executed["c_pass"].clear()
        call()
        assert executed["rank"] == [True] * runs, door
        # dicts with pytrec_eval's common measures only: the C pass, from the ranking layer
        c_pass = door in ("evaluate, dicts", "RelevanceEvaluator, C measures")
        assert executed["c_pass"] == ([True] if c_pass else []), door


def test_small_columns_take_the_c_pass_inside_rank_with_the_columns_values(executed,
                                                                          monkeypatch):
    """A small DataFrame (up to rankings.C_PASS_ROWS rows) is ranked by the C pass over dicts,
    chosen inside the ranking layer; its values are those of the columns ranker bit for bit
    (rank the same frame with the threshold at 0)."""
    from trecqr.engine import rankings

    qrels, run = cast2021_dicts()
    rows = [(q, d, s) for q in sorted(run)[:10] for d, s in list(run[q].items())[:100]]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    assert len(frame) <= rankings.C_PASS_ROWS
    names = ["map", "P.5", "nDCG@3", "R@100", "RR"]
    small = trecqr.evaluate(qrels, frame, names)
    assert executed["c_pass"] == [True]
    executed["c_pass"].clear()
    monkeypatch.setattr(rankings, "C_PASS_ROWS", 0)
    columns = trecqr.evaluate(qrels, frame, names)
    assert executed["c_pass"] == []
    assert small.per_query() == columns.per_query() and small.n == columns.n
    assert small.aggregate() == columns.aggregate()
