"""Atomic output: write to a temporary file beside the target, then rename it into place."""

from __future__ import annotations

import os
import sys
import tempfile


def atomic_write_text(path, text: str) -> None:
    """Write text to path (``-`` for stdout) so that no partial file is ever visible."""
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".trecqr-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_lines(path, lines) -> None:
    """Write an Arrow string array (or iterable of str) one per line, atomically."""
    if hasattr(lines, "to_pylist"):
        lines = lines.to_pylist()
    atomic_write_text(path, "".join(line + "\n" for line in lines))
