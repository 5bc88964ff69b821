"""Diversity (intent-aware) qrels: ``topic subtopic docno grade`` per line, as ndeval reads them.

NIST's ndeval (and pyndeval, ir_measures' ``pyndeval`` provider) judges a document once per
subtopic (intent) of a topic: the same docno appears on several lines of a topic, one per
subtopic, where standard qrels would have its ``iteration`` column. A document is relevant to a
subtopic when its grade on that line is at least the relevance level (``rel``, 1 by default);
a subtopic with no relevant document does not count.

Grades must be integers (ndeval's syntax check; negative grades are read, never relevant at
``rel >= 1``). A (topic, subtopic, docno) judged twice is an error: ndeval would count the
document twice in the subtopic's number of relevant documents and keep whichever line its sort
leaves last. Topic and subtopic ids are any strings (pyndeval's reading; ndeval requires
numbers). Subtopics keep the order of their first line (pyndeval numbers them so, and sums over
a document's subtopics are taken in that order).

Readers: a path (``.gz``, ``-``), a pandas DataFrame with ir_measures' columns (``query_id``,
``iteration`` -- or ``subtopic_id``/``subtopic`` -- ``doc_id``, ``relevance``), or an iterable of
``(topic, subtopic, docno, grade)`` tuples, pyndeval ``SubtopicQrel`` or ir_measures ``Qrel``
records with an ``iteration`` field. :func:`detect_diversity` tells diversity qrels from
standard qrels: a (topic, docno) that repeats with different values in the second column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError
from trecqr.formats.arrays import fits_int64, id_array, key_id, key_ids
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run
from trecqr.formats.textio import arrow_fields, python_lines, read_source

DIVERSITY_FIELDS = "topic subtopic docno grade"
SUBTOPIC_COLUMNS = ("iteration", "subtopic_id", "subtopic")
_INT = re.compile(r"[+-]?[0-9]+\Z")


@dataclass
class DiversityQrels:
    """Per-subtopic judgments as columns: one row per (topic, subtopic, docno, grade) line."""

    qid: pa.Array
    subtopic: pa.Array
    docno: pa.Array
    grade: np.ndarray
    source: str = "<diversity qrels>"
    rel_format: str = "diversity"
    qrels_kind: str = "diversity"
    # what the measures derive from these judgments, per (topics, rel, ...): kept while the
    # object lives, so that several measures on one qrels prepare it once
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.grade)


def _int_grades(col: pa.Array, name: str, lines=None) -> np.ndarray:
    ok = pc.match_substring_regex(col, r"^[+-]?[0-9]+$").to_numpy(zero_copy_only=False)
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise InputError(name, None if lines is None else lines[i],
                         f"grade {col[i].as_py()!r} is not an integer")
    try:
        return col.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.int64)
    except (pa.ArrowInvalid, OverflowError):
        text = [t for t in col.to_pylist() if not fits_int64(int(t))][0]
        raise InputError(name, None, f"grade {text!r} is out of range") from None


def _check_duplicates(q: DiversityQrels, lines=None) -> None:
    """A (topic, subtopic, docno) judged twice is an error (ndeval's result would depend on its
    sort order)."""
    if not len(q):
        return
    keys = pc.binary_join_element_wise(q.qid, q.subtopic, q.docno, "\x00")
    table = pa.table({"k": keys, "i": pa.array(np.arange(len(q)))})
    counts = table.group_by("k").aggregate([("i", "min"), ("i", "count")])
    dup = pc.greater(counts["i_count"], 1).to_numpy(zero_copy_only=False)
    if dup.any():
        first = int(counts["i_min"].to_numpy()[np.flatnonzero(dup)].min())
        key = keys[first]
        again = int(np.flatnonzero(pc.equal(keys, key).to_numpy(zero_copy_only=False))[1])
        where = None if lines is None else lines[again]
        seen = "" if lines is None else f" (first at line {lines[first]})"
        raise InputError(q.source, where,
                         f"duplicate judgment for topic {q.qid[first].as_py()!r}, subtopic "
                         f"{q.subtopic[first].as_py()!r} and docno {q.docno[first].as_py()!r}"
                         f"{seen}")


def _python_rows(src):
    numbers, cols = [], ([], [], [], [])
    for number, fields in python_lines(src, comments=False):
        if len(fields) != 4:
            raise InputError(src.name, number,
                             f"expected 4 fields ({DIVERSITY_FIELDS}), found {len(fields)}")
        if not _INT.match(fields[3]):
            raise InputError(src.name, number, f"grade {fields[3]!r} is not an integer")
        numbers.append(number)
        for c, f in zip(cols, fields):
            c.append(f)
    return numbers, cols


def read_diversity_qrels(path) -> DiversityQrels:
    """Read a diversity qrels file (path, ``-``, ``.gz`` or binary file object)."""
    return _from_source(read_source(path))


def _from_source(src, table=None) -> DiversityQrels:
    table = table if table is not None else arrow_fields(src, comments=False)
    if table is None or table.num_columns != 4 or table.num_rows == 0:
        numbers, cols = _python_rows(src)  # exact file:line errors
        if not numbers:
            raise InputError(src.name, None, "no data lines")
        table = pa.table({f"f{i}": pa.array(c, pa.string()) for i, c in enumerate(cols)})
    lines = None
    try:
        grade = _int_grades(table.column(3).combine_chunks(), src.name)
    except InputError:
        numbers, _ = _python_rows(src)  # raises with the line number
        raise  # pragma: no cover - _python_rows found the same problem
    q = DiversityQrels(table.column(0).combine_chunks(), table.column(1).combine_chunks(),
                       table.column(2).combine_chunks(), grade, src.name)
    try:
        _check_duplicates(q)
    except InputError:
        lines, _ = _python_rows(src)
        _check_duplicates(q, lines)
        raise  # pragma: no cover
    return q


def diversity_from_frame(frame, source: str = "<diversity qrels DataFrame>") -> DiversityQrels:
    """A DataFrame with ir_measures' columns; the subtopic is ``iteration`` (ir_measures keeps it
    there), ``subtopic_id`` or ``subtopic``."""
    sub = next((c for c in SUBTOPIC_COLUMNS if c in frame.columns), None)
    missing = {"query_id", "doc_id", "relevance"} - set(frame.columns)
    if missing or sub is None:
        need = sorted(missing) + ([] if sub else ["iteration (the subtopic)"])
        raise InputError(source, None, f"missing columns: {', '.join(need)}")
    rel = np.asarray(frame["relevance"])
    if rel.dtype.kind == "f" and np.isfinite(rel).all() and (np.trunc(rel) == rel).all():
        rel = rel.astype(np.int64)
    if rel.dtype.kind not in "iu":
        raise InputError(source, None, "relevance column must hold integers")
    # ids as a DataFrame's id columns are read (formats.tables): text, integers as their digits
    q = DiversityQrels(*(id_array(key_ids(frame[c].tolist(), source, what), source)
                         for c, what in (("query_id", "topic"), (sub, "subtopic"),
                                         ("doc_id", "docno"))), rel.astype(np.int64), source)
    _check_duplicates(q)
    return q


def diversity_from_records(records, source: str = "<diversity qrels>") -> DiversityQrels:
    """``(topic, subtopic, docno, grade)`` tuples, pyndeval ``SubtopicQrel`` or ir_measures
    ``Qrel`` records (``iteration`` holds the subtopic)."""
    qids, subs, docs, grades = [], [], [], []
    for rec in records:
        fields = getattr(rec, "_fields", ())
        if "subtopic_id" in fields:
            t, s, d, g = rec.query_id, rec.subtopic_id, rec.doc_id, rec.relevance
        elif "iteration" in fields:
            t, s, d, g = rec.query_id, rec.iteration, rec.doc_id, rec.relevance
        elif isinstance(rec, (tuple, list)) and len(rec) == 4:
            t, s, d, g = rec
        else:
            raise InputError(source, None, f"expected (topic, subtopic, docno, grade), got {rec!r}")
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)):
            raise InputError(source, None, f"topic {t!r} docno {d!r}: grade {g!r} is not an "
                                           "integer")
        if not fits_int64(int(g)):
            raise InputError(source, None, f"topic {t!r} docno {d!r}: grade {g!r} is out of "
                                           "the 64-bit integer range")
        qids.append(key_id(t, source, "topic"))
        subs.append(key_id(s, source, "subtopic"))
        docs.append(key_id(d, source, "docno"))
        grades.append(int(g))
    q = DiversityQrels(id_array(qids, source), id_array(subs, source), id_array(docs, source),
                       np.asarray(grades, np.int64), source)
    _check_duplicates(q)
    return q


def load_diversity_qrels(obj) -> DiversityQrels:
    """DiversityQrels from a path, a DataFrame, records, or DiversityQrels (returned as is)."""
    if isinstance(obj, DiversityQrels):
        return obj
    if type(obj).__name__ == "DataFrame" and hasattr(obj, "columns"):
        return diversity_from_frame(obj)
    if isinstance(obj, (list, tuple)):
        return diversity_from_records(obj)
    return read_diversity_qrels(obj)


def has_subtopics(qid: pa.Array, second: pa.Array, docno: pa.Array) -> bool:
    """Whether some (topic, docno) repeats with different values in the second column: the
    file judges documents per subtopic."""
    if len(qid) < 2:
        return False
    table = pa.table({"q": qid, "d": docno, "s": second})
    pairs = table.group_by(["q", "d"]).aggregate([("s", "count_distinct")])
    return bool(pc.any(pc.greater(pairs["s_count_distinct"], 1)).as_py())


def detect_diversity(obj) -> DiversityQrels | None:
    """The DiversityQrels if ``obj`` (a path, a DataFrame with a subtopic column, records) holds
    diversity qrels, else None (standard qrels, dicts, or a file that is not 4 columns)."""
    if isinstance(obj, DiversityQrels):
        return obj
    if isinstance(obj, dict) or hasattr(obj, "grade"):
        return None  # pytrec_eval dicts and parsed Qrels carry no subtopic
    if type(obj).__name__ == "DataFrame" and hasattr(obj, "columns"):
        sub = next((c for c in SUBTOPIC_COLUMNS if c in obj.columns), None)
        if sub is None or not {"query_id", "doc_id"} <= set(obj.columns):
            return None
        if not has_subtopics(pa.array(obj["query_id"].astype(str)),
                             pa.array(obj[sub].astype(str)), pa.array(obj["doc_id"].astype(str))):
            return None
        return diversity_from_frame(obj)
    if isinstance(obj, (list, tuple)):
        try:
            q = diversity_from_records(obj)
        except InputError:
            return None
        return q if has_subtopics(q.qid, q.subtopic, q.docno) else None
    try:
        src = read_source(obj)
    except (InputError, OSError, TypeError):
        return None
    table = arrow_fields(src, comments=False)
    if table is None or table.num_columns != 4 or table.num_rows == 0:
        return None
    cols = [table.column(i).combine_chunks() for i in range(4)]
    if not has_subtopics(cols[0], cols[1], cols[2]):
        return None
    return _from_source(src, table)


def topic_qrels(q: DiversityQrels):
    """Standard :class:`~trecqr.formats.qrels.Qrels` with one row per judged (topic, docno),
    its grade the highest over the subtopics: which topics and documents are judged."""
    table = pa.table({"q": q.qid, "d": q.docno, "g": pa.array(q.grade)})
    pairs = table.group_by(["q", "d"], use_threads=False).aggregate([("g", "max")])
    return Qrels(pairs.column("q").combine_chunks(), pairs.column("d").combine_chunks(),
                 pairs.column("g_max").to_numpy().astype(np.int64), q.source)


def run_in_rank_order(path):
    """A TREC run ranked as the ndeval program ranks it by default: by its rank column (the
    4th field), not by score (that is ndeval's ``-traditional``; pyndeval and ir_measures sort by
    score). The :class:`~trecqr.formats.run.Run` returned scores each line minus its rank, so
    that any score-descending ranking follows the rank column. As in ndeval, a rank must be a
    natural number, and a rank or a docno repeated within a topic is an error."""
    src = read_source(path)
    table = arrow_fields(src, comments=False)
    if table is None or table.num_columns < 6 or table.num_rows == 0:
        numbers, cols = [], ([], [], [], [])
        for number, fields in python_lines(src, comments=False):
            if len(fields) < 6:
                raise InputError(src.name, number, "expected 6 fields (qid Q0 docno rank score "
                                                   f"runid), found {len(fields)}")
            numbers.append(number)
            for c, i in zip(cols, (0, 2, 3, 5)):
                c.append(fields[i])
        if not numbers:
            raise InputError(src.name, None, "no data lines")
        qid, docno, rank, runid = (pa.array(c, pa.string()) for c in cols)
    else:
        qid, docno, rank = (table.column(i).combine_chunks() for i in (0, 2, 3))
        runid = table.column(5).combine_chunks()
    natural = pc.match_substring_regex(rank, r"^[0-9]+$").to_numpy(zero_copy_only=False)
    lines = None
    for check in ("rank", "docno"):
        bad = None
        if check == "rank" and not natural.all():
            bad = int(np.flatnonzero(~natural)[0])
            what = f"rank {rank[bad].as_py()!r} is not a natural number"
        else:
            col = rank.cast(pa.int64()) if check == "rank" else docno
            keys = pc.binary_join_element_wise(qid, col.cast(pa.string()), "\x00")
            if pc.count_distinct(keys).as_py() < len(keys):
                _, first = np.unique(np.asarray(keys.to_pylist(), dtype=object),
                                     return_index=True)
                bad = int(np.setdiff1d(np.arange(len(keys)), first)[0])
                what = f"duplicate {check} {col[bad].as_py()!r} for topic {qid[bad].as_py()!r}"
        if bad is not None:
            if lines is None:
                lines = [n for n, _ in python_lines(src, comments=False)]
            raise InputError(src.name, lines[bad], what)
    score = -rank.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.float64)
    return Run(qid, docno, score, runid[-1].as_py() if len(runid) else "trecqr", src.name)

