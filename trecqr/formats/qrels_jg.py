"""trec_eval's ``-R qrels_jg``: a qrels file whose second field names a judgment group.

Each line is ``qid jg docno grade``; every judgment group (a user, an assessor) of a topic is
a separate set of qrels, and the ``*_avgjg`` measures average over them (get_qrels_jg.c).
Grades are read with atol as in standard qrels; a docno judged twice in the same group of a
topic is an error, as in trec_eval.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError
from trecqr.formats.prefs import read_columns
from trecqr.formats.qrels import TruncatedGradeWarning
from trecqr.formats.textio import python_lines, read_source

QRELS_JG_FIELDS = "qid jg docno grade"
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_LEADING_INT = re.compile(r"[+-]?\d*")


@dataclass
class QrelsJG:
    """Judgments per (topic, judgment group) as columns, one row per input line."""

    qid: pa.Array
    jg: pa.Array
    docno: pa.Array
    grade: np.ndarray
    source: str = "<qrels_jg>"
    rel_format: str = "qrels_jg"

    def __len__(self) -> int:
        return len(self.grade)


def _integers(col: pa.Array) -> bool:
    return pc.all(pc.match_substring_regex(col, r"^[+-]?\d+$")).as_py()


def _atol(text: str) -> int:
    """C atol on a number already vetted: its leading integer ("1.7" and "1e3" read as 1)."""
    m = _LEADING_INT.match(text)
    return int(m.group()) if m and m.group() not in ("", "+", "-") else 0


def read_qrels_jg(path, *, comments: bool = True) -> QrelsJG:
    """Read a ``-R qrels_jg`` file (path, ``-``, ``.gz`` or binary file object)."""
    src = read_source(path)
    warned = []

    def check(text, source, line):
        if _INT.match(text):
            return
        if not _FLOAT.match(text):
            raise InputError(source, line, f"grade {text!r} is not an integer")
        if not warned:
            warned.append(line)
            warnings.warn(f"{source}:{line}: grade {text!r} is not an integer; truncated to "
                          f"{_atol(text)} as trec_eval does", TruncatedGradeWarning,
                          stacklevel=4)

    cols = read_columns(src, 4, QRELS_JG_FIELDS, comments, 3, _integers, check)
    if warned:
        grade = np.array([_atol(t) for t in cols[3].to_pylist()], dtype=np.int64)
    else:
        grade = cols[3].cast(pa.int64()).to_numpy(zero_copy_only=False)
    qrels = QrelsJG(cols[0], cols[1], cols[2], np.ascontiguousarray(grade), src.name)
    _check_duplicates(qrels, src, comments)
    return qrels


def _check_duplicates(q: QrelsJG, src, comments: bool) -> None:
    """A docno twice in one judgment group of a topic: trec_eval's "duplicate docs"."""
    table = pa.table({"q": q.qid, "j": q.jg, "d": q.docno})
    counts = table.group_by(["q", "j", "d"]).aggregate([([], "count_all")])
    dup = pc.greater(counts.column("count_all"), 1)
    if not pc.any(dup).as_py():
        return
    row = counts.filter(dup).slice(0, 1).to_pylist()[0]
    key = [row["q"], row["j"], row["d"]]
    lines = [n for n, f in python_lines(src, comments=comments) if f[:3] == key]
    raise InputError(q.source, lines[1] if len(lines) > 1 else None,
                     f"duplicate judgment for topic {key[0]!r}, judgment group {key[1]!r} and "
                     f"docno {key[2]!r}" + (f" (first at line {lines[0]})" if lines else ""))
