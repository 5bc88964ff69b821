"""Gains of relevance grades, as trec_eval's ``setup_gains`` builds them (ndcg, G, rbp...).

Per topic, trec_eval lists one entry per ``level=gain`` parameter, then one per grade
``0 .. num_rel_levels-1`` not given a parameter (gain = the grade); an entry gets the number of
judged documents of its grade (``rel_levels``), and the list is sorted by increasing gain with
``qsort`` and the comparator ``return (int)(g1 - g2)``. That comparator truncates: gains that
differ by less than 1 compare equal (``ndcg.1=0.5`` leaves the level-1 entry *below* the
level-0 one). glibc's qsort is a stable merge sort, emulated here step by step.

Consequences kept exactly:
* the gain of a ranked document is that of the first entry (in sorted order) of its grade, 0
  if none (unjudged documents have gain 0 unless a ``-1=`` parameter exists);
* the ideal ranking walks the entries from the last (highest) one down, each repeated by its
  count, skipping empty entries, and stops at the first non-empty entry whose gain is <= 0; if
  the last entry itself has a gain <= 0 the ideal ranking is empty;
* ``-l`` plays no part in gains.

trec_eval 10.0 (gain_init.c) ignores parameters whose name is not an integer
(``rbp.p=0.8``); 9.0.8 reads every name with atol (``p`` -> level 0).

Entries depend on the topic only through ``num_rel_levels`` (1 + its highest judged grade),
so topics of a batch are grouped by it; each group is computed with numpy at once.

Logarithms come from libm (Python's ``math``): numpy's SIMD log2 can differ in the last bit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from trecqr.rankings.build import PAD
from trecqr.measures.base import batch_memo

_C_ATOL = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")  # C's isdigit: ASCII only
_VALID_INT = re.compile(r"[+-]?[0-9]+\Z")
_INT_MIN = -(2 ** 31)


def c_atol(text: str) -> int:
    """C ``atol``: the leading integer, 0 when there is none."""
    m = _C_ATOL.match(text)
    return int(m.group(1)) if m else 0


def c_int(x: float) -> int:
    """C's (int) conversion of a double on x86-64: truncation, INT_MIN when out of range."""
    if not (-2147483649.0 < x < 2147483648.0):  # NaN too
        return _INT_MIN
    return int(x)


# --------------------------------------------------------------------------- libm log2
_LOG2 = np.zeros(0)


def log2_int(upto: int) -> np.ndarray:
    """``log2(i)`` from libm for i in 0..upto-1 (index 0 and 1 are -inf and 0)."""
    global _LOG2
    if len(_LOG2) < upto:
        n = max(upto, 2 * len(_LOG2), 1024)
        _LOG2 = np.array([-math.inf] + [math.log2(i) for i in range(1, n)])
    return _LOG2[:upto]


def libm_log2(values: np.ndarray) -> np.ndarray:
    """Elementwise libm log2 of arbitrary doubles, one call per distinct value."""
    if values.size and values.min() >= 1 and values.max() < 1 << 22:
        as_int = values.astype(np.int64)
        if np.array_equal(as_int, values):  # integral: the cached table
            return log2_int(int(as_int.max()) + 1)[as_int]
    uniq, inverse = np.unique(values, return_inverse=True)
    logs = np.array([math.log2(v) if v > 0 else (-math.inf if v == 0 else math.nan)
                     for v in uniq.tolist()])
    return logs[inverse].reshape(values.shape)


