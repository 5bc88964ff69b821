"""Runs of any size: time and peak memory of ``trecqr eval`` on 7M- to 98M-line runs, beside
trec_eval's on the 7M-line one.

Usage: python benchmarks/bench_big.py [--copies 14] [--trec-eval PATH] [--keep]
       [--only NAME ...] [--out benchmarks/data]

Generates (in --out, git-ignored; deleted at the end unless --keep):

* the 7M-line MS MARCO-sized run and its qrels (make_data.py: 6,980 queries x 1,000 docs);
* the same 7M lines shuffled (topics interleaved);
* 14 copies of the 7M-line run under new topic ids (``cNN-`` + the id: 98M lines, 3.7 GB), with
  the qrels copied the same way, so every mean measure is that of the original run;
* the 98M-line run with a longer runid (over 4 GiB), and the 98M-line run as .gz and .zst.

Each run is scored with ``-m recip_rank -m ndcg_cut.3 -m recall.10,100 -m map`` in its own
process, one at a time; wall time and peak RSS (ru_maxrss) of the child are reported. The
outputs are checked: shuffled = grouped byte for byte, and every 98M-line output = trec_eval's
output on the 7M-line original (the means of 14 copies are the original's means).
Build trec_eval -O2 outside the repository (e.g. ``gcc -O2 -I. -DVERSIONID=\\"9.0.8\\" -o
/tmp/trec_eval *.c -lm`` in a checkout of usnistgov/trec_eval at v9.0.8) and pass --trec-eval.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_data import make  # noqa: E402

MEASURES = ["-m", "recip_rank", "-m", "ndcg_cut.3", "-m", "recall.10,100", "-m", "map"]
CHUNK = 64 << 20


# The child is started by a small launcher process: a child forked from this process would
# report this process's own peak memory (after shuffling a 7M-line run in memory) as its
# ru_maxrss, since Linux carries the pre-exec high-water mark over exec.
LAUNCHER = """
import os, subprocess, sys, time
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - start
with open(sys.argv[1], "w") as out:
    out.write(f"{wall} {usage.ru_maxrss} {usage.ru_utime + usage.ru_stime} "
              f"{os.waitstatus_to_exitcode(status)}")
"""


def run_child(cmd) -> tuple[float, int, bytes, float]:
    """Wall seconds, peak RSS (bytes) of the child (wait4), stdout, CPU seconds (user +
    system: what the machine's other users do not change much)."""
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".usage") as report, \
            open(os.devnull, "wb") as null:
        proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, report.name, *map(str, cmd)],
                                stdout=subprocess.PIPE, stderr=null)
        out = proc.stdout.read()
        proc.wait()
        wall, rss, cpu, code = report.read().split()
    if int(code) != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed")
    return float(wall), int(rss) * 1024, out, float(cpu)


def copies(src: Path, dst: Path, count: int, runid: bytes | None = None) -> Path:
    """count copies of src, line k of copy c with topic id ``cNN-<id>``."""
    if dst.exists():
        return dst
    tmp = dst.with_suffix(".part")
    with open(tmp, "wb") as out:
        for c in range(count):
            prefix = b"c%02d-" % c
            with open(src, "rb") as fh:
                carry = b""
                while True:
                    block = fh.read(CHUNK)
                    if not block:
                        break
                    block = carry + block
                    cut = block.rfind(b"\n") + 1
                    block, carry = block[:cut], block[cut:]
                    text = prefix + block[:-1].replace(b"\n", b"\n" + prefix) + b"\n"
                    if runid is not None:
                        text = text.replace(b" bench\n", b" " + runid + b"\n")
                    out.write(text)
    tmp.rename(dst)
    return dst


def shuffled(src: Path, dst: Path) -> Path:
    if dst.exists():
        return dst
    lines = src.read_bytes().splitlines(keepends=True)
    random.Random(13).shuffle(lines)
    with open(dst, "wb") as out:
        for i in range(0, len(lines), 1 << 20):
            out.write(b"".join(lines[i:i + (1 << 20)]))
    return dst


