"""TREC qrels files: exactly ``qid iter docno grade`` per line, integer grades (negative allowed).

trec_eval reads grades with ``atol``, so ``1.7`` counts as 1: we keep that truncation and warn
(once per file), and reject grades that are not numbers at all (atol would silently read 0).
Under ``--compat 10.0`` lines starting with ``#`` are comments; trec_eval 9.0.8 has no
comments, so there a ``#`` line is data (and malformed unless it has exactly 4 fields).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError
from trecqr.formats.arrays import Listed, as_numpy, fits_int64, id_array, key_id, key_ids
from trecqr.formats.run import SMALL_FILE, parse_score
from trecqr.formats.textio import (CONTROL_BYTES, LineLocator, Source, arrow_fields, json_document,
                                   may_have_comments, python_lines, read_source, refuse_bom,
                                   small_file)
from trecqr.formats.writer import atomic_write_fields, refuse_split_fields

QRELS_FIELDS = "qid iter docno grade"
_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")
_ATOL_PREFIX = re.compile(r"[+-]?[0-9]*")
_INTEGERS = re.compile(r"[+-]?[0-9]+(?:\n[+-]?[0-9]+)*")


class TruncatedGradeWarning(UserWarning):
    """A fractional grade was truncated to an integer, as trec_eval's atol does."""


@dataclass
class Qrels(LineLocator):
    """Relevance judgments as columns: one row per (qid, docno, grade)."""

    qid: pa.Array
    docno: pa.Array
    grade: np.ndarray
    source: str = "<qrels>"
    _raw: Source | None = field(default=None, repr=False)
    comments: bool = True  # '#' lines were skipped (10.0): locate() must count them the same
    # a dict's topics without judgments ({"b": {}}): no row holds them, and ir_measures'
    # names count them with their default (0) wherever these qrels are scored
    empty_topics: tuple = ()

    def __len__(self) -> int:
        return len(self.grade)

    def __repr__(self) -> str:
        """One line (the dataclass's would print every Arrow value): judgments, topics, source."""
        n, t = len(self), len(self.qid.unique())
        return (f"Qrels({n:,} judgment{'s' * (n != 1)}, {t:,} topic{'s' * (t != 1)}, "
                f"source={self.source!r})")

    def qid_list(self) -> list:
        """The qid of every judgment, as Python strings (the small-input path's dicts)."""
        return self.qid.to_pylist()

    def docno_list(self) -> list:
        return self.docno.to_pylist()


class ListedQrels(Listed, Qrels):
    """:class:`Qrels` held as lists (a small DataFrame's or file's), Arrow columns made when
    read."""


def parse_grade(text: str, source: str, line: int | None) -> tuple[int, bool]:
    """(grade, truncated): an integer, or a decimal number cut to its integer prefix.

    trec_eval reads grades with C's ``atol``, which stops at the first non-digit: ``1.7`` and
    ``1e3`` are both 1. Text that is not a number at all (atol would read 0) is an error.
    """
    if _INT.match(text):
        value, truncated = int(text), False
    elif _FLOAT.match(text):
        prefix = _ATOL_PREFIX.match(text).group()
        value, truncated = (int(prefix) if prefix.strip("+-") else 0), True
    else:
        raise InputError(source, line, f"grade {text!r} is not an integer")
    if not fits_int64(value):
        raise InputError(source, line, f"grade {text!r} is out of range")
    return value, truncated


def warn_truncated(source: str, line, text: str, value: int, count: int) -> None:
    """One warning per input, naming the first fractional grade and how many there were."""
    where = f"{source}:{line}" if line is not None else source
    more = f" ({count} fractional grades in all)" if count > 1 else ""
    warnings.warn(f"{where}: grade {text!r} is not an integer; truncated to {value} as "
                  f"trec_eval's atol does{more}", TruncatedGradeWarning, stacklevel=3)


# said when the first line of "qrels" is a run line: the arguments are the wrong way round
SWAPPED = "; this is a run line (qid Q0 docno rank score runid): qrels go first, then the runs"


def _run_line(fields) -> bool:
    """A TREC run line: six fields, an integer rank and a numeric score."""
    return len(fields) == 6 and _INT.match(fields[3]) is not None and \
        parse_score(fields[4]) is not None


def _python_qrels(src: Source, comments: bool) -> Qrels:
    qids, docnos, grades = [], [], []
    first_truncated, count = None, 0
    for number, fields in python_lines(src, comments=comments):
        if len(fields) != 4:
            raise InputError(src.name, number,
                             f"expected 4 fields ({QRELS_FIELDS}), found {len(fields)}"
                             + (SWAPPED if not qids and _run_line(fields) else ""))
        grade, truncated = parse_grade(fields[3], src.name, number)
        if truncated:
            count += 1
            first_truncated = first_truncated or (number, fields[3], grade)
        qids.append(fields[0])
        docnos.append(fields[2])
        grades.append(grade)
    if not grades:
        raise InputError(src.name, None, "no data lines (only blank or comment lines)")
    if first_truncated:
        warn_truncated(src.name, *first_truncated, count)
    return Qrels(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
                 np.asarray(grades, dtype=np.int64), src.name, src, comments)


