"""Memory caps: an address-space limit (``ulimit -v``: SGE's h_vmem, some Slurm setups) or a
cgroup memory limit, read once, and what eval does to fit in them.

Without a cap nothing changes. Under one, most of a process's address space is not its data
but reservations: glibc gives each thread a 64 MB malloc arena, every thread an 8 MB stack,
OpenBLAS a buffer per thread, Arrow's allocator its own chunks. Uncapped, ``trecqr eval`` of
the 7M-line benchmark run peaks at about 1 GB of address space for 160 MB resident; so under
``ulimit -v 400000`` it failed starting a thread, and under 1 GB it ran out of memory.
:func:`fit_process` (called by the console script before numpy and pyarrow are imported)
trims those: one malloc arena, 2 MB thread stacks, one BLAS thread, Arrow's system allocator
and fewer Arrow threads. Then eval streams the run in pieces sized to what the cap leaves
(:func:`stream_plan`); where even the smallest piece cannot fit, it says in one line how much
it needs, before reading the run.
"""

from __future__ import annotations

import os
import resource
import sys
import threading

from trecqr.errors import TrecqrError

MB = 1 << 20
STACK_BYTES = 2 * MB  # a thread's stack under a cap (glibc's default is RLIMIT_STACK, 8 MB)
# memory per byte of run text while a piece is scored (its arrays, rankings and values, and
# the next piece read ahead meanwhile): measured 1.7 on the 7M-line benchmark run
STREAM_FACTOR = 2.0
# memory per byte of run text when the whole file is read at once (then streaming pays)
WHOLE_FACTOR = 4.0
MIN_PIECE_BYTES = 4 * MB  # below this, pieces only add overhead; the run needs this much
HEADROOM = 48 * MB  # what the last steps (the output, the summary, a thread) need on top
# what a worker process of ``eval RUN RUN ...`` holds before its run: the interpreter, numpy,
# pyarrow and the scorer (measured about 60 MB resident; rounded up for the allocators)
WORKER_BYTES = 128 * MB
# the address space a command takes before it reads its first file, under fit_process's
# settings: numpy (85 MB, most of it OpenBLAS's buffers), pyarrow (95 MB) and the first threads
# of Arrow's pools, measured 190 MB in all and rounded up. Under less, native code fails where
# Python cannot catch it: OpenBLAS exits with its own message, Arrow's thread pool aborts.
STARTUP_BYTES = 208 * MB
# what importing scipy.stats adds (its own OpenBLAS's buffers, which, when they cannot be
# mapped, it retries for ever): measured 157 MB, rounded up
SCIPY_BYTES = 176 * MB


