"""The table of candidates fusion works on (trecqr/fusion/pool.py, its C kernel _pool.c, a
hash table per topic): every (topic, docno) pair once, on the five CAsT 2021 organiser runs,
and the order and positions on a case by hand. test_fuse_ranx.py checks the fused runs
against ranx."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from conftest import data_path

from trecqr.formats.run import Run, read_run
from trecqr.fusion.pool import build_pool

NAMES = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
         "org_manual_bm25"]


def test_candidates_of_the_cast_runs():
    runs = [read_run(data_path("cast2021", f"{n}.trec")) for n in NAMES]
    a = build_pool(runs)
    # what makes the case: passages retrieved for several topics (each a candidate of each)
    docno = np.array(a.docno.to_pylist())
    assert len(docno) == len(a.topic) > len(set(docno.tolist()))
    # every (topic, docno) pair once, and every run's row in it
    assert len(set(zip(a.topic.tolist(), docno.tolist()))) == len(docno)
    assert int(a.present.sum()) == sum(len(r) for r in runs)


def _run(rows, runid):
    qid, docno, score = zip(*rows)
    return Run(pa.array(qid), pa.array(docno), np.array(score, np.float64), runid)


def test_candidates_by_hand():
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


def test_candidates_of_sliced_columns():
    """A run whose docno column is a slice of a larger array (its offsets start past 0): the
    kernel reads the slice's own documents."""
    full = pa.array(["zz", "x", "y", "w"])
    sliced = Run(pa.array(["t1", "t1", "t1"]), full.slice(1), np.array([3.0, 2.0, 1.0]), "s")
    other = _run([("t1", "w", 5), ("t1", "q", 4)], "o")
    p = build_pool([sliced, other])
    assert sliced.docno.offset == 1
    assert list(zip(p.qid.to_pylist(), p.docno.to_pylist())) == [
        ("t1", "x"), ("t1", "y"), ("t1", "w"), ("t1", "q")]
    assert p.pos.tolist() == [[0, -1], [1, -1], [2, 0], [-1, 1]]
