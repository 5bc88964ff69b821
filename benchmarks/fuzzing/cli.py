"""``python benchmarks/fuzz.py``: run the campaign, print its table, write its report."""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from .cases import TEMPLATES, make_case, usable
from .options import OptionPicker, is_focus, uncovered
from .runner import FLAGS, preload, run_all, stop_all, verdict_on_stderr
from .sources import prepare_sources

COLUMNS = [("cases", "cases"), ("clean", "clean"), ("traceback", "tracebacks"),
           ("internal", "internal errors"), ("exit", "other exit codes"),
           ("multiline", "multi-line errors"), ("leftover", "leftover files"), ("hang", "hangs"),
           ("empty", "empty outputs (exit 0)")]


def summarise(results) -> list:
    table = collections.OrderedDict()
    for sub, flags in results:
        row = table.setdefault(sub, collections.Counter())
        row["cases"] += 1
        if not flags:
            row["clean"] += 1
        for key in FLAGS:
            if key in flags:
                row[key] += 1
    return [(sub, table[sub]) for sub in sorted(table)]


def markdown(rows) -> str:
    out = ["| command | " + " | ".join(c[1] for c in COLUMNS) + " |",
           "| --- |" + " ---: |" * len(COLUMNS)]
    total = collections.Counter()
    for sub, row in rows:
        total.update(row)
        out.append(f"| {sub} | " + " | ".join(str(row[c[0]]) for c in COLUMNS) + " |")
    out.append("| **all** | " + " | ".join(f"**{total[c[0]]}**" for c in COLUMNS) + " |")
    return "\n".join(out)


def static_gaps(sources: dict | None = None) -> list:
    """Command paths of ``trecqr --help`` without a template (all must have one)."""
    have = {t[0] for t in (usable(sources, None) if sources is not None else TEMPLATES)}
    return sorted(set(OptionPicker().table) - have)


def campaign(cases: int, seed: int = 0, jobs: int = 2, timeout: float = 90.0,
             only: set | None = None, report: str | None = None, keep: bool = False,
             progress: bool = True, base: str | None = None, fast: bool = False,
             dry: bool = False):
    """Run the campaign; returns (table rows, unclean cases, summary dict). dry: make the
    cases (and count what they cover) without running them."""
    rng = random.Random(seed)
    base_dir = Path(base or tempfile.mkdtemp(prefix="trecqr-fuzz-"))
    scratch = base_dir / "_io"
    scratch.mkdir(parents=True, exist_ok=True)
    sources = prepare_sources(base_dir, ("bm25s",) if fast else ("bm25s", "lucene", "dense"))
    preload()
    picker = OptionPicker()
    results, bad, focus = [], [], [0]
    specs = [(i, random.Random(rng.random())) for i in range(cases)]
    running: list = []

    def done(case, flags, res) -> None:
        results.append((case.sub, flags))
        focus[0] += is_focus(case.sub, case.argv)
        if flags:
            bad.append({"case": case.number, "sub": case.sub,
                        "argv": [os.fsdecode(a) if isinstance(a, bytes) else a
                                 for a in case.argv],
                        "changes": case.changes, "code": res["code"], "flags": flags,
                        "stderr": res["stderr"][-3000:]})
            if report:  # as they come, to look at during a long run
                with open(report + ".unclean.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(bad[-1]) + "\n")
        if progress and len(results) % 100 == 0:
            print(f"{len(results)}/{cases} cases, {len(bad)} unclean", file=sys.stderr,
                  flush=True)
        if not keep and not flags:
            shutil.rmtree(case.folder, ignore_errors=True)

    def stop(signum, frame):
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, stop)
    try:
        if dry:
            for i, r in specs:
                case = make_case(r, i, base_dir, sources, only, picker)
                results.append((case.sub, {}))
                focus[0] += is_focus(case.sub, case.argv)
                shutil.rmtree(case.folder, ignore_errors=True)
        else:
            run_all(specs, running, jobs, base_dir, sources, only, scratch, timeout, done,
                    picker)
    finally:  # stopped: no child is left running
        signal.signal(signal.SIGTERM, old_term)
        stop_all(running)
    rows = summarise(results)
    table = picker.table if not only else {p: o for p, o in picker.table.items()
                                           if p in only or p.split()[0] in only}
    summary = {"cases": cases, "seed": seed, "focus_cases": focus[0],
               "uncovered_options": uncovered(picker.used, table),
               "commands_without_template": static_gaps(sources)}
    if report:
        with open(report, "w", encoding="utf-8") as fh:
            json.dump({**summary, "table": {s: dict(r) for s, r in rows},
                   "options_used": {p: dict(c) for p, c in picker.used.items()},
                       "unclean": sorted(bad, key=lambda b: b["case"])}, fh, indent=1)
    if not keep:
        with contextlib.suppress(OSError):
            shutil.rmtree(base_dir, ignore_errors=True)
    return rows, bad, summary


