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
too small for numpy's import, it says so first (:func:`trecqr.runtime.memory.startup_problem`): OpenBLAS
would otherwise print its own message and exit 1.
"""

import gc
import importlib  # with importlib.util, sys and types: loaded already by Python's start-up
import importlib.util
import os
import sys
import types

import _signal  # the C module: ``signal`` builds its enums first, which takes a while
import _thread  # the C module: ``threading`` is not loaded yet

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
        _defer_pyarrow_compute()
        from trecqr.cli import entry as run

        run()  # ends the process itself (os._exit), unless its own error path fails
    except BaseException as exc:  # noqa: BLE001 - the last guard: one line, whatever happened
        _last_line(exc)


def _defer_pyarrow_compute() -> None:
    """Make ``pyarrow.compute`` load on its first use in this process, not on its import.

    Its import builds a Python function for each of Arrow's compute kernels (40-70 ms, more
    than the rest of a small run's scoring); a small run needs none of them (the string set
    operations of :mod:`trecqr.formats.arrays` take a dict below their size cut), and a
    larger one loads it where it first calls one. A one-shot import hook gives the first
    ``import pyarrow.compute`` a stand-in whose first attribute read imports the real module
    (``importlib.util.LazyLoader`` cannot: ``import`` reads ``__spec__``, which loads it), and
    nothing loads pyarrow here (``trecqr -h`` skips it). Only the console script defers it:
    its process is ours, an importer's is not."""
    if "pyarrow.compute" not in sys.modules:
        sys.meta_path.insert(0, _DeferredImport("pyarrow.compute"))


class _DeferredImport:
    """The import hook of :func:`_defer_pyarrow_compute`: finder and loader of the stand-in."""

    def __init__(self, name: str):
        self.name = name

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)  # once: the stand-in's first use imports the real module
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        lock = _thread.RLock()

        class Deferred(types.ModuleType):
            def __getattr__(self, attr):  # an attribute not here: the real module's
                if attr == "__path__":  # which import reads; the real module has none either
                    raise AttributeError(attr)
                with lock:
                    real = sys.modules.get(spec.name)
                    if real is self or real is None:  # first use: import it, and hold it
                        sys.modules.pop(spec.name, None)
                        real = importlib.import_module(spec.name)
                        self.__dict__.update(real.__dict__)
                return getattr(real, attr)

        return Deferred(spec.name)

    def exec_module(self, module) -> None:
        pass


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
