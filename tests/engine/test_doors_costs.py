"""What each door pays, watched by spies on the engine's functions: every door (evaluate on
dicts and files, evaluate_many, RelevanceEvaluator, ``trecqr eval``) reaches the one
``execute``; a call builds trec_eval's rankings once; measure names are read once per
evaluator or repeated call; dicts make no object per line; tables are read as columns, never
turned into dicts; docnos are not cast through Arrow; the per-topic Evaluation is built only
when something reads it, once, and does not keep the run alive; a small qrels file is opened
once. The values themselves are checked against the oracles in tests/api/test_oracle_matrix.py.
"""

from __future__ import annotations

import gc
import pickle
import sys
import weakref

import numpy as np
import pyarrow as pa
import pytest

import trecqr
from conftest import cast2021_dicts, data_path, run_cli
from oracle_cases import KINDS, cast2021, columns
from trecqr.engine import execute as core
from trecqr.engine import plan as plan_module
from trecqr.engine import pytrec_values as pv
from trecqr.engine import rankings as core_rankings
from trecqr.formats import Run, read_qrels, read_run
from trecqr.rankings import trec_order as ordering

QRELS = data_path("cast2021", "qrels-docs.2021.qrel")
RUN = data_path("cast2021", "docrun_org_convdr.run")
NAMES = ["RR", "nDCG@3", "R@100", "P(rel=2)@5", "AP"]
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
    # plans kept by earlier tests of this process would hide the reads counted here
    monkeypatch.setattr(plan_module, "_PLANS", {})
    plan_module._pytrec_plan.cache_clear()
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


def test_a_repeated_docno_in_small_columns_names_the_line():
    """Parsed columns of a few hundred rows (a DataFrame's, a file's) with a repeated docno:
    the duplicate is refused, naming the document."""
    q, r = read_qrels(QRELS), read_run(RUN)
    keep = np.flatnonzero(np.isin(np.array(r.qid.to_pylist()),
                                  sorted(set(q.qid.to_pylist()))[:25]))
    r = Run(r.qid.take(keep), r.docno.take(keep), r.score[keep], "myrun", "<small>")
    twice = Run(pa.concat_arrays([r.qid, r.qid.slice(0, 1)]),
                pa.concat_arrays([r.docno, r.docno.slice(0, 1)]),
                np.append(r.score, 0.0), "myrun", "<small>")
    assert trecqr.evaluate(q, r, ["map"]).evaluation.runid == "myrun"
    with pytest.raises(trecqr.errors.InputError, match="duplicate document"):
        trecqr.evaluate(q, twice, ["map", "P.5", "RR", "nDCG@10"])


def test_results_not_yet_built_pickle_with_their_evaluation():
    """A Results sent to another process (evaluate_many's workers) carries its Evaluation:
    the function that would build it does not pickle."""
    qrels, run = _dicts()
    res = trecqr.evaluate(qrels, run, NAMES)
    again = pickle.loads(pickle.dumps(res))
    assert again.aggregate() == res.aggregate()
    assert again.per_query() == res.per_query()
    assert again.evaluation.qids == res.evaluation.qids


def test_small_qrels_dict_counts_when_read_as_numpy_counts(monkeypatch):
    """A few judgments are counted by Python when first read: the same arrays as numpy's
    count of the same dict (levels, counts per topic and level, grades, totals)."""
    qrels, _ = _dicts()
    few = {t: dict(list(qrels[t].items())[:6]) for t in sorted(qrels)[:30]}
    few[sorted(qrels)[0]]["negative"] = -2
    lazy = pv.DictQrels(few)
    assert "_pending" in vars(lazy)
    monkeypatch.setattr(pv, "SMALL_COUNT", 0)
    eager = pv.DictQrels(few)
    assert "_pending" not in vars(eager)
    for name in ("levels", "level_counts", "grade"):
        assert np.array_equal(getattr(lazy, name), getattr(eager, name)), name
        assert getattr(lazy, name).dtype == getattr(eager, name).dtype
    assert (lazy.wide, lazy.num_rel_all) == (eager.wide, eager.num_rel_all)
    assert lazy.topics == eager.topics and lazy.index == eager.index
    with pytest.raises(AttributeError):
        lazy.no_such_attribute