def address_space_limit() -> int | None:
    """The soft RLIMIT_AS in bytes, None when unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def _cgroup_files() -> list:
    """The memory limit files of this process's cgroups (v2 memory.max, v1
    memory.limit_in_bytes), innermost first, with the matching usage file."""
    out = []
    try:
        with open("/proc/self/cgroup", "rb") as fh:  # bytes: see _read
            lines = fh.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":  # v2
            base = "/sys/fs/cgroup" + path.rstrip("/")
            out.append((base + "/memory.max", base + "/memory.current",
                        base + "/memory.stat", "inactive_file"))
        elif "memory" in controllers.split(","):
            base = "/sys/fs/cgroup/memory" + path.rstrip("/")
            out.append((base + "/memory.limit_in_bytes", base + "/memory.usage_in_bytes",
                        base + "/memory.stat", "total_inactive_file"))
    return out


def _read(path: str) -> str | None:
    """The text of a small /proc or /sys file. Read as bytes: a text file's codec lookup
    imports a module, which fails when memory has run out (this runs on that error path)."""
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("ascii")
    except (OSError, ValueError):
        return None


def cgroup_limit() -> tuple[int, int] | None:
    """(limit, usage) in bytes of this process's cgroup memory limit, None when there is
    none (``max``, or v1's "no limit" of nearly 2^63). The usage leaves out the inactive page
    cache (reclaimed before the limit bites), as ``docker stats`` does."""
    for limit_file, usage_file, stat_file, inactive in _cgroup_files():
        text = (_read(limit_file) or "").strip()
        if not text.isdigit() or int(text) >= 1 << 60:  # "max", or absent
            continue
        usage = (_read(usage_file) or "0").strip()
        usage = int(usage) if usage.isdigit() else 0
        for line in (_read(stat_file) or "").splitlines():
            key, _, value = line.partition(" ")
            if key == inactive and value.strip().isdigit():
                usage = max(usage - int(value), 0)
        return int(text), usage
    return None


def capped() -> bool:
    return address_space_limit() is not None or cgroup_limit() is not None


def _status_kb(field: str) -> int:
    for line in (_read("/proc/self/status") or "").splitlines():
        if line.startswith(field + ":"):
            try:
                return int(line.split()[1])
            except (ValueError, IndexError):
                break
    return 0


def available() -> tuple[int, int, str] | None:
    """(bytes this process may still take, bytes it holds against the cap, the cap's
    description), the tighter of the two caps; None without a cap."""
    best = None
    limit = address_space_limit()
    if limit is not None:
        used = _status_kb("VmSize") * 1024
        best = (limit - used, used, f"the address-space limit (ulimit -v {limit // 1024})")
    cg = cgroup_limit()
    if cg is not None and (best is None or cg[0] - cg[1] < best[0]):
        best = (cg[0] - cg[1], cg[1], f"the cgroup memory limit ({cg[0] // MB} MB)")
    return best


def fit_process() -> None:
    """Under a cap, trim what the process reserves before numpy and pyarrow are imported
    (environment variables they read at import; glibc's malloc and thread defaults). No-op
    without one, or where the platform lacks a knob."""
    if not capped():
        return
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # OMP_NUM_THREADS also sizes Arrow's CPU pool
    os.environ.setdefault("ARROW_IO_THREADS", "1")
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    # Arrow's jemalloc starts a background thread at load; when it cannot, it prints a line
    os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:false")
    try:
        threading.stack_size(STACK_BYTES)
    except (ValueError, RuntimeError):
        pass
    import ctypes  # only under a cap: ctypes.util loads subprocess, shutil, tempfile (~10 ms)
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        libc.mallopt(-8, 1)  # M_ARENA_MAX: one malloc arena, not 64 MB per thread
        attr = ctypes.create_string_buffer(256)  # pthread_attr_t (56 bytes on x86-64)
        if libc.pthread_attr_init(attr) == 0:
            libc.pthread_attr_setstacksize(attr, ctypes.c_size_t(STACK_BYTES))
            libc.pthread_setattr_default_np(attr)  # Arrow's and OpenBLAS's threads too
            libc.pthread_attr_destroy(attr)
    except (OSError, AttributeError):
        pass


def startup_problem() -> str | None:
    """The one line for a process whose address-space limit cannot hold numpy, pyarrow and
    Arrow's first threads (:data:`STARTUP_BYTES`), None when it can or there is no such limit.
    Checked by the console script at start, while it holds only the interpreter: past that
    point a failure is a Python error, said in one line."""
    limit = address_space_limit()
    if limit is None or "numpy" in sys.modules:
        return None
    need = _status_kb("VmSize") * 1024 + STARTUP_BYTES
    if need <= limit:
        return None
    return (f"trecqr: not enough memory to start: numpy and pyarrow need about "
            f"{need // MB + 1} MB ({need // 1024 + 1} KB) of address space, more than the "
            f"address-space limit (ulimit -v {limit // 1024}) allows")


def scipy_stats():
    """``scipy.stats``, imported only where a memory cap leaves room for it: under less,
    scipy's OpenBLAS would hang; this says so in one line (TrecqrError) instead."""
    if "scipy.stats" not in sys.modules:
        left = available()
        if left is not None and left[0] < SCIPY_BYTES:
            need = left[1] + SCIPY_BYTES
            raise TrecqrError(f"not enough memory: scipy's statistics need about "
                              f"{need // MB + 1} MB ({need // 1024 + 1} KB), more than "
                              f"{left[2]} allows")
    from scipy import stats

    return stats


def pool_workers(wanted: int, largest_run: int) -> int:
    """How many of ``wanted`` worker processes fit under a cgroup memory limit, which all of
    them share (an address-space limit is each process's own, so it does not count them):
    each holds :data:`WORKER_BYTES` plus a whole run of ``largest_run`` bytes of text read at
    once. At least 1 (scoring in this process then streams, as :func:`stream_plan` says)."""
    cg = cgroup_limit()
    if cg is None:
        return wanted
    per_worker = WORKER_BYTES + int(largest_run * WHOLE_FACTOR)
    return max(1, min(wanted, (cg[0] - cg[1] - HEADROOM) // per_worker))


def stream_plan(size: int, piece_bytes: int) -> tuple[bool, int]:
    """(stream the run, piece size) for a run file of ``size`` bytes of text, given the
    default piece size. Without a cap: (None for "as usual", piece_bytes). Under one: stream
    when reading the whole file would not fit, in pieces that do. Raises TrecqrError (one
    line, before any work) when not even the smallest piece fits."""
    left = available()
    if left is None:
        return None, piece_bytes
    room, used, cap = left
    room -= HEADROOM
    if size * WHOLE_FACTOR <= room and size < piece_bytes:
        return None, piece_bytes
    piece = min(piece_bytes, max(int(room / STREAM_FACTOR), 0))
    if piece < MIN_PIECE_BYTES and piece < size:
        need = used + int(MIN_PIECE_BYTES * STREAM_FACTOR) + HEADROOM
        raise TrecqrError(f"not enough memory: scoring this run needs about {need // MB + 1} MB "
                          f"({need // 1024 + 1} KB), more than {cap} allows")
    return True, max(piece, MIN_PIECE_BYTES)


def out_of_memory_line() -> str:
    """The line for a command that ran out of memory, naming the cap when there is one."""
    left = available()
    if left is None:
        return "trecqr: out of memory"
    return f"trecqr: out of memory under {left[2]}"


def is_out_of_memory(exc: BaseException) -> bool:
    """MemoryError, a thread that could not start (its stack could not be mapped), or a
    library that could not be mapped at its import."""
    text = str(exc)
    return isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and "can't start new thread" in text) or (
        "Failed to launch worker thread" in text) or (  # Arrow's thread pools (ArrowException)
        isinstance(exc, (ImportError, OSError)) and (
            "failed to map segment" in text or "cannot allocate memory" in text.lower()))
