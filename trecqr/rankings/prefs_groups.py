"""One judgment group's preference counts, as trec_eval's form_prefs_counts computes them
(:mod:`.prefs_counts` runs them over every topic): a group with one sub-group as equivalence
classes by rel_level (form_jg_ec, closed-form sums), a group with several as a preference matrix
closed under transitivity (form_jg_pa); both add to the topic's pref_counts when it is kept.
"""

from __future__ import annotations

import warnings

import numpy as np

from trecqr.errors import InputError


class TopicPrefs:
    """One topic's judged documents: docid ranks, and trec_eval's pref_counts when needed."""

    def __init__(self, njr: int, nj: int):
        self.njr = njr
        self.nj = nj
        self.counts = None  # dense (nj, nj) int32 pref_counts, built on demand


class RowNames:
    """Lazy docno / topic / jg names of sorted rows, for error messages."""

    def __init__(self, prefs, sel, order):
        self.prefs, self.sel, self.order = prefs, sel, order

    def where(self, i: int) -> str:
        q, jg, _ = self.row(i)
        return f"{self.prefs.source}: topic {q!r}, judgment group {jg!r}"

    def row(self, i: int) -> tuple:
        r = int(self.sel[self.order[i]])
        return (self.prefs.qid[r].as_py(), self.prefs.jg[r].as_py(), self.prefs.docno[r].as_py())


def _pairs_before(a_sorted: np.ndarray, b: np.ndarray) -> int:
    """Number of pairs (a, b) with a < b."""
    return int(np.searchsorted(a_sorted, b, side="left").sum())


def class_group_counts(lev, r, topic: TopicPrefs, names: RowNames, s0: int) -> dict:
    """A jg with one sub-group: equivalence classes by rel_level (trec_eval's form_jg_ec)."""
    njr = topic.njr
    n = len(lev)
    ec_start = np.concatenate([[0], np.flatnonzero(lev[1:] != lev[:-1]) + 1])
    K = len(ec_start)
    ec_len = np.diff(np.append(ec_start, n))
    ec = np.repeat(np.arange(K), ec_len)
    ret = r < njr
    R = np.bincount(ec, weights=ret, minlength=K).astype(np.int64)
    N = ec_len
    U = N - R
    cum = lambda x: np.cumsum(x) - x  # noqa: E731  (sum over higher classes)
    ful_imp = int((U * cum(R)).sum())
    notful_imp = int((R * cum(U)).sum())
    notoccur = int((U * cum(U)).sum())
    poss_ret = int((R * cum(R)).sum())

    # a document in two classes: trec_eval stops ("occurs with different rel_level")
    pair_codes = np.unique(r * K + ec)
    duplicates = len(pair_codes) < n
    pair_docs = pair_codes // K
    twice = pair_docs[1:] == pair_docs[:-1]
    if twice.any():
        q, jg, d = names.row(s0 + int(np.flatnonzero(r == pair_docs[1:][twice][0])[0]))
        raise InputError(names.prefs.source, None,
                         f"topic {q!r}, judgment group {jg!r}: docno {d!r} has two different "
                         f"rel_levels in the same sub-group")

    ful_ret = 0
    for k in range(1, K):  # lower class k: retrieved b after some a of a higher class
        lo, hi = ec_start[k], ec_start[k] + ec_len[k]
        b = r[lo:hi][ret[lo:hi]]
        if len(b):
            ful_ret += _pairs_before(np.sort(r[:lo]), b)

    rel = lev[ec_start] > 0.0
    stats = dict(ful_ret=ful_ret, poss_ret=poss_ret, ful_imp=ful_imp,
                 poss_imp=ful_imp + notful_imp, notoccur=notoccur,
                 num_rel=int(N[rel].sum()), num_rel_ret=int(R[rel].sum()),
                 num_nonrel=int(N[~rel].sum()), num_nonrel_ret=int(R[~rel].sum()),
                 duplicates=duplicates)
    if stats["num_rel"] < stats["num_nonrel"]:
        stats["rn_ful"], stats["rn_poss"] = _ec_rnonrel(
            r, ec_start, ec_len, njr, stats["num_rel"], False, lambda: names.where(s0))
    if stats["num_rel_ret"] < stats["num_nonrel_ret"]:
        stats["rnr_ful"], stats["rnr_poss"] = _ec_rnonrel(
            r, ec_start, ec_len, njr, stats["num_rel_ret"], True, lambda: names.where(s0))

    if topic.counts is not None:  # pref_counts[a][b] += 1 for a in a higher class than b
        local, li = np.unique(r, return_inverse=True)
        above = np.zeros(len(local), np.int64)
        block = np.zeros((len(local), len(local)), np.int32)
        for k in range(K):
            lo, hi = ec_start[k], ec_start[k] + ec_len[k]
            here = np.bincount(li[lo:hi], minlength=len(local))
            if k:
                block += np.outer(above, here).astype(np.int32)
            above += here
        topic.counts[np.ix_(local, local)] += block
    return stats


