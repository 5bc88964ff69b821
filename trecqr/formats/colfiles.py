"""Run and qrels files other than TREC's: Parquet, Feather, JSONL, and 3-column text.

* **Parquet** (``PAR1``) and **Feather** / Arrow IPC (``ARROW1``, or an IPC stream): read by
  pyarrow, then named columns as :mod:`trecqr.formats.tables` reads any table (``query_id`` or
  ``qid``..., see there). ranx's ``Run.save("x.parquet")`` (``q_id, doc_id, score``) is one.
* **JSONL**: one JSON object per line (``{"qid": "1", "docno": "d7", "score": 3.2}``), read by
  pyarrow's JSON reader in C. A file whose first line is a whole object with no object values
  is JSONL; a ``{qid: {docno: value}}`` document stays pytrec_eval's JSON (the TREC readers).
* **MS MARCO 3-column runs**, ``qid<TAB>docid<TAB>rank``, as MS MARCO's tools, Pyserini and most
  dense retrievers write them. trec_eval needs scores: the score is ``1/rank``, Pyserini's own
  conversion to a TREC run (``pyserini.eval.convert_msmarco_run_to_trec_run``), so this file
  scores exactly as its converted TREC file does (ranks 1..k give distinct, decreasing scores;
  equal ranks tie and are ordered by docno, as trec_eval orders ties).
* **3-column qrels**, ``qid<TAB>docid<TAB>grade`` (BEIR and MS MARCO's TSV qrels; BEIR's header
  line ``query-id corpus-id score`` is skipped). MS MARCO's ``qid 0 docid rel`` is TREC already.

:func:`sniff` tells them apart from the first 64 KiB of the file, so the TREC readers keep
every other file (and its errors) as before. Text files may be compressed as TREC files may.
"""

from __future__ import annotations

import json
import os

import numpy as np

from trecqr.runtime.deferred import pa, parquet as pq, feather, pajson
from trecqr.errors import InputError
from trecqr.formats.qrels import Qrels, parse_grade, warn_truncated
from trecqr.formats.run import Run
from trecqr.formats.tables import qrels_from_table, run_from_table
from trecqr.formats.textio import (arrow_fields, jsonl_head, nonblank_lines, python_lines,
                                   raw_head, read_source, sample_head)

_BEIR_HEADER = ("query-id", "corpus-id", "score")


def _three_fields(head: bytes, comments: bool) -> bool:
    """Whether the first data lines of a file (up to 50) all have 3 fields: a TREC file with a
    short line keeps the TREC readers' error for it."""
    seen = 0
    for line in head.split(b"\n"):
        fields = line.split()
        if not fields or (comments and fields[0].startswith(b"#")):
            continue
        if len(fields) != 3 or fields[0].startswith(b"#"):
            return False
        seen += 1
        if seen == 50:
            break
    return seen > 0


def sniff(path, *, comments: bool = True) -> tuple[str, bytes | None]:
    """(kind, the first 64 KiB of the file as stored, or None when it is not a regular file
    that could be read). The kind is ``parquet``, ``feather``, ``jsonl``, ``3col`` or ``trec``
    (everything else, including stdin, file objects and files that cannot be opened: the TREC
    readers report those). The TREC readers take the bytes, so a small file is opened once."""
    if hasattr(path, "read") or str(path) == "-":
        return "trec", None
    name = os.fspath(path)
    try:
        if not os.path.isfile(name):
            return "trec", None
    except (OSError, ValueError):
        return "trec", None
    magic = raw_head(name)
    if magic is None:
        return "trec", None
    if magic.startswith(b"PAR1"):
        return "parquet", magic
    if magic.startswith(b"ARROW1") or magic.startswith(b"\xff\xff\xff\xff") \
            or magic.startswith(b"FEA1"):
        return "feather", magic
    head, _gz = sample_head(name, magic)
    if not head:
        return "trec", magic
    stripped = head.lstrip()
    if stripped[:1] == b"{":
        return ("jsonl" if jsonl_head(stripped) else "trec"), magic
    return ("3col" if _three_fields(head, comments) else "trec"), magic


def read_table(path, kind: str) -> pa.Table:
    """A Parquet, Feather or JSONL file as an Arrow table; unreadable files are InputErrors."""
    name = os.fspath(path)
    try:
        if kind == "parquet":
            return pq.read_table(name)
        if kind == "feather":
            return feather.read_table(name)
        src = read_source(name)  # decompressed, BOM dropped, binary refused
        return pajson.read_json(pa.BufferReader(pa.py_buffer(src.data)))
    except InputError:
        raise
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        if kind == "jsonl":
            raise _jsonl_error(name) or InputError(name, None, f"not readable JSONL "
                                                               f"({_first(exc)})") from None
        raise InputError(name, None, f"not a readable {kind} file ({_first(exc)})") from None


def _first(exc) -> str:
    return str(exc).strip().split("\n", 1)[0]


