"""TREC run files: ``qid Q0 docno rank score runid`` (extra fields ignored, as trec_eval does).

A :class:`Run` holds one Arrow/numpy column per field; the rank column is not kept because
trec_eval ignores it (rankings are rebuilt from scores). ``runid`` is the runid of the last
line, which is what trec_eval prints.
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError
from trecqr.formats.arrays import (Listed, arrow_indices, arrow_numbers, as_numpy, id_array,
                                   key_id, key_ids, string_array)
from trecqr.formats.order import trec_order
from trecqr.formats.textio import (LineLocator, Source, arrow_fields, json_document, python_lines,
                                   read_source, refuse_bom)
from trecqr.formats.writer import atomic_write_fields, refuse_split_fields

from trecqr.formats import _scan as _scanner


def scanner():
    """The C scanner module (required: the package does not build without it)."""
    return _scanner

RUN_FIELDS = "qid Q0 docno rank score runid"
# bytes: a run file under this size is scanned with its docnos in one pass (the scorer
# ranks small inputs as dicts, which need them), not in topic blocks
SMALL_FILE = 1 << 18
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


@dataclass
class Run(LineLocator):
    """A ranked-retrieval run as columns: one row per (qid, docno, score) line."""

    qid: pa.Array
    docno: pa.Array
    score: np.ndarray
    runid: str = "trecqr"
    source: str = "<run>"
    _raw: Source | None = field(default=None, repr=False)
    comments: bool = True  # '#' lines were skipped (10.0): locate() must count them the same
    codes: "RunCodes | None" = field(default=None, repr=False)
    # a run dict's topics with an empty ranking ({"q2": {}}): no line, but pytrec_eval ranks
    # them (an empty ranking, scored), so every door does
    empty_topics: tuple = ()

    def __len__(self) -> int:
        return len(self.score)

    def __repr__(self) -> str:
        """One line (the dataclass's would print every Arrow value): rows, topics, runid. A
        scanned run's topics come from its scan, without building its qid column."""
        codes = self.codes
        if codes is not None and getattr(self, "_qid", None) is None:
            topics = set(codes.topics)
        else:
            topics = set(self.qid.unique().to_pylist())
        topics.update(self.empty_topics)
        n, t = len(self), len(topics)
        return (f"Run({n:,} row{'s' * (n != 1)}, {t:,} topic{'s' * (t != 1)}, "
                f"runid={self.runid!r})")

    def qid_list(self) -> list:
        """The qid of every line, as Python strings (the small-input path's dicts)."""
        return self.qid.to_pylist()

    def docno_list(self) -> list:
        return self.docno.to_pylist()


class ListedRun(Listed, Run):
    """A :class:`Run` held as lists (a small DataFrame's), its Arrow columns made when read."""


@dataclass
class RunCodes:
    """What the C scanner already knows about a run, so the scorer need not recompute it.

    topics: the run's qids in first-seen order; lines carry their index (a topic code), either
    per line (qcode) or, for files grouped by topic, per block of lines (block_topic,
    block_start). grouped: each topic's lines are consecutive. duplicate_row: -1 when no topic
    repeats a docno, a row that does when one does, -2 when not checked (file not grouped).
    order32/order64 (float or double scores): 0 unsorted, 1 non-increasing with ties to
    reorder, 2 already in trec_eval's order. tie_dst/tie_src: rows to move so that ties are in
    docno-descending order (for the precision tie_float32). hit_row/hit_index: lines whose docno
    is in ``judged`` (the qrels' docnos), and which one.
    """

    topics: list
    grouped: bool
    duplicate_row: int
    order32: int
    order64: int
    judged: object
    hit_row: np.ndarray
    hit_index: np.ndarray
    qcode: np.ndarray | None = None
    block_topic: np.ndarray | None = None
    block_start: np.ndarray | None = None
    tie_dst: np.ndarray | None = None
    tie_src: np.ndarray | None = None
    tie_float32: bool | None = None

    def line_codes(self, n: int) -> np.ndarray:
        """Topic code of every line."""
        if self.qcode is None:
            lengths = np.diff(np.append(self.block_start, n))
            self.qcode = np.repeat(self.block_topic, lengths).astype(np.int32)
        return self.qcode


class ScannedRun(Run):
    """A Run read by the C scanner. Its qid and docno columns are only built if asked for: the
    scorer works from ``codes``, and a file read in block mode is scanned again for docnos."""

    @property
    def qid(self):
        if self._qid is None:
            self._qid = string_array(self.codes.topics).take(
                arrow_indices(self.codes.line_codes(len(self))))
        return self._qid

    def qid_list(self) -> list:
        if self._qid is not None:
            return self._qid.to_pylist()
        topics = np.array(self.codes.topics, dtype=object)
        return topics[self.codes.line_codes(len(self))].tolist()

    @qid.setter
    def qid(self, value):
        self._qid = value

    @property
    def docno(self):
        if self._docno is None:
            span = getattr(self, "span", None) or (0, -1)
            res = _scanner.scan_run(self.source, self.comments, None, True, True, *span)
            if not isinstance(res, dict) or res["n"] != len(self):
                raise InputError(self.source, None, "file changed while it was being read")
            self._docno = _docno_array(res)
        return self._docno

    @docno.setter
    def docno(self, value):
        self._docno = value


def _array(buf: bytes | None, dtype) -> np.ndarray | None:
    return None if buf is None else np.frombuffer(buf, dtype)


def _docno_array(res: dict) -> pa.Array:
    return pa.Array.from_buffers(pa.string(), res["n"], [None, pa.py_buffer(res["docno_offsets"]),
                                                         pa.py_buffer(res["docno_data"])])


def scan_file(path, comments: bool, judged=None, float32: bool | None = None,
          span: tuple | None = None) -> Run | None:
    """Read with the C scanner (trecqr.formats._scan) when the file is plain (None otherwise:
    stdin, a file object, a FIFO, gzip, bytes outside printable ASCII, a malformed line).

    judged: an Arrow string array of the qrels' docnos; the scanner then also finds, in the
    same pass, the lines whose docno is judged. float32 (True for trec_eval 9.0.8, False for
    10.0, None if unknown): lets it return topic blocks and tie fix-ups in that precision
    instead of per-line columns, when the file is grouped by topic with non-increasing scores.
    span: (start, stop) byte offsets, to read only that part of the file (whole lines, under
    2 GiB; the stream reader's pieces).
    """
    if hasattr(path, "read") or str(path) == "-":
        return None
    name = os.fspath(path)
    try:
        info = os.stat(name)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode):  # a FIFO or device: the scanner may read it twice
        return None
    judged_list = None if judged is None else judged.to_pylist()
    where = span or (0, -1)
    # a small file is scanned once, with its docnos: the scorer takes it as dicts
    whole = float32 is None or (span is None and info.st_size < SMALL_FILE)
    try:
        res = "full" if whole else \
            _scanner.scan_run(name, comments, judged_list, False, float32, *where)
        if res == "full":
            res = _scanner.scan_run(name, comments, judged_list, True, True, *where)
    except (TypeError, ValueError, UnicodeEncodeError, OSError):
        return None
    if res is None:
        return None
    blocks = res["block_start"] is not None
    codes = RunCodes(res["topics"], res["grouped"], res["duplicate_row"], res["order32"],
                     res["order64"], judged, _array(res["hit_row"], np.int32),
                     _array(res["hit_index"], np.int32), _array(res["qcode"], np.int32),
                     _array(res["block_topic"], np.int32), _array(res["block_start"], np.int32),
                     _array(res["tie_dst"], np.int32), _array(res["tie_src"], np.int32),
                     float32 if blocks else None)
    run = ScannedRun(None, None if blocks else _docno_array(res),
                     np.frombuffer(res["score"], np.float64), res["runid"], name, None,
                     comments, codes)
    run.span = span
    return run


