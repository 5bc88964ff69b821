"""The cqr door of the differential harness (campaign only: it retrieves, a second or two a
case). A case is a seeded subset of the CAsT 2021 demo (fixtures/cast2021-demo: its real
topics, its known-item qrels, BM25 over its 234 passages): raw turns, manual rewrites for some
of them (the others follow --missing raw or drop), qrels for some (qrels-only and unjudged
turns). cqr keeps each row's run (--runs-dir); the references score that run.

cqr composes its table itself, so every column must average one population, the one its
coverage states (``coverage.evaluated``; differential_stated names the field). A column may
average the turns with results (trec_eval's rule), or every judged turn asked with a missing
one counting 0 (ir_measures' rule): each column's value is matched against both (and against
every qrels topic), and the checks ask that all columns match the same one, the stated one.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from conftest import ROOT, run_cli
from differential_cases import Case
from differential_refs import REFUSE, _irm, _trec, same

DEMO = ROOT / "fixtures" / "cast2021-demo"
_INDEX: list = []


def _index() -> list:
    """--collection and --index the first time (cqr builds and keeps it), --index after."""
    if not _INDEX:
        folder = Path(tempfile.mkdtemp(prefix="trecqr-diff-index-")) / "index"
        atexit.register(shutil.rmtree, folder.parent, True)
        _INDEX.append(folder)
        return ["--collection", DEMO / "collection.jsonl", "--index", folder]
    return ["--index", _INDEX[0]]


def _lines(name):
    return (DEMO / name).read_text().splitlines()


def check_cqr(seed: int, folder: Path, tally) -> None:
    rng = np.random.default_rng(10_000 + seed)
    raw = _lines("topics-raw.tsv")
    start = int(rng.integers(0, len(raw) - 12))
    turns = raw[start:start + int(rng.integers(4, 12))]
    ids = [t.split("\t")[0] for t in turns]
    manual = {t.split("\t")[0]: t for t in _lines("topics-manual.tsv")}
    qrels = [q for q in _lines("qrels.txt") if q.split()[0] in ids and rng.random() < 0.8]
    qrels += [q for q in _lines("qrels.txt")[:int(rng.integers(0, 3))]]   # qrels-only turns
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "raw.tsv").write_text("\n".join(turns) + "\n")
    (folder / "manual.tsv").write_text("".join(manual[i] + "\n" for i in ids
                                               if rng.random() < 0.75))
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    missing = str(rng.choice(["raw", "drop"]))
    args = ["cqr", "--qrels", folder / "qrels.txt", "--raw", folder / "raw.tsv", "--topics",
            folder / "manual.tsv", "--missing", missing, "--format", "json", "--quiet",
            "--runs-dir", folder / "runs", "-k", str(int(rng.choice([10, 100])))] + _index()
    what = f"cqr seed {seed} (turns {ids[0]}..{ids[-1]}, --missing {missing})"
    result = run_cli(args)
    if result.exit_code:
        ok = result.exit_code == 2 and "\n" not in result.stderr.strip()
        tally.check(ok, "a | refusal in one line | cqr", _Seed(seed), result.stderr[:300])
        return
    report = json.loads(result.stdout)
    for row in report["rows"]:
        _check_row(seed, row, report["measures"], folder, ids, tally, what)


class _Seed(Case):
    """A cqr case in the tally (its seed and a size, for the reproducer's choice)."""

    def __init__(self, seed):
        super().__init__(seed, "cast2021-demo (cqr)", [], {}, {}, {}, [])

    def describe(self) -> str:
        return f"cqr seed {self.seed}: run differential_cqr.check_cqr({self.seed}, folder, tally)"


def _check_row(seed, row, names, folder, ids, tally, what):
    qrels = {}
    for line in (folder / "qrels.txt").read_text().split("\n"):
        if line.strip():
            q, _, d, g = line.split()
            qrels.setdefault(q, {})[d] = int(g)
    run = {}
    for line in Path(row["run"]).read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    case = Case(seed, "cqr", [], {}, {}, {}, [(a, _key(a)) for a in names.values()])
    per = _trec(case, qrels, run) if run else {}
    if run and case.irm_keys():
        per.update(_irm(case, qrels, run))
    populations = {"turns with results": {q for q in run if q in qrels},
                   "judged turns asked, missing 0": {q for q in qrels if q in ids},
                   "every qrels topic, missing 0": set(qrels)}
    matched = {}
    for label, name in names.items():
        ref = per.get(_key(name))
        got = row["scores"].get(label)
        if ref is None or ref is REFUSE or got is None:
            continue
        fits = [p for p, topics in populations.items() if topics and same(
            got, sum(ref.topics.get(q, 0.0) for q in sorted(topics)) / len(topics))]
        tally.check(bool(fits), "a | column value (any population) | cqr", _Seed(seed),
                    f"{what}: {label} ({name}) {got}")
        matched[label] = fits
    common = set.intersection(*(set(f) for f in matched.values())) if matched else set()
    tally.check(bool(common), "b | columns average one population | cqr", _Seed(seed),
                f"{what}: " + "; ".join(f"{k}: {v or 'none'}" for k, v in matched.items()))
    stated = row.get("coverage", {}).get("evaluated")
    tally.check(any(len(populations[p]) == stated for p in common) or not common,
                "c | stated n | cqr", _Seed(seed),
                f"{what}: coverage says {stated}, columns average "
                f"{[(p, len(populations[p])) for p in common]}")


def _key(name: str) -> str:
    return name if "@" in name else name.replace(".", "_")
