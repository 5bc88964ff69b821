"""The standard streams of a command: stderr held while the work runs (printed after a success,
dropped after a failure, so a failure is always exactly one line), and closed standard streams
given /dev/null (:func:`fix_std_streams`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

HELD_STDERR_LIMIT = 1 << 20  # bytes of held stderr; past this it is let through


class HeldStream(io.TextIOBase):
    """Stands in for sys.stderr while a command works: text is kept until release() (then it is
    written, and later text goes straight through) or drop()."""

    def __init__(self, real):
        self.real = real
        self.parts: list[str] = []
        self.size = 0
        self.holding = True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        if not self.holding:
            return self.real.write(s)
        self.parts.append(s)
        self.size += len(s)
        if self.size > HELD_STDERR_LIMIT:
            self.release()
        return len(s)

    def flush(self):
        if not self.holding:
            with contextlib.suppress(Exception):
                self.real.flush()

    def isatty(self):
        return False

    def fileno(self):
        return self.real.fileno()

    @property
    def encoding(self):
        return getattr(self.real, "encoding", "utf-8")

    @property
    def buffer(self):  # bytes written through .buffer are text once decoded
        return _HeldBuffer(self)

    def release(self):
        self.holding = False
        parts, self.parts = self.parts, []
        with contextlib.suppress(Exception):
            self.real.write("".join(parts))
            self.real.flush()

    def drop(self):
        self.holding = False
        self.parts = []


class _HeldBuffer(io.RawIOBase):
    def __init__(self, stream):
        self.stream = stream

    def writable(self):
        return True

    def write(self, b):
        self.stream.write(bytes(b).decode("utf-8", "surrogateescape"))
        return len(b)


def isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:
        return False


def fix_std_streams() -> None:
    """A closed stdin, stdout or stderr (``>&-``) gets /dev/null on its descriptor, so no file
    the command opens takes descriptor 0, 1 or 2; writing to a closed stdout is then an error
    (one line, exit 2), not output silently lost or written into another file. A file name that
    is not UTF-8 is printed as the bytes it was given, as trec_eval prints it, whatever the
    locale (a UTF-8 locale's stdout would refuse its surrogates)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.reconfigure(errors="surrogateescape")
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            try:
                new = os.open(os.devnull, os.O_RDWR)
                if new != fd:
                    os.dup2(new, fd)
                    os.close(new)
            except OSError:
                continue
            if fd == 1:
                sys.stdout = _ClosedStdout()
            elif fd == 2:
                sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the whole process
            elif fd == 0:
                sys.stdin = open(os.devnull)  # noqa: SIM115


class _ClosedStdout(io.TextIOBase):
    def _closed(self, *a):
        raise OSError(9, "stdout is closed (>&-)", "<stdout>")

    write = _closed

    def writable(self):
        return True

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return 1

    @property
    def buffer(self):
        return self

    @property
    def encoding(self):
        return "utf-8"

