"""The process lifecycle of a command: the console script's entry (signal handlers, FIFOs read
once, endless devices refused, flush, exit status) and :func:`run_guarded`, the one error path
of every command's work (see :mod:`trecqr.cli.failures` for the lines and exit statuses), which
starts by checking the command's outputs (:func:`trecqr.cli.types.check_output_options`).

While the work runs, warnings are collected and stderr is held (when it is not a terminal): they
are printed after a success and dropped after a failure, so a failure is always exactly one line.
Every file written through :mod:`trecqr.formats.writer` is a temporary file renamed into place
when whole; a failure, an exception or a signal removes the temporary files, the files the
command created and the folders it made (:func:`trecqr.runtime.transactions.output_transaction`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
import warnings

import click

from trecqr.runtime import progress as reporting
from trecqr.errors import InputError, UsageError
from trecqr.runtime.interrupts import SIGNALS, Interrupted, on_signal, raise_if_interrupted
from trecqr.runtime.special_files import read_fifos_once, refuse_endless_devices
from trecqr.runtime.tempfiles import remove_all_temps
from trecqr.runtime.transactions import output_transaction
from trecqr.cli.failures import debug, echo_line, failure_line
from trecqr.cli.std_streams import HeldStream, fix_std_streams, isatty
from trecqr.cli.types import check_output_options


@contextlib.contextmanager
def signals_handled():
    """Within: SIGINT, SIGTERM and SIGHUP remove the temporary files and raise Interrupted."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {}
    for s in SIGNALS:
        try:
            current = signal.getsignal(s)
            if s != signal.SIGINT and current == signal.SIG_IGN:
                continue  # nohup: a SIGHUP the user asked to ignore stays ignored
            old[s] = current
            signal.signal(s, on_signal)
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
    for s in SIGNALS:
        try:
            if s != signal.SIGINT and signal.getsignal(s) == signal.SIG_IGN:
                continue
            signal.signal(s, on_signal)
        except (OSError, ValueError):
            pass


_depth = threading.local()


def run_guarded(fn):
    """Run fn (a command's work) on the one error path; returns its result."""
    if getattr(_depth, "n", 0) > 0:  # a nested call: the outer one guards
        return fn()
    _depth.n = 1
    real_err = sys.stderr
    held = None
    if real_err is not None and not isatty(real_err):
        held = HeldStream(real_err)
        sys.stderr = held
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught, signals_handled():
            warnings.simplefilter("always")
            with output_transaction():
                ctx = click.get_current_context(silent=True)
                if ctx is not None:
                    check_output_options(ctx)
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
        if debug() and not isinstance(exc, (InputError, UsageError, Interrupted,
                                             KeyboardInterrupt)):
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
        text = getattr(w.message, "cli", None) or str(w.message)  # the CLI's words, if any
        if text not in seen:
            seen.add(text)
            echo_line(f"trecqr: warning: {text}")


def quiet_notes() -> None:
    """--quiet: leave the notes out of stderr (the id-space warning, the measure-name notes),
    inside the command's warning capture (called from its work)."""
    from trecqr.engine.names import ignore_measure_notes  # lazy: numpy, for commands that score
    from trecqr.engine.idspace import ignore_id_space

    ignore_id_space()
    ignore_measure_notes()


def run_main(main) -> None:
    """Console script ``trecqr``: run the click command main, flush, and leave without tearing
    down the interpreter, which would free hundreds of MB of arrays one by one for nothing.
    Signals, closed standard streams and errors outside a command's work end on the one error
    path."""
    fix_std_streams()
    install_signal_handlers()
    read_fifos_once()
    reporting.install(reporting.StderrReporter())  # bars and info lines on stderr
    code = 0
    try:
        refuse_endless_devices(sys.argv[1:])
        main()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            echo_line(str(exc.code))
            code = 1
    except BaseException as exc:  # noqa: BLE001 - outside a command's work (start-up, options)
        remove_all_temps()
        line, code = failure_line(exc)
        if debug() and not isinstance(exc, (Interrupted, KeyboardInterrupt)):
            traceback.print_exc()
        if line:
            echo_line(line)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError) as exc:
        if code == 0:
            if not isinstance(exc, BrokenPipeError):
                reason = getattr(exc, 'strerror', None) or exc
                echo_line(f"trecqr: <stdout>: cannot write: {reason}")
            code = 1
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 1
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:  # what the interpreter's exit would do for worker pools: unlink
        try:                 # their semaphores (else the resource tracker reports them leaked)
            mp_util._run_finalizers(0)
        except Exception:  # noqa: BLE001 - leaving anyway
            pass
    os._exit(code)
