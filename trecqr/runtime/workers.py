"""Worker processes: how many CPUs this process may use, and a process pool whose workers leave
signals to this process and are killed if the work ends with an exception.

Layer 0: imports only :mod:`trecqr.runtime.interrupts`.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import sys

from trecqr.runtime.holdpoints import hold, worker_started
from trecqr.runtime.interrupts import signals_blocked

# The resource tracker (multiprocessing's process that unlinks a pool's semaphores) is started
# with this process's -W options. A signal that ends trecqr while a pool's queues still hold
# their semaphores makes the tracker unlink them itself and say so in a UserWarning of four
# lines ("resource_tracker: There appear to be 1 leaked semaphore objects..."), after
# trecqr's own one-line message: the clean-up is done either way, so the tracker keeps quiet.
QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def usable_cpus() -> int:
    """The CPUs this process may use: its affinity mask where there is one, no more than its
    cgroup's CPU quota (``cpu.max``, as Docker's ``--cpus`` and Kubernetes' CPU limits set
    it; rounded up). The default number of worker processes and threads."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    quota = cpu_quota()
    return cpus if quota is None else max(1, min(cpus, math.ceil(quota)))


def cpu_quota(proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup"):
    """CPUs' worth of time this process's cgroup may use per period (v2 ``cpu.max``, v1
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``), the tightest on the way up to the root;
    None when no cgroup sets one."""
    try:
        with open(proc_cgroup, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    best = None
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":
            base, files = root, ("cpu.max",)
        elif "cpu" in controllers.split(","):
            base, files = f"{root}/{controllers}", ("cpu.cfs_quota_us", "cpu.cfs_period_us")
        else:
            continue
        while path:
            share = _quota_share(f"{base}{path.rstrip('/')}", files)
            if share is not None:
                best = share if best is None else min(best, share)
            path = "" if path == "/" else os.path.dirname(path.rstrip("/"))
    return best


def _quota_share(folder: str, files: tuple):
    """quota / period of one cgroup folder; None without a quota ("max", -1, no file)."""
    words = []
    try:
        for name in files:
            with open(f"{folder}/{name}", encoding="ascii") as fh:
                words += fh.read().split()
    except OSError:
        return None
    if len(words) != 2 or not all(w.isdigit() for w in words) or int(words[1]) == 0:
        return None
    return int(words[0]) / int(words[1])


@contextlib.contextmanager
def worker_pool(workers: int, preload=(), initializer=None, initargs=()):
    """A ``ProcessPoolExecutor`` of ``workers`` processes forked from multiprocessing's
    forkserver (which imports ``preload`` once; spawn where there is no forkserver).

    The forkserver, the resource tracker and so every worker start ignoring SIGINT, SIGTERM
    and SIGHUP (signals_blocked(children_ignore=True)): a Ctrl-C sent to the terminal's
    process group is this process's to handle, and nothing of theirs is printed. If the block
    ends with an exception (a signal's Interrupted included), the workers are killed (SIGKILL:
    they ignore SIGTERM) before the pool is shut down. All workers are started at once."""
    import multiprocessing as mp  # lazy (tests/test_imports.py): one run's eval starts no pool
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import forkserver

    if QUIET_TRACKER not in sys.warnoptions:  # before the tracker starts (with the pool)
        sys.warnoptions.append(QUIET_TRACKER)
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
                forkserver.ensure_running()
        hold("pool-started")  # tests: signals are this process's again, workers started
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


