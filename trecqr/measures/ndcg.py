"""nDCG family: ndcg, dcg, ideal_dcg, ndcg_rel, Rndcg, ndcg_cut (trec_eval's m_ndcg*.c, m_Rndcg.c).

All but ndcg_cut use gain tables (``ndcg.1=3,2=9``; see :mod:`.gain`); ndcg_cut uses the
grades themselves as gains and cannot be given gains. ``-l`` plays no part except in Rndcg's
"no relevant document" test. Running sums are taken in rank order (cumsum), as trec_eval adds.
"""

from __future__ import annotations

import numpy as np

from trecqr.measures.base import LongCutoffs, Measure, ParamPairs, register, row_sums
from trecqr.measures.gain import discounted, graded_groups, log2_int, prefix_sums

_GAINS_HELP = (" Gains default to the grade; override with level=gain pairs, e.g. "
               "ndcg.1=3.5,2=9.0,4=7.0 (gains may be 0 or negative, level 0 may get a gain).")


def _per_group(batch, params, fn, k: int = 1) -> np.ndarray:
    out = np.zeros((batch.n, k))
    for grp in graded_groups(batch, params):
        out[grp.rows] = fn(grp).reshape(grp.n, k)
    return out


def _dcg_idcg(grp):
    """Full DCG of the ranking and of the ideal ranking (which may be longer)."""
    dcg = grp.dcg_prefix[:, -1]
    idcg = grp.idcg_prefix[:, -1]
    return dcg, idcg


@register
class NDCG(Measure):
    name = "ndcg"
    explanation = ("Normalized Discounted Cumulative Gain (Jarvelin and Kekalainen): DCG of "
                   "the whole ranking over that of the ideal ranking of all judged documents."
                   + _GAINS_HELP)
    params = ParamPairs()

    def compute(self, b, p):
        def ndcg(grp):
            dcg, idcg = _dcg_idcg(grp)
            return np.divide(dcg, idcg, out=np.zeros(grp.n), where=idcg > 0.0)
        return _per_group(b, p, ndcg)


@register
class DCG(Measure):
    name = "dcg"
    explanation = "Discounted Cumulative Gain of the whole ranking (unnormalized)." + _GAINS_HELP
    params = ParamPairs()
    since = "10.0"

    def compute(self, b, p):
        return _per_group(b, p, lambda grp: _dcg_idcg(grp)[0])


@register
class IdealDCG(Measure):
    name = "ideal_dcg"
    explanation = ("Discounted Cumulative Gain of the ideal ranking of the judged documents."
                   + _GAINS_HELP)
    params = ParamPairs()
    since = "10.0"

    def compute(self, b, p):
        return _per_group(b, p, lambda grp: _dcg_idcg(grp)[1])


@register
class NDCGRel(Measure):
    name = "ndcg_rel"
    explanation = ("nDCG averaged over the relevant documents (gain > 0): at the rank of each "
                   "retrieved one, and dcg of the whole ranking over ideal dcg for each one "
                   "not retrieved." + _GAINS_HELP)
    params = ParamPairs()

    def compute(self, b, p):
        def ndcg_rel(grp):
            depth = grp.gains.shape[1]
            dcg = grp.dcg_prefix                                # (n, depth+1)
            idcg = grp.idcg_prefix                              # (n, L+1)
            length = grp.ideal_len
            # terms only at the documents with a gain (zeros elsewhere add nothing)
            rows, cols = np.nonzero(grp.gains > 0.0)
            at = np.minimum(cols + 1, length[rows])
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = dcg[rows, cols + 1] / idcg[rows, at]
                total = row_sums(rows, ratio, grp.n)
                found = np.bincount(rows, minlength=grp.n)
                full_dcg = dcg[:, -1]
                full_idcg = idcg[np.arange(grp.n), length]
                total = total + (length - found).astype(float) * full_dcg / full_idcg
                value = total / length.astype(float)
            return np.where(total > 0.0, value, 0.0)
        return _per_group(b, p, ndcg_rel)


@register
class RNDCG(Measure):
    name = "Rndcg"
    explanation = ("nDCG averaged at the R levels: the ranks where the ideal ranking's gain "
                   "changes, plus the end of the ranking when it is longer." + _GAINS_HELP)
    params = ParamPairs()

    def compute(self, b, p):
        def rndcg(grp):
            depth = grp.gains.shape[1]
            dcg = grp.dcg_prefix                                # (n, depth+1)
            idcg = grp.idcg_prefix                              # (n, L+1)
            length = grp.ideal_len
            width = grp.ideal.shape[1]
            n = grp.n
            # boundary i (1..L): the ideal gain of rank i+1 differs from rank i's, or i == L
            i = np.arange(1, width + 1)[None, :]
            nxt = np.concatenate([grp.ideal[:, 1:], np.zeros((n, 1))], axis=1) if width \
                else np.zeros((n, 0))
            change = (i == length[:, None]) | ((i < length[:, None]) & (nxt != grp.ideal))
            rows = np.arange(n)[:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = dcg[rows, np.minimum(i, depth)] / idcg[:, 1:]
                use = change & (idcg[:, 1:] > 0.0)
                total = np.cumsum(np.where(use, ratio, 0.0), axis=1)[:, -1] if width \
                    else np.zeros(n)
                count = use.sum(axis=1)
                full_idcg = idcg[np.arange(n), length]
                extra = (grp.num_ret > length + 1) & (full_idcg > 0.0)
                total = np.where(extra, total + dcg[:, -1] / full_idcg, total)
                count = count + extra
                value = total / count.astype(float)
            return np.where(b.num_rel[grp.rows] == 0, 0.0, value)
        return _per_group(b, p, rndcg)


@register
class NDCGCut(Measure):
    name = "ndcg_cut"
    explanation = ("nDCG at cutoffs, gains are the grades of the qrels; a ranking shorter than "
                   "the cutoff counts as is, the ideal is cut at the same rank.")
    params = LongCutoffs(5, 10, 15, 20, 30, 100, 200, 500, 1000)

    def compute(self, b, p):
        depth = min(b.depth, max(p.values))  # no rank beyond the largest cutoff matters
        rel = b.rel[:, :depth]
        # DCG terms only at documents with a positive grade, added in rank order per cutoff
        rows, ranks = np.nonzero(rel > 0)
        terms = rel[rows, ranks].astype(np.float64) / log2_int(depth + 2)[2:][ranks]
        # ideal: grades from the highest down to 1, each as often as it is judged
        levels = b.levels[b.levels > 0][::-1]
        counts = b.level_counts[:, b.levels > 0][:, ::-1]
        length = counts.sum(axis=1)
        width = min(int(length.max()) if b.n else 0, max(p.values))
        ideal = np.zeros((b.n, width))
        start = np.zeros(b.n, np.int64)
        cols = np.arange(width)[None, :]
        for lev, cnt in zip(levels.tolist(), counts.T):
            ideal[(cols >= start[:, None]) & (cols < (start + cnt)[:, None])] = lev
            start = start + cnt
        idcg = prefix_sums(ideal / log2_int(width + 2)[2:])
        out = np.empty((b.n, len(p.values)))
        for k, cut in enumerate(p.values):
            within = ranks < cut
            num = row_sums(rows[within], terms[within], b.n)
            den = idcg[:, min(cut, width)]
            out[:, k] = np.divide(num, den, out=num.copy(), where=den > 0.0)
        return out
