"""The set operations on string columns and numbers that a run's scoring takes from
``pyarrow.compute`` and numpy give their values on both sides of their size cut (a Python dict
below it, which spares a small run the import of ``pyarrow.compute``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from trecqr.formats.arrays import SMALL_SET, distinct, positions, sorted_distinct, string_array


def _docnos(n: int) -> pa.Array:
    """n docnos with repeats, not in sorted order (as a qrels' docno column is)."""
    return string_array([f"d{(i * 7919) % (n // 3 + 1)}" for i in range(n)])


@pytest.mark.parametrize("n", [0, 1, 5, SMALL_SET, SMALL_SET + 1, 3 * SMALL_SET])
def test_distinct_and_positions_equal_pyarrow_compute(n):
    docnos = _docnos(n)
    unique = distinct(docnos)
    assert unique.to_pylist() == pc.unique(docnos).to_pylist()
    got = positions(docnos, unique)
    assert got.dtype == np.int32
    assert got.tolist() == pc.index_in(docnos, value_set=unique).to_pylist()
    chunked = pa.chunked_array([docnos[: n // 2], docnos[n // 2:]], pa.string())
    assert distinct(chunked).to_pylist() == unique.to_pylist()
    assert positions(chunked, unique).tolist() == got.tolist()


@pytest.mark.parametrize("values", [[], [3], [2, 2], [4, -1, 0, 4, 2, -1, 2**40]])
def test_sorted_distinct_equals_numpy_unique(values):
    a = np.array(values, dtype=np.int64)
    got = sorted_distinct(a)
    assert got.dtype == a.dtype and got.tolist() == np.unique(a).tolist()