def _ec_rnonrel(r, ec_start, ec_len, njr: int, R: int, retrieved_only: bool, where):
    """m_prefs_avgjg_Rnonrel(_ret).c's recalculate() for an equivalence-class jg.

    The nonrelevant documents kept are the first R of the last class. As in trec_eval, pairs
    are counted among all classes but the last, then between *every* class (the last one
    included) and the kept nonrelevant documents; a pair counts as fulfilled when the better
    document comes first and was retrieved.
    """
    K = len(ec_start)
    cls = [r[ec_start[k]:ec_start[k] + ec_len[k]] for k in range(K)]
    if R > len(cls[-1]):
        # only with negative rel_levels: the lowest class is not the rel_level 0 one and
        # trec_eval reads past its end (into unrelated memory); we keep the class as it is
        warnings.warn(f"{where()}: the lowest rel_level class has fewer than R = {R} documents; "
                      f"trec_eval's prefs_avgjg_Rnonrel{'_ret' if retrieved_only else ''} "
                      f"is undefined here (negative rel_levels)", RuntimeWarning, stacklevel=2)
    kept = cls[-1][:R]
    if retrieved_only:
        cls = [c[c < njr] for c in cls]
        kept = kept[kept < njr]
    ful = total = 0
    for k2 in range(1, K - 1):
        higher = np.sort(np.concatenate(cls[:k2]))
        if retrieved_only:
            ful += _pairs_before(higher, cls[k2])
        else:
            ful += _pairs_before(higher[higher < njr], cls[k2])
        total += len(higher) * len(cls[k2])
    everything = np.sort(np.concatenate(cls))
    if retrieved_only:
        ful += _pairs_before(everything, kept)
    else:
        ful += _pairs_before(everything, np.minimum(kept, njr))
    total += len(everything) * len(kept)
    return ful, total


def _closure(adj: np.ndarray) -> np.ndarray:
    """Reflexive-transitive closure of a boolean matrix (trec_eval's add_transitives)."""
    m = adj | np.eye(len(adj), dtype=bool)
    while True:
        f = m.astype(np.float32)
        nxt = (f @ f) > 0
        if np.array_equal(nxt, m):
            return m
        m = nxt


