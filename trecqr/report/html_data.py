"""The data behind the HTML report (:mod:`.html`): per turn, each run's values, top-k, grades,
rewrite and the conversation, as one JSON-ready dict that the page's script renders.

Why a separate module: the page is a view; everything it shows is computed here, in Python,
from the same scorer as ``compare`` (per-topic values from :func:`.breakdown.score_table`), so
the numbers of the page are the command line's. The top-k is trec_eval's ranking (score
descending, then docno descending; scores rounded to 32-bit floats under 9.0.8), from
:func:`trecqr.formats.order.trec_order`.

Compact on purpose: a document id is written once (``docs``) and referred to by its index;
grades are kept only for documents some run shows in its top-k; passage text only for those.
"""

from __future__ import annotations

import math
import os

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import Topics, format_of, read_topics
from trecqr.datasets.turn_ids import split_id
from trecqr.api.evaluation import load_qrels, load_run
from trecqr.errors import UsageError
from trecqr.formats.order import trec_order
from trecqr.retrieval.collections import iter_collection
from trecqr.retrieval.indexdir import read_manifest
from trecqr.report.groups import groups_by_turn, read_groups

RESPONSE_FIELDS = ("response", "answer", "Truth_answer", "canonical_response",
                   "manual_canonical_result_text")
# a turn's own history, when the topics carry it (QReCC: Context, InfoCQR: NewContext):
# utterances and responses alternating, oldest first
CONTEXT_FIELDS = ("Context", "NewContext", "context", "history")


# ---------------------------------------------------------------------------------------------
# inputs


def read_texts(source, *, raw=None, rewrites: bool = False):
    """{qid: text} of a topics file (TSV/TREC/JSONL topics) or rewrites file (JSONL rewrites,
    chat-completion objects unpacked), or of a mapping or Topics; plus {qid: metadata}.

    A JSONL file is read as rewrites first when ``rewrites`` (a run's queries: a record holding
    a question and a rewrite is the rewrite), else as topics first (the raw question)."""
    if source is None:
        return None, {}
    if isinstance(source, Topics):
        return source.as_dict(), dict(source.metadata)
    if isinstance(source, dict):
        return {str(k): str(v) for k, v in source.items()}, {}
    path = os.fspath(source)
    if format_of(path) == "jsonl":
        readers = [lambda: read_topics(path),
                   lambda: read_rewrites(path, raw=raw, missing="raw" if raw else "drop").topics]
        try:
            t = (readers[::-1] if rewrites else readers)[0]()
        except UsageError:  # no field of that kind: the other kind of file
            t = (readers[::-1] if rewrites else readers)[1]()
        return t.as_dict(), dict(t.metadata)
    t = read_topics(path)
    return t.as_dict(), dict(t.metadata)


def _turn(qid: str):
    """(conversation, depth) of a turn id, or (qid, None) for ids that are not turns."""
    try:
        conv, turn, _ = split_id(qid)
        return conv, int(turn)
    except (UsageError, ValueError):
        return qid, None


def passage_texts(docids: set, *, collection=None, index=None) -> dict:
    """{docid: text} of the wanted docids, from a collection (TSV/JSONL/irds), or from the
    collection an index folder was built from (its manifest names it) when that file exists."""
    if collection is None and index is not None:
        label = read_manifest(index).get("collection")
        if not label or not (label.startswith("irds:") or os.path.isfile(label)):
            raise UsageError(f"the index {index} does not name a readable collection: give the "
                             "passage text with a collection")
        collection = label
    if collection is None:
        return {}
    out = {}
    for doc in iter_collection(collection):
        if doc.docid in docids:
            out[doc.docid] = doc.text
    return out


# ---------------------------------------------------------------------------------------------
# rankings


def _qrels_index(qrels):
    """keys ``qid\\tdocno`` of the judged pairs and their grades (the last grade of a pair)."""
    keys = pc.binary_join_element_wise(qrels.qid.cast(pa.string()),
                                       qrels.docno.cast(pa.string()), "\t")
    return keys, np.asarray(qrels.grade, dtype=np.int64)


