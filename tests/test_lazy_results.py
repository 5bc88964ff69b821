"""What a small call pays for (issue 20, latency at the smallest sizes): the means of
ir_measures names are read straight from the C pass's values, and the per-topic Evaluation
(rankings, columns) is built only when something reads it, once, with the same numbers.

Before: every ``trecqr.evaluate`` built rankings, columns and the Results a notebook reads,
3.8x the time of ``RelevanceEvaluator`` on one topic of ten documents; a small qrels
dict counted its grades per level even when nothing read the counts; a small qrels file was
opened twice (sniffed, then read).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import trecqr
from conftest import cast2021_dicts
from trecqr.engine import rankings as core_rankings
from trecqr.engine import pytrec_values as pv

NAMES = ["RR", "nDCG@3", "R@100", "P(rel=2)@5", "AP"]


_dicts = cast2021_dicts


@pytest.fixture
def built(monkeypatch):
    """How many times rankings were built from the C pass's values."""
    calls = []
    real = core_rankings._dict_rankings
    monkeypatch.setattr(core_rankings, "_dict_rankings",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_no_topic_in_common_warns_once():
    """The warning of a run and qrels with no topic in common is given when the means are
    read, not a second time when the Evaluation is built."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = trecqr.evaluate({"a": {"d": 1}}, {"b": {"d": 1.0}}, ["RR", "nDCG@3"])
        assert res.aggregate() == {"RR": 0.0, "nDCG@3": 0.0}
        assert res.per_query() == {"a": {"RR": 0.0, "nDCG@3": 0.0}}
    assert [str(w.message)[:19] for w in seen] == ["no topic in common:"]


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


def test_small_qrels_file_is_opened_once(monkeypatch, tmp_path):
    """A small qrels file is read from the bytes its format sniffer read: one open."""
    from trecqr.formats import colfiles, textio

    path = tmp_path / "qrels"
    path.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    opened = []
    real = textio.raw_head
    monkeypatch.setattr(textio, "raw_head", lambda name: opened.append(name) or real(name))
    monkeypatch.setattr(colfiles, "raw_head", textio.raw_head)
    q = trecqr.load_qrels(str(path))
    assert opened == [str(path)]
    assert q.qid.to_pylist() == ["q1", "q1", "q2"] and q.grade.tolist() == [1, 0, 2]


def test_results_not_yet_built_do_not_hold_the_run():
    """A Results kept for later (a training loop's, one per epoch) does not keep the run it
    scored alive until its Evaluation is built: the run dict is freed when the caller drops
    it, and the Evaluation built later has the same numbers."""
    import gc
    import weakref

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
