"""Reading TREC-style whitespace-separated text files into Arrow columns.

trec_eval splits each line on runs of ASCII white space, ignores blank lines and (in 10.0)
lines that start with ``#``. We read the whole file as bytes (``.gz`` transparently, ``-`` for
stdin) and let Arrow's multithreaded CSV reader split it: in the common case the file uses one
delimiter consistently and is handed to Arrow as it is; otherwise white space is first
normalised with one regular-expression pass. No Python object is made per line on this path.

The slow path (:func:`python_fields`) tokenises line by line in Python. It only runs to locate
an error precisely (``file:line: ...``) or for files whose lines have varying field counts.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import zlib
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import InputError

BOM = b"\xef\xbb\xbf"
_WS_RUN = re.compile(rb"[ \t\r\x0b\x0c]+")
_EDGE_SPACE = re.compile(rb" ?\n ?")
_COMMENT_LINE = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*#[^\n]*")
# bytes that never occur in text (C0 controls other than white space, and DEL)
_CONTROL = bytes(range(0, 9)) + bytes(range(14, 32)) + b"\x7f"
_OTHER_COMPRESSION = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip",
                      b"\x28\xb5\x2f\xfd": "zstd"}


@dataclass
class Source:
    """The bytes of one input and the name to report in errors."""

    name: str
    data: bytes


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
        raw = sys.stdin.buffer.read()
    else:
        name = os.fspath(path)
        if os.path.isdir(name):
            raise InputError(name, None, "is a directory, not a file")
        try:
            with open(name, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            raise InputError(name, None, "no such file") from None
        except PermissionError:
            raise InputError(name, None, "permission denied") from None
        except OSError as exc:
            raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(name, None, f"corrupt gzip data ({exc})") from None
    for magic, kind in _OTHER_COMPRESSION.items():
        if raw.startswith(magic):
            raise InputError(name, None, f"{kind}-compressed data; only gzip is read")
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    if not raw.strip():
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


def _decode(source: Source) -> bytes:
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
    if delim + delim in data or data.startswith(delim) or (b"\n" + delim) in data:
        return False
    if (delim + b"\n") in data or data.rstrip(b"\n").endswith(delim):
        return False
    return b"\r" not in data and b"\x0b" not in data and b"\x0c" not in data


def normalise(data: bytes, comments: bool) -> tuple[bytes, bytes]:
    """Return (bytes, delimiter) ready for the CSV reader, blank and comment lines kept empty."""
    if comments and b"#" in data:
        data = _COMMENT_LINE.sub(b"", data)
    if b"\t" not in data and _regular(data, b" "):
        return data, b" "
    if b" " not in data and _regular(data, b"\t"):
        return data, b"\t"
    data = _WS_RUN.sub(b" ", data)
    data = _EDGE_SPACE.sub(b"\n", data)
    if data.startswith(b" "):
        data = data[1:]
    return data, b" "


def arrow_fields(source: Source, *, comments: bool) -> pa.Table | None:
    """Split into string columns f0..fN with Arrow; None when lines have varying field counts."""
    data, delim = normalise(_decode(source), comments)
    first = data.lstrip(b"\n").split(b"\n", 1)[0]
    ncols = len(first.split(delim))
    if not first:
        return None
    names = [f"f{i}" for i in range(ncols)]
    try:
        return pacsv.read_csv(
            io.BytesIO(data),
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


def python_lines(source: Source, *, comments: bool):
    """Yield (line number, list of str fields) for every non-blank, non-comment line."""
    for number, line in enumerate(_decode(source).split(b"\n"), 1):
        fields = line.split()  # bytes.split: ASCII white space only, as C's isspace
        if not fields:
            continue
        if comments and fields[0].startswith(b"#"):
            continue
        yield number, [f.decode("utf-8") for f in fields]