def compressed(src: Path, kind: str) -> Path:
    dst = Path(f"{src}.{kind}")
    if not dst.exists():
        cmd = ["gzip", "-1", "-c"] if kind == "gz" else ["zstd", "-q", "-3", "-T2", "-c"]
        with open(f"{dst}.part", "wb") as out:
            subprocess.run(["nice", "-n", "10", *cmd, str(src)], stdout=out, check=True)
        os.rename(f"{dst}.part", dst)
    return dst


def lines_of(path: Path) -> int:
    n = 0
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            n += block.count(b"\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=14)
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    ap.add_argument("--keep", action="store_true", help="keep the generated runs")
    ap.add_argument("--only", nargs="*", default=None,
                    help="score only these (grouped, shuffled, big, big4g, big.gz, big.zst)")
    a = ap.parse_args()
    run7, qrels7 = make(a.out)
    n7 = lines_of(run7)
    big = a.out / f"run.x{a.copies}.txt"
    qbig = copies(qrels7, a.out / f"qrels.x{a.copies}.txt", a.copies)
    made = [qbig]
    trecqr = [sys.executable, "-c", "from trecqr.runtime.launch import entry; entry()",
              "eval", "--quiet"]
    cases = {
        "grouped": (lambda: run7, qrels7, n7),
        "shuffled": (lambda: shuffled(run7, a.out / "run.shuffled.txt"), qrels7, n7),
        "big": (lambda: copies(run7, big, a.copies), qbig, n7 * a.copies),
        "big4g": (lambda: copies(run7, a.out / f"run.x{a.copies}.4g.txt", a.copies,
                                 b"bench_run_with_a_long_runid"), qbig, n7 * a.copies),
        "big.gz": (lambda: compressed(copies(run7, big, a.copies), "gz"), qbig, n7 * a.copies),
        "big.zst": (lambda: compressed(copies(run7, big, a.copies), "zst"), qbig,
                    n7 * a.copies),
    }
    rows = []
    te_out = None
    te_cmd = ["nice", "-n", "10", a.trec_eval, *MEASURES, str(qrels7), str(run7)]
    outputs = {}
    try:
        for name, (make_run, qrels, n) in cases.items():
            if a.only is not None and name not in a.only:
                continue
            path = make_run()
            made.append(path)
            te = None
            if a.trec_eval:  # right before each case: the machine is shared, its load varies
                te = run_child(te_cmd)
                te_out = te[2]
                rows.append(("trec_eval -O2", "7M-line run (original)", n7,
                             run7.stat().st_size, te[0], te[1], te[3], None, None))
            wall, rss, out, cpu = run_child(["nice", "-n", "10", *trecqr, *MEASURES,
                                             str(qrels), str(path)])
            outputs[name] = out
            rows.append(("trecqr", f"{name}: {path.name}", n, path.stat().st_size, wall, rss,
                         cpu, None if te is None else (wall / n) / (te[0] / n7),
                         None if te is None else (cpu / n) / (te[3] / n7)))
            print(f"{name}: {wall:.1f} s, {rss / 2**20:.0f} MiB", file=sys.stderr, flush=True)
    finally:
        if not a.keep:
            for p in made:
                if p not in (run7, qrels7):
                    Path(p).unlink(missing_ok=True)
            big.unlink(missing_ok=True)
    print(f"{os.cpu_count()} cores")
    print("| tool | run | lines | size | wall time | CPU time | peak memory | wall / line vs "
          "trec_eval | CPU / line vs trec_eval |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for tool, name, n, size, wall, rss, cpu, ratio, cpu_ratio in rows:
        ratio = "-" if ratio is None else f"{ratio:.2f}x"
        cpu_ratio = "-" if cpu_ratio is None else f"{cpu_ratio:.2f}x"
        print(f"| {tool} | {name} | {n / 1e6:.1f}M | {size / 1e9:.2f} GB | {wall:.1f} s "
              f"| {cpu:.1f} s | {rss / 2**20:.0f} MiB | {ratio} | {cpu_ratio} |")
    if "grouped" in outputs and "shuffled" in outputs:
        print(f"shuffled output identical to grouped: {outputs['shuffled'] == outputs['grouped']}")
    if te_out is not None:
        for name, out in outputs.items():
            print(f"{name} output identical to trec_eval's on the 7M-line run: {out == te_out}")


if __name__ == "__main__":
    main()
