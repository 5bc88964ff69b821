"""Differential campaign: the same data through every door of trecqr, against the references and
against each other, and the population each output states against the one it averages.

Usage (from the project root; ../shared/data must be present):

    nice python benchmarks/differential.py --cases 1000 [--seed 0] \\
        [--te908 /work/te/te908 --te10 /work/te/te10] [--pt-every 1] [--report diff.json]

Each case (tests/differential_cases.py) is a seeded mutation of the real CAsT 2021, QReCC or
TopiOCQA files: a few topics, two runs, topic subsets (qrels-only and run-only topics), empty
rankings (dict doors), exact ties, grades 0-4 and negative, duplicated judgments, the options
-c, -l, -M, -J, --compat 10.0, trec_eval and ir_measures names mixed. The doors
(tests/differential_doors.py, differential_irm.py): eval, eval -q, eval --format json,
compare --format json, breakdown (JSON and its text table's n), report's embedded data,
trecqr.evaluate on files, dicts and DataFrames, RelevanceEvaluator, trecqr.compare(), the
ir_measures provider (calc_aggregate, iter_calc), pt.Experiment (every --pt-every-th case) and
cqr (a case of the CAsT 2021 demo beside every --cqr-every-th, tests/differential_cqr.py).
The references (tests/differential_refs.py): pytrec_eval, ir_measures' own pipeline, and the
trec_eval binaries when given. It prints the checks by kind (a: door vs reference, b: door vs
door, c: stated population vs used), the failing classes by family with their counts, and a
minimal reproducer per family (the smallest failing case, reduced; --no-reduce to skip).
Exit status 1 when a check failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from differential_campaign import (FAMILIES, case_failures, family, reduce_case,  # noqa: E402
                                   reproducer, run_seeds, summary_rows)

KINDS = {"a": "door vs reference", "b": "door vs door", "c": "stated population vs used"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0, help="first seed (cases use seed, seed+1...)")
    ap.add_argument("--te908", help="trec_eval 9.0.8 binary (pytrec_eval is checked against it)")
    ap.add_argument("--te10", help="trec_eval 10.0 binary (for --compat 10.0 cases)")
    ap.add_argument("--pt-every", type=int, default=1,
                    help="pt.Experiment on every Nth case (0: never; it runs only on the "
                         "cases with ir_measures names and no trec_eval option)")
    ap.add_argument("--cqr-every", type=int, default=10,
                    help="a cqr case (CAsT 2021 demo, retrieval) beside every Nth (0: never)")
    ap.add_argument("--no-reduce", action="store_true", help="no minimal reproducers")
    ap.add_argument("--report", help="write every failing check (class, seed, detail) as JSON")
    args = ap.parse_args(argv)
    start = time.time()

    def progress(i, seed, checks):
        if (i + 1) % 50 == 0:
            print(f"  {i + 1} cases, {time.time() - start:.0f} s", file=sys.stderr)

    seeds = range(args.seed, args.seed + args.cases)
    tally, cases, cqr_cases = run_seeds(seeds, args.te908, args.te10, args.pt_every, progress,
                             args.cqr_every)
    elapsed = time.time() - start
    failing_cases = {c.seed for fails in tally.failures.values() for c, _ in fails}
    print(f"\ndifferential campaign: {cases} cases (seeds {seeds.start}-{seeds.stop - 1}) "
          f"and {cqr_cases} cqr cases, {tally.checks} checks "
          f"({tally.checks / max(cases, 1):.0f} per case), "
          f"{len(failing_cases)} cases with a failure, {elapsed:.0f} s\n")
    print(f"| {'check':<34} | {'checks':>8} | {'failed':>7} |")
    print(f"|{'-' * 36}|{'-' * 10}|{'-' * 9}|")
    for kind in sorted(tally.by_check):
        n, failed = tally.by_check[kind]
        print(f"| {kind}: {KINDS.get(kind, kind):<31} | {n:>8} | {failed:>7} |")
    print(f"| {'all':<34} | {tally.checks:>8} | "
          f"{sum(f for _, f in tally.by_check.values()):>7} |\n")
    rows = summary_rows(tally)
    names = {fid: name for fid, name, _ in FAMILIES}
    by_family = {}
    for fid, cls, n, ncases, first in rows:
        by_family.setdefault(fid, []).append((cls, n, ncases, first))
    for fid, classes in by_family.items():
        seeds_hit = {c.seed for cls, *_ in classes for c, _ in tally.failures[cls]}
        print(f"{fid}: {names.get(fid, 'not a known family')}: "
              f"{sum(n for _, n, _, _ in classes)} failed checks in {len(seeds_hit)} cases")
        for cls, n, ncases, first in classes:
            print(f"    {n:>6} checks {ncases:>4} cases (first seed {first:>4})  {cls}")
    if not args.no_reduce:
        for fid, classes in by_family.items():
            cls = max(classes, key=lambda c: c[2])[0]          # the class seen in most cases
            case = min((c for c, _ in tally.failures[cls]), key=lambda c: c.size())
            if fid == "cqr":                                   # replayed by its seed
                print(f"\nreproducer, cqr ({cls}): {case.describe()}\n  -> "
                      f"{tally.failures[cls][0][1]}")
                continue
            kw = dict(te908=args.te908, te10=args.te10, with_pt="pt.Experiment" in cls)
            small = reduce_case(case, cls, **kw)
            detail = case_failures(small, **kw).failures[cls][0][1]
            print(f"\nminimal reproducer, {fid} ({cls}):\n{reproducer(small)}\n  -> {detail}")
    if args.report:
        Path(args.report).write_text(json.dumps(
            [{"class": cls, "family": family(cls)[0], "seed": c.seed, "case": c.describe(),
              "detail": d} for cls, fails in tally.failures.items() for c, d in fails],
            indent=1))
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
