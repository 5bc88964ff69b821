"""trec_eval's form_prefs_counts for every evaluated topic: preferences fulfilled and possible.

For a topic, every judged docno gets a "docid rank": the judged documents that were retrieved
(in the top -M of the run) are numbered 0..NJR-1 in retrieval order, the judged documents that
were not retrieved follow in docno (strcmp) order. Retrieval order here is score descending,
ties broken by docno *ascending* (form_prefs_counts' own comparison, unlike form_res_rels);
-J does not apply. A preference A > B is then

  fulfilled_ret   both retrieved, A first        possible_ret   both retrieved
  fulfilled_imp   A retrieved, B not             possible_imp   exactly one retrieved
  notoccur        neither retrieved

A judgment group (jg) with one sub-group (jsg) is a list of equivalence classes by rel_level
(every document preferred to all with a lower level); its counts are closed-form sums over the
classes. A jg with several sub-groups is a preference matrix closed under transitivity. Per
topic, the pair measures need trec_eval's pref_counts (how many jgs prefer i to j); that matrix
is only built for topics with several jgs (or repeated documents), where it can differ from
the counts.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from ..formats.run import Run

BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval 10.0 -c: ranking of a topic not in the run


@dataclass
class PrefCounts:
    """Counts per judgment group (flat over all topics, topic-major) and pair sums per topic."""

    jg_start: np.ndarray    # (topics+1,) offsets of each topic's jgs
    ful_ret: np.ndarray
    poss_ret: np.ndarray
    ful_imp: np.ndarray
    poss_imp: np.ndarray
    notoccur: np.ndarray
    num_rel: np.ndarray
    num_rel_ret: np.ndarray
    num_nonrel: np.ndarray
    num_nonrel_ret: np.ndarray
    rn_ful: np.ndarray      # prefs_avgjg_Rnonrel recount (jgs with num_rel < num_nonrel)
    rn_poss: np.ndarray
    rnr_ful: np.ndarray     # prefs_avgjg_Rnonrel_ret recount (num_rel_ret < num_nonrel_ret)
    rnr_poss: np.ndarray
    pair_sum_ret: np.ndarray  # per topic: sum of pair ratios, both retrieved (rank order)
    pair_sum_all: np.ndarray  # ... continued over the (retrieved, not retrieved) pairs
    pairs_ret: np.ndarray
    pairs_cross: np.ndarray
    pairs_unret: np.ndarray

    @property
    def num_jgs(self) -> np.ndarray:
        return np.diff(self.jg_start)

    def per_topic_sum(self, values: np.ndarray) -> np.ndarray:
        """Sum of per-jg values of each topic, left to right in jg order (as trec_eval)."""
        n = len(self.jg_start) - 1
        counts = self.num_jgs
        width = int(counts.max()) if n else 0
        padded = np.zeros((n, max(width, 1)), dtype=np.float64)
        if len(values):
            row = np.repeat(np.arange(n), counts)
            col = np.arange(len(values)) - np.repeat(self.jg_start[:-1], counts)
            padded[row, col] = values
        return np.cumsum(padded, axis=1)[:, -1]

    def per_topic_total(self, values: np.ndarray) -> np.ndarray:
        """Integer sum of per-jg counts of each topic."""
        n = len(self.jg_start) - 1
        out = np.zeros(n, np.int64)
        if len(values):
            np.add.at(out, np.repeat(np.arange(n), self.num_jgs), values)
        return out


def flat(values) -> pa.Array:
    """One Arrow array (readers may hand over chunked columns)."""
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def with_bogus_rows(run: Run, qids: list, bogus: np.ndarray) -> Run:
    """The run plus trec_eval 10.0's one-document ranking for topics scored under -c."""
    missing = [q for q, b in zip(qids, bogus) if b]
    if not missing:
        return run
    k = len(missing)
    return Run(pa.concat_arrays([flat(run.qid), pa.array(missing, pa.string())]),
               pa.concat_arrays([flat(run.docno), pa.array([BOGUS_DOCNO] * k, pa.string())]),
               np.concatenate([run.score, np.ones(k)]), run.runid, run.source)


def topic_codes(qid: pa.Array, index: dict) -> np.ndarray:
    """Position of each row's qid among the evaluated topics, -1 for other topics."""
    if len(qid) == 0:
        return np.zeros(0, np.int64)
    enc = pc.dictionary_encode(flat(qid))
    table = np.array([index.get(q, -1) for q in enc.dictionary.to_pylist()], np.int64)
    return table[enc.indices.to_numpy(zero_copy_only=False)]


def sorted_codes(values: pa.Array):
    """Codes whose numeric order is the strcmp order of the strings; and the sorted strings."""
    enc = pc.dictionary_encode(flat(values))
    dictionary = enc.dictionary
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    codes = rank[enc.indices.to_numpy(zero_copy_only=False)] if len(values) else \
        np.zeros(0, np.int64)
    return codes, dictionary.take(pa.array(order))


