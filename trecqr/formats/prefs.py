"""trec_eval's preference relevance formats: ``-R prefs`` and ``-R qrels_prefs``.

``prefs`` lines are ``qid jg jsg docno rel_level``: within a judgment group (jg) and sub-group
(jsg) a document is preferred to every document with a lower rel_level. ``qrels_prefs`` reads
a standard qrels file (``qid iter docno grade``) the same way, with the iter field as the jg
and one sub-group "0" (trec_eval's get_qrels_prefs.c). rel_level is read with atof; trec_eval
9.0.8 keeps it in a C float, 10.0 in a double (``Prefs.levels(float32)``).

Lines must have exactly that many fields (trec_eval: "Malformed line"); a rel_level that is
not a finite number is rejected rather than read as 0 as atof would.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError
from trecqr.formats.textio import Source, arrow_fields, python_lines, read_source

PREFS_FIELDS = "qid jg jsg docno rel_level"
QRELS_PREFS_FIELDS = "qid jg docno rel_level"
_FLOAT_RE = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
_FLOAT = re.compile(_FLOAT_RE + r"\Z")


@dataclass
class Prefs:
    """Preference judgments as columns, one row per input line."""

    qid: pa.Array
    jg: pa.Array
    jsg: pa.Array
    docno: pa.Array
    rel_level: np.ndarray  # float64 as read
    source: str = "<prefs>"
    rel_format: str = "prefs"

    def __len__(self) -> int:
        return len(self.rel_level)

    def levels(self, float32: bool) -> np.ndarray:
        """rel_level as trec_eval holds it: a C float in 9.0.8, a double in 10.0."""
        return self.rel_level.astype(np.float32).astype(np.float64) if float32 \
            else self.rel_level


def read_columns(src: Source, nfields: int, names: str, comments: bool, number_column: int,
                 columns_ok, check_number) -> list:
    """Exactly nfields string columns per line, through Arrow; the slow path locates errors.

    ``columns_ok(column) -> bool`` vets the numeric column on the fast path; on the slow path
    ``check_number(text, source, line)`` raises the InputError of a bad value.
    """
    table = arrow_fields(src, comments=comments)
    if table is not None and table.num_columns == nfields and table.num_rows:
        cols = [table.column(i).combine_chunks() for i in range(nfields)]
        if columns_ok(cols[number_column]):
            return cols
    rows = []
    for number, fields in python_lines(src, comments=comments):
        if len(fields) != nfields:
            raise InputError(src.name, number,
                             f"expected {nfields} fields ({names}), found {len(fields)}")
        check_number(fields[number_column], src.name, number)
        rows.append(fields)
    if not rows:
        raise InputError(src.name, None, "no judgments (only comments or blank lines)")
    return [pa.array([r[i] for r in rows], pa.string()) for i in range(nfields)]


def _finite_floats(col: pa.Array) -> bool:
    """Every value a plain decimal number (atof reads "0x10" or "1abc" otherwise) and finite."""
    if not pc.all(pc.match_substring_regex(col, "^" + _FLOAT_RE + "$")).as_py():
        return False
    return bool(np.isfinite(col.cast(pa.float64()).to_numpy(zero_copy_only=False)).all())


def check_level(text: str, source: str, line: int) -> float:
    if _FLOAT.match(text) and math.isfinite(float(text)):
        return float(text)
    raise InputError(source, line, f"rel_level {text!r} is not a number")


def _read(path, comments: bool, nfields: int, names: str, kind: str) -> Prefs:
    src = read_source(path)
    level_col = nfields - 1
    cols = read_columns(src, nfields, names, comments, level_col, _finite_floats, check_level)
    level = cols[level_col].cast(pa.float64()).to_numpy(zero_copy_only=False)
    if nfields == 5:
        qid, jg, jsg, docno = cols[:4]
    else:
        qid, jg, docno = cols[:3]
        jsg = pa.array(np.full(len(level), "0"), pa.string())
    return Prefs(qid, jg, jsg, docno, np.ascontiguousarray(level, dtype=np.float64),
                 src.name, kind)


def read_prefs(path, *, comments: bool = True) -> Prefs:
    """Read a ``-R prefs`` file: ``qid jg jsg docno rel_level`` per line."""
    return _read(path, comments, 5, PREFS_FIELDS, "prefs")


def read_qrels_prefs(path, *, comments: bool = True) -> Prefs:
    """Read a qrels file as ``-R qrels_prefs``: the iter field is the judgment group."""
    return _read(path, comments, 4, QRELS_PREFS_FIELDS, "qrels_prefs")
