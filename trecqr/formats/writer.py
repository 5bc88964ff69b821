"""Atomic output: write to a temporary file beside the target, then rename it into place.

A reader never sees a partial file, and when anything fails (bad input found late, a full
disk, Ctrl-C) the temporary file is removed and an existing target is left untouched.
The new file gets the mode an ordinary ``open(path, "w")`` would give it (the existing
file's mode, or 0666 minus the umask), not mkstemp's private 0600. A symlink is followed (its
target is replaced); a device or FIFO (``/dev/null``, ``/dev/stdout``) is written directly,
since renaming a file onto it would replace the device node itself.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError
from trecqr.formats.arrays import string_array
from trecqr.runtime.interrupts import signals_blocked
from trecqr.runtime.tempfiles import register_temp, remove_temp
from trecqr.runtime.output_paths import output_file
from trecqr.runtime.transactions import current_transaction


def _new_file_mode(path: str) -> int:
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def atomic_write_bytes(path, parts) -> None:
    """Write the byte strings (or buffers) in parts to path, ``-`` for stdout, atomically.

    Inside :func:`trecqr.runtime.transactions.output_transaction` (every command's work) a file
    that did not exist before is removed again if the command fails later."""
    if str(path) == "-":
        _write_stdout(parts)
        return
    path = output_file(path)  # through symlinks: replace the target, not the link
    if os.path.exists(path) and not os.path.isfile(path):
        _write_special(path, parts)  # /dev/null, a FIFO: renaming onto it would replace it
        return
    folder = os.path.dirname(path)
    try:
        with signals_blocked():  # a signal never falls between creation and registration
            fd, tmp = tempfile.mkstemp(prefix=".trecqr-", suffix=".tmp", dir=folder)
            register_temp(tmp)
    except OSError as exc:
        raise InputError(path, None, f"cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in parts:
                fh.write(part)
        os.chmod(tmp, _new_file_mode(path))
        tx = current_transaction()
        with signals_blocked():
            existed = os.path.lexists(path)
            os.replace(tmp, path)
            remove_temp(tmp)  # forgets it (already renamed)
            if tx is not None and not existed:
                tx.created.append(path)
    except BaseException as exc:
        remove_temp(tmp)
        if isinstance(exc, OSError):
            raise InputError(path, None, f"cannot write: {exc.strerror or exc}") from None
        raise


def _write_stdout(parts) -> None:
    try:
        out = getattr(sys.stdout, "buffer", None)
        sys.stdout.flush()
        for part in parts:
            if out is None:
                sys.stdout.write(bytes(part).decode("utf-8", "surrogateescape"))
            else:
                out.write(part)
        (out or sys.stdout).flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:  # >/dev/full, >&-
        why = getattr(exc, "strerror", None) or str(exc)
        raise InputError("<stdout>", None, f"cannot write: {why}") from None


def _write_special(path: str, parts) -> None:
    try:
        with open(path, "wb") as fh:
            for part in parts:
                fh.write(part)
    except OSError as exc:
        raise InputError(path, None, f"cannot write: {exc.strerror or exc}") from None


def atomic_write_text(path, text: str) -> None:
    """Write text (UTF-8, ``\\n`` line ends) to path, ``-`` for stdout, atomically."""
    if str(path) == "-":
        _write_stdout([text.encode("utf-8", "surrogateescape")])
        return
    atomic_write_bytes(path, [text.encode("utf-8", "surrogateescape")])


def _line_buffers(lines):
    """Each chunk of an Arrow string array as one buffer of ``value\\n`` lines."""
    chunks = lines.chunks if isinstance(lines, pa.ChunkedArray) else [lines]
    for chunk in chunks:
        if len(chunk):
            empty, newline = string_array(["", "\n"]).cast(chunk.type)  # scalars, no pandas
            yield from _text_buffers(pc.binary_join_element_wise(chunk, empty, newline))


def _text_buffers(strings):
    """The text of each chunk of an Arrow string array, back to back: its data buffer's bytes
    between the first and the last offset, no per-value copy."""
    chunks = strings.chunks if isinstance(strings, pa.ChunkedArray) else [strings]
    for chunk in chunks:
        if len(chunk) == 0:
            continue
        width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=width)[
            chunk.offset:chunk.offset + len(chunk) + 1]
        yield memoryview(chunk.buffers()[2])[int(offsets[0]):int(offsets[-1])]


_SPLITS = np.zeros(256, dtype=bool)
_SPLITS[[0, 9, 10, 11, 12, 13, 32]] = True  # NUL and C's isspace: where a reader cuts a field


def splits_field(text: str) -> bool:
    """Whether ``text`` cannot be one field of a TREC line: empty, or holding white space or
    NUL (a lone surrogate, as a non-UTF-8 command line gives, is neither)."""
    return not text or any(_SPLITS[b] for b in text.encode("utf-8", "surrogatepass"))


def refuse_split_fields(values, what: str, source: str) -> None:
    """Refuse ids a TREC line cannot hold as one field: empty, or holding white space or a
    NUL byte (trec_eval, and trecqr's readers, would read them as other fields or cut them),
    so that no file is written that reads back as something else. ``values``: an Arrow
    string column (its bytes checked in one numpy pass) or a str."""
    if isinstance(values, str):
        values = string_array([values])
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        if len(chunk) == 0:
            continue
        width = np.dtype(np.int64 if pa.types.is_large_string(chunk.type) else np.int32)
        offsets = np.frombuffer(chunk.buffers()[1], width, len(chunk) + 1,
                                chunk.offset * width.itemsize)  # a slice's: bytes, not items
        data = np.frombuffer(chunk.buffers()[2] or b"", np.uint8)[offsets[0]:offsets[-1]]
        if (data <= 32).any() and _SPLITS[data].any() or (np.diff(offsets) == 0).any():
            bad = next(v for v in chunk.to_pylist() if splits_field(v))
            raise InputError(source, None, f"{what} {bad!r} cannot be one field of a TREC "
                                           "line (it is empty, or holds white space or NUL)")


def atomic_write_fields(path, columns: list) -> None:
    """Write Arrow string columns as lines of space-separated fields, atomically. The newline
    goes on the last field first (a runid, a grade: short), so the long fields are joined once
    and the lines are written from Arrow's buffers as they are."""
    text = pa.string()
    if any(pa.types.is_large_string(c.type) for c in columns):  # past 2 GiB: one type for all
        text = pa.large_string()
        columns = [c.cast(text) for c in columns]
    empty, space, newline = string_array(["", " ", "\n"]).cast(text)  # scalars, no pandas
    last = pc.binary_join_element_wise(columns[-1], empty, newline)
    atomic_write_bytes(path, list(_text_buffers(
        pc.binary_join_element_wise(*columns[:-1], last, space))))


def atomic_write_lines(path, lines) -> None:
    """Write an Arrow string array (or an iterable of str) one value per line, atomically."""
    if isinstance(lines, (pa.Array, pa.ChunkedArray)):
        atomic_write_bytes(path, list(_line_buffers(lines)))
    else:
        atomic_write_text(path, "".join(line + "\n" for line in lines))