def _kind_of(value) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "text" if isinstance(value, str) else "null" if value is None else "a JSON value"


def _jsonl_error(name: str) -> InputError | None:
    """What pyarrow's JSON reader refused, found again line by line in Python (errors only):
    a line that is not one JSON object, or a field whose kind differs from its first line's."""
    first: dict = {}
    for number, line in enumerate(read_source(name).data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return InputError(name, number, f"invalid JSON: {getattr(exc, 'msg', exc)}")
        if not isinstance(row, dict):
            return InputError(name, number, "expected one JSON object per line")
        for key, value in row.items():
            was = first.setdefault(key, (number, _kind_of(value)))
            if _kind_of(value) != was[1]:
                return InputError(name, number, f"{key} {value!r} is {_kind_of(value)}, but "
                                                f"{was[1]} on line {was[0]}")
    return None


def _row_to_line(name: str, exc: InputError) -> InputError:
    """A JSONL row error (``row 17: ...``) re-pointed at its file line."""
    if exc.line is not None or not exc.message.startswith("row "):
        return exc
    head, _, rest = exc.message.partition(": ")
    row = int(head.split()[1])
    lines = nonblank_lines(read_source(name))
    line = lines[row] if row < len(lines) else None
    return InputError(name, line, rest)


def table_run(path, kind: str) -> Run:
    name = os.fspath(path)
    try:
        return run_from_table(read_table(path, kind), name, os.path.basename(name))
    except InputError as exc:
        raise (_row_to_line(name, exc) if kind == "jsonl" else exc) from None


def table_qrels(path, kind: str) -> Qrels:
    name = os.fspath(path)
    try:
        return qrels_from_table(read_table(path, kind), name)
    except InputError as exc:
        raise (_row_to_line(name, exc) if kind == "jsonl" else exc) from None


class ThreeColumnRun(Run):
    """A 3-column run: error messages locate lines by TREC fields (qid Q0 docno rank ...)."""

    def locate(self, predicate):
        return super().locate(lambda f: len(f) == 3 and predicate([f[0], "Q0", f[1], f[2]]))


class ThreeColumnQrels(Qrels):
    """3-column qrels: lines are located by TREC fields (qid iter docno grade)."""

    def locate(self, predicate):
        return super().locate(lambda f: len(f) == 3 and predicate([f[0], "0", f[1], f[2]]))


def _three_columns(path, what: str, comments: bool):
    src = read_source(path)
    table = arrow_fields(src, comments=comments)
    if table is None or table.num_columns != 3:
        for number, fields in python_lines(src, comments=comments):
            if len(fields) != 3:
                raise InputError(src.name, number, f"expected 3 fields ({what}), found "
                                                   f"{len(fields)}")
        raise InputError(src.name, None, f"not {what} lines")
    header = [table.column(i)[0].as_py() for i in range(3)]
    if tuple(header) == _BEIR_HEADER:
        table = table.slice(1)
    if table.num_rows == 0:
        raise InputError(src.name, None, "no data lines")
    return src, table


def _bad_line(src, comments: bool, check) -> None:
    skip_header = True
    for number, fields in python_lines(src, comments=comments):
        if skip_header and tuple(fields) == _BEIR_HEADER:
            skip_header = False
            continue
        skip_header = False
        check(number, fields[2])


def read_three_column_run(path, *, comments: bool = True) -> Run:
    """``qid docid rank`` lines: score = 1/rank (see the module docstring)."""
    src, table = _three_columns(path, "MS MARCO run: qid docid rank", comments)
    try:
        rank = table.column(2).cast(pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        rank = None

    def check(number, text):
        try:
            if int(text) >= 1:
                return
        except ValueError:
            pass
        raise InputError(src.name, number, f"rank {text!r} is not a positive integer")

    if rank is None or (rank < 1).any():
        _bad_line(src, comments, check)
    keep = src if src.name == "<stdin>" else None
    return ThreeColumnRun(table.column(0).combine_chunks(), table.column(1).combine_chunks(),
                          1.0 / rank.astype(np.float64), os.path.basename(src.name), src.name,
                          keep, comments)


def read_three_column_qrels(path, *, comments: bool = True) -> Qrels:
    """``qid docid grade`` lines (a BEIR header line skipped)."""
    src, table = _three_columns(path, "qrels: qid docid grade", comments)
    try:
        grade = table.column(2).cast(pa.int64()).to_numpy()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        first, count, values = None, 0, []

        def check(number, text):
            nonlocal first, count
            value, truncated = parse_grade(text, src.name, number)
            if truncated:
                count += 1
                first = first or (number, text, value)
            values.append(value)

        _bad_line(src, comments, check)
        if first:
            warn_truncated(src.name, *first, count)
        grade = np.asarray(values, dtype=np.int64)
    keep = src if src.name == "<stdin>" else None
    return ThreeColumnQrels(table.column(0).combine_chunks(), table.column(1).combine_chunks(),
                            grade, src.name, keep, comments)
