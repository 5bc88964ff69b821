"""The direct fast path for plain files: a regular file straight into Arrow columns.

:func:`fast_table` reads a file that is plainly regular (one delimiter, the same field count on
every line, no comment line) without normalising it: Arrow's CSV reader for large files, and for
a file under 64 KiB its sample split by ``str.split`` (the CSV reader's set-up would be most of
its time). Anything else returns None, and the callers take :mod:`.textio`'s normalising path,
which also gives the exact error messages. :func:`sample_head` and :func:`raw_head` are the
first 64 KiB that the format sniffers (:mod:`.colfiles`) read too.
"""

from __future__ import annotations

import os
import re
import stat
import zlib
from functools import lru_cache

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from trecqr.formats.textio import BOM, CONTROL_BYTES, may_have_comments, regular_delimiters

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


def fast_table(path, columns: dict, *, min_fields: int, exact: bool, comments: bool,
               raw: bytes | None = None):
    """Read a regular file straight into Arrow columns, without holding its bytes in Python:
    ``{"f<i>": column}`` (Arrow arrays, chunked or not; integers of a small file as numpy).

    columns maps field index -> Arrow type (only those fields are materialised). Returns None
    whenever the file is not plainly regular (its first 64 KiB must use one delimiter, single
    and never at a line edge; every line must have the first line's field count; no empty
    field; no comment line), and the caller then takes the normalising path, which also
    produces exact error messages. Arrow splits and converts the file on all cores. raw: the
    file's :func:`raw_head`, read by the caller from a regular file (a shorter one is the
    whole file, which is then not opened again).
    """
    if hasattr(path, "read") or str(path) == "-":
        return None
    name = os.fspath(path)
    if raw is not None and len(raw) < _SAMPLE and raw[:2] != b"\x1f\x8b":
        size = len(raw)  # the whole file, plain: its sample
    else:
        try:
            info = os.stat(name)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        size, raw = info.st_size, None
    try:
        name.encode("utf-8")  # Arrow takes UTF-8 paths; a name that is not: the Python path
    except ValueError:
        return None
    if size == 0:
        return None
    sample, gz = sample_head(name, raw)
    if not sample or not sample.strip():
        return None
    if len(sample) - len(sample.translate(None, CONTROL_BYTES)) > 0:
        return None
    lines = sample.replace(b"\r\n", b"\n")
    first = lines.lstrip(b"\n").split(b"\n", 1)[0]
    delim = b"\t" if (b"\t" in first and b" " not in first) else b" "
    if not regular_delimiters(lines, delim) or (delim == b" " and b"\t" in lines) \
            or (delim == b"\t" and b" " in lines):
        return None
    if comments and may_have_comments(lines):
        return None
    nfields = len(first.split(delim))
    if nfields < min_fields or (exact and nfields != min_fields):
        return None
    names = [f"f{i}" for i in range(nfields)]
    wanted = {f"f{i}": t for i, t in columns.items()}
    if not gz and size < WHOLE_SAMPLE:  # the sample is the whole file
        return _whole_sample(lines, delim.decode(), nfields, wanted)
    source = pa.CompressedInputStream(pa.OSFile(name), "gzip") if gz else name
    # a file of one block is parsed by one thread anyway: Arrow's pool only adds hand-offs,
    # which cost milliseconds when other threads (numba's, a DataLoader's) hold the cores
    threads = gz or size > 1 << 20
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
    if not _checked(table, wanted, comments):
        return None
    return {c: table[c] for c in wanted}


def _whole_sample(data: bytes, delim: str, nfields: int, wanted: dict) -> dict | None:
    """A small file's columns from its sample (the whole file, checked regular: no empty
    field, no comment line), split by ``str.split`` (one C call; the CSV reader's set-up is
    most of a small file's time: 0.3 ms for three lines, and each Arrow kernel call costs
    10 us). The same values as the reader's (integers as numpy, no Arrow call); None where
    it would fail."""
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
                out[name] = np.array(list(map(int, values)), dtype=np.int64)
                continue
            except OverflowError:
                return None
        col = pa.array(values, pa.string())
        try:
            out[name] = col if typ == pa.string() else pc.cast(col, typ)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
    return out


_INTEGERS = re.compile(r"-?[0-9]+(?:\n-?[0-9]+)*")


@lru_cache(maxsize=8)
def _lines_of(delim: str, nfields: int) -> re.Pattern:
    """Lines of exactly nfields non-empty fields separated by delim (linear: a field holds
    neither delim nor a newline)."""
    field_ = f"[^{re.escape(delim)}\\n]+"
    line = re.escape(delim).join([field_] * nfields)
    return re.compile(f"{line}(?:\\n{line})*")


def _checked(table: pa.Table, wanted: dict, comments: bool) -> bool:
    """Whether no value is missing or empty, and no line is a comment."""
    if table.num_rows == 0 or any(table[c].null_count for c in wanted):
        return False
    for col, typ in wanted.items():
        if pa.types.is_string(typ) and pc.min(pc.binary_length(table[col])).as_py() == 0:
            return False
    return not (comments and pc.any(pc.starts_with(table["f0"], "#")).as_py())


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
