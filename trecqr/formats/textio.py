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
tests/test_formats.py checks that both paths give identical columns on every file shape.

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
import stat
import sys
import zlib
from functools import lru_cache
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import InputError
from .arrays import arrow_indices
from ..special_files import open_input, read_bounded

BOM = b"\xef\xbb\xbf"
_SPACE_BYTES = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)
_NOT_NEWLINE = re.compile(rb"[^\n]")
_TO_SPACE = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")  # C isspace, except the newline
_COMMENT_LINE = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*#[^\n]*")
# bytes that never occur in text (C0 controls other than white space, and DEL)
_CONTROL = bytes(range(0, 9)) + bytes(range(14, 32)) + b"\x7f"
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
        src = self._raw
        if src is None:
            try:
                src = read_source(self.source)
            except InputError:
                return []
        return [n for n, f in python_lines(src, comments=self.comments) if predicate(f)]


def read_source(path) -> Source:
    """Read a path (``str``/``PathLike``), ``-`` (stdin) or a binary file object.

    ``.gz`` files, and any input that starts with the gzip magic number, are decompressed.
    Missing files, directories, corrupt gzip streams and binary data raise InputError.
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
        except FileNotFoundError:
            raise InputError(name, None, "no such file") from None
        except PermissionError:
            raise InputError(name, None, "permission denied") from None
        except OSError as exc:
            raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
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
        if len(sample) - len(sample.translate(None, _CONTROL)) <= len(sample) // 100:
            return
        bad = min(i for i in (sample.find(bytes([c])) for c in _CONTROL) if i >= 0)
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


def _regular(data: bytes, delim: bytes) -> bool:
    """Whether Arrow can split data on delim as it is: single delimiters, none at a line edge."""
    if delim + delim in data or data.startswith(delim) or (b"\n" + delim) in data:
        return False
    end = len(data)
    while end and data[end - 1] == 10:  # only the trailing newlines: no copy of the data
        end -= 1
    if (delim + b"\n") in data or data[end - 1:end] == delim:
        return False
    return b"\r" not in data and b"\x0b" not in data and b"\x0c" not in data


def _may_have_comments(data: bytes) -> bool:
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
    if comments and _may_have_comments(data):
        data = _COMMENT_LINE.sub(b"", data)
    if b"\t" not in data and _regular(data, b" "):
        return data, b" "
    if b" " not in data and _regular(data, b"\t"):
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


def arrow_fields(source: Source, *, comments: bool) -> pa.Table | None:
    """Split into string columns f0..fN with Arrow; None when lines have varying field counts."""
    data, delim = normalise(decode_text(source), comments)
    start = _NOT_NEWLINE.search(data)
    if start is None:
        return None
    end = data.find(b"\n", start.start())
    first = data[start.start():end if end >= 0 else len(data)]
    ncols = len(first.split(delim))
    names = [f"f{i}" for i in range(ncols)]
    try:
        return pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                delimiter=delim.decode(), quote_char=False, escape_char=False,
                double_quote=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names}, strings_can_be_null=False,
                quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid:
        return None


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


# --------------------------------------------------------------------------- direct fast path
_SAMPLE = 1 << 16


def raw_head(name: str) -> bytes | None:
    """The first 64 KiB of a file as stored (None: it cannot be read)."""
    try:
        with open(name, "rb") as fh:
            return fh.read(_SAMPLE)
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
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SAMPLE)
        except zlib.error:
            return None, gz
    if head.startswith(BOM):
        head = head[len(BOM):]
    if len(head) >= _SAMPLE:
        head = head[: head.rfind(b"\n") + 1]
    return head, gz


WHOLE_SAMPLE = _SAMPLE  # files below this size are split from their sample


def fast_table(path, columns: dict, *, min_fields: int, exact: bool,
               comments: bool) -> pa.Table | None:
    """Read a regular file straight into Arrow columns, without holding its bytes in Python.

    columns maps field index -> Arrow type (only those fields are materialised). Returns None
    whenever the file is not plainly regular (its first 64 KiB must use one delimiter, single
    and never at a line edge; every line must have the first line's field count; no empty
    field; no comment line), and the caller then takes the normalising path, which also
    produces exact error messages. Arrow splits and converts the file on all cores.
    """
    if hasattr(path, "read") or str(path) == "-":
        return None
    name = os.fspath(path)
    try:
        info = os.stat(name)
        name.encode("utf-8")  # Arrow takes UTF-8 paths; a name that is not: the Python path
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    sample, gz = sample_head(name)
    if not sample or not sample.strip():
        return None
    if len(sample) - len(sample.translate(None, _CONTROL)) > 0:
        return None
    lines = sample.replace(b"\r\n", b"\n")
    first = lines.lstrip(b"\n").split(b"\n", 1)[0]
    delim = b"\t" if (b"\t" in first and b" " not in first) else b" "
    if not _regular(lines, delim) or (delim == b" " and b"\t" in lines) \
            or (delim == b"\t" and b" " in lines):
        return None
    if comments and _may_have_comments(lines):
        return None
    nfields = len(first.split(delim))
    if nfields < min_fields or (exact and nfields != min_fields):
        return None
    names = [f"f{i}" for i in range(nfields)]
    wanted = {f"f{i}": t for i, t in columns.items()}
    if not gz and info.st_size < WHOLE_SAMPLE:  # the sample is the whole file
        return _whole_sample(lines, delim.decode(), nfields, wanted)
    source = pa.CompressedInputStream(pa.OSFile(name), "gzip") if gz else name
    # a file of one block is parsed by one thread anyway: Arrow's pool only adds hand-offs,
    # which cost milliseconds when other threads (numba's, a DataLoader's) hold the cores
    threads = gz or info.st_size > 1 << 20
    try:
        table = pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 20,
                                           use_threads=threads),
            parse_options=pacsv.ParseOptions(
                delimiter=delim.decode(), quote_char=False, escape_char=False,
                double_quote=False, newlines_in_values=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types=wanted, include_columns=list(wanted), null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, EOFError):
        return None
    return _checked(table, wanted, comments)


def _whole_sample(data: bytes, delim: str, nfields: int, wanted: dict) -> pa.Table | None:
    """A small file's table from its sample (the whole file, checked regular: no empty
    field, no comment line), split by ``str.split`` (one C call; the CSV reader's set-up is
    most of a small file's time: 0.3 ms for three lines, and each Arrow kernel call costs
    10 us). The same columns as the reader's; None where it would fail."""
    body = data.strip(b"\n")
    if b"\n\n" in body:  # empty lines are skipped
        body = re.sub(b"\n+", b"\n", body)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if _lines_of(delim, nfields).fullmatch(text) is None:  # a line of another field count
        return None
    fields = text.replace("\n", delim).split(delim)
    out = {}
    for name, typ in wanted.items():
        values = fields[int(name[1:])::nfields]
        if typ == pa.int64() and _INTEGERS.fullmatch("\n".join(values)):
            try:  # what Arrow's cast accepts, read by int() (an Arrow call costs 10 us)
                out[name] = pa.array(np.array(list(map(int, values)), dtype=np.int64))
                continue
            except OverflowError:
                return None
        col = pa.array(values, pa.string())
        try:
            out[name] = col if typ == pa.string() else pc.cast(col, typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return pa.table(out)


_INTEGERS = re.compile(r"-?[0-9]+(?:\n-?[0-9]+)*")


@lru_cache(maxsize=8)
def _lines_of(delim: str, nfields: int) -> re.Pattern:
    """Lines of exactly nfields non-empty fields separated by delim (linear: a field holds
    neither delim nor a newline)."""
    field_ = f"[^{re.escape(delim)}\\n]+"
    line = re.escape(delim).join([field_] * nfields)
    return re.compile(f"{line}(?:\\n{line})*")


def _checked(table: pa.Table, wanted: dict, comments: bool) -> pa.Table | None:
    """The table, unless a value is missing or empty, or a line is a comment."""
    if table.num_rows == 0 or any(table[c].null_count for c in wanted):
        return None
    for col, typ in wanted.items():
        if pa.types.is_string(typ) and pc.min(pc.binary_length(table[col])).as_py() == 0:
            return None
    if comments and pc.any(pc.starts_with(table["f0"], "#")).as_py():
        return None
    return table


def last_line_fields(path, *, comments: bool) -> list[str] | None:
    """Fields of the last data line of an uncompressed file, read from its tail only."""
    name = os.fspath(path)
    try:
        if not os.path.isfile(name):  # a FIFO has no tail to seek to: reading it would drain it
            return None
        with open(name, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _SAMPLE))
            tail = fh.read()
    except OSError:
        return None
    if tail[:2] == b"\x1f\x8b" or size <= len(tail) and tail.startswith(b"\x1f\x8b"):
        return None
    lines = tail.split(b"\n")
    if size > len(tail):
        lines = lines[1:]  # the first piece may be a partial line
    for line in reversed(lines):
        fields = line.split()
        if fields and not (comments and fields[0].startswith(b"#")):
            try:
                return [f.decode("utf-8") for f in fields]
            except UnicodeDecodeError:
                return None
    return None
