"""Signals as an exception: SIGINT, SIGTERM and SIGHUP become :class:`Interrupted` (after the
temporary files are removed), and :func:`signals_blocked` holds them for the few steps that
must not be cut in two (create-and-register, rename-and-forget, starting worker processes).

The command line installs :func:`on_signal` as the handler (trecqr.cli.lifecycle); libraries
only block signals around their critical steps.

Layer 0: imports only :mod:`trecqr.runtime.tempfiles`.
"""

from __future__ import annotations

import contextlib
import signal
import threading

from trecqr.runtime.tempfiles import remove_all_temps

SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
                            getattr(signal, "SIGHUP", None)) if s is not None)


class Interrupted(BaseException):
    """A SIGINT, SIGTERM or SIGHUP arrived; temporary files are already removed."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(signum)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    def line(self) -> str:
        if self.signum == getattr(signal, "SIGINT", 2):
            return "trecqr: interrupted"
        try:
            name = signal.Signals(self.signum).name
        except ValueError:
            name = f"signal {self.signum}"
        return f"trecqr: terminated ({name})"


_deferring = 0  # > 0 within signals_blocked (main thread only: Python runs handlers there)
_deferred: list = []  # the signals that arrived meanwhile
received: list = []  # the signals raised as Interrupted: a library may swallow the exception


@contextlib.contextmanager
def signals_blocked(children_ignore: bool = False):
    """Hold SIGINT/SIGTERM/SIGHUP for a few steps (create-and-register, rename-and-forget,
    starting worker processes), so a signal never falls between a temporary file's creation
    and its registration. A signal that arrives meanwhile is acted on when the block ends.

    children_ignore: the signals are also set to be ignored meanwhile, so the processes
    started within (worker processes, multiprocessing's forkserver and resource tracker)
    ignore them for good: a Ctrl-C sent to the terminal's process group then reaches this
    process only, which ends its workers itself. (A signal blocked here stays pending; one
    taken by another thread of this process in that short time is lost.)"""
    global _deferring
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    handlers = {}
    if children_ignore:
        for s in SIGNALS:
            current = signal.getsignal(s)
            if current is not None:
                handlers[s] = signal.signal(s, signal.SIG_IGN)
    _deferring += 1
    try:
        yield
    finally:
        for s, h in handlers.items():
            signal.signal(s, h)
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
        _deferring -= 1
        if not _deferring and _deferred:
            signum = _deferred[0]
            _deferred.clear()
            remove_all_temps()
            raise Interrupted(signum)


def on_signal(signum, frame):
    """The handler of SIGINT, SIGTERM and SIGHUP: remove the temporary files and raise
    Interrupted (or, within signals_blocked, act on the signal when the block ends)."""
    if _deferring:
        _deferred.append(signum)
        return
    received.append(signum)
    remove_all_temps()
    raise Interrupted(signum)


def raise_if_interrupted() -> None:
    """Raise Interrupted again if a signal's Interrupted was swallowed on its way out (a bare
    ``except:`` in a library's import), so that the command still ends as interrupted."""
    if received:
        raise Interrupted(received[0])

