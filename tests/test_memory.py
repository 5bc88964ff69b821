"""Issue 19: trecqr eval under a memory cap (``ulimit -v``; a cgroup limit the same way).

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
from trecqr import memory

Q, R = TE / "qrels.test", TE / "results.test"
CMD = [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
       "from trecqr.launch import entry; entry()"]
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
    an internal error: "can't start new thread", a library that failed to map)."""
    res = subprocess.run(CMD + ["eval", "-m", "map", str(Q), str(R)], capture_output=True,
                         timeout=300, preexec_fn=_cap(120_000))
    assert res.returncode == 2, res.stderr
    assert res.stderr.decode() == \
        "trecqr: out of memory under the address-space limit (ulimit -v 120000)\n"
    assert res.stdout == b""


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
from trecqr import memory
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
    assert not memory.is_out_of_memory(RuntimeError("something else"))
    assert not memory.is_out_of_memory(ImportError("No module named x"))