def prefs_ranking(run: Run, tcode: np.ndarray, float32: bool, max_docs: int):
    """Rows of the run kept by -M, per evaluated topic in form_prefs_counts' order.

    Returns (topic code, row index) of the kept rows, sorted by topic then rank.
    """
    keep = np.flatnonzero(tcode >= 0)
    if len(keep) == 0:
        return np.zeros(0, np.int64), keep
    score = run.score[keep]
    if float32:
        score = score.astype(np.float32).astype(np.float64)
    table = pa.table({"t": tcode[keep], "s": score, "d": run.docno.take(pa.array(keep))})
    order = pc.sort_indices(table, sort_keys=[("t", "ascending"), ("s", "descending"),
                                              ("d", "ascending")]).to_numpy()
    rows = keep[order]
    t = tcode[rows]
    start = np.concatenate([[0], np.flatnonzero(t[1:] != t[:-1]) + 1])
    rank = np.arange(len(t)) - np.repeat(start, np.diff(np.append(start, len(t))))
    kept = rank < max_docs
    return t[kept], rows[kept]


class _Topic:
    """One topic's judged documents: docid ranks, and trec_eval's pref_counts when needed."""

    def __init__(self, njr: int, nj: int):
        self.njr = njr
        self.nj = nj
        self.counts = None  # dense (nj, nj) int32 pref_counts, built on demand


def form_prefs_counts(run: Run, prefs, qids: list, bogus: np.ndarray, options,
                      pairs: bool = True) -> PrefCounts:
    """Preference counts of every evaluated topic (qids, strcmp order)."""
    index = {q: i for i, q in enumerate(qids)}
    n = len(qids)
    run = with_bogus_rows(run, qids, bogus)
    float32 = options.float32_scores
    levels_all = prefs.levels(float32)

    # judged documents: (topic, docno) keys, docnos coded in strcmp order
    ptopic = topic_codes(prefs.qid, index)
    sel = np.flatnonzero(ptopic >= 0)
    pt = ptopic[sel]
    docs, doc_names = sorted_codes(prefs.docno.take(pa.array(sel)))
    ndocs = max(len(doc_names), 1)
    row_key = pt * ndocs + docs
    judged = np.unique(row_key)
    judged_topic = judged // ndocs

    # retrieved judged documents, in retrieval order per topic
    rt, rrows = prefs_ranking(run, topic_codes(run.qid, index), float32, options.max_docs)
    where = pc.index_in(run.docno.take(pa.array(rrows)), value_set=doc_names)
    rdoc = where.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    rkey = rt * ndocs + rdoc
    pos = np.minimum(np.searchsorted(judged, rkey), max(len(judged) - 1, 0))
    hit = (rdoc >= 0) & (judged[pos] == rkey) if len(judged) else np.zeros(len(rkey), bool)
    ret_key_pos = pos[hit]
    ret_topic = rt[hit]
    njr = np.bincount(ret_topic, minlength=n)
    ret_start = np.concatenate([[0], np.cumsum(njr)])[:-1]

    # docid rank of each judged key
    nj = np.bincount(judged_topic, minlength=n)
    key_start = np.concatenate([[0], np.cumsum(nj)])[:-1]
    docid = np.full(len(judged), -1, np.int64)
    docid[ret_key_pos] = np.arange(len(ret_key_pos)) - ret_start[ret_topic]
    unret = docid < 0
    unret_before = np.cumsum(unret) - unret  # unretrieved keys before each key (global)
    first_unret = unret_before[np.minimum(key_start, max(len(judged) - 1, 0))] \
        if len(judged) else np.zeros(n, np.int64)
    docid[unret] = (njr[judged_topic] + unret_before - first_unret[judged_topic])[unret]
    row_docid = docid[np.searchsorted(judged, row_key)]

    # rows in trec_eval's order: topic, jg, jsg, rel_level descending, docid rank
    lev = levels_all[sel]
    table = pa.table({"t": pt, "jg": prefs.jg.take(pa.array(sel)),
                      "jsg": prefs.jsg.take(pa.array(sel)), "l": lev, "r": row_docid})
    order = pc.sort_indices(table, sort_keys=[("t", "ascending"), ("jg", "ascending"),
                                              ("jsg", "ascending"), ("l", "descending"),
                                              ("r", "ascending")]).to_numpy()
    t_s, lev_s, r_s = pt[order], lev[order], row_docid[order]
    jg_s = table.column("jg").take(pa.array(order)).combine_chunks()
    jsg_s = table.column("jsg").take(pa.array(order)).combine_chunks()
    m = len(order)
    if m > 1:
        jg_change = (t_s[1:] != t_s[:-1]) | pc.not_equal(jg_s.slice(1), jg_s.slice(0, m - 1)
                                                         ).to_numpy(zero_copy_only=False)
        jsg_change = pc.not_equal(jsg_s.slice(1), jsg_s.slice(0, m - 1)
                                  ).to_numpy(zero_copy_only=False)
    else:
        jg_change = jsg_change = np.zeros(0, bool)
    jg_bounds = np.concatenate([[0], np.flatnonzero(jg_change) + 1, [m]]) if m else \
        np.zeros(1, np.int64)
    new_jsg = np.concatenate([[True], jsg_change | jg_change])

    G = len(jg_bounds) - 1
    stats_of = {k: np.zeros(G, np.int64) for k in (
        "ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur", "num_rel", "num_rel_ret",
        "num_nonrel", "num_nonrel_ret", "rn_ful", "rn_poss", "rnr_ful", "rnr_poss")}
    jg_topic = t_s[jg_bounds[:-1]] if G else np.zeros(0, np.int64)
    jgs_of_topic = np.bincount(jg_topic, minlength=n)
    counts = PrefCounts(jg_start=np.concatenate([[0], np.cumsum(jgs_of_topic)]),
                        pair_sum_ret=np.zeros(n), pair_sum_all=np.zeros(n),
                        pairs_ret=np.zeros(n, np.int64), pairs_cross=np.zeros(n, np.int64),
                        pairs_unret=np.zeros(n, np.int64), **stats_of)
    names = _Names(prefs, sel, order)

    for g in range(G):
        s, e = int(jg_bounds[g]), int(jg_bounds[g + 1])
        t = int(jg_topic[g])
        if g == 0 or jg_topic[g - 1] != t:  # first jg of a topic
            topic = _Topic(int(njr[t]), int(nj[t]))
            if pairs and jgs_of_topic[t] > 1:
                topic.counts = np.zeros((topic.nj, topic.nj), np.int32)
        if new_jsg[s + 1:e].any():
            stats = _pa_jg(lev_s[s:e], r_s[s:e], new_jsg[s:e], topic, names, s)
        else:
            stats = _ec_jg(lev_s[s:e], r_s[s:e], topic, names, s)
            if stats.pop("duplicates") and pairs and topic.counts is None:
                # the only jg repeats a document: pref_counts can reach 2, count it out
                topic.counts = np.zeros((topic.nj, topic.nj), np.int32)
                _ec_jg(lev_s[s:e], r_s[s:e], topic, names, s)
        for k, v in stats.items():
            stats_of[k][g] = v
        if pairs and (g + 1 == G or jg_topic[g + 1] != t):  # last jg of the topic
            _pair_sums(counts, t, topic, g)
    return counts


