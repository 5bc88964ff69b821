"""The table of candidates fusion works on (trecqr/fusion/pool.py): the C kernel (_pool.c, a
hash table per topic) and the numpy path (one hash of the docnos, one sort) number the same
candidates in the same order, on the five CAsT 2021 organiser runs and on a case by hand.
test_fuse_ranx.py checks the fused runs against ranx with whichever path is built."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from conftest import data_path

from trecqr.formats.run import Run, read_run
from trecqr.fusion import pool as pool_module
from trecqr.fusion.pool import build_pool

NAMES = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
         "org_manual_bm25"]

needs_kernel = pytest.mark.skipif(pool_module._kernel is None, reason="_pool.c not built")


def _both(runs, monkeypatch):
    with_kernel = build_pool(runs)
    monkeypatch.setattr(pool_module, "_kernel", None)
    without = build_pool(runs)
    monkeypatch.undo()
    return with_kernel, without


def _same(a, b):
    assert a.topics == b.topics
    assert a.qid.to_pylist() == b.qid.to_pylist()
    assert a.docno.to_pylist() == b.docno.to_pylist()
    for name in ("topic", "starts", "pos", "length"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.score, b.score, equal_nan=True)


@needs_kernel
def test_kernel_and_numpy_agree_on_cast(monkeypatch):
    runs = [read_run(data_path("cast2021", f"{n}.trec")) for n in NAMES]
    a, b = _both(runs, monkeypatch)
    _same(a, b)
    # what makes the case: passages retrieved for several topics (each a candidate of each)
    docno = np.array(a.docno.to_pylist())
    assert len(docno) == len(a.topic) > len(set(docno.tolist()))
    # every (topic, docno) pair once, and every run's row in it
    assert len(set(zip(a.topic.tolist(), docno.tolist()))) == len(docno)
    assert int(a.present.sum()) == sum(len(r) for r in runs)


def _run(rows, runid):
    qid, docno, score = zip(*rows)
    return Run(pa.array(qid), pa.array(docno), np.array(score, np.float64), runid)


@pytest.mark.parametrize("kernel", [True, False])
def test_candidates_by_hand(monkeypatch, kernel):
    if kernel and pool_module._kernel is None:
        pytest.skip("_pool.c not built")
    if not kernel:
        monkeypatch.setattr(pool_module, "_kernel", None)
    a = _run([("t2", "x", 3), ("t2", "y", 2), ("t1", "y", 5), ("t1", "", 1)], "a")
    b = _run([("t1", "z", 9), ("t1", "", 8), ("t3", "x", 1), ("t2", "w", 4), ("t2", "x", 0)], "b")
    p = build_pool([a, b])
    assert p.topics == ["t2", "t1", "t3"]
    # topic by topic; in a topic, run a's documents by position, then those b adds
    assert list(zip(p.qid.to_pylist(), p.docno.to_pylist())) == [
        ("t2", "x"), ("t2", "y"), ("t2", "w"), ("t1", "y"), ("t1", ""), ("t1", "z"),
        ("t3", "x")]
    assert p.pos.tolist() == [[0, 1], [1, -1], [-1, 0], [0, -1], [1, 1], [-1, 0], [-1, 0]]
    assert p.length.tolist() == [[2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [0, 1]]
    assert p.starts.tolist() == [0, 3, 6, 7]
