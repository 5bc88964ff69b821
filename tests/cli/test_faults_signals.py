"""Signals, interrupts and internal errors: SIGINT, SIGTERM and SIGHUP during eval and index,
with and without worker processes (held at a hold point so that the signal lands mid-work),
signals swallowed by a library, a signal while the command line is imported; each leaves no
temporary file and a whole output or none. An unexpected exception is one line that says where
to report it; warnings given before a fatal error are not printed; multiprocessing's resource
tracker starts quiet.
"""

from __future__ import annotations

import io
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from fault_cases import Q, R, CMD, trecqr, nothing_left
from fault_cases import large_collection  # noqa: F401 (fixtures)
from trecqr.runtime.holdpoints import Held, make_hold_dir, variable


def test_unexpected_exception_is_one_line_with_where_to_report(monkeypatch):
    import trecqr.report.outputs as outputs
    from trecqr.cli.failures import HOW_TO_REPORT

    def boom(*a, **k):
        raise RuntimeError("boom")
    monkeypatch.setattr(outputs, "render", boom)
    monkeypatch.delenv("TRECQR_DEBUG", raising=False)
    res = run_cli(["eval", "-m", "map", Q, R])
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("trecqr: internal error: RuntimeError: boom at ")
    assert lines[0].endswith(" (please report it with the command line and this message; "
                             "TRECQR_DEBUG=1 prints the traceback)")
    assert HOW_TO_REPORT in lines[0] and "http" not in lines[0]  # no invented address
    monkeypatch.setenv("TRECQR_DEBUG", "1")
    res = run_cli(["eval", "-m", "map", Q, R])
    assert res.exit_code == 2
    assert "Traceback (most recent call last)" in res.stderr
    assert res.stderr.splitlines()[-1].startswith("trecqr: internal error: RuntimeError: boom")


def test_warnings_before_a_fatal_error_are_not_printed(tmp_path):
    # a topic that retrieves nothing warns; writing the run then fails: only the failure shows
    topics = tmp_path / "t.tsv"
    topics.write_text("1\tbreast cancer\n2\tzzzzqqqq\n")
    out = tmp_path / "missing" / "s.run"
    res = run_cli(["search", tmp_path / "nope", topics, "-o", out, "--quiet"])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    from trecqr.cli.lifecycle import run_guarded

    def job():
        import warnings

        warnings.warn("overflow encountered in cast")
        print("progress 50%", file=sys.stderr)
        raise __import__("trecqr").InputError("x.run", 3, "bad score")
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        run_guarded(job)
    assert exc.value.code == 2
    assert err.getvalue() == "x.run:3: bad score\n"

    def ok():
        import warnings

        warnings.warn("a fractional grade")
        print("progress 100%", file=sys.stderr)
        return 7
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_guarded(ok) == 7
    assert err.getvalue() == "progress 100%\ntrecqr: warning: a fractional grade\n"


@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_data import make

    return make(tmp_path_factory.mktemp("kill-data"), queries=200, depth=1000)


def test_signals_during_eval_leave_no_temp_and_a_whole_or_no_output(tmp_path, big_run):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import kill_eval

    run, qrels = big_run
    ref, took = kill_eval.reference(qrels, run, tmp_path)
    results = []
    for i, (frac, signum) in enumerate([(0.5, signal.SIGINT), (0.8, signal.SIGTERM),
                                        (0.95, signal.SIGHUP), (1.0, signal.SIGTERM),
                                        (0.9, signal.SIGINT), (0.7, signal.SIGHUP)]):
        results.append(kill_eval.one_try(qrels, run, tmp_path / f"t{i}", ref,
                                         0.3 + frac * took, signum, i % 2 == 0))
    assert all(r["ok"] for r in results), results
    for r in results:
        if r["code"] == 130:
            assert r["stderr"] == ["trecqr: interrupted"]
        elif r["code"] in (143, 129):
            assert r["stderr"] == [f"trecqr: terminated ({r['signal']})"]


