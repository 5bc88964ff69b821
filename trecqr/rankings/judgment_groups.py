"""trec_eval's form_res_rels_jg for every evaluated topic: one ranking per judgment group.

A ``-R qrels_jg`` topic has several sets of judgments (judgment groups, e.g. one per user). Each
(topic, jg) gets the topic's ranking (trec_eval order, -M) with that group's grades, -J then
dropping documents the group did not judge. The result is a :class:`Rankings` whose rows are
(topic, jg) pairs in topic then jg (strcmp) order, so that the ``*_avgjg`` measures are the
usual vectorized computations on its batches, followed by an average over each topic's rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.rankings.prefs_counts import flat, sorted_codes, topic_codes, with_bogus_rows
from trecqr.formats.order import qid_codes, trec_order
from trecqr.rankings.build import NONPOOL, UNJUDGED, Rankings


@dataclass
class JGRankings:
    rankings: Rankings      # one row per (topic, jg)
    jg_start: np.ndarray    # (topics+1,) offsets of each topic's rows
    num_rel_ret: np.ndarray  # per row: judged retrieved documents with grade >= -l

    @property
    def num_jgs(self) -> np.ndarray:
        return np.diff(self.jg_start)

    def average(self, values: np.ndarray) -> np.ndarray:
        """Per topic: the rows' values added in jg order, divided by #jgs when there are > 1."""
        n = len(self.jg_start) - 1
        k = values.shape[1]
        counts = self.num_jgs
        width = max(int(counts.max()) if n else 0, 1)
        padded = np.zeros((n, width, k))
        row = np.repeat(np.arange(n), counts)
        col = np.arange(len(values)) - np.repeat(self.jg_start[:-1], counts)
        padded[row, col] = values
        total = np.cumsum(padded, axis=1)[:, -1, :]
        return np.where((counts > 1)[:, None], total / np.maximum(counts, 1)[:, None], total)


def form_res_rels_jg(run, qrels, qids: list, bogus: np.ndarray, options) -> JGRankings:
    index = {q: i for i, q in enumerate(qids)}
    n = len(qids)
    run = with_bogus_rows(run, qids, bogus)

    # judgment groups: (topic, jg) in strcmp order
    qt = topic_codes(qrels.qid, index)
    sel = np.flatnonzero(qt >= 0)
    qt = qt[sel]
    jgc, jg_names = sorted_codes(qrels.jg.take(pa.array(sel)))
    njg = max(len(jg_names), 1)
    group_key = qt * njg + jgc
    groups, row_group = np.unique(group_key, return_inverse=True)
    group_topic = groups // njg
    grade = qrels.grade[sel]

    # grades per (group, docno)
    enc = pc.dictionary_encode(flat(qrels.docno.take(pa.array(sel))))
    docs = enc.dictionary
    ndocs = max(len(docs), 1)
    qkey = row_group * ndocs + enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    korder = np.argsort(qkey, kind="stable")
    qkey_sorted, grade_sorted = qkey[korder], grade[korder]

    # num_rel per group: grades >= 0 and >= -l (trec_eval's rel_levels)
    judged_rel = (grade >= 0) & (grade >= options.relevance_level)
    num_rel = np.bincount(row_group[judged_rel], minlength=len(groups))

    # each topic's ranking (trec_eval order, -M), as run rows
    local, _ = qid_codes(run.qid)
    order, rank, _ = trec_order(run, options.float32_scores, qcode=local)
    order = order[rank <= options.max_docs]
    rt = topic_codes(run.qid, index)[order]
    order = order[rt >= 0]
    rt = rt[rt >= 0]
    o = np.argsort(rt, kind="stable")
    order, rt = order[o], rt[o]
    per_topic = np.bincount(rt, minlength=n)
    topic_start = np.concatenate([[0], np.cumsum(per_topic)])
    where = pc.index_in(run.docno.take(pa.array(order)), value_set=docs)
    rdoc = where.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)

    # every group gets its topic's ranking
    lengths = per_topic[group_topic]
    g_of = np.repeat(np.arange(len(groups)), lengths)
    pos = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    src = topic_start[group_topic][g_of] + pos
    doc = rdoc[src]
    rel = np.full(len(src), NONPOOL, np.int64)
    if len(qkey_sorted) and len(src):
        key = g_of * ndocs + doc
        at = np.minimum(np.searchsorted(qkey_sorted, key), len(qkey_sorted) - 1)
        found = (doc >= 0) & (qkey_sorted[at] == key)
        g = grade_sorted[at[found]]
        rel[found] = np.where(g < 0, UNJUDGED, g)
    if options.judged_only:
        keep = rel >= 0
        rel, g_of = rel[keep], g_of[keep]
    counts = np.bincount(g_of, minlength=len(groups))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    rel_ret = (rel >= 0) & (rel >= options.relevance_level)
    num_rel_ret = np.bincount(g_of[rel_ret], minlength=len(groups))

    rows = len(groups)
    rk = Rankings(qids=[f"{qids[t]}#{i}" for i, t in enumerate(group_topic)], offsets=offsets,
                  rel=rel, num_rel=num_rel, levels=np.zeros(0, np.int64),
                  level_counts=np.zeros((rows, 0), np.int64), bogus=np.zeros(rows, bool),
                  options=options, runid=run.runid, num_qrels_topics=n, num_rel_all=0)
    jg_start = np.concatenate([[0], np.cumsum(np.bincount(group_topic, minlength=n))])
    return JGRankings(rk, jg_start, num_rel_ret)
