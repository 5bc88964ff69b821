"""Output paths, checked before a command's work: an output that cannot be written (an empty
name, a folder where a file goes, a parent folder that is missing, not a folder or read-only) is
refused at the start, in the words the write itself would use, so that an hour of retrieval or
a 98M-line run is not scored only to fail on a typo in ``-o``.

The writer (:mod:`trecqr.formats.writer`) resolves its target through :func:`output_file`, and
:func:`trecqr.runtime.transactions.new_output_dir` makes folders as :func:`check_output_folder`
expects; the write stays the last word, since the file system may change in between.

Layer 0: imports only :mod:`trecqr.errors` and :mod:`trecqr.runtime.interrupts`.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile

from trecqr.errors import InputError
from trecqr.runtime.interrupts import signals_blocked


def check_output_name(path, what: str = "file") -> None:
    """Refuse an empty output name before any work: os.path reads "" as the working folder, so
    a file would be written over it, or an index built into it."""
    if path is not None and os.fspath(path) == "":
        raise InputError("", None, f"cannot write: an empty {what} name; give the {what}'s path")


def output_file(path) -> str:
    """The file an output name writes: symlinks followed (the link's target is replaced, not the
    link). Refuses an empty name and a folder. A device or FIFO comes back as it is; the writer
    writes it directly."""
    check_output_name(path)
    real = os.path.realpath(os.fspath(path))
    if os.path.isdir(real):
        raise InputError(real, None, "cannot write: is a folder")
    return real


def _not_writable(folder: str) -> str | None:
    """Why no file can be made in folder (the error making one gives), or None. access(2) is
    asked first; when it says no (it can be wrong: NFS, some ACLs), a file is made and removed
    to be sure, so nothing writable is ever refused."""
    if os.access(folder, os.W_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids):
        return None  # the effective ids: the ones creating the file
    try:
        with signals_blocked():  # the probe never outlives a signal
            fd, probe = tempfile.mkstemp(prefix=".trecqr-", suffix=".tmp", dir=folder)
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check_output_file(path) -> None:
    """Refuse, before any work, a file output the writer could not write."""
    real = output_file(path)
    if os.path.exists(real) and not os.path.isfile(real):
        return  # /dev/null, a FIFO: written directly
    folder = os.path.dirname(real)
    try:
        mode = os.stat(folder).st_mode
    except OSError as exc:  # missing, or under a file
        raise InputError(real, None, f"cannot write: {exc.strerror or exc}") from None
    why = _not_writable(folder) if stat.S_ISDIR(mode) else os.strerror(errno.ENOTDIR)
    if why:
        raise InputError(real, None, f"cannot write: {why}")


def check_output_folder(path) -> None:
    """Refuse, before any work, a folder output that cannot be made or written into: the
    messages of :func:`~trecqr.runtime.transactions.new_output_dir` and of the writer."""
    check_output_name(path, "folder")
    path = os.path.abspath(os.fspath(path))
    if os.path.exists(path):
        if not os.path.isdir(path):
            raise InputError(path, None, "not a folder")
        why = _not_writable(path)
        if why:
            raise InputError(path, None, f"cannot write into this folder ({why})")
        return
    first = path  # the first folder new_output_dir would make
    while not os.path.exists(os.path.dirname(first)) and os.path.dirname(first) != first:
        first = os.path.dirname(first)
    parent = os.path.dirname(first)
    why = os.strerror(errno.ENOTDIR) if not os.path.isdir(parent) else _not_writable(parent)
    if why:
        raise InputError(first, None, f"cannot create folder: {why}")


def check_outputs(files=(), folders=()) -> None:
    """Check a command's outputs before its work: the folders, then the files (``-``, stdout,
    skipped). A file inside one of the folders, which the command makes first, is checked with
    its folder."""
    made = []
    for folder in folders:
        check_output_folder(folder)
        if not os.path.isdir(folder):
            made.append(os.path.abspath(os.fspath(folder)))
    for path in files:
        if str(path) == "-":
            continue
        parent = os.path.dirname(os.path.abspath(os.fspath(path)))
        if any(parent == d or parent.startswith(d + os.sep) for d in made):
            check_output_name(path)
            continue
        check_output_file(path)
