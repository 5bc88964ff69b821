"""Hold points: named places where a process can be made to wait for a test.

A test that sends a signal "while the workers are at work" used to sleep and hope: on a fast
machine the command had ended before the signal, on a slow one the workers had not started.
Instead, the code calls ``hold("worker-started")`` at the known point, and a test that wants
the process held there sets ``TRECQR_HOLD_WORKER_STARTED`` to a folder holding two FIFOs
(:func:`make_hold_dir` makes them):

* ``held``: each process that reaches the point writes its pid and a newline there, and keeps
  the FIFO open (so the test's reader never sees an end of file while a process is held);
* ``release``: the process then waits until the test opens this FIFO for writing
  (:func:`release`), or until it is killed (the usual end in a signal test).

The test reads the pids from ``held`` (:func:`wait_held`): when it has as many as it expects,
every one of those processes is at the point, and none can go on until the test says so. No
timing is involved. With the variable unset (always, outside the tests) ``hold`` is one
dictionary look-up.
"""

from __future__ import annotations

import os
import select

_PREFIX = "TRECQR_HOLD_"
_kept: list = []  # the ``held`` ends written to, open for the rest of the process's life


def variable(name: str) -> str:
    """The environment variable that arms hold point ``name`` ("worker-started" ->
    TRECQR_HOLD_WORKER_STARTED)."""
    return _PREFIX + name.upper().replace("-", "_")


def hold(name: str) -> None:
    """Wait at hold point ``name`` if a test armed it (see the module's docstring)."""
    folder = os.environ.get(variable(name))
    if not folder:
        return
    fd = os.open(os.path.join(folder, "held"), os.O_WRONLY)
    _kept.append(fd)
    os.write(fd, f"{os.getpid()}\n".encode())
    # blocks until the test opens the other end (release) or the process is killed
    os.close(os.open(os.path.join(folder, "release"), os.O_RDONLY))


def make_hold_dir(folder) -> str:
    """Make the two FIFOs of a hold point in ``folder`` (which must exist); return the
    folder, the value to give the hold point's variable."""
    for fifo in ("held", "release"):
        os.mkfifo(os.path.join(folder, fifo))
    return os.fspath(folder)


class Held:
    """The test's end of a hold point: ``wait(n)`` returns the pids of the first n processes
    held there; ``release()`` lets every held process go on."""

    def __init__(self, folder):
        self.folder = os.fspath(folder)
        # non-blocking open: no process need be there yet; a writer end of our own keeps the
        # reads from seeing an end of file between two held processes
        self._read = os.open(os.path.join(self.folder, "held"), os.O_RDONLY | os.O_NONBLOCK)
        self._write = os.open(os.path.join(self.folder, "held"), os.O_WRONLY)
        self._buffer = b""
        self.pids: list = []
        self._release = None

    def wait(self, n: int, alive=lambda: True, limit: float = 300.0) -> list:
        """Block until n processes are held; ``alive()`` false (the command ended without
        reaching the point) or ``limit`` seconds without news fail the wait (a safety net
        against a hang, not a timing assumption)."""
        while len(self.pids) < n:
            ready, _, _ = select.select([self._read], [], [], 1.0)
            if not ready:
                if not alive():
                    raise AssertionError(f"the process ended with {len(self.pids)} of {n} "
                                         f"processes held")
                limit -= 1.0
                if limit <= 0:
                    raise AssertionError(f"{len(self.pids)} of {n} processes held")
                continue
            self._buffer += os.read(self._read, 4096)
            *lines, self._buffer = self._buffer.split(b"\n")
            self.pids.extend(int(line) for line in lines)
        return self.pids[:n]

    def release(self) -> None:
        """Let the held processes (and any that arrive while it runs) go on."""
        if self._release is None:  # read-write: opens at once, and stays a writer for
            # the processes that arrive later (their open for reading returns at once)
            self._release = os.open(os.path.join(self.folder, "release"), os.O_RDWR)

    def close(self) -> None:
        for fd in (self._read, self._write, self._release):
            try:
                os.close(fd)
            except (OSError, TypeError):
                pass


def worker_started(initializer=None, initargs=()) -> None:
    """A worker process's initializer (guard.worker_pool): hold point "worker-started", then
    the pool's own initializer."""
    hold("worker-started")
    if initializer is not None:
        initializer(*initargs)
