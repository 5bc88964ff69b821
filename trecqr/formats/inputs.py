"""The one place the kind of a run or qrels input is decided: :func:`decide`.

Every door (``trecqr.evaluate``, ``evaluate_many``, ``RelevanceEvaluator``, the ir_measures
provider, ``trecqr eval``) calls :func:`decide` once per input and hands its :class:`Input`
down; the readers (:func:`~.objects.run_columns`, :func:`~.objects.qrels_columns`) and the
engine branch on ``Input.kind`` and never look at the object's type again. So an input's
route (dicts to the C ranker, a TREC text file to the scanner or the stream, anything else to
columns) is chosen here, once, and the same object cannot go two ways in one call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from numbers import Number
from typing import NamedTuple

from trecqr.errors import UsageError
from trecqr.formats.colfiles import sniff
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run
from trecqr.formats.tables import is_arrow_exporter, is_arrow_table, is_frame

IRDS = "irds:"  # a dataset of ir_datasets, read from local files only

# the kinds read as tables (frames, Arrow tables, ranx objects, rows of namedtuples)
TABLE_KINDS = frozenset({"frame", "arrow", "ranx", "rows"})


class Input(NamedTuple):
    """A run or qrels input and its kind (a named tuple, not a dataclass: the pytrec_eval
    drop-in makes one per ``evaluate`` call, where a frozen dataclass's __init__ alone is a
    sixth of the call's time on a small run).

    kind: ``"trec"`` (a TREC text path, ``-`` or a file object: the TREC readers),
    ``"file"`` (a Parquet, Feather, JSONL or 3-column path; ``fmt`` says which), ``"irds"``,
    ``"dict"`` (``{qid: {docno: value}}``), ``"columns"`` (a Run or Qrels), ``"frame"``
    (pandas), ``"arrow"`` (an Arrow table, or a table that exports Arrow: polars, DuckDB, a
    Hugging Face Dataset), ``"ranx"``, ``"rows"`` (namedtuples or an iterator of them),
    ``"iterable"`` (any other iterable, read as rows), ``"other"``.
    raw: the first bytes of a file, as sniffed (the qrels reader takes them)."""

    kind: str
    obj: object
    fmt: str | None = None
    raw: bytes | None = None


def decide(obj, *, comments: bool = True) -> Input:
    """The :class:`Input` of ``obj`` (comments: the file sniffer's, trec_eval 10.0's rule)."""
    if isinstance(obj, dict):  # first: the pytrec_eval drop-in's input, once per call
        return Input("dict", obj)
    if isinstance(obj, bytes):  # a path, as for open(): sniffed and named as its text is
        obj = os.fsdecode(obj)
    if isinstance(obj, (Run, Qrels)):
        return Input("columns", obj)
    if isinstance(obj, str) and obj.startswith(IRDS):
        return Input("irds", obj)
    if isinstance(obj, (str, os.PathLike)):
        fmt, raw = sniff(obj, comments=comments)
        return Input("trec" if fmt == "trec" else "file", obj, fmt, raw)
    if is_frame(obj):
        return Input("frame", obj)
    if is_arrow_table(obj) or is_arrow_exporter(obj):
        return Input("arrow", obj)
    if hasattr(obj, "to_dict") and type(obj).__module__.split(".")[0] == "ranx":
        return Input("ranx", obj)  # told by its module: ranx is not imported
    if hasattr(obj, "read"):
        return Input("trec", obj)
    if isinstance(obj, (list, tuple)) and obj and hasattr(obj[0], "_fields"):
        return Input("rows", obj)
    if hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes)):
        return Input("rows" if iter(obj) is obj else "iterable", obj)
    return Input("other", obj)


def named_runs(runs, names=None, *, door: str) -> tuple[list, list | None]:
    """(runs as a list, their names) for a door that takes many runs. A mapping ``{name: run}``
    gives its values, named by its keys; ``names`` given too is refused, as is one run dict
    (``{qid: {docno: score}}``) where the runs go: its topics would be read as runs' names."""
    if not isinstance(runs, Mapping):
        return list(runs), names
    first = next(iter(runs.values()), None)
    if isinstance(first, Mapping) and isinstance(next(iter(first.values()), None), Number):
        raise UsageError(f"{door} takes many runs: a list, or {{name: run}}; this is one run "
                         "dict ({qid: {docno: score}}): give [run]")
    if names is not None:
        raise UsageError(f"{door}: names given twice, as the keys of the runs and as names=; "
                         "give one")
    return list(runs.values()), [str(name) for name in runs]
