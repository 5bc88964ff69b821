"""Time `trecqr eval` against trec_eval, pytrec_eval and ir_measures, side by side.

Usage: python benchmarks/bench_eval.py [--queries 6980 --depth 1000 --repeat 3 --trec-eval PATH]

Each tool runs in its own process on the same generated MS MARCO-sized run (make_data.py),
computing recip_rank, ndcg_cut.3, recall.10,100 and map, parsing included. Runs are
interleaved round-robin and the median wall time and peak RSS (ru_maxrss of the child) are
reported, as ratios to trecqr: the machines are shared, so only ratios measured in one run mean
anything. trec_eval is used when on PATH or given with --trec-eval.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_data import make  # noqa: E402

MEASURES = ["recip_rank", "ndcg_cut.3", "recall.10,100", "map"]

PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {'recip_rank', 'ndcg_cut.3', 'recall.10,100', 'map'})
res = ev.evaluate(run)
for m in ['recip_rank', 'ndcg_cut_3', 'recall_10', 'recall_100', 'map']:
    print(m, pytrec_eval.compute_aggregated_measure(m, [q[m] for q in res.values()]))
"""

IRMEASURES = """
import sys, ir_measures
from ir_measures import RR, nDCG, R, AP
ms = [RR, nDCG@3, R@10, R@100, AP]
print(ir_measures.calc_aggregate(ms, ir_measures.read_trec_qrels(sys.argv[1]),
                                 ir_measures.read_trec_run(sys.argv[2])))
"""


def timed(cmd: list[str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) of the child, stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd[0]} failed: {err.decode()[-500:]}")
    return wall, usage.ru_maxrss, out.decode()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"))
    ap.add_argument("--skip", nargs="*", default=[], help="tools to leave out")
    a = ap.parse_args()

    run, qrels = make(Path(__file__).parent / "data", a.queries, a.depth)
    mflags = [x for m in MEASURES for x in ("-m", m)]
    # the console script of this Python environment (what a venv puts on PATH), not a version
    # manager's shim in front of it, which would add its own start-up to every run
    script = Path(sys.executable).parent / "trecqr"
    trecqr = [str(script)] if script.exists() else [
        sys.executable, "-c", "from trecqr.runtime.launch import entry; entry()"]
    tools = {"trecqr": trecqr + ["eval", "--quiet", *mflags, str(qrels), str(run)]}
    if a.trec_eval:
        tools["trec_eval"] = [a.trec_eval, *mflags, str(qrels), str(run)]
    tools["pytrec_eval"] = [sys.executable, "-c", PYTREC, str(qrels), str(run)]
    tools["ir_measures"] = [sys.executable, "-c", IRMEASURES, str(qrels), str(run)]
    for name in a.skip:
        tools.pop(name, None)

    times: dict = {t: [] for t in tools}
    mems: dict = {t: [] for t in tools}
    outputs: dict = {}
    for _ in range(a.repeat):
        for name, cmd in tools.items():
            wall, rss, out = timed(cmd)
            times[name].append(wall)
            mems[name].append(rss)
            outputs[name] = out

    if "trec_eval" in outputs:
        same = outputs["trec_eval"] == outputs["trecqr"]
        print(f"trecqr output identical to trec_eval's: {same}")
        if not same:
            print("trec_eval:\n" + outputs["trec_eval"] + "trecqr:\n" + outputs["trecqr"])
    base_t = statistics.median(times["trecqr"])
    base_m = statistics.median(mems["trecqr"])
    lines = [f"{a.queries:,} queries x {a.depth:,} docs, {a.repeat} interleaved runs, median; "
             f"measures {' '.join(MEASURES)}", "",
             "| tool | wall time (s) | time / trecqr | peak RSS (MB) | RSS / trecqr |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for name in tools:
        t, m = statistics.median(times[name]), statistics.median(mems[name])
        lines.append(f"| {name} | {t:.2f} | {t / base_t:.2f} | {m / 1024:.0f} | {m / base_m:.2f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
