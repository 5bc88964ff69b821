"""The one error path of every command, and signal-safe temporary files.

:func:`run_guarded` runs a command's work and turns every way it can end badly into one line on
stderr and an exit status:

- bad input (:class:`~trecqr.errors.InputError`): ``file:line: what is wrong``, exit 2;
- bad options (:class:`~trecqr.errors.UsageError`) and other ``TrecqrError``: ``trecqr: ...``, 2;
- an operating-system error (unreadable file, full disk, closed stdout): ``trecqr: file: why``, 2;
- anything unexpected: ``trecqr: internal error: ...`` with where to report it, exit 2 (the
  traceback only when ``TRECQR_DEBUG=1``);
- Ctrl-C: ``trecqr: interrupted``, exit 130; SIGTERM / SIGHUP: ``trecqr: terminated (SIGTERM)``,
  exit 128 + the signal number.

While the work runs, warnings are collected and stderr is held (when it is not a terminal): they
are printed after a success and dropped after a failure, so a failure is always exactly one line.
Every file written through :mod:`trecqr.formats.writer` is a temporary file renamed into place
when whole; a failure, an exception or a signal removes the temporary files, the files the
command created and the folders it made (:func:`output_transaction`, :func:`new_output_dir`).

Layer: this module imports only :mod:`trecqr.errors` (and click, lazily), so every other module
may use it.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import sys
import threading
import warnings

from .errors import InputError, TrecqrError, UsageError
from .extras import missing_extra_line
from .holdpoints import worker_started
from .memory import is_out_of_memory, out_of_memory_line

REPORT_URL = "https://github.com/trecqr/trecqr/issues"
MAX_LINE = 2000  # an error line is cut here: a message quoting a binary line stays readable
HELD_STDERR_LIMIT = 1 << 20  # bytes of held stderr; past this it is let through

_SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None),
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


# ------------------------------------------------------------------ temporary files and folders
_temps: dict[str, bool] = {}  # path -> is a folder; removed on a signal and on failure
_lock = threading.RLock()


def _remove(path: str, folder: bool) -> None:
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
    _remove(path, folder)


def remove_all_temps() -> None:
    with _lock:
        items = list(_temps.items())
        _temps.clear()
    for path, folder in items:
        _remove(path, folder)


_deferring = 0  # > 0 within signals_blocked (main thread only: Python runs handlers there)
_deferred: list = []  # the signals that arrived meanwhile


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
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    handlers = {}
    if children_ignore:
        for s in _SIGNALS:
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


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where there is one): the default
    number of worker processes and threads."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def worker_pool(workers: int, preload=(), initializer=None, initargs=()):
    """A ``ProcessPoolExecutor`` of ``workers`` processes forked from multiprocessing's
    forkserver (which imports ``preload`` once; spawn where there is no forkserver).

    The forkserver, the resource tracker and so every worker start ignoring SIGINT, SIGTERM
    and SIGHUP (signals_blocked(children_ignore=True)): a Ctrl-C sent to the terminal's
    process group is this process's to handle, and nothing of theirs is printed. If the block
    ends with an exception (a signal's Interrupted included), the workers are killed (SIGKILL:
    they ignore SIGTERM) before the pool is shut down. All workers are started at once."""
    import gc
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(list(preload))
    except ValueError:
        ctx = mp.get_context("spawn")
    pool = None
    try:
        with signals_blocked(children_ignore=True):
            pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=worker_started,
                                       initargs=(initializer, initargs))
            # every worker started now, within the block, not at a later task: a signal then
            # never falls between a worker's start and its registration in the pool
            launch = getattr(pool, "_launch_processes", None) or getattr(
                pool, "_adjust_process_count", None)
            if launch is not None:
                launch()
            elif ctx.get_start_method() == "forkserver":
                from multiprocessing import forkserver

                forkserver.ensure_running()
        yield pool
    except BaseException:
        with signals_blocked():  # the clean-up is not cut short by a second signal
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    proc.kill()
            # a worker killed while sending its result leaves half a message: with this end
            # of the result pipe closed too, the pool's manager thread reads EOF there instead
            # of waiting forever for the rest (and shutdown() would wait for that thread)
            with contextlib.suppress(Exception):
                pool._result_queue._writer.close()
        raise
    finally:
        if pool is not None:
            with signals_blocked():
                pool.shutdown(wait=True, cancel_futures=True)
                del pool
                gc.collect()  # its queues' semaphores are unlinked now, not at exit


_received: list = []  # the signals raised as Interrupted: a library may swallow the exception


def _on_signal(signum, frame):
    if _deferring:
        _deferred.append(signum)
        return
    _received.append(signum)
    remove_all_temps()
    raise Interrupted(signum)


def raise_if_interrupted() -> None:
    """Raise Interrupted again if a signal's Interrupted was swallowed on its way out (a bare
    ``except:`` in a library's import), so that the command still ends as interrupted."""
    if _received:
        raise Interrupted(_received[0])


