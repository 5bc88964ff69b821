"""Reading TREC-style whitespace-separated text files into Arrow columns.

trec_eval splits each line on runs of ASCII white space (C ``isspace``) and ignores blank
lines; trec_eval 10.0 also skips lines that start with ``#`` (9.0.8 reads them as data). We read
the whole file as bytes (``.gz`` transparently, ``-`` for stdin, a UTF-8 BOM dropped) and let
Arrow's multithreaded CSV reader split it: when the file uses one delimiter consistently it is
handed to Arrow as it is; otherwise (CRLF, tabs and spaces mixed, runs of blanks) white space
is normalised with a few whole-buffer ``translate``/``replace`` passes. No Python object is
made per line on this path.

The slow path (:func:`python_lines`) tokenises line by line in Python. It only runs to locate
an error precisely (``file:line: ...``) or for files whose lines have varying field counts;
tests/formats/test_formats.py checks that both paths give identical columns on every file shape.

Comments: a line whose first non-blank byte is ``#`` is skipped, as 10.0's get_trec_results.c
does. 10.0's get_qrels.c only checks column 0 (and, a quirk, never two comment lines in a row);
we treat qrels like runs, which differs only on lines that trec_eval would mostly reject.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
import sys
import zlib
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pacsv, pc
from trecqr.errors import InputError
from trecqr.runtime.special_files import open_input, read_bounded

BOM = b"\xef\xbb\xbf"
_SPACE_BYTES = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)
_NOT_NEWLINE = re.compile(rb"[^\n]")
_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")  # C isspace, except the newline
_COMMENT_LINE = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*#[^\n]*")
# bytes that never occur in text (C0 controls other than white space, and DEL)
CONTROL_BYTES = bytes(range(0, 9)) + bytes(range(14, 32)) + b"\x7f"
SAMPLE = 1 << 16  # bytes: the head the format sniffers read; a smaller file is read from it
_OTHER_COMPRESSION = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip",
                      b"\x28\xb5\x2f\xfd": "zstd"}


def _decompress(name: str, raw: bytes, kind: str) -> bytes:
    """bzip2, xz or zstd data decompressed (zip archives are not read)."""
    try:
        if kind == "bzip2":
            return bz2.decompress(raw)
        if kind == "xz":
            return lzma.decompress(raw)
        if kind == "zstd":
            stream = pa.CompressedInputStream(pa.BufferReader(raw), "zstd")
            return stream.read()
    except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
        raise InputError(name, None, f"corrupt {kind} data ({exc})") from None
    raise InputError(name, None, f"{kind}-compressed data; only gzip, bzip2, xz and zstd are "
                                 "read")


@dataclass
class Source:
    """The bytes of one input and the name to report in errors."""

    name: str
    data: bytes


class LineLocator:
    """Mixin for parsed inputs: find the line numbers of lines in the file they were read from.

    Only error messages need line numbers, so they are found by re-reading the file (or the
    bytes kept for stdin, ``_raw``) with the slow path, under the same comment rule.
    """

    def locate(self, predicate) -> list[int]:
        """Line numbers (1-based) of lines whose fields satisfy predicate."""
        src = self._source_again()
        if src is None:
            return []
        return [n for n, f in python_lines(src, comments=self.comments) if predicate(f)]

    def row_lines(self, rows) -> list | None:
        """The line of each row of a JSONL input (its non-blank lines are its rows, in order),
        None for a row past them; None for any other input."""
        src = self._source_again()
        if src is None or not jsonl_head(src.data[:1 << 16]):  # as the sniffer reads it
            return None
        lines = nonblank_lines(src)
        return [lines[row] if row < len(lines) else None for row in rows]

    def _source_again(self) -> Source | None:
        if self._raw is not None:
            return self._raw
        try:
            return read_source(self.source)
        except InputError:
            return None


def jsonl_head(head: bytes) -> bool:
    """Whether a text's first line is one flat JSON object: JSON lines, where a pytrec_eval
    dict saved as JSON (``{"q1": {"d1": 1}}``) is nested and goes to the TREC readers."""
    line = head.lstrip().split(b"\n", 1)[0]
    try:
        doc = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and not any(isinstance(v, dict) for v in doc.values())


def nonblank_lines(src: Source) -> list[int]:
    """The numbers (1-based) of a text's non-blank lines: a JSONL file's rows, in order."""
    return [n for n, line in enumerate(src.data.split(b"\n"), 1) if line.strip()]


def repeated_at(obj, qid: str, docno: str) -> tuple:
    """(line, lead, first) for an error about a document or judgment given twice in ``obj``:
    ``line`` the second line of its file that gives ``qid`` and ``docno`` (fields 1 and 3) and
    ``first`` " (first at line N)"; a JSONL file's lines are found by its rows. An input read
    from no text (a DataFrame, an Arrow table, records, Parquet) has rows, not lines: ``lead``
    "row J: " and ``first`` " (first at row I)", counting from 0 as its other errors do (the
    columns keep the input's order). (None, "", "") when neither is found."""
    locate = getattr(obj, "locate", None)
    lines = locate(lambda f: len(f) >= 3 and f[0] == qid and f[2] == docno) if locate else []
    if len(lines) > 1:
        return lines[1], "", f" (first at line {lines[0]})"
    rows = _rows_giving(obj, qid, docno)[:2] if not lines else []
    if len(rows) < 2:
        return None, "", ""
    at = obj.row_lines(rows) if hasattr(obj, "row_lines") else None
    if at and None not in at:
        return at[1], "", f" (first at line {at[0]})"
    return None, f"row {rows[1]}: ", f" (first at row {rows[0]})"


def _rows_giving(obj, qid: str, docno: str) -> list:
    """The rows of ``obj``'s qid and docno columns that hold ``qid`` and ``docno``."""
    try:
        both = pc.and_(pc.equal(obj.qid, qid), pc.equal(obj.docno, docno))
    except (AttributeError, TypeError, pa.ArrowException):
        return []
    return np.flatnonzero(np.asarray(both.fill_null(False))).tolist()


def bom_error(name: str) -> InputError:
    """A UTF-8 byte-order mark in a file trec_eval reads (qrels, runs): trec_eval takes it as
    part of the first topic id (``\\ufeff106_1``, a topic of its own), so no silent choice
    gives both tools' number; trecqr refuses it (docs/fidelity.md)."""
    return InputError(name, 1, "starts with a UTF-8 byte-order mark, which trec_eval reads as "
                      "part of the first topic id; save the file without it "
                      "(sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)")


def refuse_bom(path, raw: bytes | None = None) -> None:
    """bom_error if the regular file at path (gzip or not) starts with a byte-order mark.
    raw: its :func:`raw_head`, already read by the format sniffer (the file is not opened
    again: most of a small file's reading time is its opening)."""
    if hasattr(path, "read") or str(path) == "-":
        return  # a stream: read_source(trec=True) checks it
    if raw is not None:
        head = raw[:64]
    else:
        try:
            with open(os.fspath(path), "rb") as fh:
                head = fh.read(64)
        except (OSError, ValueError, TypeError):
            return  # the reader reports it
    if head[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 3)
        except zlib.error:
            return
    if head.startswith(BOM) and head[3:].strip():  # a BOM alone: the reader's "empty file"
        raise bom_error(os.fspath(path))


def raw_head(name: str) -> bytes | None:
    """The first 64 KiB of a file as stored (None: it cannot be read)."""
    try:
        with open(name, "rb") as fh:
            return fh.read(SAMPLE)
    except OSError:
        return None


def sample_head(name: str, raw: bytes | None = None) -> tuple[bytes | None, bool]:
    """The first 64 KiB of a regular file (decompressed if gzip) cut at the last newline, and
    whether the file is gzip; raw: its :func:`raw_head`, already read."""
    head = raw_head(name) if raw is None else raw
    if head is None:
        return None, False
    gz = head[:2] == b"\x1f\x8b"
    if gz:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, SAMPLE)
        except zlib.error:
            return None, gz
    if head.startswith(BOM):
        head = head[len(BOM):]
    if len(head) >= SAMPLE:
        head = head[: head.rfind(b"\n") + 1]
    return head, gz


