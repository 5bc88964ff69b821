"""Temporary files and folders a command is writing, registered so that a signal or a failure
removes them: every file written through :mod:`trecqr.formats.writer` is a registered temporary
file renamed into place when whole.

Layer 0: imports nothing of trecqr, so every module may use it.
"""

from __future__ import annotations

import os
import shutil
import threading

_temps: dict[str, bool] = {}  # path -> is a folder; removed on a signal and on failure
_lock = threading.RLock()


def remove_path(path: str, folder: bool) -> None:
    """Remove a file or (folder) a folder tree, if it is there."""
    try:
        if folder:
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def register_temp(path, folder: bool = False) -> None:
    with _lock:
        _temps[os.fspath(path)] = folder


def unregister_temp(path) -> None:
    with _lock:
        _temps.pop(os.fspath(path), None)


def remove_temp(path) -> None:
    """Remove a registered temporary file or folder (if still there) and forget it."""
    path = os.fspath(path)
    with _lock:
        folder = _temps.pop(path, None)
    if folder is None:
        folder = os.path.isdir(path) and not os.path.islink(path)
    remove_path(path, folder)


def remove_all_temps() -> None:
    with _lock:
        items = list(_temps.items())
        _temps.clear()
    for path, folder in items:
        remove_path(path, folder)