class _Names:
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


def _ec_jg(lev, r, topic: _Topic, names: _Names, s0: int) -> dict:
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


def _pa_jg(lev, r, new_jsg, topic: _Topic, names: _Names, s0: int) -> dict:
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


def _pair_sums(counts: PrefCounts, t: int, topic: _Topic, g: int) -> None:
    """prefs_pair's sums of topic t: ratios pref_counts[i][j] / (pref_counts[i][j] +
    pref_counts[j][i]) over pairs, in trec_eval's loop order.

    Without a pref_counts matrix (one jg, g, and no repeated document) every pair holds a
    single preference, so the ratios are 1 (fulfilled) or 0 and the sums are the jg's counts.
    """
    if topic.counts is None:
        counts.pair_sum_ret[t] = float(counts.ful_ret[g])
        counts.pair_sum_all[t] = float(counts.ful_ret[g] + counts.ful_imp[g])
        counts.pairs_ret[t] = counts.poss_ret[g]
        counts.pairs_cross[t] = counts.poss_imp[g]
        counts.pairs_unret[t] = counts.notoccur[g]
        return
    c = topic.counts.astype(np.float64)
    k = topic.njr
    ret = c[:k, :k]
    upper = np.triu(np.ones((k, k), bool), 1)
    tot = ret + ret.T
    mask = upper & (tot > 0)
    v_ret = ret[mask] / tot[mask]  # row-major: trec_eval's i, j loop order
    cross, back = c[:k, k:], c[k:, :k].T
    tot2 = cross + back
    mask2 = tot2 > 0
    v_cross = cross[mask2] / tot2[mask2]
    seq = np.cumsum(np.concatenate([v_ret, v_cross]))
    counts.pair_sum_ret[t] = seq[len(v_ret) - 1] if len(v_ret) else 0.0
    counts.pair_sum_all[t] = seq[-1] if len(seq) else 0.0
    counts.pairs_ret[t] = int(mask.sum())
    counts.pairs_cross[t] = int(mask2.sum())
    un = c[k:, k:]
    counts.pairs_unret[t] = int((np.triu(un + un.T, 1) > 0).sum())
