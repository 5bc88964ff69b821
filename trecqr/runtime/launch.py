"""The ``trecqr`` console script: signal handlers first, then the command line.

Importing the command line (click, then numpy and pyarrow for the command) takes a tenth of a
second or more; a Ctrl-C, SIGTERM or SIGHUP in that time would otherwise print a Python
traceback. Until :func:`trecqr.cli.entry` installs the real handlers (which also remove
temporary files), these say the one line a command would say and exit with 128 + the signal:
nothing has been opened or written yet. Only the interpreter's own start-up, before this
module's first line, is outside their reach.

Memory can run out anywhere, the error path included (a ``MemoryError`` while the command line
explains the first one). :func:`entry` is the last guard: whatever escapes, one line on stderr
and exit 2, written from bytes made before anything could fail. Under an address-space limit
too small for numpy's import, it says so first (:func:`trecqr.runtime.memory.startup_problem`):
OpenBLAS would otherwise print its own message and exit 1.
"""

import gc
import os

import _signal  # the C module: ``signal`` builds its enums first, which takes a while

_LINES = {}
_OUT_OF_MEMORY = b"trecqr: out of memory\n"
_INTERNAL = b"trecqr: internal error: "


def _early_exit(signum, frame):  # one write, then _exit
    try:
        os.write(2, _LINES[signum])
    except (OSError, KeyError):
        pass
    os._exit(128 + signum)


def _install() -> None:
    for name in ("SIGINT", "SIGTERM", "SIGHUP"):
        s = getattr(_signal, name, None)
        if s is None:
            continue
        _LINES[s] = (b"trecqr: interrupted\n" if name == "SIGINT" else
                     b"trecqr: terminated (%s)\n" % name.encode())
        try:
            if name != "SIGINT" and _signal.getsignal(s) == _signal.SIG_IGN:
                continue  # nohup: an ignored SIGHUP stays ignored
            _signal.signal(s, _early_exit)
        except (OSError, ValueError):
            pass


def entry() -> None:
    """Console script ``trecqr``."""
    _install()
    # the imports and a file's lists allocate containers by the ten thousand: at Python's
    # threshold (700) a small eval ran 62 collections, 11-30 ms of its 250; every cycle is
    # still collected, 100,000 allocations apart
    gc.set_threshold(100_000, 10, 10)
    try:
        # lazy: ctypes and resource take 10-40 ms, which would come before the handlers above
        from trecqr.runtime.memory import fit_process, startup_problem

        fit_process()  # under a memory cap: before numpy and pyarrow reserve their share
        problem = startup_problem()
        if problem is not None:
            os.write(2, problem.encode() + b"\n")
            os._exit(2)
        from trecqr.cli import entry as run

        run()  # ends the process itself (os._exit), unless its own error path fails
    except BaseException as exc:  # noqa: BLE001 - the last guard: one line, whatever happened
        _last_line(exc)


def _last_line(exc: BaseException) -> None:
    """Say the failure in one line and exit 2, without tracebacks; when even composing the
    line fails (memory), the line made at import."""
    try:
        from trecqr.cli.failures import failure_line

        line, code = failure_line(exc)
        data = line.encode("utf-8", "surrogateescape") + b"\n" if line else b""
    except BaseException:  # noqa: BLE001 - out of memory again, most likely
        code = 2
        data = _OUT_OF_MEMORY if isinstance(exc, MemoryError) else (
            _INTERNAL + type(exc).__name__.encode("ascii", "replace") + b"\n")
    try:
        os.write(2, data)
    except OSError:
        pass
    os._exit(code)


if __name__ == "__main__":
    entry()