def merge(paths) -> int:
    """The table and coverage of several reports (pieces run with different seeds)."""
    total: dict = {}
    used: dict = {}
    n, focus, seeds, unclean = 0, 0, [], 0
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            rep = json.load(fh)
        n += rep["cases"]
        focus += rep["focus_cases"]
        seeds.append(str(rep["seed"]))
        for sub, row in rep["table"].items():
            total.setdefault(sub, collections.Counter()).update(row)
        for rec in rep["unclean"]:  # judged by a rule added after the piece ran
            kind = set(rec["flags"])
            if kind in ({"empty"}, {"multiline"}) and verdict_on_stderr(rec["sub"]) and \
                    rec["stderr"].strip():
                total[rec["sub"]][kind.pop()] -= 1
                total[rec["sub"]]["clean"] += 1
            else:
                unclean += 1
        for p, counts in rep["options_used"].items():
            used.setdefault(p, collections.Counter()).update(counts)
    print(markdown(sorted(total.items())))
    gaps = uncovered(used, OptionPicker().table)
    print(f"\n{n} cases (seeds {', '.join(seeds)}); {unclean} unclean; {focus} on fuse, report, "
          "measures or --candidates/--missing/--min-results/--protocol/--groups/--html/--manual;"
          f" options no case held: {', '.join(gaps) or 'none'}")
    return 1 if unclean or gaps else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Fuzz campaign: every trecqr command and option.")
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per case (a hang)")
    ap.add_argument("--only", action="append",
                    help="a command to fuzz ('convert' or 'convert cast'), repeatable or "
                         "comma-separated (default: all)")
    ap.add_argument("--report", help="write the summary and the unclean cases here (JSON)")
    ap.add_argument("--keep", action="store_true", help="keep every case folder")
    ap.add_argument("--fast", action="store_true",
                    help="leave out the Lucene and dense backends (JVM and torch start-up)")
    ap.add_argument("--coverage-from", type=int, default=1000,
                    help="with this many cases or more, an option no case held fails the "
                         "campaign (default 1000)")
    ap.add_argument("--dry-run", action="store_true",
                    help="make the cases and report their coverage without running them")
    ap.add_argument("--merge", nargs="+", metavar="REPORT",
                    help="print the table and coverage of these reports, run nothing")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge)
    only = {name.strip() for names in args.only or () for name in names.split(",")}
    known = {t[0] for t in TEMPLATES} | {t[0].split()[0] for t in TEMPLATES}
    if only - known:
        ap.error(f"--only: no such command: {', '.join(sorted(only - known))}")
    start = time.monotonic()
    rows, bad, summary = campaign(args.cases, args.seed, args.jobs, args.timeout,
                                  only or None, args.report, args.keep, fast=args.fast,
                                  dry=args.dry_run)
    print(markdown(rows))
    print(f"\n{args.cases} cases in {time.monotonic() - start:.0f} s (seed {args.seed}); "
          f"{len(bad)} unclean; {summary['focus_cases']} on fuse, report, measures or "
          "--candidates/--missing/--min-results/--protocol/--groups/--html/--manual")
    gaps = summary["uncovered_options"]
    if gaps:
        print(f"options no case held ({len(gaps)}): {', '.join(gaps)}")
    if summary["commands_without_template"]:
        print("commands without a template: "
              + ", ".join(summary["commands_without_template"]))
    failed = bad or (gaps and not only and args.cases >= args.coverage_from) or \
        summary["commands_without_template"]
    return 1 if failed else 0
