"""The one line a failed command prints, and its exit status (:func:`failure_line`):

- bad input (:class:`~trecqr.errors.InputError`): ``file:line: what is wrong``, exit 2;
- bad options (:class:`~trecqr.errors.UsageError`) and other ``TrecqrError``: ``trecqr: ...``, 2;
- an operating-system error (unreadable file, full disk, closed stdout): ``trecqr: file: why``, 2;
- anything unexpected: ``trecqr: internal error: ...`` and how to report it, exit 2 (the
  traceback only when ``TRECQR_DEBUG=1``);
- Ctrl-C: ``trecqr: interrupted``, exit 130; SIGTERM / SIGHUP: ``trecqr: terminated (SIGTERM)``,
  exit 128 + the signal number.
"""

from __future__ import annotations

import os
import sys

from trecqr.errors import InputError, NoCommonTopicsError, TrecqrError, UsageError
from trecqr.runtime.extras import missing_extra_line
from trecqr.runtime.interrupts import Interrupted, received
from trecqr.runtime.memory import is_out_of_memory, out_of_memory_line

MAX_LINE = 2000  # an error line is cut here: a message quoting a binary line stays readable
HOW_TO_REPORT = "please report it with the command line and this message"


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
    return (f"trecqr: internal error: {type(exc).__name__}: {exc}{where} ({HOW_TO_REPORT}; "
            "TRECQR_DEBUG=1 prints the traceback)")


def debug() -> bool:
    """TRECQR_DEBUG is set: print the traceback of an unexpected error."""
    return os.environ.get("TRECQR_DEBUG", "") not in ("", "0")


def os_error_line(exc: OSError) -> str:
    name = exc.filename if exc.filename is not None else None
    why = exc.strerror or str(exc)
    if name is None:
        return f"trecqr: {why}"
    return f"trecqr: {os.fsdecode(name) if isinstance(name, bytes) else name}: {why}"


def _qid_style_hint(exc: NoCommonTopicsError) -> str:
    """When the run and the qrels name the same turns in two id styles: which, and the
    option that writes qrels (or topics) in the run's style."""
    from trecqr.datasets.turn_ids import same_turns, split_id  # the error path only

    found = same_turns(exc.run_ids, exc.qrels_ids)
    if found is None:
        return ""
    run_id, qrels_id = found
    style = split_id(run_id)[2]
    return (f"; they name the same turns in two id styles (run {run_id!r}, qrels "
            f"{qrels_id!r}): write the qrels in the run's style with --qid-style {style} "
            "(trecqr convert qrecc, topiocqa or irds; convert topics for topics)")


def failure_line(exc: BaseException) -> tuple[str, int]:
    """(the one line, exit status) for an exception that ends a command."""
    if isinstance(exc, Interrupted):
        return exc.line(), exc.exit_code
    if received:  # the signal's Interrupted was swallowed, and the command failed after it
        return failure_line(Interrupted(received[0]))
    if isinstance(exc, KeyboardInterrupt):
        return "trecqr: interrupted", 130
    if isinstance(exc, NoCommonTopicsError):
        return str(exc) + _qid_style_hint(exc), 2
    if isinstance(exc, InputError):
        return exc.cli or str(exc), 2  # the hint in the command line's words (errors.hinted)
    if isinstance(exc, (UsageError, TrecqrError)):
        return f"trecqr: {exc.cli or exc}", 2
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

