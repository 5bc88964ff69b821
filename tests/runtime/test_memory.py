"""trecqr eval under a memory cap (``ulimit -v``; a cgroup limit the same way).

The caps are set in child processes (``resource.setrlimit``), small runs stand in for the
benchmark's: a child lowers its own limit to what it holds plus a known margin, so the test
does not depend on how much address space this machine's libraries take.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

from conftest import ROOT, TE
from trecqr.runtime import memory

Q, R = TE / "qrels.test", TE / "results.test"
CMD = [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
       "from trecqr.runtime.launch import entry; entry()"]
MB = 1 << 20


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """200 topics x 1,000 documents, 7.7 MB of run text."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_data import make

    return make(tmp_path_factory.mktemp("memory-data"), queries=200, depth=1000)


def _cap(kb: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (kb * 1024, resource.RLIM_INFINITY))


def test_a_tiny_cap_is_one_line_naming_it():
    """Under 120 MB not even Python's libraries load: one line naming the cap, exit 2 (it was
    an internal error: "can't start new thread", a library that failed to map), said before
    numpy's OpenBLAS fails on its own."""
    res = subprocess.run(CMD + ["eval", "-m", "map", str(Q), str(R)], capture_output=True,
                         timeout=300, preexec_fn=_cap(120_000))
    assert res.returncode == 2, res.stderr
    line = res.stderr.decode()
    assert line.startswith("trecqr: not enough memory to start: numpy and pyarrow need about ")
    assert line.endswith(" of address space, more than the address-space limit "
                         "(ulimit -v 120000) allows\n")
    assert res.stdout == b""


FIXTURE = (str(ROOT / "fixtures" / "cast2021" / "qrels.txt"),
           str(ROOT / "fixtures" / "cast2021" / "manual_bm25.run"))
DOORS = {"console script": CMD, "python -m trecqr": [sys.executable, "-m", "trecqr"]}


def _capped_eval(door, kb):
    return subprocess.run(DOORS[door] + ["eval", "-m", "map", *FIXTURE], capture_output=True,
                          timeout=300, preexec_fn=_cap(kb), cwd=ROOT)


def _one_memory_line(res) -> str:
    """Exit 2, nothing on stdout, one line on stderr that speaks of memory."""
    assert res.returncode == 2, res.stderr
    assert res.stdout == b"" and b"Traceback" not in res.stderr
    lines = res.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("trecqr: ") and "memory" in lines[0], lines
    return lines[0]


@pytest.mark.parametrize("door", sorted(DOORS))
@pytest.mark.parametrize("kb", [100_000, 150_000, 200_000, 210_000])
def test_eval_under_a_cap_too_small_for_it_is_one_line(door, kb):
    """The README's run under ulimit -v 100000-210000: one line, exit 2 (at 200000 it was two
    tracebacks: a MemoryError importing pyarrow, another in the error handler). Both doors run
    it under 230000 on the development machine, since neither loads pyarrow.compute for it
    (runtime/deferred.py; both needed 250000 when the console script's own stand-in
    deferred it)."""
    line = _one_memory_line(_capped_eval(door, kb))
    assert f"(ulimit -v {kb})" in line


def test_wherever_memory_runs_out_the_failure_is_one_line():
    """Caps from start-up to a successful run: every failure is one line and exit 2 (OpenBLAS
    printed its own error and exited 1, jemalloc added a line, Arrow's thread pool aborted),
    and a run that fits prints what it prints without a cap."""
    want = subprocess.run(CMD + ["eval", "-m", "map", *FIXTURE], capture_output=True,
                          timeout=300, cwd=ROOT)
    for kb in range(65_000, 300_000, 20_000):  # 185000 and 205000 failed natively
        res = subprocess.run(CMD + ["eval", "-m", "map", *FIXTURE], capture_output=True,
                             timeout=300, preexec_fn=_cap(kb), cwd=ROOT)
        if res.returncode == 0:
            assert (res.stdout, res.stderr) == (want.stdout, want.stderr), kb
        else:
            _one_memory_line(res)


