"""Time `trecqr eval` against trec_eval on small runs, where start-up is most of the time.

Usage: python benchmarks/bench_startup.py [--repeat 21] [--trec-eval PATH] [--data DIR]

Two CAsT 2021 cases, trec_eval's default measures, each tool in its own process, the runs
interleaved (trec_eval, trecqr, trec_eval, ...) so that a burst of load hits both:

* the fixture: fixtures/cast2021/qrels.txt with fixtures/cast2021/manual_bm25.run (3,354 lines);
* an organiser run: shared/data's cast2021/qrels-docs.2021.qrel with docrun_org_manual_bm25.run
  (the official document qrels and the organisers' BM25 run, 1.1 MB).

Then the same for a script that imports the pytrec_eval drop-in and calls it once
(``import trecqr as pytrec_eval``), against pytrec_eval itself: one topic written in the
script, and the fixture read by the module's own ``parse_qrel`` / ``parse_run``; the
outputs (JSON of the values) must be equal.

Reported: the median wall time of each tool and their ratio, and the floor of any Python
command line (``python -c pass``, and ``python -c "import numpy"``). Every trecqr output is
checked to be trec_eval's, byte for byte. The machine is shared: measure idle, and compare the
ratios of one run, not times across runs.

trecqr's modules are byte-compiled first (``compileall``), as a wheel's install compiles them:
without it, a checkout under PYTHONDONTWRITEBYTECODE (set on this project's machine) compiles
every imported module from source on every run, about a third of the start-up.
"""

from __future__ import annotations

import argparse
import compileall
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzzing.sources import shared_data  # noqa: E402 (one way to find ../shared/data)

ROOT = Path(__file__).resolve().parent.parent


def _trecqr() -> list[str]:
    """The console script beside this interpreter (what users run), else ``python -m``."""
    script = Path(sys.executable).with_name("trecqr")
    return [str(script)] if script.exists() else [sys.executable, "-m", "trecqr"]


def _timed(cmd: list[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall, proc.stdout


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f}"


# a one-call script: {module} is pytrec_eval or trecqr, {case} the case's inputs
_ONE_CALL = """
import json
import {module} as pytrec_eval
{case}
values = pytrec_eval.RelevanceEvaluator(qrels, {{"map", "ndcg_cut.3", "recip_rank", "P.10"}})
print(json.dumps(values.evaluate(run), sort_keys=True))
"""
_ONE_TOPIC = 'qrels = {"q": {"d1": 1, "d2": 0}}; run = {"q": {"d1": 0.5, "d2": 0.9}}'
_FILES = """
with open({qrels!r}) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
with open({run!r}) as fh:
    run = pytrec_eval.parse_run(fh)
"""


def _one_call_table(repeat: int) -> None:
    fixture = ROOT / "fixtures/cast2021"
    cases = [("one topic, written in the script", _ONE_TOPIC),
             ("fixture: parse_qrel, parse_run (3,354 lines)",
              _FILES.format(qrels=str(fixture / "qrels.txt"),
                            run=str(fixture / "manual_bm25.run")))]
    print("| script | pytrec_eval (ms) | trecqr (ms) | trecqr / pytrec_eval | same output |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, case in cases:
        cmds = [[sys.executable, "-c", _ONE_CALL.format(module=m, case=case)]
                for m in ("pytrec_eval", "trecqr")]
        times, outs = ([], []), ([], [])
        for _ in range(repeat):
            for i, cmd in enumerate(cmds):
                wall, out = _timed(cmd)
                times[i].append(wall)
                outs[i].append(out)
        pt, tq = (statistics.median(t) for t in times)
        same = all(a == b for a, b in zip(*outs))
        print(f"| {name} | {_ms(pt)} | {_ms(tq)} | {tq / pt:.2f}x | {'yes' if same else 'NO'} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=21, help="runs of each tool per case")
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="trec_eval binary")
    ap.add_argument("--data", type=Path, default=None, help="the shared data folder")
    args = ap.parse_args()
    if not args.trec_eval:
        raise SystemExit("trec_eval not found: give --trec-eval PATH")
    data = args.data or shared_data()
    compileall.compile_dir(str(ROOT / "trecqr"), quiet=1)
    cases = [("fixture: manual_bm25.run (3,354 lines)", ROOT / "fixtures/cast2021/qrels.txt",
              ROOT / "fixtures/cast2021/manual_bm25.run"),
             ("organisers: docrun_org_manual_bm25.run (1.1 MB)",
              data / "cast2021/qrels-docs.2021.qrel",
              data / "cast2021/docrun_org_manual_bm25.run")]
    floors = {"python -c pass": [sys.executable, "-c", "pass"],
              "python -c 'import numpy'": [sys.executable, "-c", "import numpy"]}
    floor = {name: statistics.median(_timed(cmd)[0] for _ in range(args.repeat))
             for name, cmd in floors.items()}
    print(f"median of {args.repeat} interleaved runs; trec_eval: {args.trec_eval}")
    print()
    print("| case | trec_eval (ms) | trecqr eval (ms) | trecqr / trec_eval | same output |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, qrels, run in cases:
        if not (qrels.exists() and run.exists()):
            print(f"| {name} | missing: {qrels if not qrels.exists() else run} | | | |")
            continue
        te_cmd = [args.trec_eval, str(qrels), str(run)]
        tq_cmd = [*_trecqr(), "eval", str(qrels), str(run)]
        te_times, tq_times, same = [], [], True
        for _ in range(args.repeat):
            wall, te_out = _timed(te_cmd)
            te_times.append(wall)
            wall, tq_out = _timed(tq_cmd)
            tq_times.append(wall)
            same = same and tq_out == te_out
        te, tq = statistics.median(te_times), statistics.median(tq_times)
        print(f"| {name} | {_ms(te)} | {_ms(tq)} | {tq / te:.1f}x | {'yes' if same else 'NO'} |")
    print()
    _one_call_table(args.repeat)
    print()
    print("Python's floor on this machine: "
          + "; ".join(f"`{name}` {_ms(t)} ms" for name, t in floor.items()))


if __name__ == "__main__":
    main()