def ranked(run, qkeys, qgrades, k: int, level: int, float32: bool, max_docs=None,
           judged_only: bool = False) -> dict:
    """{qid: (top-k docnos, their grades or None, first relevant rank or None)} of a loaded Run,
    in trec_eval's order, as the measures see it: ``-J`` (judged_only) drops unjudged documents
    first, ``-M`` (max_docs) then cuts each ranking (the top k too)."""
    n = len(run.score)
    if n == 0:
        return {}
    order, rank, starts = trec_order(run, float32)  # rank: of each position in the order
    idx = pa.array(np.asarray(order))
    qid = run.qid.take(idx).cast(pa.string())
    docno = run.docno.take(idx).cast(pa.string())
    rank = np.asarray(rank)
    keys = pc.binary_join_element_wise(qid, docno, "\t")
    pos = pc.index_in(keys, value_set=qkeys)
    judged = ~np.asarray(pc.is_null(pos).to_numpy(zero_copy_only=False))
    grade = np.full(n, -1, dtype=np.int64)
    grade[judged] = qgrades[np.asarray(pos.filter(pc.invert(pc.is_null(pos))).to_numpy())]
    if judged_only:
        keep = np.flatnonzero(judged)
        topic = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, n)))[keep]
        qid, docno = qid.take(pa.array(keep)), docno.take(pa.array(keep))
        judged, grade, n = judged[keep], grade[keep], len(keep)
        if n == 0:
            return {}
        starts = np.flatnonzero(np.concatenate([[True], topic[1:] != topic[:-1]]))
        rank = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n))) + 1
    cut = np.inf if max_docs is None else max_docs
    k = int(min(k, cut))
    relevant = judged & (grade >= level) & (rank <= cut)
    bounds = list(np.asarray(starts)) + [n]
    qids = qid.to_pylist()
    docs = docno.to_pylist()
    out = {}
    for s, e in zip(bounds[:-1], bounds[1:]):
        top = slice(s, min(e, s + k))
        hit = np.flatnonzero(relevant[s:e])
        out[qids[s]] = (docs[top], [int(g) if j else None for g, j in
                                    zip(grade[top], judged[top])],
                        int(rank[s + hit[0]]) if len(hit) else None)
    return out


# ---------------------------------------------------------------------------------------------
# the page's data


def _listed_as_zero(table, measure: str, compat: str) -> bool:
    """Whether the per-topic rows of ``measure`` list a topic the run lacks, as 0."""
    return table.complete and (measure in table.irm or compat != "9.0.8")


def _num(v):
    return None if v is None or not math.isfinite(v) else float(v)