def test_memory_exhausted_on_the_error_path_is_still_one_line():
    """A MemoryError while the line for another one is composed: the line made at start."""
    code = ("import trecqr.runtime.launch as launch, trecqr.cli.failures as failures\n"
            "def failing(exc):\n    raise MemoryError\n"
            "failures.failure_line = failing\n"
            "launch._last_line(MemoryError())\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert (res.returncode, res.stdout, res.stderr) == (2, b"", b"trecqr: out of memory\n")


def test_the_error_path_reads_proc_without_importing_codecs(monkeypatch):
    """/proc is read as bytes: a text file's codec lookup imports a module, which cannot
    happen once memory has run out."""
    import builtins

    opened = []
    real_open = builtins.open

    def spy(file, mode="r", *args, **kwargs):
        opened.append((file, mode, kwargs.get("encoding")))
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    memory.out_of_memory_line()
    assert opened and all("b" in mode for _, mode, _ in opened)


def test_scipy_is_imported_only_where_a_cap_leaves_room(monkeypatch):
    """scipy's own OpenBLAS retries for ever when its buffers cannot be mapped (compare hung
    under ulimit -v 300000): below its share, one line instead."""
    monkeypatch.delitem(sys.modules, "scipy.stats", raising=False)
    monkeypatch.setattr(memory, "available",
                        lambda: (100 * MB, 200 * MB, "the address-space limit (ulimit -v 1)"))
    with pytest.raises(memory.TrecqrError, match=r"^not enough memory: scipy's statistics "
                       r"need about 377 MB \(385025 KB\), more than the address-space limit"):
        memory.scipy_stats()
    assert "scipy.stats" not in sys.modules


def test_an_ample_cap_changes_no_output(small_run):
    run, qrels = small_run
    args = ["eval", "-q", "-m", "all_trec", str(qrels), str(run)]
    want = subprocess.run(CMD + args, capture_output=True, timeout=300)
    got = subprocess.run(CMD + args, capture_output=True, timeout=300,
                         preexec_fn=_cap(2_000_000))
    assert got.returncode == 0, got.stderr
    assert (got.stdout, got.stderr) == (want.stdout, want.stderr)
    assert want.stdout.count(b"\n") > 200 * 30


# The child: cap the address space (loosely) so that fit_process applies, import the scorer,
# then lower the cap to what the process holds plus MARGIN and score the run, recording the
# size of the pieces it is read in (none: read whole).
_CHILD = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (64 << 30, resource.RLIM_INFINITY))
from trecqr.runtime import memory
memory.fit_process()
import trecqr
from trecqr.formats import runstream
from trecqr.errors import TrecqrError
pieces = []
topic_pieces = runstream.topic_pieces
def spy(path, **kw):
    pieces.append(kw["piece_bytes"])
    return topic_pieces(path, **kw)
runstream.topic_pieces = spy
qrels, run, margin = sys.argv[1], sys.argv[2], int(sys.argv[3])
trecqr.evaluate(qrels, run, ["map"])  # every module and buffer of the scorer, once
used = memory._status_kb("VmSize") * 1024
resource.setrlimit(resource.RLIMIT_AS, (used + margin, resource.RLIM_INFINITY))
try:
    res = trecqr.evaluate(qrels, run, ["map", "ndcg_cut.10", "recip_rank", "P.5"])
    print(json.dumps({"values": res.aggregate(), "pieces": pieces}))
except TrecqrError as exc:
    print(json.dumps({"error": str(exc), "pieces": pieces}))
