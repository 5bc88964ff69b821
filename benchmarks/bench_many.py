"""Many runs: one ``trecqr eval QRELS RUN...`` call against one call per run (and trec_eval's).

Usage: python benchmarks/bench_many.py [--runs 200] [--jobs N] [--trec-eval PATH]
       [--data ../shared/data] [--out benchmarks/data/many]

The runs are the five TREC CAsT 2021 organiser document runs (``docrun_org_*.run``, 239 turns,
~18k-24k lines each), copied round-robin under new names with every score shifted by a
per-copy constant (so the files differ, the rankings do not) into --out (git-ignored). Each way
of scoring computes ``-m official -m ndcg_cut.3`` for every run; the single calls run one after
another, as a shell loop would. The outputs of all ways are checked byte for byte (trec_eval
against trecqr's concatenated output too, when given).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

MEASURES = ["-m", "official", "-m", "ndcg_cut.3"]


def make_runs(data: Path, out: Path, count: int) -> list[Path]:
    sources = sorted((data / "cast2021").glob("docrun_org_*.run"))
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = out / f"run{i:04d}.txt"
        paths.append(path)
        if path.exists():
            continue
        shift = 0.5 * (i // len(sources))
        with open(sources[i % len(sources)]) as src, open(path, "w") as dst:
            for line in src:
                f = line.split()
                f[4] = repr(float(f[4]) + shift)
                dst.write(" ".join(f) + "\n")
    return paths


def timed(cmds) -> tuple[float, bytes]:
    start = time.perf_counter()
    out = b"".join(subprocess.run(c, check=True, capture_output=True).stdout for c in cmds)
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--trec-eval", default=shutil.which("trec_eval"))
    here = Path(__file__).resolve().parent
    ap.add_argument("--data", type=Path, default=here.parent.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=here / "data" / "many")
    a = ap.parse_args()
    qrels = a.data / "cast2021" / "qrels-docs.2021.qrel"
    runs = [str(p) for p in make_runs(a.data, a.out, a.runs)]
    trecqr = [sys.executable, "-c", "from trecqr.runtime.launch import entry; entry()",
              "eval", "--quiet"]
    rows = []
    t_one, out_one = timed([trecqr + MEASURES + [str(qrels)] + runs])
    t_j1, out_j1 = timed([trecqr + MEASURES + ["-j", "1", str(qrels)] + runs])
    t_j2, out_j2 = timed([trecqr + MEASURES + ["-j", "2", str(qrels)] + runs])
    t_each, out_each = timed([trecqr + MEASURES + [str(qrels), r] for r in runs])
    rows.append((f"trecqr eval, {len(runs)} single calls", t_each))
    rows.append(("trecqr eval, one call (default -j)", t_one))
    rows.append(("trecqr eval, one call, -j 1", t_j1))
    rows.append(("trecqr eval, one call, -j 2", t_j2))
    assert out_one == out_each == out_j1 == out_j2, "one call and single calls differ"
    if a.trec_eval:
        t_te, out_te = timed([[a.trec_eval] + MEASURES + [str(qrels), r] for r in runs])
        rows.append((f"trec_eval, {len(runs)} single calls", t_te))
        assert out_te == out_one, "trec_eval's outputs differ from trecqr's"
    print(f"{len(runs)} runs, {os.cpu_count()} cores; outputs identical: True")
    print("| scoring | wall time | per run | vs one trecqr call |")
    print("| --- | ---: | ---: | ---: |")
    for name, t in rows:
        print(f"| {name} | {t:.1f} s | {1000 * t / len(runs):.0f} ms | {t / t_one:.1f}x |")


if __name__ == "__main__":
    main()
