"""One evaluation core behind every door (issue 20): the plan is made once, one function
(trecqr.engine.execute.execute) runs it, and trec_eval's rankings are built once per call.

Spies wrap the functions the core calls and record who called them, so a door that went
another way (a second path, a second ranking) fails here; values are checked against the same
names scored one at a time, so a shared ranking that is wrong fails too.
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pytest

import trecqr
from conftest import cast2021_dicts, data_path, run_cli
from trecqr.formats import Run, read_qrels, read_run
from trecqr.engine import execute as core
from trecqr.engine import rankings as core_rankings
from trecqr.engine import plan as plan_module
from trecqr.rankings import trec_order as ordering

QRELS = data_path("cast2021", "qrels-docs.2021.qrel")
RUN = data_path("cast2021", "docrun_org_convdr.run")


_dicts = cast2021_dicts


def _callers(depth: int = 4) -> set:
    """The code objects of the frames above a spy."""
    frame, out = sys._getframe(2), set()
    for _ in range(depth):
        if frame is None:
            break
        out.add(frame.f_code)
        frame = frame.f_back
    return out


@pytest.fixture
def calls(monkeypatch):
    """For each call of the core's two ranking routes (core_rankings.rank, and the C module's
    dict_values for pytrec_eval's common measures): whether core.execute is just above it;
    and how often build_rankings and the C dict ranker ran."""
    seen = {"rank": [], "build_rankings": 0, "rank_run": 0, "dict_values": 0}
    real_rank, real_build, real_values = core.rank, core_rankings.build_rankings, \
        core_rankings.dict_values

    def rank(*args, **kw):
        seen["rank"].append(core.execute.__code__ in _callers())
        return real_rank(*args, **kw)

    def c_pass(*args):  # the C module's one pass that ranks and computes trecqr.evaluate's
        seen["dict_values"] += 1
        return real_values(*args)

    if real_values is not None:
        monkeypatch.setattr(core_rankings, "dict_values", c_pass)
    monkeypatch.setattr(core, "rank", rank)

    def build(*args, **kw):
        seen["build_rankings"] += 1
        return real_build(*args, **kw)

    monkeypatch.setattr(core_rankings, "build_rankings", build)
    if core_rankings.rank_run is not None:
        real_c = core_rankings.rank_run

        def rank_run(*args):
            seen["rank_run"] += 1
            return real_c(*args)

        monkeypatch.setattr(core_rankings, "rank_run", rank_run)
    return seen


def test_every_door_reaches_the_same_core_function(calls):
    """evaluate (dicts, files), evaluate_many, RelevanceEvaluator and `trecqr eval` (trec_eval
    and ir_measures names) all rank through core.execute, with equal values."""
    qrels, run = _dicts()
    names = ["map", "nDCG@3"]
    ev = trecqr.evaluate(qrels, run, names).aggregate()
    doors = {
        "evaluate on files": lambda: trecqr.evaluate(str(QRELS), str(RUN), names).aggregate(),
        "evaluate_many": lambda: [m.aggregate() for m in
                                  trecqr.evaluate_many(str(QRELS), [str(RUN)] * 2, names)],
        "RelevanceEvaluator, C measures": lambda: trecqr.RelevanceEvaluator(
            qrels, {"map"}).evaluate(run),
        "RelevanceEvaluator, numpy measures": lambda: trecqr.RelevanceEvaluator(
            qrels, {"map", "bpref"}).evaluate(run),
        "trecqr eval, ir_measures names": lambda: run_cli(
            ["eval", "-m", "map", "-m", "nDCG@3", QRELS, RUN]).output,
        "trecqr eval": lambda: run_cli(["eval", "-m", "map", QRELS, RUN]).output,
    }
    for door, call in doors.items():
        calls["rank"].clear()
        out = call()
        assert calls["rank"] and all(calls["rank"]), door
        if door == "evaluate on files":
            assert out == ev
        elif door == "evaluate_many":
            assert out == [ev, ev]
        elif door.startswith("RelevanceEvaluator"):
            assert np.mean([v["map"] for v in out.values()]) == pytest.approx(ev["map"],
                                                                           abs=1e-15)
        else:
            assert f"map                   \tall\t{ev['map']:.4f}" in out


def test_a_mixed_list_builds_rankings_once(calls):
    """trec_eval names, pytrec_eval-provider names at other levels / -J, RR@3 (msmarco) and
    alpha_nDCG@10 (pyndeval) in one call: one trec_eval ranking (before: one per path, and
    alpha_nDCG next to map was refused); each value equals the name scored alone."""
    names = ["map", "P.5", "RR@3", "nDCG@3", "P(rel=2)@5", "nDCG(judged_only=True)@10",
             "R@100", "Judged@10", "alpha_nDCG@10"]
    for qrels, run in [_dicts(), (str(QRELS), str(RUN))]:
        calls["build_rankings"] = calls["rank_run"] = calls["dict_values"] = 0
        res = trecqr.evaluate(qrels, run, names)
        assert calls["build_rankings"] + calls["rank_run"] + calls["dict_values"] == 1
        # dicts: the C module's pass, when built; files: build_rankings
        assert calls["dict_values" if isinstance(run, dict) and core_rankings.rank_run
                     else "build_rankings"] == 1
        alone = {}
        for name in names:
            alone.update(trecqr.evaluate(qrels, run, [name]).aggregate())
        assert res.aggregate() == alone
        assert res.aggregate()["alpha_nDCG@10"] > 0 and res.aggregate()["map"] > 0


def test_evaluate_on_dicts_makes_no_object_per_line(monkeypatch):
    """Dicts of pytrec_eval's form go to the C ranker: no run columns (run_from_dict made a
    Python list entry per line, then Arrow arrays), unless a name reads the run itself."""
    made = []
    real = core_rankings.run_from_dict
    monkeypatch.setattr(core_rankings, "run_from_dict", lambda *a: made.append(1) or real(*a))
    qrels, run = _dicts()
    trecqr.evaluate(qrels, run, ["map", "ndcg_cut.3", "RR", "nDCG@3", "R@100"])
    assert made == []
    trecqr.evaluate(qrels, run, ["RR@3"])  # ir_measures' Python order: the run's columns
    assert made == [1]


def test_docnos_are_not_cast_through_arrow(monkeypatch):
    """Ranking columns casts no docno column through Arrow, whether the docnos are decimal
    numbers (MS MARCO's) or not (MARCO_D..., CAsT): the C ranker reads their bytes (an integer
    cast of every docno took 35% of evaluate's time on such runs before)."""
    casts = []
    real = ordering.pc

    class Counting:  # pyarrow.compute as the ranking code sees it, counting its casts
        def __getattr__(self, name):
            return getattr(real, name)

        def cast(self, *a, **k):
            casts.append(1)
            return real.cast(*a, **k)

    q, scanned = read_qrels(QRELS), read_run(RUN)
    # columns as a DataFrame or Arrow gives them (no scanner codes): the general path
    r = Run(scanned.qid, scanned.docno, scanned.score, scanned.runid, "<columns>")
    monkeypatch.setattr(ordering, "pc", Counting())
    res = trecqr.evaluate(q, r, ["map"])
    assert casts == []
    numbers = real.cast(real.dictionary_encode(r.docno).indices, "string")  # "0", "1"...
    trecqr.evaluate(q, Run(r.qid, numbers, r.score, r.runid, "x"), ["map"])
    assert casts == []
    assert res.aggregate()["map"] == trecqr.evaluate(str(QRELS), str(RUN), ["map"]) \
        .aggregate()["map"]


def test_fixed_costs_are_paid_once(monkeypatch):
    """Measure names are read once: by RelevanceEvaluator's constructor (not per evaluate),
    and once for a loop calling evaluate with the same names (plans are kept)."""
    reads = []
    real = plan_module.split_measures
    monkeypatch.setattr(plan_module, "split_measures", lambda m: reads.append(1) or real(m))
    qrels, run = _dicts()
    names = ["P.10", "nDCG@5", "RR(rel=2)"]
    first = trecqr.evaluate(qrels, run, names).aggregate()
    for _ in range(3):
        assert trecqr.evaluate(qrels, run, names).aggregate() == first
    assert reads == [1]
    made = []
    real_select = plan_module.select_measures
    monkeypatch.setattr(plan_module, "select_measures",
                        lambda n: made.append(1) or real_select(n))
    evaluator = trecqr.RelevanceEvaluator(qrels, {"ndcg_cut.5", "P.3", "recall.7"})
    values = [evaluator.evaluate(run) for _ in range(3)]
    assert made == [1] and values[0] == values[1] == values[2]


def test_gains_and_levels_are_views_of_one_ranking():
    """nDCG(gains=...) and rel=2 names computed on the call's one ranking equal ir_measures'
    own pipeline (pytrec_eval on mapped qrels), on the real CAsT 2021 run."""
    import ir_measures

    qrels, run = _dicts()
    names = ["nDCG(gains={0:0,1:1,2:5,3:7,4:10})@10", "P(rel=3)@5", "AP(rel=2)",
             "nDCG(judged_only=True,gains={0:1,1:0,2:2,3:2,4:4})"]
    got = trecqr.evaluate(qrels, run, names).aggregate()
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    assert got == {n: want[ir_measures.parse_measure(n)] for n in names}