@contextlib.contextmanager
def signals_handled():
    """Within: SIGINT, SIGTERM and SIGHUP remove the temporary files and raise Interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for s in _SIGNALS:
        try:
            current = signal.getsignal(s)
            if s != signal.SIGINT and current == signal.SIG_IGN:
                continue  # nohup: a SIGHUP the user asked to ignore stays ignored
            old[s] = current
            signal.signal(s, _on_signal)
        except (OSError, ValueError):
            pass
    try:
        yield
    finally:
        for s, h in old.items():
            try:
                signal.signal(s, h)
            except (OSError, ValueError):
                pass


def install_signal_handlers() -> None:
    """For the console script: the whole process handles the signals (no restore)."""
    for s in _SIGNALS:
        try:
            if s != signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN:
                continue
            signal.signal(s, _on_signal)
        except (OSError, ValueError):
            pass


# ------------------------------------------------------------------ output transaction
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
            _remove(path, False)
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


# ------------------------------------------------------------------ held stderr
class _HeldStream(io.TextIOBase):
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


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except Exception:
        return False


# ------------------------------------------------------------------ one line out
def _clean(message: str) -> str:
    text = " ".join(str(message).split())
    if len(text) > MAX_LINE:
        text = text[:MAX_LINE] + " ..."
    return text


def echo_line(message: str) -> None:
    """Write message as one line on stderr; a file name that is not UTF-8 comes out as the
    bytes it was given (as trec_eval prints it)."""
    text = _clean(message) + "\n"
    err = sys.stderr
    if err is None:
        return
    try:
        buf = getattr(err, "buffer", None)
        if buf is not None:
            err.flush()
            buf.write(text.encode("utf-8", "surrogateescape"))
            buf.flush()
        else:
            err.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            err.flush()
    except (OSError, ValueError, UnicodeError):
        pass


def internal_error_line(exc: BaseException) -> str:
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.find("trecqr") >= 0:
            code = tb.tb_frame.f_code
            where = f" at {os.path.basename(code.co_filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return (f"trecqr: internal error: {type(exc).__name__}: {exc}{where} (please report it at "
            f"{REPORT_URL} with the command; TRECQR_DEBUG=1 prints the traceback)")


def _debug() -> bool:
    return os.environ.get("TRECQR_DEBUG", "") not in ("", "0")


def os_error_line(exc: OSError) -> str:
    name = exc.filename if exc.filename is not None else None
    why = exc.strerror or str(exc)
    if name is None:
        return f"trecqr: {why}"
    return f"trecqr: {os.fsdecode(name) if isinstance(name, bytes) else name}: {why}"


def failure_line(exc: BaseException) -> tuple[str, int]:
    """(the one line, exit status) for an exception that ends a command."""
    if isinstance(exc, Interrupted):
        return exc.line(), exc.exit_code
    if _received:  # the signal's Interrupted was swallowed, and the command failed after it
        return failure_line(Interrupted(_received[0]))
    if isinstance(exc, KeyboardInterrupt):
        return "trecqr: interrupted", 130
    if isinstance(exc, InputError):
        return str(exc), 2
    if isinstance(exc, (UsageError, TrecqrError)):
        return f"trecqr: {exc}", 2
    if is_out_of_memory(exc):  # MemoryError, a thread's stack that could not be mapped
        return out_of_memory_line(), 2
    if isinstance(exc, BrokenPipeError):
        return "", 1  # the reader went away (| head): nothing to say, nobody to say it to
    if isinstance(exc, EOFError):  # gzip's reader on a truncated stream, read lazily
        return f"trecqr: unexpected end of a compressed input ({exc})", 2
    if isinstance(exc, RecursionError):
        return "trecqr: input nested too deeply", 2
    if isinstance(exc, OSError):
        return os_error_line(exc), 2
    if (extra_line := missing_extra_line(exc, sys.argv)) is not None:
        return extra_line, 2
    return internal_error_line(exc), 2


_depth = threading.local()


def run_guarded(fn):
    """Run fn (a command's work) on the one error path; returns its result."""
    import click

    if getattr(_depth, "n", 0) > 0:  # a nested call: the outer one guards
        return fn()
    _depth.n = 1
    real_err = sys.stderr
    held = None
    if real_err is not None and not _isatty(real_err):
        held = _HeldStream(real_err)
        sys.stderr = held
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught, signals_handled():
            warnings.simplefilter("always")
            with output_transaction():
                result = fn()
                raise_if_interrupted()
    except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort,
            SystemExit) as exc:
        if held is not None:
            sys.stderr = real_err
            if isinstance(exc, click.exceptions.ClickException):
                held.drop()  # click prints its usage error next
            else:
                held.release()
        _depth.n = 0
        raise
    except BaseException as exc:  # noqa: BLE001 - the one error path
        if held is not None:
            sys.stderr = real_err
            held.drop()
        _depth.n = 0
        line, code = failure_line(exc)
        if _debug() and not isinstance(exc, (InputError, UsageError, Interrupted,
                                             KeyboardInterrupt)):
            import traceback

            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        if line:
            echo_line(line)
        sys.exit(code)
    if held is not None:
        sys.stderr = real_err
        held.release()
    _depth.n = 0
    _flush_warnings(caught)
    return result


def _flush_warnings(caught) -> None:
    seen = set()
    for w in caught or ():
        text = str(w.message)
        if text not in seen:
            seen.add(text)
            echo_line(f"trecqr: warning: {text}")


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


# ------------------------------------------------------------------ hostile inputs
MAX_STREAM_BYTES = int(os.environ.get("TRECQR_MAX_STREAM_BYTES", str(2 << 30)))
FIFO_WAIT = float(os.environ.get("TRECQR_FIFO_WAIT", "60"))
# Linux memory devices that never end when read: /dev/zero, /dev/full, /dev/random, /dev/urandom
_ENDLESS = {(1, 5), (1, 7), (1, 8), (1, 9)}


def endless_device(path) -> bool:
    import stat as st

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
    import stat as st

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
    import select

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
        import stat as st

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
    import builtins

    if _real_open is None:
        _real_open = builtins.open
        builtins.open = _fifo_aware_open
        io.open = _fifo_aware_open


def read_bounded(fh, name: str) -> bytes:
    """All bytes of fh. A regular file is read at once; a stream (stdin, a FIFO, a device) in
    1 MiB chunks, refused at its first chunk if it has NUL bytes (and is not gzip), and when it
    passes MAX_STREAM_BYTES (``TRECQR_MAX_STREAM_BYTES``, default 2 GiB)."""
    import stat as st

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

