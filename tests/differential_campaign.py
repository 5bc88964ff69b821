"""Running the differential harness over many seeds: the tally by check and by class, the
families a class belongs to (the known disagreements, named once here), and a
minimal reproducer per family (the smallest failing case, reduced topic by topic and line by
line while the same class still fails). Used by tests/api/test_differential.py and
benchmarks/differential.py.
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

from differential_cases import Case, make_case
from differential_checks import Tally, check_case
from differential_cqr import check_cqr

# (id, family, pattern on the class): the first that matches names a failing class's family
FAMILIES = [
    ("irm-mean", "ir_measures name averaged over run topics (compare, report, breakdown, "
     "compare())", r"^(a \| (mean|pair mean) \| (compare|report|trecqr\.compare)|a \| breakdown "
     r"group mean|b \| mean \|.*(compare|report)).*irm"),
    ("irm-topics", "ir_measures name: per-topic lists differ (eval -q, report vs per_query, "
     "provider)", r"per-topic topics.*irm"),
    ("irm-n", "ir_measures name: stated n is the evaluated topics (coverage line, compare, "
     "report)", r"^c \| (stated n|pair n|topics line).*irm"),
    ("c-9.0.8", "eval -c under 9.0.8: stated n is the run's topics",
     r"^c \| stated n .* -c 9\.0\.8"),
    ("mixed-n", "one stated n for a mixed output (Results' 'N topics')",
     r"^c \| (stated n|topics line|pair n) .*\| trec( -c 10\.0)?$"),
    ("breakdown-n", "breakdown n describes another population", r"^c \| breakdown n"),
    ("empty-dict", "empty ranking in a dict: dropped instead of scored 0",
     r"empty ranking in dict"),
    ("empty-dict-refused", "empty ranking in a dict: counted as a missing topic, so refused "
     "(--compat 10.0's 'no results', or 'no queries with both')",
     r"refuses what the reference answers \| evaluate\(dicts\)"),
    ("wide", "DataFrame (wide) and per_query() list other topics", r"to_dataframe"),
    ("order", "provider / pt.Experiment column order", r"column order"),
    ("refusal", "doors refuse different calls", r"^b \| refusal"),
    ("cqr", "cqr's columns average different populations, or not the stated one", r"\| cqr"),
    ("one-line", "a refusal of more than one line, or a traceback", r"refusal in one line"),
]


def family(cls: str) -> tuple:
    """(id, description) of a failing class's family; ("other", the class) if none."""
    for fid, name, pattern in FAMILIES:
        if re.search(pattern, cls):
            return fid, name
    return "other", cls


def run_seeds(seeds, te908=None, te10=None, pt_every=0, progress=None, cqr_every=0):
    """(Tally, cases, cqr cases) over these seeds; pt.Experiment every pt_every-th case, a cqr case
    (differential_cqr) beside every cqr_every-th (0: never)."""
    tally, cases, cqr_cases = Tally(), 0, 0
    with tempfile.TemporaryDirectory(prefix="trecqr-diff-") as tmp:
        for i, seed in enumerate(seeds):
            before = tally.checks
            check_case(make_case(seed), Path(tmp) / str(seed), tally, te908, te10,
                       with_pt=bool(pt_every) and i % pt_every == 0)
            cases += 1
            if cqr_every and i % cqr_every == 0:
                check_cqr(seed, Path(tmp) / f"cqr-{seed}", tally)
                cqr_cases += 1
            if progress:
                progress(i, seed, tally.checks - before)
    return tally, cases, cqr_cases


def case_failures(case: Case, te908=None, te10=None, with_pt=False) -> Tally:
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="trecqr-diff-") as tmp:
        check_case(case, Path(tmp) / "case", tally, te908, te10, with_pt=with_pt)
    return tally


def reduce_case(case: Case, cls: str, budget: int = 80, **kw) -> Case:
    """A smaller case on which cls still fails: names dropped one by one, then topics, then
    each side's lines in halves, quarters... down to single lines (within budget attempts)."""
    fails = (lambda c: cls in case_failures(c, **kw).failures)
    tries = 0

    def attempt(candidate):
        nonlocal tries
        tries += 1
        # every run keeps a line (an empty run file is refused by every tool alike)
        return (tries <= budget and all(candidate.runs.values()) and candidate.qrels
                and fails(candidate))

    for m in list(case.measures):
        smaller = dataclasses.replace(case, measures=[x for x in case.measures if x != m])
        if smaller.measures and attempt(smaller):
            case = smaller
    for q in sorted({q for q, _, _ in case.qrels} | {q for r in case.runs.values()
                                                     for q, _, _ in r}):
        smaller = _without(case, lambda row: row[0] == q, drop_empty=q)
        if attempt(smaller):
            case = smaller
    for part in ["qrels"] + list(case.runs):
        chunk = len(_rows(case, part)) // 2
        while chunk >= 1 and tries < budget:
            i = 0
            while i < len(_rows(case, part)) and tries < budget:
                rows = _rows(case, part)
                smaller = _with_rows(case, part, rows[:i] + rows[i + chunk:])
                if attempt(smaller):
                    case = smaller
                else:
                    i += chunk
            chunk //= 2
    return case


def _rows(case, part):
    return case.qrels if part == "qrels" else case.runs[part]


def _with_rows(case, part, rows):
    if part == "qrels":
        return dataclasses.replace(case, qrels=list(rows))
    return dataclasses.replace(case, runs={**case.runs, part: list(rows)})


def _without(case, drop, drop_empty):
    return dataclasses.replace(
        case, qrels=[r for r in case.qrels if not drop(r)],
        runs={n: [r for r in rows if not drop(r)] for n, rows in case.runs.items()},
        empty={n: [q for q in qs if q != drop_empty] for n, qs in case.empty.items()})


def reproducer(case: Case) -> str:
    """The case as files and the calls to make: enough to replay it by hand."""
    lines = [case.describe(), "qrels:"]
    lines += [f"  {q} 0 {d} {g}" for q, d, g in case.qrels]
    for name, rows in case.runs.items():
        lines.append(f"{name}:" + (f"  (dict doors: empty rankings {case.empty[name]})"
                                   if case.empty.get(name) else ""))
        lines += [f"  {q} Q0 {d} {i} {s:.3f} {name}" for i, (q, d, s) in enumerate(rows, 1)]
    return "\n".join(lines)


def summary_rows(tally: Tally):
    """[(family id, class, failing checks, failing cases, first seed)], by family, largest
    first."""
    rows = []
    for cls, fails in tally.failures.items():
        seeds = sorted({c.seed for c, _ in fails})
        rows.append((family(cls)[0], cls, len(fails), len(seeds), seeds[0]))
    return sorted(rows, key=lambda r: (r[0], -r[2], r[1]))
