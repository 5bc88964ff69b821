"""TREC qrels files: exactly ``qid iter docno grade`` per line, integer grades (negative allowed).

trec_eval reads grades with ``atol``, so ``1.7`` counts as 1: we keep that truncation and warn,
and reject grades that are not numbers at all (atol would silently read them as 0).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError
from .textio import Source, arrow_fields, python_lines, read_source
from .writer import atomic_write_lines

QRELS_FIELDS = "qid iter docno grade"
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


class TruncatedGradeWarning(UserWarning):
    """A fractional grade was truncated to an integer, as trec_eval's atol does."""


@dataclass
class Qrels:
    """Relevance judgments as columns: one row per (qid, docno, grade)."""

    qid: pa.Array
    docno: pa.Array
    grade: np.ndarray
    source: str = "<qrels>"
    _raw: Source | None = None

    def __len__(self) -> int:
        return len(self.grade)

    def locate(self, predicate) -> list[int]:
        src = self._raw
        if src is None:
            try:
                src = read_source(self.source)
            except InputError:
                return []
        return [n for n, f in python_lines(src, comments=True) if predicate(f)]


def parse_grade(text: str, source: str, line: int | None) -> int:
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text) and math.isfinite(float(text)):
        value = int(float(text))  # C atol: truncation toward zero
        warnings.warn(f"{source}:{line}: grade {text!r} is not an integer; "
                      f"truncated to {value} as trec_eval does", TruncatedGradeWarning,
                      stacklevel=3)
        return value
    raise InputError(source, line, f"grade {text!r} is not an integer")


def _python_qrels(src: Source, comments: bool) -> Qrels:
    qids, docnos, grades = [], [], []
    warned = False
    for number, fields in python_lines(src, comments=comments):
        if len(fields) != 4:
            raise InputError(src.name, number,
                             f"expected 4 fields ({QRELS_FIELDS}), found {len(fields)}")
        if _INT.match(fields[3]):
            grade = int(fields[3])
        elif warned:
            grade = parse_grade(fields[3], src.name, number) if not _FLOAT.match(fields[3]) \
                else int(float(fields[3]))
        else:
            grade = parse_grade(fields[3], src.name, number)
            warned = True
        qids.append(fields[0])
        docnos.append(fields[2])
        grades.append(grade)
    return Qrels(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
                 np.asarray(grades, dtype=np.int64), src.name, src)


def read_qrels(path, *, comments: bool = True) -> Qrels:
    """Read a qrels file (path, ``-``, ``.gz``, or binary file object)."""
    src = read_source(path)
    table = arrow_fields(src, comments=comments)
    if table is None or table.num_columns != 4 or table.num_rows == 0:
        return _python_qrels(src, comments)
    try:
        grade = pc.cast(table.column(3), pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _python_qrels(src, comments)  # fractional (warn) or bad (error) grades
    keep = src if src.name == "<stdin>" else None
    return Qrels(table.column(0).combine_chunks(), table.column(2).combine_chunks(),
                 grade, src.name, keep)


def qrels_from_dict(qrels: dict, source: str = "<qrels dict>") -> Qrels:
    """pytrec_eval's ``{qid: {docno: grade}}``."""
    qids, docnos, grades = [], [], []
    for qid, docs in qrels.items():
        if not isinstance(docs, dict):
            raise InputError(source, None, f"query {qid!r}: expected a dict of docno -> grade")
        for doc, grade in docs.items():
            if isinstance(grade, bool) or not isinstance(grade, (int, np.integer)):
                if isinstance(grade, float) and math.isfinite(grade):
                    grade = int(grade)
                else:
                    raise InputError(source, None,
                                     f"query {qid!r} doc {doc!r}: grade {grade!r} is not an integer")
            qids.append(str(qid))
            docnos.append(str(doc))
            grades.append(int(grade))
    return Qrels(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
                 np.asarray(grades, dtype=np.int64), source)


def qrels_from_frame(frame, source: str = "<qrels DataFrame>") -> Qrels:
    """A pandas DataFrame with ir_measures' columns ``query_id, doc_id, relevance``."""
    missing = {"query_id", "doc_id", "relevance"} - set(frame.columns)
    if missing:
        raise InputError(source, None, f"missing columns: {', '.join(sorted(missing))}")
    rel = np.asarray(frame["relevance"])
    if rel.dtype.kind not in "iu":
        if rel.dtype.kind == "f" and np.isfinite(rel).all():
            rel = np.trunc(rel)
        else:
            raise InputError(source, None, "relevance column must hold integers")
    return Qrels(pa.array(frame["query_id"].astype(str), pa.string()),
                 pa.array(frame["doc_id"].astype(str), pa.string()),
                 rel.astype(np.int64), source)


def write_qrels(qrels: Qrels, path) -> None:
    """Write qrels as ``qid 0 docno grade`` lines, atomically."""
    n = len(qrels)
    cols = [qrels.qid, pa.array(np.full(n, "0")), qrels.docno,
            pc.cast(pa.array(qrels.grade), pa.string())]
    atomic_write_lines(path, pc.binary_join_element_wise(*cols, " "))