def page_data(table, qrels, runs, *, k: int = 10, rewrites=None, raw=None, manual=None,
              collection=None, index=None, groups=None, relevance_level: int = 1,
              max_docs=None, judged_only: bool = False, compat: str = "9.0.8") -> dict:
    """Everything the page's table and turn view show (see the module docstring).

    table: the :class:`.breakdown.ScoreTable` of the runs; runs: the same runs (paths, dicts,
    frames or Runs), read again for their top-k; rewrites: one topics/rewrites source (or None)
    per run; raw: the raw utterances (the conversation); manual: the manual rewrites; groups: a
    ``--groups`` JSON file or mapping."""
    if k < 1:
        raise UsageError("the top-k depth must be at least 1")
    rewrites = list(rewrites or [])
    if rewrites and len(rewrites) != len(runs):
        raise UsageError(f"{len(rewrites)} rewrites for {len(runs)} runs: give one per run, "
                         "in the order of the runs")
    q = load_qrels(qrels, comments=compat != "9.0.8")
    qkeys, qgrades = _qrels_index(q)
    ids = table.topics(0) if table.complete else []
    if not table.complete:
        seen = set()
        for qs in table.qids:
            ids += [t for t in qs if t not in seen]
            seen.update(qs)
    turns = [_turn(t) for t in ids]
    group_of = groups_by_turn(read_groups(groups)) if groups is not None else {}
    group_names = sorted({g for gs in group_of.values() for g in gs})
    gindex = {g: i for i, g in enumerate(group_names)}

    docs: dict[str, int] = {}
    topk, first_rel, unjudged, grades = [], [], [], [{} for _ in ids]
    share = []
    for run in runs:
        r = load_run(run, comments=compat != "9.0.8")
        rk = ranked(r, qkeys, qgrades, k, relevance_level, compat == "9.0.8", max_docs,
                    judged_only)
        lists, firsts, unj = [], [], []
        shown = unj_total = 0
        for i, t in enumerate(ids):
            top, g, first = rk.get(t, ([], [], None))
            codes = [docs.setdefault(d, len(docs)) for d in top]
            for c, gr in zip(codes, g):
                if gr is not None:
                    grades[i][c] = gr
            lists.append(codes)
            firsts.append(first)
            unj.append(sum(gr is None for gr in g))
        for t in set(ids) & set(rk):
            top, g, _ = rk[t]
            shown += len(top)
            unj_total += sum(gr is None for gr in g)
        topk.append(lists)
        first_rel.append(firsts)
        unjudged.append(unj)
        share.append(unj_total / shown if shown else None)

    raw_map, raw_meta = read_texts(raw)
    texts = [None] * len(runs)
    for i, src in enumerate(rewrites):
        texts[i] = read_texts(src, raw=raw_map, rewrites=True)[0] if src is not None else None
    manual_map = read_texts(manual)[0]
    docids = list(docs)
    wanted = passage_texts(set(docids), collection=collection, index=index) \
        if collection is not None or index is not None else None

    conversation = {}
    if raw_map:
        for qid, text in raw_map.items():
            conv, depth = _turn(qid)
            meta = raw_meta.get(qid, {})
            resp = next((meta[f] for f in RESPONSE_FIELDS if isinstance(meta.get(f), str)), None)
            conversation.setdefault(conv, []).append([depth, qid, text, resp])
        for turns_of in conversation.values():
            turns_of.sort(key=lambda x: (x[0] is None, x[0] or 0))
    context = [next((m[f] for f in CONTEXT_FIELDS if isinstance(m.get(f), list)
                     and all(isinstance(x, str) for x in m[f])), None) if m else None
               for m in _aligned(raw_meta, ids)]
    qrels_topics = set(table.qrels_topics)
    coverage = []
    for i, name in enumerate(table.names):
        evaluated = set(table.qids[i])
        coverage.append({"run": name, "evaluated": len(table.qids[i]),
                         "missing": len(qrels_topics - evaluated), "unjudged_share": share[i]})
    return {
        "runs": list(table.names), "measures": list(table.measures), "k": k,
        "complete": bool(table.complete), "ids": ids,
        "conv": [c for c, _ in turns], "depth": [d for _, d in turns],
        "groups": [[gindex[g] for g in group_of.get(t, _canon_groups(group_of, t))]
                   for t in ids] if group_of else None,
        "group_names": group_names,
        # a QRELS population's means count a topic a run lacks as 0: the page lists it with
        # that 0 where every door's per-topic rows do (ir_measures names; trec_eval names under
        # 10.0's -c, as its -q prints them; 9.0.8's -q -c does not: trecqr.engine.population)
        "values": [[[_num(table.values[i][m].get(t, 0.0 if _listed_as_zero(table, m, compat)
                                                  else None))
                     for t in ids] for m in table.measures] for i in range(len(runs))],
        "unjudged": unjudged, "first_rel": first_rel, "topk": topk,
        "grades": [{str(c): g for c, g in gr.items()} for gr in grades],
        "docs": docids, "text": None if wanted is None else [wanted.get(d) for d in docids],
        "rewrites": [_aligned(t, ids) for t in texts],
        "manual": _aligned(manual_map, ids),
        "conversation": conversation, "coverage": coverage,
        "context": context if any(c is not None for c in context) else None,
        "relevance_level": relevance_level,
    }


def _aligned(mapping: dict | None, ids: list) -> list | None:
    """mapping's value for each id, matched as written, else by (conversation, turn): topics
    may spell turn ids in another style than the qrels (``1_2`` and ``QReCC-Test_1_2``)."""
    if mapping is None:
        return None
    by_turn = {}
    for key, value in mapping.items():
        conv, depth = _turn(key)
        if depth is not None:
            by_turn.setdefault((conv, depth), value)
    return [mapping[t] if t in mapping else by_turn.get(_turn(t)) for t in ids]


def _canon_groups(group_of: dict, qid: str) -> list:
    """The groups of a turn written in another id style (``31-4`` for ``31_4``)."""
    conv, depth = _turn(qid)
    if depth is None:
        return []
    for key in (f"{conv}_{depth}", f"{conv}-{depth}"):
        if key in group_of:
            return group_of[key]
    return []