def parse_score(text: str) -> float | None:
    """trec_eval reads scores with atof; we accept only complete, finite decimal numbers.

    The same strings Arrow's float64 cast accepts, minus nan/inf (checked in tests).
    """
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _python_run(src: Source, comments: bool) -> Run:
    qids, docnos, scores, runid = [], [], [], None
    for number, fields in python_lines(src, comments=comments):
        if len(fields) < 6:
            raise InputError(src.name, number,
                             f"expected at least 6 fields ({RUN_FIELDS}), found {len(fields)}")
        score = parse_score(fields[4])
        if score is None:
            raise InputError(src.name, number, f"score {fields[4]!r} is not a finite number")
        qids.append(fields[0])
        docnos.append(fields[2])
        scores.append(score)
        runid = fields[5]
    if not scores:
        raise InputError(src.name, None, "no data lines (only blank or comment lines)")
    return Run(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
               np.asarray(scores, dtype=np.float64), runid or "trecqr", src.name, src, comments)


def read_run(path, *, comments: bool = True, judged=None, float32: bool | None = None,
             raw: bytes | None = None) -> Run:
    """Read a TREC run file (path, ``-`` for stdin, ``.gz``, or a binary file object).

    ``comments`` skips lines starting with ``#`` (trec_eval 10.0); trec_eval 9.0.8 has no
    comments, so under that compatibility a ``#`` line is read as data. raw: the file's first
    bytes as the format sniffer read them (:func:`~.colfiles.sniff`).
    """
    refuse_bom(path, raw)
    scanned = scan_file(path, comments, judged, float32)
    if scanned is not None:
        return scanned
    # what the scanner leaves (gzip, non-ASCII bytes, stdin...): Arrow splits it, and the
    # Python reader names the first bad line
    src = read_source(path, trec=True)
    doc = json_document(src)
    if doc is not None:
        return run_from_dict(doc, source=src.name)
    table = arrow_fields(src, comments=comments)
    if table is None or table.num_columns < 6 or table.num_rows == 0:
        return _python_run(src, comments)
    try:
        score = as_numpy(table.column(4).cast(pa.float64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _python_run(src, comments)  # locates and reports the bad score
    if not np.isfinite(score).all():
        return _python_run(src, comments)
    qid = table.column(0).combine_chunks()
    docno = table.column(2).combine_chunks()
    runid = table.column(5)[table.num_rows - 1].as_py()
    keep = src if src.name == "<stdin>" else None
    return Run(qid, docno, score, runid, src.name, keep, comments)


def run_from_dict(run: dict, source: str = "<run dict>", runid: str = "trecqr") -> Run:
    """pytrec_eval's ``{qid: {docno: score}}``."""
    qids, docnos, scores, empty = [], [], [], []
    for qid, docs in run.items():
        if not isinstance(docs, dict):
            raise InputError(source, None, f"query {qid!r}: expected a dict of docno -> score")
        qid = key_id(qid, source, "query id")
        if not docs:
            empty.append(qid)
        qids.extend([qid] * len(docs))
        docnos.extend(key_ids(docs, source, f"query {qid!r}: docno"))
        scores.extend(docs.values())
    arr = _dict_scores(scores, qids, docnos, source)
    return Run(id_array(qids, source), id_array(docnos, source), arr, runid, source,
               empty_topics=tuple(empty))


def _shown(value) -> str:
    """repr(value), cut where it is long (an int of hundreds of digits)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text)} characters)"


def _dict_scores(scores: list, qids: list, docnos: list, source: str) -> np.ndarray:
    """A run dict's scores as float64. Numbers only, as pytrec_eval reads a dict (ints past a
    double are infinite, and refused with NaN and None below): text is refused, where a
    DataFrame's text column is read by its own rule (:func:`~.tables.score_column`)."""
    try:
        arr = np.asarray(scores)  # numpy's own pass: numbers give a number type at once
    except ValueError:  # lists of several lengths among the scores
        arr = np.empty(0, dtype=object)
    if arr.dtype.kind not in "biuf" or arr.ndim != 1:
        arr = np.array([_double(i, scores, qids, docnos, source) for i in range(len(scores))],
                       dtype=np.float64)
    arr = arr.astype(np.float64, copy=False)
    if not np.isfinite(arr).all():  # NaN, infinite, None, or past a double
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InputError(source, None, f"query {qids[bad]!r} doc {docnos[bad]!r}: score "
                                       f"{_shown(scores[bad])} is not a finite number")
    return arr


def _double(i: int, scores: list, qids: list, docnos: list, source: str) -> float:
    """Score i as a double (None as NaN, inf where it is too large), or the one-line error
    that names it: text, a list, any other object."""
    score = scores[i]
    if score is None:
        return math.nan
    text = isinstance(score, (str, bytes))
    if not text and np.ndim(score) == 0:  # a number of any type that converts (Decimal...)
        try:
            return float(score)
        except OverflowError:
            return math.inf
        except (TypeError, ValueError):
            pass
    what = "is text, not a number: a dict's scores are numbers, as pytrec_eval's" if text \
        else "is not a number"
    raise InputError(source, None, f"query {qids[i]!r} doc {docnos[i]!r}: score "
                                   f"{_shown(score)} {what}")


def write_run(run: Run, path, *, runid: str | None = None) -> None:
    """Write a run in TREC format, ranks 1.. per query in trec_eval order, atomically."""
    runid = runid or run.runid
    if not runid.isascii():  # a runid made from a file name that is not UTF-8: Arrow needs UTF-8
        runid = runid.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    for values, what in ((run.qid, "query id"), (run.docno, "docno"), (runid, "runid")):
        refuse_split_fields(values, what, run.source)
    order, rank, _ = trec_order(run, float32=False)
    # shortest text that reads back as the same double (Arrow's cast prints 17 digits)
    score = string_array([repr(x) for x in run.score[order].tolist()])
    # no pa.array or pa.repeat of Python or numpy values: pyarrow imports pandas for them
    rows, same = arrow_indices(order), arrow_indices(np.zeros(len(order), np.int64))
    cols = [run.qid.take(rows), string_array(["Q0"]).take(same), run.docno.take(rows),
            arrow_numbers(rank).cast(pa.string()), score, string_array([runid]).take(same)]
    atomic_write_fields(path, cols)
