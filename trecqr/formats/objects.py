"""Every kind of run and qrels input as columns: :func:`run_columns` and :func:`qrels_columns`.

The kind is decided once, by :func:`trecqr.formats.inputs.decide`; every door reads its inputs
here by that kind, so each kind becomes the same columns (:class:`~trecqr.formats.Run`,
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
a polars or DuckDB table, an HF Dataset        :func:`.tables.arrow_table`, then as a table
a ranx ``Run`` / ``Qrels`` (duck-typed)        :func:`ranx_table`, then as a table
rows: ir_datasets' ``qrels_iter()``...          :func:`.tables.rows_table`
=============================================  ============================================
"""

from __future__ import annotations

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError
from trecqr.formats.colfiles import (read_three_column_qrels, read_three_column_run, table_qrels,
                                    table_run)
from trecqr.formats.inputs import IRDS, Input
from trecqr.formats.irds_files import irds_qrels, irds_run
from trecqr.formats.qrels import Qrels, qrels_from_dict, read_qrels
from trecqr.formats.run import Run, read_run, run_from_dict
from trecqr.formats.tables import arrow_table, qrels_from_table, rows_table, run_from_table


def _first_and_rest(obj, source: str):
    it = iter(obj)
    for first in it:
        return first, it
    raise InputError(source, None, "no rows")


def _given(obj, cls, role: str):
    """A Run or Qrels given where its kind goes; the other one, swapped, is refused by name."""
    if not isinstance(obj, cls):
        given = "Run" if isinstance(obj, Run) else "Qrels"
        raise InputError(f"<{role} {type(obj).__name__}>", None,
                         f"a {given} is given as the {role}: qrels go first, then the run")
    return obj


def _refuse_other(obj, role: str) -> None:
    """An input of no kind the table above lists (a number, None, a lazy frame...): one line
    that says what goes there, where the file readers would fail on it as a path."""
    what, value = ("a run", "score") if role == "run" else ("qrels", "grade")
    lazy = "; a lazy frame: collect() it first" if hasattr(obj, "collect") else ""
    raise InputError(f"<{role} {type(obj).__name__}>", None,
                     f"not {what}: pass a file path, a {{qid: {{docno: {value}}}}} dict, a "
                     f"DataFrame or Arrow table, or rows{lazy} (docs/python.md, Inputs)")


def run_columns(inp: Input, *, judged=None, float32: bool | None = None,
                comments: bool = True) -> Run:
    """A Run from an input of the table above, by its kind (:func:`~.inputs.decide`).
    judged and float32 are the TREC file scanner's (the qrels' docnos to match while reading;
    9.0.8's float scores); comments: trec_eval 10.0's rule for ``#`` lines."""
    obj, kind = inp.obj, inp.kind
    if kind == "columns":
        return _given(obj, Run, "run")
    if kind == "dict":
        return run_from_dict(obj)
    if kind == "irds":
        return irds_run(obj[len(IRDS):])
    if kind == "file":
        if inp.fmt == "3col":
            return read_three_column_run(obj, comments=comments)
        return table_run(obj, inp.fmt)
    if kind == "frame":
        return run_from_table(obj, "<run DataFrame>")
    if kind == "arrow":
        source = f"<run {type(obj).__name__}>"
        return run_from_table(arrow_table(obj, source), source)
    if kind == "ranx" and hasattr(obj, "run"):
        name = getattr(obj, "name", None)
        if not len(obj.run):
            return run_from_dict({}, "<ranx Run>", name or "trecqr")
        return run_from_table(ranx_table(obj.run, "score"), "<ranx Run>", name or "trecqr")
    if kind in ("rows", "iterable"):
        first, rest = _first_and_rest(obj, "<run rows>")
        return run_from_table(rows_table(first, rest, "<run rows>"), "<run rows>")
    if kind == "other":
        _refuse_other(obj, "run")
    return read_run(obj, comments=comments, judged=judged, float32=float32, raw=inp.raw)


def qrels_columns(inp: Input, *, comments: bool = True) -> Qrels:
    """Qrels from an input of the table above, by its kind (:func:`~.inputs.decide`)."""
    obj, kind = inp.obj, inp.kind
    if kind == "columns":
        return _given(obj, Qrels, "qrels")
    if kind == "dict":
        return qrels_from_dict(obj)
    if kind == "irds":
        return irds_qrels(obj[len(IRDS):])
    if kind == "file":
        if inp.fmt == "3col":
            return read_three_column_qrels(obj, comments=comments)
        return table_qrels(obj, inp.fmt)
    if kind == "frame":
        return qrels_from_table(obj, "<qrels DataFrame>")
    if kind == "arrow":
        source = f"<qrels {type(obj).__name__}>"
        return qrels_from_table(arrow_table(obj, source), source)
    if kind == "ranx" and hasattr(obj, "qrels"):
        if not len(obj.qrels):
            return qrels_from_dict({}, "<ranx Qrels>")
        return qrels_from_table(ranx_table(obj.qrels, "relevance"), "<ranx Qrels>")
    if kind in ("rows", "iterable"):
        first, rest = _first_and_rest(obj, "<qrels rows>")
        return qrels_from_table(rows_table(first, rest, "<qrels rows>"), "<qrels rows>")
    if kind == "other":
        _refuse_other(obj, "qrels")
    return read_qrels(obj, comments=comments, raw=inp.raw)


def ranx_table(store, value: str) -> pa.Table:
    """The ``{qid: {docno: value}}`` of a ranx Run or Qrels (numba typed dicts) as columns, by
    :mod:`.ranx_columns`' compiled pass (numba is loaded only for a ranx object)."""
    from trecqr.formats import ranx_columns

    return ranx_columns.ranx_table(store, value)
