"""Runs and qrels of a small DataFrame held as Python lists, their Arrow columns made when
first read.

The scorer takes small inputs (up to :data:`~.arrays.SMALL_ROWS` rows) through the C pass over dicts, which it
builds from each column's Python values. A small DataFrame whose ids are text and whose scores
or grades are plain numpy numbers is read straight into those lists (:func:`listed_frame`):
making its Arrow columns and reading them back would be most of a small call's time. Anything
else (integer or categorical ids, missing values, nullable or text scores, float grades) goes
through :mod:`.tables`' Arrow reader, which converts it and names what is wrong; so do the
Arrow columns of a listed run or qrels when something reads them (the same values, built by
:func:`~.arrays.string_array`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from trecqr.formats.arrays import string_array
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run

def _column(name: str) -> property:
    """``qid`` or ``docno``: Arrow from the list ``_<name>s`` on first read; set, it replaces
    the list (the dataclass's __init__ sets None)."""
    arrow, values = f"_{name}", f"_{name}s"

    def get(self):
        if getattr(self, arrow) is None:
            setattr(self, arrow, string_array(getattr(self, values)))
        return getattr(self, arrow)

    def put(self, value):
        setattr(self, arrow, value)
        if value is not None:
            setattr(self, values, None)

    return property(get, put)


class _Listed:
    """Mixin: ``qid``/``docno`` from lists (``_qids``, ``_docnos``), Arrow on first read."""

    qid = _column("qid")
    docno = _column("docno")

    def qid_list(self) -> list:
        return self._qids if self._qids is not None else self.qid.to_pylist()

    def docno_list(self) -> list:
        return self._docnos if self._docnos is not None else self.docno.to_pylist()


class ListedRun(_Listed, Run):
    """A :class:`~.run.Run` read from lists."""


class ListedQrels(_Listed, Qrels):
    """A :class:`~.qrels.Qrels` read from lists."""


def _made(cls, qids: list, docnos: list, *args):
    obj = cls(None, None, *args)
    obj._qids, obj._docnos = qids, docnos
    return obj


def _text(values) -> list | None:
    """A column's values when every one is a str: a numpy object column's, or a pandas text
    column's (``str`` in pandas 3, ``string``; a missing value is not a str)."""
    if isinstance(values, np.ndarray):
        if values.dtype != object:
            return None
        values = values.tolist()
    elif getattr(getattr(values, "dtype", None), "name", None) in ("str", "string"):
        # Arrow's view of the column (pandas' Arrow-backed text: no copy), read once
        values = pa.array(values, from_pandas=True).to_pylist()
    else:
        return None
    return values if set(map(type, values)) <= {str} else None


def listed_frame(topic, docno, value, kind: str, source: str, runid: str = "trecqr"):
    """A ListedRun (kind "run": ``value`` the scores) or ListedQrels ("qrels": the grades)
    of a DataFrame's column values, or None when they are not plainly text ids and float64
    scores (finite) or int64 grades, or are none (the caller keeps to small frames)."""
    if not len(value) or not isinstance(value, np.ndarray):
        return None
    if kind == "run":
        if value.dtype != np.float64 or not np.isfinite(value).all():
            return None
    elif value.dtype != np.int64:
        return None
    qids = _text(topic)
    docnos = None if qids is None else _text(docno)
    if docnos is None:
        return None
    value = np.array(value, dtype=value.dtype)  # a copy: the frame may change later
    if kind == "run":
        return _made(ListedRun, qids, docnos, value, runid, source)
    return _made(ListedQrels, qids, docnos, value, source)
