"""Tukey's HSD on the CAsT 2021 organisers' five document runs: the classical test (one-way,
as statsmodels' pairwise_tukeyhsd and ranx compute it; two-way, blocking on topics) beside
Carterette's randomised test at 100,000 permutations, with its time and its Monte Carlo
standard error, for map and ndcg_cut.3.

Usage: python benchmarks/bench_tukey.py [--permutations 100000] [--seed 2012]

Prints one table per measure: each pair, the three p-values, the randomised p's standard
error sqrt(p (1 - p) / B), and how many standard errors it lies from the two-way classical p.
tests/stats/test_stats_anova.py checks the same numbers (decisions at 0.05 and 0.01, and the
size of the gap); this script shows them.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "report" / "stats")]

from cast_inputs import CAST_RUNS, MEASURES, cast_scores, pairs  # noqa: E402
from trecqr.report.stats import anova  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--permutations", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2012)
    args = parser.parse_args()
    scores = cast_scores()
    names = [r.replace("docrun_org_", "").replace(".run", "") for r in CAST_RUNS]
    sys.stdout.write(f"{len(scores['topics'])} topics, {len(names)} runs, "
                     f"{args.permutations} permutations, seed {args.seed}\n")
    for measure in MEASURES:
        x = scores[measure]
        one = anova.tukey_hsd(x, design="one-way").pvalues
        two = anova.tukey_hsd(x).pvalues
        start = time.perf_counter()
        rand = anova.randomized_tukey_hsd(x, args.permutations, seed=args.seed).pvalues
        took = time.perf_counter() - start
        sys.stdout.write(f"\n{measure}: randomised test {took:.2f} s\n")
        sys.stdout.write(f"{'pair':<34} {'one-way':>9} {'two-way':>9} {'random':>9} "
                         f"{'s.e.':>8} {'gap/s.e.':>8}\n")
        for i, j in pairs(len(names)):
            se = math.sqrt(rand[i, j] * (1 - rand[i, j]) / args.permutations)
            gap = (rand[i, j] - two[i, j]) / se if se else float("nan")
            sys.stdout.write(f"{names[i] + ' - ' + names[j]:<34} {one[i, j]:9.5f} "
                             f"{two[i, j]:9.5f} {rand[i, j]:9.5f} {se:8.5f} {gap:8.1f}\n")


if __name__ == "__main__":
    main()
