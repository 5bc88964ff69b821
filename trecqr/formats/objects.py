"""One door for every run and qrels input: :func:`load_run_any` and :func:`load_qrels_any`.

``trecqr.evaluate``, ``evaluate_many``, the ir_measures provider and ``trecqr eval`` all read
their inputs here, so each kind becomes the same columns (:class:`~trecqr.formats.Run`,
:class:`~trecqr.formats.Qrels`) by one route:

=============================================  ============================================
input                                          read by
=============================================  ============================================
a Run / Qrels                                  returned as is
a path: TREC text (``.gz``, ``-`` ...) or JSON  the TREC readers (:mod:`.run`, :mod:`.qrels`)
a path: Parquet, Feather, JSONL, 3-column      :mod:`.colfiles`
``irds:<dataset id>``: qrels, scoreddocs       :mod:`.irds_files` (local files only)
``{qid: {docno: value}}`` (pytrec_eval, ranx)  :func:`~.run.run_from_dict`, ...
a pandas DataFrame, a pyarrow Table            :mod:`.tables` (both column conventions)
a ranx ``Run`` / ``Qrels`` (duck-typed)        :func:`ranx_table`, then as a table
rows: ir_datasets' ``qrels_iter()``...          :func:`.tables.rows_table`
=============================================  ============================================
"""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa

from trecqr.errors import InputError
from trecqr.formats.colfiles import (file_kind, read_three_column_qrels, read_three_column_run, sniff,
                       table_qrels, table_run)
from trecqr.formats.irds_files import irds_qrels, irds_run
from trecqr.formats.qrels import Qrels, qrels_from_dict, read_qrels
from trecqr.formats.run import Run, read_run, run_from_dict
from trecqr.formats.tables import is_arrow_table, is_frame, qrels_from_table, rows_table, run_from_table

IRDS = "irds:"  # a dataset of ir_datasets, read from local files only


def _ranx(obj, attr: str) -> bool:
    """A ranx Run (``attr`` "run") or Qrels ("qrels"): told by its methods, ranx not imported."""
    return hasattr(obj, "to_dict") and hasattr(obj, attr) and not isinstance(obj, dict) \
        and type(obj).__module__.split(".")[0] == "ranx"


def _rows(obj) -> bool:
    return hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, dict, os.PathLike)) \
        and not hasattr(obj, "read")


def _first_and_rest(obj, source: str):
    it = iter(obj)
    for first in it:
        return first, it
    raise InputError(source, None, "no rows")


def load_run_any(obj, *, comments: bool = True, judged=None, float32: bool | None = None) -> Run:
    """A Run from any input of the table above. judged and float32 are the TREC file
    scanner's (the qrels' docnos to match while reading; 9.0.8's float scores)."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, dict):
        return run_from_dict(obj)
    if isinstance(obj, str) and obj.startswith(IRDS):
        return irds_run(obj[len(IRDS):])
    if isinstance(obj, (str, os.PathLike)):
        kind = file_kind(obj, comments=comments)
        if kind == "3col":
            return read_three_column_run(obj, comments=comments)
        if kind != "trec":
            return table_run(obj, kind)
        return read_run(obj, comments=comments, judged=judged, float32=float32)
    if is_frame(obj):
        return run_from_table(obj, "<run DataFrame>")
    if is_arrow_table(obj):
        return run_from_table(obj, f"<run {type(obj).__name__}>")
    if _ranx(obj, "run"):
        name = getattr(obj, "name", None)
        if not len(obj.run):
            return run_from_dict({}, "<ranx Run>", name or "trecqr")
        return run_from_table(ranx_table(obj.run, "score"), "<ranx Run>", name or "trecqr")
    if _rows(obj):
        first, rest = _first_and_rest(obj, "<run rows>")
        return run_from_table(rows_table(first, rest, "<run rows>"), "<run rows>")
    return read_run(obj, comments=comments, judged=judged, float32=float32)


def load_qrels_any(obj, *, comments: bool = True) -> Qrels:
    """Qrels from any input of the table above."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, dict):
        return qrels_from_dict(obj)
    if isinstance(obj, str) and obj.startswith(IRDS):
        return irds_qrels(obj[len(IRDS):])
    if isinstance(obj, (str, os.PathLike)):
        kind, raw = sniff(obj, comments=comments)
        if kind == "3col":
            return read_three_column_qrels(obj, comments=comments)
        if kind != "trec":
            return table_qrels(obj, kind)
        return read_qrels(obj, comments=comments, raw=raw)
    if is_frame(obj):
        return qrels_from_table(obj, "<qrels DataFrame>")
    if is_arrow_table(obj):
        return qrels_from_table(obj, f"<qrels {type(obj).__name__}>")
    if _ranx(obj, "qrels"):
        if not len(obj.qrels):
            return qrels_from_dict({}, "<ranx Qrels>")
        return qrels_from_table(ranx_table(obj.qrels, "relevance"), "<ranx Qrels>")
    if _rows(obj):
        first, rest = _first_and_rest(obj, "<qrels rows>")
        return qrels_from_table(rows_table(first, rest, "<qrels rows>"), "<qrels rows>")
    return read_qrels(obj, comments=comments)


def is_columnar_file(obj, *, comments: bool = True) -> bool:
    """Whether a path names a run file the TREC scanner does not read (streaming skips it)."""
    return isinstance(obj, (str, os.PathLike)) and (
        str(obj).startswith(IRDS) or file_kind(obj, comments=comments) != "trec")


def ranx_table(store, value: str) -> pa.Table:
    """The ``{qid: {docno: value}}`` of a ranx Run or Qrels (numba typed dicts) as columns:
    each topic's keys and values taken in one call each, the topic column repeated by numpy
    (no Python dict, no statement per row)."""
    topics, docnos, values, sizes = [], [], [], []
    for qid in store.keys():
        docs = store[qid]
        keys = list(docs.keys())
        topics.append(qid)
        docnos.extend(keys)
        values.extend(docs.values())
        sizes.append(len(keys))
    qid = np.repeat(np.array(topics, dtype=object), sizes)
    return pa.table({"query_id": pa.array(qid, pa.string()),
                     "doc_id": pa.array(docnos, pa.string()), value: pa.array(values)})


def is_table_like(obj) -> bool:
    """A DataFrame, an Arrow table, a ranx Run/Qrels, a list of namedtuples or an iterator:
    the inputs other than dicts and paths that become columns here."""
    if is_frame(obj) or is_arrow_table(obj) or _ranx(obj, "run") or _ranx(obj, "qrels"):
        return True
    if isinstance(obj, (list, tuple)):
        return bool(obj) and hasattr(obj[0], "_fields")
    return _rows(obj) and iter(obj) is obj  # a generator or iterator (read once)