def matrix_group_counts(lev, r, new_jsg, topic: TopicPrefs, names: RowNames, s0: int) -> dict:
    """A jg with several sub-groups: a transitive preference matrix (form_jg_pa)."""
    njr = topic.njr
    local, li = np.unique(r, return_inverse=True)
    nloc = len(local)

    # rel_level of each document: the last one assigned; 0 and > 0 may not both occur
    by_doc = np.argsort(li, kind="stable")
    same = li[by_doc][1:] == li[by_doc][:-1]
    prev, cur = lev[by_doc][:-1], lev[by_doc][1:]
    clash = same & (((prev > 0.0) & (cur == 0.0)) | ((prev == 0.0) & (cur > 0.0)))
    if clash.any():
        q, jg, d = names.row(s0 + int(by_doc[1:][np.argmax(clash)]))
        raise InputError(names.prefs.source, None,
                         f"topic {q!r}, judgment group {jg!r}: docno {d!r} has both 0 and "
                         f"non-0 rel_level")
    last = np.append(~same, True)  # the last row of each document in trec_eval's order
    rel_local = np.empty(nloc)
    rel_local[li[by_doc][last]] = lev[by_doc][last]

    adj = np.zeros((nloc, nloc), bool)
    starts = np.append(np.flatnonzero(new_jsg), len(lev))
    for a, b in zip(starts[:-1], starts[1:]):
        lv, ix = lev[a:b], li[a:b]
        ii, jj = np.nonzero(lv[:, None] > lv[None, :])
        adj[ix[ii], ix[jj]] = True
    full = _closure(adj)
    np.fill_diagonal(full, False)
    conflict = full & full.T
    if conflict.any():
        i, j = np.argwhere(conflict)[0]
        rows_i = np.flatnonzero(li == i)[0]
        rows_j = np.flatnonzero(li == j)[0]
        q, jg, di = names.row(s0 + int(rows_i))
        dj = names.row(s0 + int(rows_j))[2]
        raise InputError(names.prefs.source, None,
                         f"topic {q!r}, judgment group {jg!r}: inconsistent preferences, "
                         f"docnos {di!r} and {dj!r} are each preferred to the other")

    k = int(np.count_nonzero(local < njr))
    stats = _pa_areas(full, k)
    rel_ret = rel_local[:k]
    stats.update(num_rel=int((rel_local > 0.0).sum()), num_rel_ret=int((rel_ret > 0.0).sum()),
                 num_nonrel=int((rel_local == 0.0).sum()),
                 num_nonrel_ret=int((rel_ret == 0.0).sum()))
    if stats["num_rel"] < stats["num_nonrel"]:
        keep = _pa_keep(local, rel_local, stats["num_rel"], topic.nj)
        kk = int(np.count_nonzero(keep & (local < njr)))
        sub = _pa_areas(full[np.ix_(keep, keep)], kk)
        ful = sub["ful_ret"] + sub["ful_imp"]
        stats["rn_ful"] = ful
        stats["rn_poss"] = sub["poss_ret"] + sub["poss_imp"] + sub["notoccur"]
    if stats["num_rel_ret"] < stats["num_nonrel_ret"]:
        keep = _pa_keep(local, rel_local, stats["num_rel"], njr)
        kk = int(np.count_nonzero(keep & (local < njr)))
        sub = _pa_areas(full[np.ix_(keep, keep)], kk)
        stats["rnr_ful"], stats["rnr_poss"] = sub["ful_ret"], sub["poss_ret"]
    if topic.counts is not None:
        topic.counts[np.ix_(local, local)] += full
    return stats


def _pa_keep(local, rel_local, num_rel: int, limit: int) -> np.ndarray:
    """Documents kept by recalculate(): all but the nonrelevant ones after the (R+1)-th.

    trec_eval scans docid ranks below ``limit`` for the (num_rel + 1)-th nonrelevant one.
    """
    nonrel = np.flatnonzero((rel_local == 0.0) & (local < limit))
    first_discarded = local[nonrel[num_rel]] if len(nonrel) > num_rel else limit
    return ~((local >= first_discarded) & (rel_local == 0.0))


def _pa_areas(a: np.ndarray, k: int) -> dict:
    """Counts of a preference matrix whose first k documents were retrieved."""
    ret = a[:k, :k]
    ful_ret = int(np.triu(ret, 1).sum())
    poss_ret = ful_ret + int(np.tril(ret, -1).sum())
    ful_imp = int(a[:k, k:].sum())
    return dict(ful_ret=ful_ret, poss_ret=poss_ret, ful_imp=ful_imp,
                poss_imp=ful_imp + int(a[k:, :k].sum()), notoccur=int(a[k:, k:].sum()))
