"""trec_eval's ranking of a run, on columns: topic codes, the tie-broken order, duplicates.

trec_eval sorts each topic's documents by score descending, then docno descending (strcmp), and
refuses a docno retrieved twice for a topic. Runs written in rank order need no sort: only
groups of tied scores are reordered, and the C scanner may have checked all of it already.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from trecqr.errors import InputError
from trecqr.formats.arrays import as_numpy
from trecqr.formats.order import sort_ties
from trecqr.rankings.options import Options
from trecqr.rankings.ragged import IDX, depth_groups, padded, padded_ranges


# --------------------------------------------------------------------------- ordering
def scanned_order(run, codes, options: Options):
    """(order or None for identity, topic block starts) from what the C scanner checked."""
    flag = codes.order32 if options.float32_scores else codes.order64
    if not codes.grouped or flag == 0:
        return None, None, False
    qcode = codes.qcode
    starts = np.flatnonzero(np.concatenate([[True], qcode[1:] != qcode[:-1]])).astype(IDX)
    if flag == 2:
        return None, starts, True
    score = run.score.astype(np.float32) if options.float32_scores else run.score
    return sort_ties(None, qcode, score, run.docno), starts, True


def blocks_in_order(values: np.ndarray, p: np.ndarray):
    """values and their topic positions p, stably reordered so p is non-decreasing.

    Blocks of equal p (one per topic in a grouped run) are moved whole, in O(n); an
    interleaved run falls back to a stable sort.
    """
    heads = np.flatnonzero(np.concatenate([[True], p[1:] != p[:-1]]))
    if len(heads) != len(np.unique(p[heads])):
        o = np.argsort(p, kind="stable")
        return values[o], p[o]
    lengths = np.diff(np.append(heads, len(p)))
    perm = np.argsort(p[heads], kind="stable")
    idx = padded_ranges(heads[perm], lengths[perm])
    return values[idx], p[idx]


def block_ranks(starts: np.ndarray, n: int) -> np.ndarray:
    lengths = np.diff(np.append(starts, n)).astype(IDX)
    rank = np.ones(n, IDX)
    rank[starts[1:]] = 1 - lengths[:-1]
    np.cumsum(rank, out=rank)
    return rank


# --------------------------------------------------------------------------- duplicates
def _canonical_ints(chunk: pa.Array) -> np.ndarray | None:
    """The docnos of an Arrow chunk as integers, if all are canonical decimals (else None)."""
    if len(chunk) and not _decimal(chunk[0].as_py()):  # "d123", "MARCO_D1": no cast tried
        return None
    try:
        values = as_numpy(pc.cast(chunk, pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if len(values) and (values.min() < 0 or values.max() >= 2 ** 31):
        return None
    digits = np.searchsorted(_POWERS_OF_TEN, values, side="right")
    np.maximum(digits, 1, out=digits)
    if not np.array_equal(digits, as_numpy(pc.binary_length(chunk))):
        return None
    return values


_POWERS_OF_TEN = 10 ** np.arange(10, dtype=np.int64)


def _decimal(docno) -> bool:
    return docno is not None and docno.isascii() and docno.isdigit()


def _docno_codes(docno) -> np.ndarray:
    """Integer codes with equal codes exactly for equal docnos.

    Canonical decimal docids (MS MARCO, TopiOCQA: no sign, no leading zeros, < 2**31) are their
    own codes, checked chunk by chunk to keep memory flat; any other docids are
    dictionary-encoded (hashing).
    """
    chunks = docno.chunks if isinstance(docno, pa.ChunkedArray) else [docno]
    out = np.empty(len(docno), dtype=IDX)
    at = 0
    for chunk in chunks:
        values = _canonical_ints(chunk)
        if values is None:
            break
        out[at:at + len(values)] = values
        at += len(values)
    else:
        return out
    del out
    if isinstance(docno, pa.ChunkedArray):
        docno = docno.combine_chunks()
    return as_numpy(pc.dictionary_encode(docno).indices)


def duplicate_rows(docno, order: np.ndarray, starts: np.ndarray):
    """Indices (i, j) of a repeated (topic, docno) pair, or None.

    ``order`` lists rows topic block by topic block from ``starts`` (trec_order), so each
    topic's docno codes are sorted as one row of a padded 2-D array: many short sorts instead of
    one long one.
    """
    n = len(order)
    if n < 2:
        return None
    codes = _docno_codes(docno)[order]
    lengths = np.diff(np.append(starts, n))
    for sel in depth_groups(lengths):
        if lengths[sel].max() < 2:
            continue
        pad = -1 - np.arange(int(lengths[sel].max()), dtype=codes.dtype)  # distinct pads
        mat = padded(codes, starts[sel], lengths[sel], pad).copy()
        mat.sort(axis=1)
        hit = np.flatnonzero((mat[:, 1:] == mat[:, :-1]).any(axis=1))
        del mat
        if len(hit):
            t = sel[hit[0]]
            vals = codes[starts[t]:starts[t] + lengths[t]]
            uniq, counts = np.unique(vals, return_counts=True)
            rows = order[starts[t]:starts[t] + lengths[t]][vals == uniq[counts > 1][0]]
            return int(rows[0]), int(rows[1])
    return None


def raise_duplicate(obj, what: str, qid: str, docno: str):
    lines = obj.locate(lambda f: len(f) >= 3 and f[0] == qid and f[2] == docno)
    where = lines[1] if len(lines) > 1 else None
    first = f" (first at line {lines[0]})" if len(lines) > 1 else ""
    raise InputError(obj.source, where,
                     f"duplicate {what} for topic {qid!r} and docno {docno!r}{first}")