def test_small_files_are_opened_once(monkeypatch, tmp_path):
    """A small qrels file is read from the bytes its format sniffer read, and a small run's
    byte-order-mark check reads them too: Python opens each file once (the C scanner then
    reads the run). A run the C pass over dicts takes is not matched against the qrels'
    docnos while it is scanned (the columns ranker's work)."""
    import builtins

    from trecqr.engine import rankings

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    run.write_text("q1 Q0 d2 1 2.5 r\nq1 Q0 d1 2 1.5 r\nq2 Q0 d3 1 1 r\n")
    opened, real_open = [], builtins.open  # the files of this test (not the process's own)
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: (
        str(f).startswith(str(tmp_path)) and opened.append(str(f))) or real_open(f, *a, **k))
    matched = []
    monkeypatch.setattr(rankings, "distinct", lambda docnos: matched.append(docnos) or docnos)
    q = trecqr.load_qrels(str(qrels))
    assert opened == [str(qrels)]
    assert q.qid.to_pylist() == ["q1", "q1", "q2"] and q.grade.tolist() == [1, 0, 2]
    opened.clear()
    got = trecqr.evaluate(str(qrels), str(run), ["recip_rank"]).aggregate()
    assert sorted(opened) == [str(qrels), str(run)] and matched == []
    assert got == {"recip_rank": 0.75}


def test_results_not_yet_built_do_not_hold_the_run():
    """A Results kept for later (a training loop's, one per epoch) does not keep the run it
    scored alive until its Evaluation is built: the run dict is freed when the caller drops
    it, and the Evaluation built later has the same numbers."""
    class RunDict(dict):  # a dict that a weak reference can follow
        pass

    qrels, run = cast2021_dicts()
    held = RunDict(run)
    res = trecqr.evaluate(qrels, held, NAMES)
    means = res.aggregate()
    alive = weakref.ref(held)
    del held
    gc.collect()
    assert alive() is None
    assert res.per_query() == trecqr.evaluate(qrels, run, NAMES).per_query()
    assert {c.name: c.summary for c in res.evaluation.columns} == means


def test_relevance_evaluator_reads_tables_as_columns(monkeypatch):
    """RelevanceEvaluator on a DataFrame, an Arrow table, ranx objects and ir_datasets rows
    reads columns: no pytrec_eval dict is made of them (each dict maker raises here: they
    used to be turned into {qid: {docno: value}} one Python row at a time), and the values
    are the dicts' ones, key for key."""
    ranx = pytest.importorskip("ranx")
    from trecqr.formats import objects

    files = cast2021()
    c = columns(*files)
    measures = {"map", "ndcg_cut_3", "recip_rank", "P_10", "recall_100", "bpref"}
    expected = trecqr.RelevanceEvaluator(ranx.Qrels.from_file(str(files[0]), kind="trec")
                                         .to_dict(), measures).evaluate(
        ranx.Run.from_file(str(files[1]), kind="trec").to_dict())
    assert len(expected) == 158 and expected["106_1"]["recip_rank"] == 0.5
    kinds = ["PyTerrier DataFrame", "Arrow table", "ranx objects", "ir_datasets iterators"]
    qrels_kinds = [KINDS[k](files, c, None)[0] for k in kinds]
    run_kinds = [KINDS[k](files, c, None)[1] for k in kinds[:-1]]

    def refuse(*args, **kwargs):
        raise AssertionError("a table input was turned into dicts")

    for cls in (ranx.Run, ranx.Qrels):
        monkeypatch.setattr(cls, "to_dict", refuse)
    monkeypatch.setattr(pv.DictQrels, "__init__", refuse)
    for module, name in ((objects, "run_from_dict"), (objects, "qrels_from_dict"),
                         (pv, "grouped_dicts"),
                         (core_rankings, "dict_values"),
                         (core_rankings, "rank_run")):
        monkeypatch.setattr(module, name, refuse)
    for qrels in qrels_kinds:
        ev = trecqr.RelevanceEvaluator(qrels, measures)
        for run in run_kinds:
            assert ev.evaluate(run) == expected