def _wait_for_exit(pids, timeout: float = 60) -> None:
    """Block until each process has exited: its pidfd becomes readable when it does (an event,
    not a poll); the timeout is only the safety net of a hang, which the caller's check reports."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:  # gone already
            continue
        try:
            select.select([fd], [], [], timeout)
        finally:
            os.close(fd)


def _group(pgid: int) -> list:
    """The pids of the live processes in process group pgid (zombies aside)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                pids.append(int(entry))
    return pids


def _ignores(pid: int, signum: int) -> bool:
    """Whether process pid ignores signum (SigIgn in /proc/PID/status)."""
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return False
    mask = int(status.split("SigIgn:")[1].split()[0], 16)
    return bool(mask >> (signum - 1) & 1)


def _hangup_default() -> None:
    """In the child before trecqr starts: SIGHUP back to its default. A suite run under nohup
    (or any parent that ignores SIGHUP) passes the ignored SIGHUP on, and trecqr keeps an
    ignored SIGHUP ignored, as nohup asks (trecqr.cli.lifecycle): the SIGHUP cases then
    test nothing but nohup."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _interrupt_workers(args, signum, to_group: bool, hold_dir: Path, workers: int = 2) -> None:
    """Start trecqr with args, its worker processes held at hold point "worker-started"
    (trecqr.runtime.holdpoints), and send signum once all `workers` are held there (to the process
    group, as a terminal's Ctrl-C, or to trecqr alone): the command cannot have ended, nor be
    between two states, whatever the machine's speed. Check: one line, exit 128 + signal, and
    no process of the group left."""
    held = Held(make_hold_dir(hold_dir))
    parent_dir = hold_dir / "parent"  # the parent's hold point, inside the workers' folder
    parent_dir.mkdir()
    parent = Held(make_hold_dir(parent_dir))
    env = dict(os.environ, **{variable("worker-started"): str(hold_dir),
                              variable("pool-started"): str(parent_dir)})
    env.pop("TRECQR_DEBUG", None)
    proc = subprocess.Popen(CMD + [str(a) for a in args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, env=env,
                            preexec_fn=_hangup_default)
    try:
        pids = held.wait(workers, alive=lambda: proc.poll() is None)
        assert all(pid in _group(proc.pid) for pid in pids)
        # trecqr ignores the signals while it starts its workers (so that they ignore them
        # for good); held at "pool-started", it handles them again and cannot end
        assert parent.wait(1, alive=lambda: proc.poll() is None) == [proc.pid]
        assert not _ignores(proc.pid, signum)
        if to_group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        held.close()
        parent.close()
    name = "interrupted" if signum == signal.SIGINT else \
        f"terminated ({signal.Signals(signum).name})"
    assert (proc.returncode, err.decode().splitlines()) == (128 + signum, [f"trecqr: {name}"])
    _wait_for_exit(_group(proc.pid))  # the forkserver and the tracker see trecqr's end, then leave
    assert _group(proc.pid) == []


SIGNAL_CASES = [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGHUP, True)]


RUN_COPIES = 4  # with the workers held, the amount of work does not matter


@pytest.mark.parametrize("signum,to_group", SIGNAL_CASES)
def test_signal_during_eval_with_worker_processes(tmp_path, big_run, signum, to_group):
    """Ctrl-C in a terminal reaches the whole process group: the worker processes of -j 2,
    multiprocessing's forkserver and resource tracker too. One line, exit 128 + signal, no
    output, and no process of the group left (SIGTERM sent to trecqr alone ends its workers)."""
    run, qrels = big_run
    runs = []
    for i in range(RUN_COPIES):
        runs.append(tmp_path / f"r{i}.run")
        os.symlink(run, runs[-1])
    (tmp_path / "hold").mkdir()
    _interrupt_workers(["eval", "-j", "2", "-q", "-m", "all_trec", "-o", tmp_path / "out.txt",
                        qrels, *runs], signum, to_group, tmp_path / "hold")
    shutil.rmtree(tmp_path / "hold")
    nothing_left(tmp_path, keep={f"r{i}.run" for i in range(RUN_COPIES)})


@pytest.mark.parametrize("signum,to_group", SIGNAL_CASES)
def test_signal_during_index_with_worker_processes(tmp_path, large_collection, signum,
                                                   to_group):
    """The bm25s index's tokenising workers, held at their start: one line, 128 + signal, no
    process and no index left (guard.worker_pool also closes the result pipe, so a worker
    killed while it sends its batch back cannot leave trecqr waiting for the rest)."""
    (tmp_path / "hold").mkdir()
    _interrupt_workers(["index", large_collection, "-o", tmp_path / "idx", "--quiet",
                        "--threads", "2"], signum, to_group, tmp_path / "hold")
    shutil.rmtree(tmp_path / "hold")
    nothing_left(tmp_path)


def test_held_workers_go_on_when_released(tmp_path, big_run):
    """The hold point itself: eval -j 2 waits while its workers are held (both at the point
    at once), and once released writes the output of an eval without workers."""
    run, qrels = big_run
    runs = [tmp_path / "a.run", tmp_path / "b.run"]
    for r in runs:
        os.symlink(run, r)
    want = trecqr(["eval", "-q", "-m", "map", qrels, *runs]).stdout
    (tmp_path / "hold").mkdir()
    held = Held(make_hold_dir(tmp_path / "hold"))
    env = dict(os.environ, **{variable("worker-started"): str(tmp_path / "hold")})
    proc = subprocess.Popen(CMD + ["eval", "-j", "2", "-q", "-m", "map", str(qrels),
                                   *map(str, runs)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        pids = held.wait(2, alive=lambda: proc.poll() is None)
        assert len(set(pids)) == 2 and proc.pid not in pids and proc.poll() is None
        held.release()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        held.close()
    assert proc.returncode == 0, err
    assert out == want and want.count(b"\tall\t") == 2


@pytest.mark.parametrize("then", ["fails", "succeeds"])
def test_signal_swallowed_by_a_library_still_ends_the_command(tmp_path, then):
    """A bare ``except:`` in a library (pandas' import, fuzz seed 24) swallowed the signal's
    exception: the command went on and ended as an internal error. It ends as interrupted,
    and an output it wrote meanwhile is removed."""
    out = tmp_path / "out.txt"
    code = f"""
import os, signal, sys
from trecqr.cli.lifecycle import install_signal_handlers, run_guarded
from trecqr.formats.writer import atomic_write_text
install_signal_handlers()
def work():
    atomic_write_text({str(out)!r}, "partial\\n")
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()  # the handler raises before this is reached
    except BaseException:
        pass
    if {then!r} == "fails":
        raise AttributeError("partially initialized module")
run_guarded(work)
print("not reached")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert (res.returncode, res.stderr, res.stdout) == (143, b"trecqr: terminated (SIGTERM)\n",
                                                         b"")
    nothing_left(tmp_path)


def test_signal_while_the_command_line_is_imported():
    """The console script's first handlers (trecqr.runtime.launch), before click and numpy are
    imported: one line and 128 + signal, not a traceback."""
    code = ("import os, signal, sys; sys.argv[0] = 'trecqr'; from trecqr.runtime import launch; "
            "launch._install(); os.kill(os.getpid(), signal.SIGTERM); signal.pause(); "
            "print('not reached')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert (res.returncode, res.stderr, res.stdout) == (143, b"trecqr: terminated (SIGTERM)\n",
                                                         b"")


def test_resource_tracker_is_started_quiet():
    """A pool's resource tracker runs with the -W option that silences its leaked-semaphore
    report (trecqr.runtime.workers.QUIET_TRACKER): after a signal, that report came as four more
    lines after trecqr's one. Checked on the tracker's own command line, in a fresh interpreter."""
    code = ("import multiprocessing.resource_tracker as rt\n"
            "from trecqr.runtime.workers import worker_pool\n"
            "with worker_pool(1) as pool:\n"
            "    pool.submit(int, '7').result()\n"
            "    pid = rt._resource_tracker._pid\n"
            "    print(open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ').decode())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "-Wignore:resource_tracker:UserWarning" in proc.stdout
    assert "resource_tracker" in proc.stdout.split("-c", 1)[1]  # it is the tracker's line
