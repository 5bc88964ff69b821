"""Running the cases: each one a child forked from a parent that has imported trecqr (a case
costs its work, not Python's start-up), a few at a time; then judging each one (classify)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from .cases import Case, make_case, stamp


def preload() -> None:
    """Import trecqr and its command modules once, before forking a child per case (a case
    then costs its work, not Python's start-up). pandas too: pyarrow imports it at its first
    array (to check for pandas objects) where it is installed, about half a second a case.
    ir_datasets is left out: it reads HOME when imported, and each case has its own HOME."""
    os.environ["TRECQR_FIFO_WAIT"] = "2"
    import importlib

    import trecqr.cli  # noqa: F401

    for name in ("trecqr.report.compare", "trecqr.report.breakdown", "trecqr.report.plots",
                 "trecqr.report.diff", "trecqr.datasets.collapse", "trecqr.datasets.qrecc.files",
                 "trecqr.datasets.topiocqa", "trecqr.datasets.cast.topics",
                 "trecqr.datasets.topics", "trecqr.datasets.rewrites.topics",
                 "trecqr.datasets.sessions.logs", "trecqr.generative.gen",
                 "trecqr.generative.suggest", "trecqr.retrieval.commands",
                 "trecqr.workflows.cqr", "trecqr.retrieval.bm25", "trecqr.fusion",
                 "trecqr.datasets.ikat.topics", "trecqr.datasets.ikat.runs", "matplotlib.pyplot",
                 "pandas"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module being edited: the child imports it again
            pass


class _Running:
    def __init__(self, case, pid, out, err, helpers, deadline, signal_at):
        self.case, self.pid, self.out, self.err = case, pid, out, err
        self.helpers, self.deadline, self.signal_at = helpers, deadline, signal_at
        self.start = time.monotonic()


def _fork_writer(path_or_fd, data: bytes, seconds: float) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            signal.alarm(int(seconds) + 1)
            if isinstance(path_or_fd, int):
                fd = path_or_fd
            else:
                fd = os.open(path_or_fd, os.O_WRONLY)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
    return pid


def start_case(case: Case, scratch: Path, timeout: float) -> _Running:
    env = dict(os.environ)
    env["HOME"] = str(case.folder / "home")
    env.pop("IR_DATASETS_HOME", None)
    env.pop("TRECQR_DEBUG", None)
    env["TRECQR_FIFO_WAIT"] = "2"
    env["TMPDIR"] = str(case.folder / "tmp")
    out = scratch / f"{case.number}.out"
    err = scratch / f"{case.number}.err"
    helpers = []
    stdin_r = None
    if case.stdin_data is not None:
        stdin_r, stdin_w = os.pipe()
        helpers.append(_fork_writer(stdin_w, case.stdin_data, timeout))
        os.close(stdin_w)
    if case.fifo_data is not None:
        helpers.append(_fork_writer(str(case.fifo_data[0]), case.fifo_data[1], timeout))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: a fresh `trecqr ARGS` as far as it can tell
        try:
            os.setsid()
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
                signal.signal(s, signal.SIG_DFL)
            fd = os.open(os.devnull, os.O_RDONLY) if stdin_r is None else stdin_r
            os.dup2(fd, 0)
            if case.env_kind == "stdout_full":
                os.dup2(os.open("/dev/full", os.O_WRONLY), 1)
            else:
                os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
            os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
            if case.env_kind == "stdout_closed":
                os.close(1)
            os.closerange(3, 256)
            os.chdir(case.folder)
            os.environ.clear()
            os.environ.update(env)
            import tempfile

            tempfile.tempdir = None  # the parent's choice was made under its own TMPDIR
            sys.argv = ["trecqr"] + [os.fsdecode(a) if isinstance(a, bytes) else a
                                     for a in case.argv]
            import io

            sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
            sys.stdout = None if case.env_kind == "stdout_closed" else \
                io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True,
                                          errors="backslashreplace")
            from trecqr.cli import entry

            entry()
        except BaseException:  # noqa: BLE001
            import traceback

            traceback.print_exc()
        os._exit(99)
    if stdin_r is not None:
        os.close(stdin_r)
    signal_at = None
    if case.signal is not None:
        signal_at = time.monotonic() + case.signal[1]
    return _Running(case, pid, out, err, helpers,
                    time.monotonic() + timeout * getattr(case, "slow", 1), signal_at)


def _reap_helpers(helpers) -> None:
    for h in helpers:
        try:
            os.kill(h, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(h, 0)
        except OSError:
            pass


FLAGS = ("traceback", "internal", "exit", "multiline", "leftover", "hang", "empty")


def _blank(path: Path) -> bool:
    """A file (or folder) with no content but white space."""
    try:
        if path.is_dir():
            return all(_blank(p) for p in path.iterdir())
        with open(path, "rb") as fh:
            return not fh.read(1 << 20).strip()
    except OSError:
        return True


def verdict_on_stderr(sub: str) -> bool:
    """A validator's output is its verdict, on stderr (``validate ikat``): one line per problem
    it finds, or one line saying the file is valid."""
    return sub.split()[0] == "validate"


def classify(case: Case, res: dict) -> dict:
    """The defects of a finished case (an empty dict: clean)."""
    err = res["stderr"]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    code = res["code"]
    flags = {}
    if res["hang"]:
        flags["hang"] = True
    if "Traceback (most recent call last)" in err:
        flags["traceback"] = True
    if "internal error" in err:
        flags["internal"] = True
    allowed, done = {0, 2}, {0}  # done: statuses of a command that did its work
    if case.sub == "diff":
        allowed.add(1)  # the outputs differ: a report was written
        done.add(1)
    if case.env_kind in ("stdout_closed", "stdout_full"):
        allowed.add(1)
    if case.signal is not None:
        allowed.add(128 + case.signal[0])
    if not res["hang"] and code not in allowed:
        flags["exit"] = code
    usage = any(ln.startswith("Usage:") for ln in lines) and any(
        ln.startswith("Error:") for ln in lines)
    if code != 0 and len(lines) > 1 and not usage and not verdict_on_stderr(case.sub):
        flags["multiline"] = True
    left = [str(p.relative_to(case.folder)) for p in case.folder.rglob("*")
            if os.fsdecode(p.name).startswith(".trecqr-")]
    left += [f"$TMPDIR/{os.fsdecode(p.name)}" for p in (case.folder / "tmp").iterdir()]
    output_names = {o.name for o in case.outputs}
    if code not in done:
        left += [o.name for o in case.outputs if o.exists() or o.is_symlink()]
        left += [os.fsdecode(p.name) for p in case.folder.iterdir() if p not in case.inputs
                 and p.name not in ("home", "tmp") and p.name not in output_names]
    if (case.folder / "home" / ".ir_datasets").exists():
        left.append("~/.ir_datasets")
    if left:
        flags["leftover"] = sorted(set(left))
    if code == 0 and not res["hang"] and not case.emptied and case.signal is None \
            and case.env_kind not in ("stdout_closed", "stdout_full") and not res["stdout"] \
            and not (verdict_on_stderr(case.sub) and lines):
        written = [o for o in case.outputs if o.exists()] + [
            p for p in case.folder.iterdir() if p not in case.inputs
            and p.name not in ("home", "tmp") and p.name not in output_names]
        written += [p for p, st in getattr(case, "stamps", {}).items()
                    if p.is_file() and stamp(p) != st]  # an input overwritten as an output
        if all(_blank(p) for p in written):
            flags["empty"] = sorted(p.name for p in written) or ["stdout"]
    return flags


def finish(r: _Running, status, hang: bool) -> tuple:
    """(case, flags, result) of a child that ended (status None: killed as a hang)."""
    _reap_helpers(r.helpers)
    code = os.waitstatus_to_exitcode(status) if status is not None else -9
    if code < 0:
        code = 128 - code  # killed by a signal: as a shell reports it
    err = r.err.read_bytes().decode("utf-8", "replace") if r.err.exists() else ""
    out = r.out.read_bytes().strip() != b"" if r.out.exists() else False
    res = {"code": code, "stderr": err, "stdout": out, "hang": hang,
           "seconds": time.monotonic() - r.start}
    for f in (r.out, r.err):
        with contextlib.suppress(OSError):
            f.unlink()
    return r.case, classify(r.case, res), res


def stop_all(running) -> None:
    for r in running:
        with contextlib.suppress(OSError):
            os.killpg(r.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(r.pid, 0)
        _reap_helpers(r.helpers)


def run_all(specs, running, jobs, base_dir, sources, only, scratch, timeout, done, picker):
    while specs or running:
        while specs and len(running) < jobs:
            i, r = specs.pop(0)
            case = make_case(r, i, base_dir, sources, only, picker)
            running.append(start_case(case, scratch, timeout))
        time.sleep(0.01)
        now = time.monotonic()
        for r in list(running):
            pid, status = os.waitpid(r.pid, os.WNOHANG)
            if pid:
                running.remove(r)
                done(*finish(r, status, False))
                continue
            if r.signal_at is not None and now >= r.signal_at:
                with contextlib.suppress(OSError):
                    os.kill(r.pid, r.case.signal[0])
                r.signal_at = None
            if now >= r.deadline:
                with contextlib.suppress(OSError):
                    os.killpg(r.pid, signal.SIGKILL)
                _, status = os.waitpid(r.pid, 0)
                running.remove(r)
                done(*finish(r, None, True))
