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

import contextlib
import os
import sys
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError
from ..formats import Qrels, write_qrels
from ..transactions import at_command_end, dirs_under, remove_new_empty_dirs
from .topics import Topics, write_topics
from .turn_ids import check_style, restyle

# ids ir_datasets knows the files of but does not register (queries + qrels only)
QUERIES_QRELS_ONLY = {
    "trec-cast/v2/2021": ("trec-cast", "2021/queries", "Cast2021Query", "2021/qrels"),
    "trec-cast/v3/2022": ("trec-cast", "2022/queries", "Cast2022Query", "2022/qrels"),
}
_CHUNK = 1 << 20


class OfflineDownload(RuntimeError):
    """ir_datasets tried to fetch a file: not allowed here."""


def _irds():
    os.environ.setdefault("IR_DATASETS_SKIP_DISK_FREE", "true")
    if "ir_datasets" not in sys.modules:  # its import makes a folder per dataset under its

        home = os.environ.get("IR_DATASETS_HOME") or os.path.expanduser("~/.ir_datasets")
        before = dirs_under(home)  # command removes again those it left empty
        # a dataset's folder gets an irds_version.txt when its documents are looked up
        at_command_end(lambda: remove_new_empty_dirs(home, before, ("irds_version.txt",)))
    try:
        import ir_datasets
    except ImportError:
        raise UsageError("reading ir_datasets datasets needs the ir_datasets package "
                         "(pip install ir_datasets)") from None
    return ir_datasets


def load(dataset_id: str):
    """The ir_datasets dataset named dataset_id (see QUERIES_QRELS_ONLY for the extra ids)."""
    ir_datasets = _irds()
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        if dataset_id not in QUERIES_QRELS_ONLY:
            raise UsageError(f"ir_datasets {ir_datasets.__version__} has no dataset "
                             f"{dataset_id!r}") from None
    ns, queries_key, query_cls, qrels_key = QUERIES_QRELS_ONLY[dataset_id]
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import DownloadConfig
    import ir_datasets.datasets.trec_cast as cast

    dlc = DownloadConfig.context(ns, ir_datasets.util.home_path() / ns)
    return Dataset(cast.CastQueries(dlc[queries_key], getattr(cast, query_cls)),
                   TrecQrels(dlc[qrels_key], cast.QRELS_DEFS))


# ---------------------------------------------------------------- files and downloads
def _downloads(obj, seen=None, depth=0):
    """Every ir_datasets Download object reachable from obj's attributes."""
    from ir_datasets.util.download import Download

    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 8:
        return []
    seen.add(id(obj))
    if isinstance(obj, Download):
        return [obj]
    found = []
    if isinstance(obj, (list, tuple)):
        children = obj
    elif isinstance(obj, dict):
        children = obj.values()
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("ir_datasets"):
        children = vars(obj).values()
    else:
        return []
    for child in children:
        found.extend(_downloads(child, seen, depth + 1))
    return found


def _urls(download) -> list[str]:
    out = []
    for m in getattr(download, "mirrors", []):
        for attr in ("url", "_url", "_path"):
            value = getattr(m, attr, None)
            if value:
                out.append(str(value))
                break
    return out


def required_files(handler) -> list[tuple[str, bool, list[str]]]:
    """(path, exists, urls) of every file an ir_datasets handler reads."""
    out = []
    for d in _downloads(handler):
        path = d.path(force=False)
        out.append((str(path) if path else "<no local path>",
                    bool(path) and os.path.exists(path), _urls(d)))
    return out


def _missing_message(dataset_id: str, what: str, files) -> str:
    lines = [f"ir_datasets {dataset_id!r}: the {what} files are not available locally "
             f"(trecqr never downloads); place them at:"]
    for path, _exists, urls in files:
        lines.append(f"  {path}" + (f"  (from {urls[0]})" if urls else ""))
    return "\n".join(lines)


@contextlib.contextmanager
def offline():
    """Make every ir_datasets network fetch raise OfflineDownload."""
    from ir_datasets.util import download as dl

    classes = [c for c in (getattr(dl, n, None) for n in
                           ("RequestsDownload", "GoogleDriveDownload", "GoogleCloudBucketStream"))
               if c is not None]
    saved = {c: c.__dict__.get("stream") for c in classes}

    def refuse(self, *args, **kwargs):
        raise OfflineDownload(f"download refused: {_urls(_Wrap(self)) or self}")

    for c in classes:
        c.stream = refuse
    try:
        yield
    finally:
        for c, s in saved.items():
            if s is None:
                del c.stream
            else:
                c.stream = s


class _Wrap:
    def __init__(self, mirror):
        self.mirrors = [mirror]


def check_local(dataset_id: str, handler, what: str) -> None:
    files = required_files(handler)
    missing = [f for f in files if not f[1]]
    if missing:
        raise UsageError(_missing_message(dataset_id, what, missing))


def _guarded(dataset_id: str, handler, what: str, fn):
    check_local(dataset_id, handler, what)
    with offline_guard(dataset_id, handler, what):
        return fn()


@contextlib.contextmanager
def offline_guard(dataset_id: str, handler, what: str):
    """Run a (streaming) read with downloads refused; a refused download is a UsageError
    naming the files to place."""
    try:
        with offline():
            yield
    except OfflineDownload as e:
        raise UsageError(_missing_message(dataset_id, what, required_files(handler))
                         + f"\n  ({e})") from None


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

    qids, texts, missing = _guarded(dataset_id, handler, "queries", read)
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

    qid, docno, grade = _guarded(dataset_id, handler, "qrels", read)
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
