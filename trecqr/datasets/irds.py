"""Any ir_datasets dataset's queries and qrels to TREC topics and qrels files.

``trecqr convert irds DATASET_ID --topics-out OUT --qrels-out OUT [--query-field FIELD]
[--qid-style STYLE]`` reads a dataset through ir_datasets itself (``ir_datasets.load``), so its
own parsers and its own file layout under ``IR_DATASETS_HOME`` (default ``~/.ir_datasets``)
are used. Nothing is downloaded: the files the dataset needs must already be where ir_datasets
looks for them; when one is missing the command fails with a UsageError naming every missing
file (and the URL ir_datasets would fetch it from), and any download ir_datasets still
attempts is intercepted and reported the same way.

The query text is the query's ``text`` field by default, or any named field of the dataset's
query type (``--query-field manual_rewritten_utterance`` for TREC CAsT). Queries whose field is
empty or missing (None) are left out and counted. Qrels are streamed into Arrow columns in
chunks, never into a Python dict.

ir_datasets 0.6 registers TREC CAsT 2019 and 2020 (``trec-cast/v1/2019``, ``trec-cast/v1/2020``
and their ``/judged`` subsets) but not 2021 and 2022 (their document collections are not
packaged). For those, ``trec-cast/v2/2021`` and ``trec-cast/v3/2022`` are built here from
ir_datasets' own download table and parsers (``CastQueries`` and ``TrecQrels`` on its
``2021/queries``, ``2021/qrels``, ... entries): queries and qrels only, no documents.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import UsageError
from trecqr.formats import Qrels, write_qrels
# the local-only ir_datasets access lives with the inputs (irds: qrels and runs use it too)
from trecqr.formats.irds_files import (QUERIES_QRELS_ONLY, OfflineDownload,  # noqa: F401
                                  check_local, guarded_read, load, offline, offline_guard,
                                  required_files)
from trecqr.datasets.topics import Topics, write_topics
from trecqr.datasets.turn_ids import check_style, restyle

_CHUNK = 1 << 20


# ---------------------------------------------------------------- conversion
@dataclass
class IrdsConversion:
    topics: object | None = None  # trecqr Topics
    qrels: object | None = None  # trecqr Qrels
    queries_read: int = 0
    queries_missing_text: list = field(default_factory=list)  # qids left out
    qrels_topics: int = 0


def query_fields(dataset) -> tuple[str, ...]:
    return tuple(dataset.queries_cls()._fields)


def convert_queries(dataset, dataset_id: str = "<dataset>", query_field: str | None = None):
    """(Topics, qids left out for an empty query text).

    query_field None: the query's ``text`` field when it has one, else ir_datasets' own
    ``default_text()`` of the query type (``raw_utterance`` for TREC CAsT)."""
    if not dataset.has_queries():
        raise UsageError(f"ir_datasets {dataset_id!r} has no queries")
    fields = query_fields(dataset)
    if query_field is None and "text" in fields:
        query_field = "text"
    if query_field is None:
        if not hasattr(dataset.queries_cls(), "default_text"):
            raise UsageError(f"ir_datasets {dataset_id!r}: queries have no 'text' field: name one "
                             f"with --query-field ({', '.join(fields)})")
        def get(q):
            return q.default_text()
    elif query_field not in fields:
        raise UsageError(f"ir_datasets {dataset_id!r}: queries have no field {query_field!r} "
                         f"(fields: {', '.join(fields)})")
    else:
        index = fields.index(query_field)
        def get(q):
            return q[index]
    handler = dataset.queries_handler()

    def read():
        qids, texts, missing = [], [], []
        for q in dataset.queries_iter():
            text = get(q)
            if text is None or (isinstance(text, str) and not text.strip()):
                missing.append(str(q[0]))
                continue
            qids.append(str(q[0]))
            texts.append(text if isinstance(text, str) else str(text))
        return qids, texts, missing

    qids, texts, missing = guarded_read(dataset_id, handler, "queries", read)
    return Topics(qids, texts, {}, f"irds:{dataset_id}"), missing


def convert_qrels(dataset, dataset_id: str = "<dataset>"):
    """The dataset's qrels as trecqr Qrels, read in chunks into Arrow columns."""
    if not dataset.has_qrels():
        raise UsageError(f"ir_datasets {dataset_id!r} has no qrels")
    handler = dataset.qrels_handler()

    def read():
        q_chunks, d_chunks, g_chunks = [], [], []
        qids, docs, grades = [], [], []

        def flush():
            if qids:
                q_chunks.append(pa.array(qids, pa.string()))
                d_chunks.append(pa.array(docs, pa.string()))
                g_chunks.append(np.asarray(grades, dtype=np.int64))
                qids.clear(), docs.clear(), grades.clear()

        for row in dataset.qrels_iter():
            qids.append(str(row[0]))
            docs.append(str(row[1]))
            grades.append(int(row[2]))
            if len(qids) >= _CHUNK:
                flush()
        flush()
        if not q_chunks:
            return pa.array([], pa.string()), pa.array([], pa.string()), np.zeros(0, np.int64)
        return (pa.concat_arrays(q_chunks), pa.concat_arrays(d_chunks),
                np.concatenate(g_chunks))

    qid, docno, grade = guarded_read(dataset_id, handler, "qrels", read)
    return Qrels(qid, docno, grade, f"irds:{dataset_id}")


def convert(dataset_id: str, *, topics_out=None, qrels_out=None, query_field: str | None = None,
            qid_style: str | None = None, topics_format: str | None = None,
            dataset=None) -> IrdsConversion:
    """Write the dataset's queries and/or qrels as TREC files; returns what was converted."""
    if topics_out is None and qrels_out is None:
        raise UsageError("give --topics-out and/or --qrels-out")
    if qid_style is not None:
        check_style(qid_style)
    dataset = dataset if dataset is not None else load(dataset_id)
    result = IrdsConversion()
    if topics_out is not None:
        topics, missing = convert_queries(dataset, dataset_id, query_field)
        result.queries_read = len(topics) + len(missing)
        result.queries_missing_text = missing
        if missing and not len(topics):  # an empty topics file from queries: refused
            raise UsageError(f"ir_datasets {dataset_id!r}: all {len(missing)} queries have an "
                             f"empty {query_field or 'text'}; no topics written")
        if qid_style is not None:
            topics = topics.restyle(qid_style)
        result.topics = topics
    if qrels_out is not None:
        qrels = convert_qrels(dataset, dataset_id)
        if qid_style is not None and len(qrels):
            qrels = restyle(qrels, qid_style)
        result.qrels = qrels
        result.qrels_topics = len(pc.unique(qrels.qid)) if len(qrels) else 0
    # write only once everything has been read
    if result.topics is not None:
        write_topics(result.topics, topics_out, topics_format)
    if result.qrels is not None:
        write_qrels(result.qrels, qrels_out)
    return result


__all__ = ["convert", "convert_queries", "convert_qrels", "load", "required_files",
           "offline", "IrdsConversion", "QUERIES_QRELS_ONLY"]
