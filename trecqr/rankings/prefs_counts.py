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

from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats.run import Run
from trecqr.rankings.prefs_groups import (RowNames, TopicPrefs, class_group_counts,
                                          matrix_group_counts)

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
    names = RowNames(prefs, sel, order)

    for g in range(G):
        s, e = int(jg_bounds[g]), int(jg_bounds[g + 1])
        t = int(jg_topic[g])
        if g == 0 or jg_topic[g - 1] != t:  # first jg of a topic
            topic = TopicPrefs(int(njr[t]), int(nj[t]))
            if pairs and jgs_of_topic[t] > 1:
                topic.counts = np.zeros((topic.nj, topic.nj), np.int32)
        if new_jsg[s + 1:e].any():
            stats = matrix_group_counts(lev_s[s:e], r_s[s:e], new_jsg[s:e], topic, names, s)
        else:
            stats = class_group_counts(lev_s[s:e], r_s[s:e], topic, names, s)
            if stats.pop("duplicates") and pairs and topic.counts is None:
                # the only jg repeats a document: pref_counts can reach 2, count it out
                topic.counts = np.zeros((topic.nj, topic.nj), np.int32)
                class_group_counts(lev_s[s:e], r_s[s:e], topic, names, s)
        for k, v in stats.items():
            stats_of[k][g] = v
        if pairs and (g + 1 == G or jg_topic[g + 1] != t):  # last jg of the topic
            _pair_sums(counts, t, topic, g)
    return counts


def _pair_sums(counts: PrefCounts, t: int, topic: TopicPrefs, g: int) -> None:
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
