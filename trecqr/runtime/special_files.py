"""Inputs that are not regular files: a FIFO or pipe is read once, whole (a reader may open a
file twice: to sniff its format, then to read it), a stream is read with a size bound, and a
device that never ends (/dev/zero, /dev/urandom...) is refused before any work.

Layer 0: imports only :mod:`trecqr.errors`.
"""

from __future__ import annotations

import builtins
import io
import os
import select
import stat as st

from trecqr.errors import InputError

MAX_STREAM_BYTES = int(os.environ.get("TRECQR_MAX_STREAM_BYTES", str(2 << 30)))
FIFO_WAIT = float(os.environ.get("TRECQR_FIFO_WAIT", "60"))
# Linux memory devices that never end when read: /dev/zero, /dev/full, /dev/random, /dev/urandom
_ENDLESS = {(1, 5), (1, 7), (1, 8), (1, 9)}


def endless_device(path) -> bool:
    try:
        s = os.stat(path)
    except (OSError, ValueError, TypeError):
        return False
    return st.S_ISCHR(s.st_mode) and (os.major(s.st_rdev), os.minor(s.st_rdev)) in _ENDLESS


def refuse_endless_devices(args) -> None:
    """A command-line value naming /dev/zero, /dev/full, /dev/random or /dev/urandom is refused
    before any work: read, they never end (memory would grow until the process is killed)."""
    for a in args:
        value = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        if value.startswith("/dev/") or value.startswith("/proc/") or os.sep in value:
            if endless_device(value):
                raise InputError(value, None, "a device that never ends; give a file")


def open_input(name):
    """Open a file for reading (binary). A FIFO is read once, whole, and served from memory
    (see fifo_bytes); an endless device is refused."""
    s = os.stat(name)
    if st.S_ISCHR(s.st_mode) and (os.major(s.st_rdev), os.minor(s.st_rdev)) in _ENDLESS:
        raise InputError(os.fspath(name), None, "a device that never ends; give a file")
    if st.S_ISFIFO(s.st_mode):
        return io.BytesIO(fifo_bytes(name))
    return open(name, "rb")  # noqa: SIM115 - the caller closes it


_fifo_cache: dict = {}


def _anonymous_pipe(name) -> bool:
    try:
        return os.path.realpath(name).startswith("pipe:") or "pipe:[" in os.readlink(name)
    except (OSError, ValueError):
        return False


def fifo_bytes(name) -> bytes:
    """The whole content of a FIFO, read once per process (a reader that opens a file twice
    would otherwise wait forever on the second open). A named FIFO (mkfifo) waits at most
    FIFO_WAIT seconds (``TRECQR_FIFO_WAIT``) for a writer to send something or to close; an
    anonymous pipe (``<(cmd)``) always has its writer and waits as long as it takes. The size
    guard of read_bounded applies."""
    key = os.path.realpath(name)
    if key in _fifo_cache:
        return _fifo_cache[key]
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP)
        wait = -1 if _anonymous_pipe(name) else int(FIFO_WAIT * 1000)
        if not poller.poll(wait):
            raise InputError(os.fsdecode(name), None,
                             f"a FIFO with no writer after {FIFO_WAIT:g} s (TRECQR_FIFO_WAIT)")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = read_bounded(fh, os.fsdecode(name))
    finally:
        os.close(fd)
    _fifo_cache[key] = data
    return data


_real_open = None


def _fifo_aware_open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None,
                     closefd=True, opener=None):
    if isinstance(file, (str, bytes, os.PathLike)) and not any(c in mode for c in "wax+"):
        try:
            fifo = st.S_ISFIFO(os.stat(file).st_mode)
        except (OSError, ValueError, TypeError):
            fifo = False
        if fifo:
            buf = io.BytesIO(fifo_bytes(file))
            if "b" in mode:
                return buf
            return io.TextIOWrapper(buf, encoding=encoding or "utf-8", errors=errors,
                                    newline=newline)
    return _real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)


def read_fifos_once() -> None:
    """For the console script: a FIFO opened for reading is read once, whole, and every open
    of it (a reader may open a file twice: to sniff its format, then to read it) gets that
    content. Writing to a FIFO (``-o fifo``) is untouched."""
    global _real_open
    if _real_open is None:
        _real_open = builtins.open
        builtins.open = _fifo_aware_open
        io.open = _fifo_aware_open


def read_bounded(fh, name: str) -> bytes:
    """All bytes of fh. A regular file is read at once; a stream (stdin, a FIFO, a device) in
    1 MiB chunks, refused at its first chunk if it has NUL bytes (and is not gzip), and when it
    passes MAX_STREAM_BYTES (``TRECQR_MAX_STREAM_BYTES``, default 2 GiB)."""
    try:
        regular = st.S_ISREG(os.fstat(fh.fileno()).st_mode)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        regular = False
    if regular:
        return fh.read()
    parts, total = [], 0
    while True:
        chunk = fh.read(1 << 20)
        if not chunk:
            break
        if not parts and chunk[:2] != b"\x1f\x8b" and b"\x00" in chunk:
            raise InputError(name, None, "binary data (NUL bytes), not text")
        total += len(chunk)
        if total > MAX_STREAM_BYTES:
            raise InputError(name, None, f"more than {MAX_STREAM_BYTES} bytes from a stream "
                                         "(TRECQR_MAX_STREAM_BYTES)")
        parts.append(chunk)
    return b"".join(parts)