# --------------------------------------------------------------------------- gain tables
def _msort(items: list, cmp) -> list:
    """glibc's msort_with_tmp: top-down merge sort, left element first on ``cmp <= 0``."""
    n = len(items)
    if n <= 1:
        return list(items)
    left, right = _msort(items[: n // 2], cmp), _msort(items[n // 2:], cmp)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


@dataclass(frozen=True)
class GainTable:
    """Sorted gain entries for topics with a given num_rel_levels.

    level[k], gain[k]: entry k in ascending (qsort) order; count_grade[k]: the grade whose
    number of judged documents the entry holds (-1: none, it keeps 0).
    """

    level: tuple
    gain: tuple
    count_grade: tuple

    def gain_of(self, grade: int) -> float:
        for lev, g in zip(self.level, self.gain):
            if lev == grade:
                return g
        return 0.0


_EMULATED_ENTRIES = 1 << 17  # beyond this, trec_eval itself (a quadratic setup) takes hours


def gain_table(params, num_rel_levels: int, v10: bool, grades=None) -> GainTable:
    """trec_eval's setup_gains for one num_rel_levels (params: ((name, value), ...)).

    trec_eval lists an entry per grade below num_rel_levels, so a grade of 2**31 would mean
    2**31 entries. Only the entries a measure reads change a value: every parameter entry, and
    the grade entries of ``grades`` (the judged grades; the others have no document and no
    rank). When the comparator is a consistent order (integral gains less than 2**31 apart,
    the usual case) the stable sort puts that subset in the order it has in the whole list,
    so the table is built from the subset alone. Otherwise the whole list is sorted step by
    step as glibc does, up to _EMULATED_ENTRIES entries; beyond that (a grade of 2**31 or
    more, where trec_eval crashes, or fractional gains with more than 2**17 grades, where its
    quadratic setup runs for hours) the subset is sorted by gain, trec_eval's intent."""
    entries = []  # [level, gain, count_grade]
    first = {}  # level -> its first parameter entry
    for name, value in params.values:
        if v10 and not _VALID_INT.match(name):
            continue
        level = c_atol(name)
        first.setdefault(level, len(entries))
        entries.append([level, float(value), -1])
    n_params = len(entries)
    gains = [e[1] for e in entries] + ([0.0, float(num_rel_levels - 1)] if num_rel_levels else [])
    consistent = all(math.isfinite(g) and g == int(g) for g in gains) and (
        not gains or max(gains) - min(gains) < 2 ** 31)
    whole = not consistent and n_params + num_rel_levels <= _EMULATED_ENTRIES
    if whole or grades is None:
        wanted = range(num_rel_levels)
    else:
        wanted = sorted({int(g) for g in grades if 0 <= g < num_rel_levels}
                        | ({num_rel_levels - 1} if num_rel_levels else set()))
    for grade in wanted:
        k = first.get(grade)
        if k is not None:
            entries[k][2] = grade
        else:
            entries.append([grade, float(grade), grade])
    if whole:
        ordered = _msort(entries, lambda a, b: c_int(a[1] - b[1]))
    else:  # a stable sort by gain: the order a consistent comparator gives
        ordered = sorted(entries, key=lambda e: e[1])
    return GainTable(tuple(e[0] for e in ordered), tuple(e[1] for e in ordered),
                     tuple(e[2] for e in ordered))


def num_rel_levels(batch) -> np.ndarray:
    """Per topic: 1 + highest grade with a judged document (0 if none), as form_res_rels."""
    nz = batch.level_counts > 0
    if nz.shape[1] == 0:
        return np.zeros(batch.n, np.int64)
    last = nz.shape[1] - 1 - np.argmax(nz[:, ::-1], axis=1)
    return np.where(nz.any(axis=1), batch.levels[last] + 1, 0).astype(np.int64)


def grade_counts(batch, rows: np.ndarray, grades) -> np.ndarray:
    """(len(rows), len(grades)) judged documents of each grade (0 for grade -1 = none)."""
    out = np.zeros((len(rows), len(grades)), np.int64)
    for k, g in enumerate(grades):
        if g >= 0:
            pos = np.searchsorted(batch.levels, g)
            if pos < len(batch.levels) and batch.levels[pos] == g:
                out[:, k] = batch.level_counts[rows, pos]
    return out


@dataclass
class Graded:
    """Gains for some topics of a batch that share one GainTable.

    gains: (n, depth) gain of each ranked document (0 on padding); ideal: (n, width) the ideal
    ranking's gains (all > 0), padded with 0; ideal_len: its length per topic.
    """

    rows: np.ndarray
    table: GainTable
    rel: np.ndarray
    num_ret: np.ndarray
    gains: np.ndarray
    ideal: np.ndarray
    ideal_len: np.ndarray

    @property
    def n(self) -> int:
        return len(self.rows)

    @cached_property
    def dcg_prefix(self) -> np.ndarray:
        """(n, depth+1) running DCG of the ranking (shared by the ndcg family)."""
        return prefix_sums(discounted(self.gains))

    @cached_property
    def idcg_prefix(self) -> np.ndarray:
        """(n, L+1) running DCG of the ideal ranking."""
        return prefix_sums(discounted(self.ideal))


def lookup_gains(rel: np.ndarray, table: GainTable) -> np.ndarray:
    """Gain of each ranked grade (first entry of that grade in sorted order), 0 on padding:
    through a table over the grades' range, or, for a range too wide for one (a grade of
    2**31), over the distinct grades."""
    lo = min(-2, min(table.level, default=0))
    hi = max(int(rel.max()) if rel.size else 0, max(table.level, default=0), 0)
    if hi - lo <= 1 << 16:
        lut = np.array([table.gain_of(g) for g in range(lo, hi + 1)])
        out = lut[np.clip(rel, lo, hi) - lo]
    else:
        grades, inverse = np.unique(rel, return_inverse=True)
        lut = np.array([table.gain_of(int(g)) for g in grades.tolist()], float)
        out = lut[inverse].reshape(rel.shape)
    out[rel == PAD] = 0.0
    return out


def _ideal(counts_desc: np.ndarray, gains_desc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ideal gains from entries walked highest first, stopping at a non-empty gain <= 0."""
    n, m = counts_desc.shape
    counts = counts_desc.copy()
    if m == 0 or gains_desc[0] <= 0.0:
        counts[:] = 0
    else:
        stop = np.cumsum((counts > 0) & (gains_desc <= 0.0)[None, :], axis=1) > 0
        counts[stop] = 0
    length = counts.sum(axis=1)
    width = int(length.max()) if n else 0
    ideal = np.zeros((n, width))
    if width:
        flat = np.repeat(np.tile(gains_desc, n), counts.ravel())
        row = np.repeat(np.arange(n), length)
        col = np.arange(len(flat)) - np.repeat(np.cumsum(length) - length, length)
        ideal[row, col] = flat
    return ideal, length


def graded_groups(batch, params, *, ideal: bool = True):
    """A Graded per group of topics of the batch sharing num_rel_levels (computed once per
    batch, gain parameters and compat: the ndcg family and G share them)."""
    key = ("graded", params.printable, tuple(params.values) if params.values else None,
           ideal)
    return batch_memo(batch, key, lambda: list(_graded_groups(batch, params, ideal=ideal)))


def _graded_groups(batch, params, *, ideal: bool = True):
    nrl = num_rel_levels(batch)
    v10 = batch.options.v10
    for levels in np.unique(nrl):
        rows = np.flatnonzero(nrl == levels)
        table = gain_table(params, int(levels), v10, batch.levels.tolist())
        rel = batch.rel[rows]
        gains = lookup_gains(rel, table)
        if ideal:
            counts = grade_counts(batch, rows, table.count_grade)
            ideal_gains, length = _ideal(counts[:, ::-1], np.array(table.gain[::-1], float))
        else:
            ideal_gains, length = np.zeros((len(rows), 0)), np.zeros(len(rows), np.int64)
        yield Graded(rows, table, rel, batch.num_ret[rows], gains, ideal_gains, length)


def discounted(values: np.ndarray) -> np.ndarray:
    """values[:, i] / log2(i + 2): the DCG term of each rank (i is 0-based)."""
    width = values.shape[1]
    return values / log2_int(width + 2)[2:]


def prefix_sums(terms: np.ndarray) -> np.ndarray:
    """(n, w+1) running sums in rank order with a leading 0: column k sums the first k terms."""
    out = np.zeros((terms.shape[0], terms.shape[1] + 1))
    if terms.shape[1]:
        out[:, 1:] = np.cumsum(terms, axis=1)
    return out