"""


def _child(qrels, run, margin):
    res = subprocess.run([sys.executable, "-c", _CHILD, str(qrels), str(run), str(margin)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_a_moderate_cap_streams_a_run_read_whole_without_it(small_run):
    """7.7 MB of run text is read whole without a cap (streaming starts at 192 MB); with
    70 MB of room (48 MB kept aside, 22 MB for pieces) it is streamed in pieces of about 11
    MB, and the values are the uncapped ones."""
    run, qrels = small_run
    import trecqr

    want = trecqr.evaluate(qrels, run, ["map", "ndcg_cut.10", "recip_rank", "P.5"]).aggregate()
    uncapped = _child(qrels, run, 64 << 30)
    assert uncapped["pieces"] == [] and uncapped["values"] == want
    capped = _child(qrels, run, 70 * MB)
    assert capped["values"] == want
    assert len(capped["pieces"]) == 1
    assert memory.MIN_PIECE_BYTES <= capped["pieces"][0] <= 11 * MB


def test_a_cap_too_tight_for_the_smallest_piece_says_how_much_it_needs(small_run):
    run, qrels = small_run
    got = _child(qrels, run, 40 * MB)
    assert got["pieces"] == []  # refused before reading the run
    assert got["error"].startswith("not enough memory: scoring this run needs about ")
    assert got["error"].endswith(" KB), more than the address-space limit (ulimit -v "
                                 f"{got['error'].split('ulimit -v ')[1]}")
    need_kb = int(got["error"].split("(")[1].split(" KB")[0])
    limit_kb = int(got["error"].split("ulimit -v ")[1].rstrip(") allows"))
    # what it holds, plus the smallest piece and the headroom, is more than the cap
    assert need_kb - limit_kb == pytest.approx((8 * MB + 48 * MB - 40 * MB) / 1024, abs=1024)


def test_stream_plan_without_and_with_a_cap(monkeypatch):
    monkeypatch.setattr(memory, "available", lambda: None)
    assert memory.stream_plan(10 * MB, 96 * MB) == (None, 96 * MB)
    room = lambda left: (left, 200 * MB, "the address-space limit (ulimit -v 300000)")  # noqa
    monkeypatch.setattr(memory, "available", lambda: room(1000 * MB))
    assert memory.stream_plan(10 * MB, 96 * MB) == (None, 96 * MB)  # 40 MB whole: fits
    assert memory.stream_plan(300 * MB, 96 * MB) == (True, 96 * MB)
    monkeypatch.setattr(memory, "available", lambda: room(100 * MB))
    assert memory.stream_plan(20 * MB, 96 * MB) == (True, 26 * MB)  # (100 - 48) / 2
    monkeypatch.setattr(memory, "available", lambda: room(50 * MB))
    with pytest.raises(memory.TrecqrError, match=r"needs about 257 MB \(262145 KB\)"):
        memory.stream_plan(10 * MB, 96 * MB)  # 200 + 2 x 4 + 48 MB
    assert memory.stream_plan(MB, 96 * MB) == (True, memory.MIN_PIECE_BYTES)  # one piece


def test_cgroup_limits_are_read_from_the_process_cgroup(tmp_path, monkeypatch):
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.max").write_text("524288000\n")
    (v2 / "memory.current").write_text("104857600\n")
    (v2 / "memory.stat").write_text("anon 10485760\ninactive_file 52428800\n")
    monkeypatch.setattr(memory, "_cgroup_files",
                        lambda: [(str(v2 / "memory.max"), str(v2 / "memory.current"),
                                  str(v2 / "memory.stat"), "inactive_file")])
    assert memory.cgroup_limit() == (524288000, 52428800)  # the inactive page cache aside
    (v2 / "memory.stat").unlink()
    assert memory.cgroup_limit() == (524288000, 104857600)
    (v2 / "memory.max").write_text("max\n")
    assert memory.cgroup_limit() is None
    (v2 / "memory.max").write_text("9223372036854771712\n")  # v1's "no limit"
    assert memory.cgroup_limit() is None


def test_out_of_memory_errors_are_recognised():
    assert memory.is_out_of_memory(MemoryError())
    assert memory.is_out_of_memory(RuntimeError("can't start new thread"))
    assert memory.is_out_of_memory(ImportError("libstdc++.so.6: failed to map segment from "
                                               "shared object"))
    assert memory.is_out_of_memory(Exception("Unknown error: Failed to launch worker thread: "
                                             "Resource temporarily unavailable"))  # Arrow
    assert not memory.is_out_of_memory(RuntimeError("something else"))
    assert not memory.is_out_of_memory(ImportError("No module named x"))
