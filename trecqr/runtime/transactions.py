"""Output transactions: what a command has written so far (the files it created, the folders it
made), removed again if the command ends with an error or a signal, so a failed command leaves
nothing behind (:func:`output_transaction`, :func:`new_output_dir`).

Layer 0: imports only :mod:`trecqr.errors`, :mod:`trecqr.runtime.tempfiles` and
:mod:`trecqr.runtime.interrupts`.
"""

from __future__ import annotations

import contextlib
import os
import threading

from trecqr.errors import InputError
from trecqr.runtime.interrupts import signals_blocked
from trecqr.runtime.tempfiles import register_temp, remove_path, remove_temp, unregister_temp


class _Transaction:
    """What a command has written so far: files it created (removed again if it fails; a file
    it replaced keeps its new, whole content) and folders it made (removed if it fails)."""

    def __init__(self):
        self.created: list[str] = []
        self.new_dirs: list[str] = []
        self.at_end: list = []  # callables run when the command ends, either way

    def _run_at_end(self) -> None:
        fns, self.at_end = self.at_end, []
        for fn in fns:
            with contextlib.suppress(Exception):
                fn()

    def commit(self) -> None:
        for d in self.new_dirs:
            unregister_temp(d)
        self.created, self.new_dirs = [], []
        self._run_at_end()

    def rollback(self) -> None:
        for path in reversed(self.created):
            remove_path(path, False)
        for d in reversed(self.new_dirs):
            remove_temp(d)
        self.created, self.new_dirs = [], []
        self._run_at_end()


def at_command_end(fn) -> bool:
    """Run fn when the current command ends (success or failure); False outside a command."""
    tx = current_transaction()
    if tx is None:
        return False
    tx.at_end.append(fn)
    return True


def remove_new_empty_dirs(home, before: set, markers=()) -> None:
    """Remove the folders under home (and home) that are not in before and are empty, or hold
    only files named in markers (which, in a new folder, the command wrote), deepest first:
    what a library made on import or look-up and did not use."""
    home = os.fspath(home)
    if not os.path.isdir(home):
        return
    for dirpath, dirnames, filenames in os.walk(home, topdown=False):
        if dirpath in before:
            continue
        if filenames and set(filenames) <= set(markers):
            for name in filenames:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(dirpath, name))
        with contextlib.suppress(OSError):
            os.rmdir(dirpath)  # fails unless empty


def dirs_under(home) -> set:
    home = os.fspath(home)
    if not os.path.isdir(home):
        return set()
    return {dirpath for dirpath, _, _ in os.walk(home)}


_state = threading.local()


def current_transaction():
    return getattr(_state, "transaction", None)


@contextlib.contextmanager
def output_transaction():
    """Within: every file written atomically that did not exist before, and every folder made
    with new_output_dir, is removed again if the block ends with an error or a signal, so a
    failed command leaves nothing behind. Nested blocks join the outer one."""
    if current_transaction() is not None:
        yield current_transaction()
        return
    tx = _Transaction()
    _state.transaction = tx
    try:
        yield tx
        tx.commit()
    except BaseException:
        tx.rollback()
        raise
    finally:
        _state.transaction = None


def new_output_dir(path) -> str:
    """Make folder path (and missing parents) for a command's outputs; the folders made are
    removed again if the command fails. An existing folder is used as it is."""
    path = os.path.abspath(os.fspath(path))
    made = []
    p = path
    while not os.path.exists(p):
        made.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    tx = current_transaction()
    for d in reversed(made):
        try:
            with signals_blocked():
                os.mkdir(d)
                if tx is not None:
                    register_temp(d, folder=True)
        except FileExistsError:
            continue
        except OSError as exc:
            raise InputError(d, None, f"cannot create folder: {exc.strerror or exc}") from None
        if tx is not None:
            tx.new_dirs.append(d)
    if not os.path.isdir(path):
        raise InputError(path, None, "not a folder")
    return path