def _four_fields(text: str) -> bool:
    """Whether every line of an ASCII text without control characters is blank or has four
    fields, and one has (``str.split`` then splits on C isspace)."""
    seen = False
    for line in text.split("\n"):
        count = len(line.split())
        if count == 4:
            seen = True
        elif count:
            return False
    return seen


def _listed_qrels(data: bytes, name: str, comments: bool) -> ListedQrels | None:
    """The qrels of a small file's bytes as lists, split by one ``str.split`` (an Arrow reader's
    set-up is most of a small file's time), or None when the file is not plainly ASCII lines of
    four fields with integer grades: the general readers then read it, and name what is
    wrong. The values are theirs: fields split on C isspace, grades read as integers."""
    if not data.isascii() or len(data.translate(None, CONTROL_BYTES)) != len(data) \
            or data.lstrip()[:1] == b"{" or (comments and may_have_comments(data)):
        return None
    text = data.decode("ascii")
    if not _four_fields(text):
        return None
    fields = text.split()
    grades = fields[3::4]
    if not grades or _INTEGERS.fullmatch("\n".join(grades)) is None:
        return None
    try:
        grade = np.array(list(map(int, grades)), dtype=np.int64)
    except OverflowError:
        return None
    return ListedQrels.of_lists(fields[0::4], fields[2::4], grade, name, None, comments)


def read_qrels(path, *, comments: bool = True, raw: bytes | None = None) -> Qrels:
    """Read a qrels file (path, ``-``, ``.gz``, or binary file object). raw: the first 64 KiB
    of the file, already read (:func:`~.colfiles.sniff`): a smaller file is read from it."""
    refuse_bom(path, raw)
    # a small file (the size under which a run is scanned with its docnos) is read into the
    # lists the C pass's dicts are made from, without Arrow
    data = small_file(path, raw, SMALL_FILE)
    small = None if data is None else _listed_qrels(data, os.fspath(path), comments)
    if small is not None:
        return small
    src = read_source(path, trec=True)
    doc = json_document(src)
    if doc is not None:
        return qrels_from_dict(doc, source=src.name)
    table = arrow_fields(src, comments=comments, integer=3)
    if table is None or table.num_columns != 4 or table.num_rows == 0:
        return _python_qrels(src, comments)  # fractional (warn) or bad (error) grades
    if table.column(3).type != pa.int64():  # a field starts with 0x, which Arrow would read
        return _python_qrels(src, comments)  # as hexadecimal (0x1: Arrow's 1, trec_eval's 0)
    grade = as_numpy(table.column(3))
    keep = src if src.name == "<stdin>" else None
    return Qrels(table.column(0).combine_chunks(), table.column(2).combine_chunks(),
                 grade, src.name, keep, comments)


def qrels_from_dict(qrels: dict, source: str = "<qrels dict>") -> Qrels:
    """pytrec_eval's ``{qid: {docno: grade}}``; a float grade is truncated, with a warning."""
    qids, docnos, grades, empty = [], [], [], []
    first_truncated, count = None, 0
    for qid, docs in qrels.items():
        if not isinstance(docs, dict):
            raise InputError(source, None, f"query {qid!r}: expected a dict of docno -> grade")
        qid = key_id(qid, source, "query id")
        if not docs:
            empty.append(qid)
        for doc, grade in zip(key_ids(docs, source, f"query {qid!r}: docno"), docs.values()):
            if isinstance(grade, (float, np.floating)) and math.isfinite(grade):
                if grade != int(grade):
                    count += 1
                    first_truncated = first_truncated or (f"query {qid!r} doc {doc!r}",
                                                          repr(float(grade)), int(grade))
                grade = int(grade)
            elif isinstance(grade, bool) or not isinstance(grade, (int, np.integer)):
                raise InputError(source, None,
                                 f"query {qid!r} doc {doc!r}: grade {grade!r} is not an integer")
            qids.append(qid)
            docnos.append(doc)
            grades.append(int(grade))
    if first_truncated:
        where, text, value = first_truncated
        warn_truncated(f"{source}: {where}", None, text, value, count)
    grade_array = dict_grades(grades, len(grades), qrels, source)
    return Qrels(id_array(qids, source), id_array(docnos, source), grade_array, source,
                 empty_topics=tuple(empty))


def dict_grades(grades, count: int, qrels: dict, source: str) -> np.ndarray:
    """``count`` grades of the qrels dict ``qrels`` (an iterable of ints) as int64, the type
    every route reads them as; one out of that range is named, as a file's line is."""
    try:
        return np.fromiter(grades, dtype=np.int64, count=count)
    except OverflowError:
        for qid, docs in qrels.items():
            for doc, grade in docs.items():
                if not fits_int64(int(grade)):
                    raise InputError(source, None, f"query {qid!r} doc {doc!r}: grade "
                                     f"{grade!r} is out of the 64-bit integer range") from None
        raise


def write_qrels(qrels: Qrels, path) -> None:
    """Write qrels as ``qid 0 docno grade`` lines, atomically."""
    for values, what in ((qrels.qid, "query id"), (qrels.docno, "docno")):
        refuse_split_fields(values, what, qrels.source)
    n = len(qrels)
    cols = [qrels.qid, pa.array(np.full(n, "0")), qrels.docno,
            pa.array(qrels.grade).cast(pa.string())]
    atomic_write_fields(path, cols)
