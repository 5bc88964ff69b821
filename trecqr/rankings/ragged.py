"""Ragged rows (one ranking per topic, of any length) as padded 2-D arrays, and back.

Measures compute on a (topics x depth) array; runs hold each topic's ranking as a block of
consecutive lines. These helpers convert between the two without a Python loop per row.
"""

from __future__ import annotations

import numpy as np

from trecqr.formats.arrays import IDX  # row indices and codes: runs of up to 2**31 lines
MAX_BATCH_CELLS = 1 << 21  # topics x depth per Batch: bounds the measures' temporaries


def padded(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, pad) -> np.ndarray:
    """Rows values[starts[i]:starts[i]+lengths[i]] padded with ``pad`` to a common width.

    A zero-copy view when the rows are consecutive and equally long (typical runs of depth
    1000); ``pad`` may be a scalar or a per-column array.
    """
    n = len(starts)
    width = int(lengths.max()) if n else 0
    if n and (lengths == width).all() and (n == 1 or (np.diff(starts) == width).all()):
        return values[starts[0]:starts[0] + n * width].reshape(n, width)
    out = np.empty((n, width), dtype=values.dtype)
    out[:] = pad
    if width:
        total = int(lengths.sum())
        row = np.repeat(np.arange(n, dtype=IDX), lengths)
        col = np.arange(total, dtype=IDX)
        col -= np.repeat((np.cumsum(lengths) - lengths).astype(IDX), lengths)
        src = np.repeat(starts.astype(np.int64), lengths)
        src += col
        out[row, col] = values[src]
    return out


SMALL_CELLS = 1 << 14  # below this many padded cells in all, one group: padding costs nothing


def depth_groups(lengths: np.ndarray, max_cells: int = MAX_BATCH_CELLS):
    """Index groups of rows of similar length (powers of two), each at most max_cells padded;
    one group (and one of the empty rows) when all of them padded fit in SMALL_CELLS (a few
    topics: numpy's per-call overhead, not padding, is then the cost)."""
    n = len(lengths)
    if n and n * (int(lengths.max()) or 1) <= min(SMALL_CELLS, max_cells):
        if lengths.all():
            yield np.arange(n)
        else:  # empty rankings apart, as below (a batch of depth 0)
            yield from (idx for idx in (np.flatnonzero(lengths == 0), np.flatnonzero(lengths))
                        if len(idx))
        return
    klass = np.where(lengths > 0, np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64) + 1, 0)
    for k in np.unique(klass):
        idx = np.flatnonzero(klass == k)
        width = max(int(lengths[idx].max()), 1)
        step = max(1, max_cells // width)
        for i in range(0, len(idx), step):
            yield idx[i:i + step]


def padded_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of arange(s, s + l) for each (s, l), vectorized."""
    total = int(lengths.sum())
    out = np.ones(total, dtype=np.int64)
    if total == 0:
        return out
    ends = np.cumsum(lengths)
    first = ends - lengths
    nz = lengths > 0
    out[first[nz]] = starts[nz] - np.concatenate([[0], (starts + lengths - 1)[nz][:-1]])
    out[0] = starts[nz][0]
    return np.cumsum(out)