def small_file(path, raw: bytes | None = None, limit: int = SAMPLE) -> bytes | None:
    """The whole content of a regular, uncompressed file under ``limit`` bytes, else None.
    raw: its :func:`raw_head`, already read (a file shorter than that is not opened again)."""
    if raw is not None and len(raw) < SAMPLE:
        data = raw
    else:
        if hasattr(path, "read") or str(path) == "-":
            return None
        try:
            name = os.fspath(path)
            if not os.path.isfile(name) or os.path.getsize(name) >= limit:
                return None
            with open(name, "rb") as fh:
                data = fh.read(limit)
        except (OSError, ValueError, TypeError):
            return None
    if len(data) >= limit or data[:2] == b"\x1f\x8b":
        return None
    return data


def unreadable(name, exc: OSError) -> InputError:
    """The one line for an input file that cannot be opened or read, in the same words at
    every reader: ``no such file``, ``permission denied``, ``is a directory, not a file``,
    else ``cannot read: <why>``."""
    if isinstance(exc, FileNotFoundError):
        return InputError(name, None, "no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(name, None, "is a directory, not a file")
    if isinstance(exc, PermissionError):
        return InputError(name, None, "permission denied")
    return InputError(name, None, f"cannot read: {exc.strerror or exc}")


def read_source(path, *, trec: bool = False) -> Source:
    """Read a path (``str``/``PathLike``), ``-`` (stdin) or a binary file object.

    ``.gz`` files, and any input that starts with the gzip magic number, are decompressed.
    Missing files, directories, corrupt gzip streams and binary data raise InputError. A UTF-8
    byte-order mark is dropped, except in a file trec_eval reads (trec): refused there.
    """
    if hasattr(path, "read"):
        name = getattr(path, "name", "<stream>")
        raw = path.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
    elif str(path) == "-":
        name = "<stdin>"
        raw = read_bounded(sys.stdin.buffer, name)
    else:
        name = os.fspath(path)
        if os.path.isdir(name):
            raise InputError(name, None, "is a directory, not a file")

        try:
            with open_input(name) as fh:
                raw = read_bounded(fh, name)
        except InputError:
            raise
        except OSError as exc:
            raise unreadable(name, exc) from None
        except ValueError:  # a NUL byte in the name
            raise InputError(repr(name), None, "invalid file name") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(name, None, f"corrupt gzip data ({exc})") from None
    for magic, kind in _OTHER_COMPRESSION.items():
        if raw.startswith(magic):
            raw = _decompress(name, raw, kind)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(name, None, "UTF-16 text; trecqr reads UTF-8 or ASCII (re-save as UTF-8)")
    if raw.startswith(BOM):
        if trec and not raw[3:].isspace():
            raise bom_error(name)
        raw = raw[len(BOM):]
    if not raw or raw.isspace():  # isspace stops at the first other byte; strip would copy
        raise InputError(name, None, "empty file")
    _reject_binary(name, raw)
    return Source(name, raw)


def _reject_binary(name: str, raw: bytes) -> None:
    """A NUL byte anywhere, or control bytes in more than 1% of the first 64 KiB, is not text.

    One C-level scan of the data (``find``) and one of a 64 KiB sample (``translate``).
    """
    bad = raw.find(b"\x00")
    if bad < 0:
        sample = raw[:1 << 16]
        if len(sample) - len(sample.translate(None, CONTROL_BYTES)) <= len(sample) // 100:
            return
        bad = min(i for i in (sample.find(bytes([c])) for c in CONTROL_BYTES) if i >= 0)
    line = raw.count(b"\n", 0, bad) + 1
    raise InputError(name, line, f"binary data (byte 0x{raw[bad]:02x}); not a text file")


def decode_text(source: Source) -> bytes:
    """Return UTF-8 bytes: valid UTF-8 as is, anything else mapped byte for byte via Latin-1.

    The Latin-1 mapping keeps byte-wise (strcmp) order, so tie-breaking on docnos is unchanged.
    """
    if source.data.isascii():
        return source.data
    try:
        source.data.decode("utf-8")
        return source.data
    except UnicodeDecodeError:
        return source.data.decode("latin-1").encode("utf-8")


def regular_delimiters(data: bytes, delim: bytes) -> bool:
    """Whether Arrow can split data on delim as it is: single delimiters, none at a line edge."""
    if delim + delim in data or data.startswith(delim) or (b"\n" + delim) in data:
        return False
    end = len(data)
    while end and data[end - 1] == 10:  # only the trailing newlines: no copy of the data
        end -= 1
    if (delim + b"\n") in data or data[end - 1:end] == delim:
        return False
    return b"\r" not in data and b"\x0b" not in data and b"\x0c" not in data


def may_have_comments(data: bytes) -> bool:
    """Whether some line may start with '#' (after blanks), without scanning line by line.

    Docnos such as ``doc#4`` are common (TREC RAG): only a '#' at the start of the data or
    after a white-space byte can begin a comment line, which numpy checks in one pass.
    """
    if b"#" not in data:
        return False
    if data.startswith(b"#"):
        return True
    arr = np.frombuffer(data, dtype=np.uint8)
    before = arr[np.flatnonzero(arr[1:] == 35)]  # the byte before each '#'
    return bool(np.isin(before, _SPACE_BYTES).any())


def normalise(data: bytes, comments: bool) -> tuple[bytes, bytes]:
    """Return (bytes, delimiter) ready for the CSV reader, blank and comment lines kept empty.

    Only C-level whole-buffer operations (translate, replace), never a regex substitution per
    field: a CRLF file of millions of lines is normalised in a few passes over memory.
    """
    if comments and may_have_comments(data):
        data = _COMMENT_LINE.sub(b"", data)
    if b"\t" not in data and regular_delimiters(data, b" "):
        return data, b" "
    if b" " not in data and regular_delimiters(data, b"\t"):
        return data, b"\t"
    data = data.translate(_TO_SPACE)
    while b"  " in data:
        data = data.replace(b"    ", b" ").replace(b"  ", b" ")
    data = data.replace(b"\n ", b"\n").replace(b" \n", b"\n")
    if data.startswith(b" "):
        data = data[1:]
    if data.endswith(b" "):  # last line without a newline
        data = data[:-1]
    return data, b" "


def arrow_fields(source: Source, *, comments: bool,
                 integer: int | None = None) -> pa.Table | None:
    """Split into string columns f0..fN with Arrow; None when lines have varying field counts.

    integer: a field the CSV reader reads as int64 itself (a qrels' grade: a cast would load
    ``pyarrow.compute``), unless a field of the file starts with ``0x``: Arrow's integers
    take hexadecimal (``0x1`` is 1, where trec_eval's atol reads 0), so the field then stays
    text, for the caller's line reader to check. None also when that field is not an integer
    on every line."""
    data, delim = normalise(decode_text(source), comments)
    start = _NOT_NEWLINE.search(data)
    if start is None:
        return None
    end = data.find(b"\n", start.start())
    first = data[start.start():end if end >= 0 else len(data)]
    ncols = len(first.split(delim))
    names = [f"f{i}" for i in range(ncols)]
    types = {n: pa.string() for n in names}
    if integer is not None and integer < ncols and not _hexadecimal_field(data, delim):
        types[names[integer]] = pa.int64()
    try:
        return pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                delimiter=delim.decode(), quote_char=False, escape_char=False,
                double_quote=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types=types, null_values=[], strings_can_be_null=False,
                quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid:
        return None


def _hexadecimal_field(data: bytes, delim: bytes) -> bool:
    """Whether a field of these normalised lines starts with 0x or 0X, the one form of
    hexadecimal Arrow's integer parsing takes (not -0x1, +0x1 or 00x1)."""
    return data[:2] in (b"0x", b"0X") or any(
        start + hexa in data for start in (delim, b"\n") for hexa in (b"0x", b"0X"))


def json_document(source: Source):
    """The JSON object in a source whose first non-blank byte is ``{`` (pytrec_eval's
    ``{qid: {docno: value}}`` saved with json.dump), else None."""
    if source.data.lstrip()[:1] != b"{":
        return None
    try:
        doc = json.loads(decode_text(source))
    except json.JSONDecodeError as exc:
        raise InputError(source.name, exc.lineno, f"invalid JSON: {exc.msg}") from None
    if not isinstance(doc, dict):
        raise InputError(source.name, None, "JSON must be an object {qid: {docno: value}}")
    return doc


def python_lines(source: Source, *, comments: bool):
    """Yield (line number, list of str fields) for every non-blank, non-comment line."""
    for number, line in enumerate(decode_text(source).split(b"\n"), 1):
        fields = line.split()  # bytes.split: ASCII white space only, as C's isspace
        if not fields:
            continue
        if comments and fields[0].startswith(b"#"):
            continue
        yield number, [f.decode("utf-8") for f in fields]
