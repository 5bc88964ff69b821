"""Seeded cases of the differential harness: small mutations of the real CAsT 2021, QReCC and
TopiOCQA files, each put through every door (differential_doors) and every reference
(differential_refs) by differential_checks.

A case is two runs and one qrels over a few topics (about a hundred documents per topic, so a
door takes well under a second), the options of one call (-c, -l, -M, -J, --compat 10.0) and a
mix of trec_eval and ir_measures names. The mutations are the inputs on which doors used to
disagree: topic subsets (qrels-only and run-only topics), empty rankings (dict doors only: a
file cannot hold one), exact score ties, grades 0-4 and negative, duplicated judgments.

Two inputs are avoided because pytrec_eval itself, the reference, misbehaves on them (see
tests/compat_cases.py): a judged topic whose grades are all negative, and an empty ranking as
the first topic evaluated (empty rankings are put last in the run dict, after a non-empty one).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from conftest import data_path

# (name given to -m / the API, the name outputs print it under); trec_eval names are averaged
# by trec_eval's rule, ir_measures names by ir_measures'. Every one averages per topic values
# that are 0 for a topic without results (so -c's "missing counts 0" is computable).
TREC_NAMES = [("map", "map"), ("recip_rank", "recip_rank"), ("P.5", "P_5"),
              ("ndcg_cut.3", "ndcg_cut_3"), ("ndcg_cut.10", "ndcg_cut_10"),
              ("recall.100", "recall_100"), ("Rprec", "Rprec"), ("bpref", "bpref"),
              ("success.1", "success_1")]
IRM_NAMES = ["RR@3", "nDCG@3", "nDCG@10", "R@100", "P@5", "AP@100"]
BARE_NAMES = ["AP", "RR"]   # bare names: rarer, the command line refuses them today
RUNS = ("runA", "runB")


@dataclass
class Case:
    """One call's inputs. qrels: (qid, docno, grade) lines in file order (duplicates kept);
    runs: {name: [(qid, docno, score)]} in file order; empty: {name: [qids]} that the dict
    doors get as empty rankings ({qid: {}}); options: the trec_eval options of the call."""

    seed: int
    source: str
    qrels: list
    runs: dict
    empty: dict
    options: dict
    measures: list          # [(arg, key)]
    tags: list = field(default_factory=list)

    @property
    def duplicated(self) -> bool:
        return len({(q, d) for q, d, _ in self.qrels}) < len(self.qrels)

    def trec_keys(self):
        return [k for a, k in self.measures if not is_irm(k)]

    def irm_keys(self):
        return [k for a, k in self.measures if is_irm(k)]

    def cli_options(self) -> list:
        o, args = self.options, []
        if o.get("complete"):
            args.append("-c")
        if o.get("relevance_level", 1) != 1:
            args += ["-l", str(o["relevance_level"])]
        if o.get("max_docs"):
            args += ["-M", str(o["max_docs"])]
        if o.get("judged_only"):
            args.append("-J")
        if o.get("compat", "9.0.8") != "9.0.8":
            args += ["--compat", o["compat"]]
        return args

    def has_options(self) -> bool:
        return bool(self.cli_options())

    def size(self) -> int:
        return len(self.qrels) + sum(len(r) for r in self.runs.values())

    def write(self, folder: Path) -> dict:
        """qrels and run files in folder; returns {"qrels": path, run name: path}."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = {"qrels": folder / "qrels.txt"}
        paths["qrels"].write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in self.qrels))
        for name, rows in self.runs.items():
            paths[name] = folder / f"{name}.run"
            paths[name].write_text("".join(f"{q} Q0 {d} {i} {s:.3f} {name}\n"
                                           for i, (q, d, s) in enumerate(rows, 1)))
        return paths

    def describe(self) -> str:
        return (f"seed {self.seed} ({self.source}; {' '.join(self.tags) or 'plain'}): "
                f"-m {' -m '.join(a for a, _ in self.measures)} {' '.join(self.cli_options())}")


def is_irm(key: str) -> bool:
    return "@" in key or key in BARE_NAMES


def qrels_dict(case: Case) -> dict:
    """{qid: {docno: grade}}; a duplicated judgment keeps its last grade (a dict holds one)."""
    out: dict = {}
    for q, d, g in case.qrels:
        out.setdefault(q, {})[d] = int(g)
    return out


def run_dict(case: Case, name: str, with_empty: bool) -> dict:
    """{qid: {docno: score}} in file order; with_empty adds the case's empty rankings last."""
    out: dict = {}
    for q, d, s in case.runs[name]:
        out.setdefault(q, {})[d] = float(f"{s:.3f}")
    if with_empty:
        for q in case.empty.get(name, []):
            out.setdefault(q, {})
    return out


def depth_of(qid: str) -> int:
    """A conversational turn id's turn number (31_4, QReCC-Test_31_4, 1-4: 4)."""
    return int(re.search(r"(\d+)$", qid).group(1))


@functools.lru_cache(maxsize=None)
def _source(name: str):
    """(qrels {qid: {docno: grade}}, [runs {qid: [(docno, score)]}]) of one real data set."""
    if name == "cast2021":
        qrels = _read_qrels(data_path("cast2021", "qrels-docs.2021.qrel"))
        runs = [_read_run(data_path("cast2021", f"docrun_org_{n}.run"))
                for n in ("convdr", "manual_bm25", "manual_ance")]
        return qrels, runs
    if name == "qrecc":
        return _read_qrels(data_path("qrecc", "qrecc_qrel.tsv"), limit=3000), []
    return _read_qrels(data_path("topiocqa", "dev_gold.trec"), limit=3000), []


def _read_qrels(path, limit=None) -> dict:
    out: dict = {}
    with open(path) as f:
        for i, line in enumerate(f):
            if limit and i >= limit:
                break
            q, _, d, g = line.split()
            out.setdefault(q, {})[d] = int(g)
    return out


def _read_run(path) -> dict:
    out: dict = {}
    with open(path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            out.setdefault(q, []).append((d, float(s)))
    return out


def make_case(seed: int) -> Case:
    """The case of this seed: same seed, same case (numpy's PCG64, no hash order)."""
    rng = np.random.default_rng(seed)
    source = ["cast2021", "cast2021", "qrecc", "topiocqa"][int(rng.integers(4))]
    qrels_all, real_runs = _source(source)
    tags = []
    topics = sorted(qrels_all)
    chosen = [topics[i] for i in sorted(rng.choice(len(topics), size=int(rng.integers(3, 7)),
                                                   replace=False))]
    pool = sorted({d for q in qrels_all for d in qrels_all[q]})
    qrels = []
    for q in chosen:
        judged = list(qrels_all[q].items())[:60]
        for d, g in judged:
            if source != "cast2021" or rng.random() < 0.15:   # regrade: 0-4 and negative
                g = int(rng.choice([-1, 0, 1, 1, 2, 3, 4]))
            qrels.append((q, d, g))
        for d in rng.choice(pool, size=int(rng.integers(0, 6)), replace=False):
            if d not in qrels_all[q]:
                qrels.append((q, str(d), int(rng.choice([0, 0, 1, 2]))))
        if all(g < 0 for t, _, g in qrels if t == q):
            qrels.append((q, "zz-judged-0", 0))
    runs, empty = {}, {}
    for k, name in enumerate(RUNS):
        rows = []
        for q in chosen:
            base = real_runs[(k + seed) % len(real_runs)].get(q) if real_runs else None
            rows += [(q, d, s) for d, s in _ranking(rng, q, base, qrels_all.get(q, {}), pool)]
        runs[name] = rows
    # topic subsets: each side loses topics (qrels-only, run-only topics), one topic in common
    keep = chosen[int(rng.integers(len(chosen)))]
    if rng.random() < 0.7:
        tags.append("subsets")
        gone_q = {q for q in chosen if q != keep and rng.random() < 0.3}
        qrels = [r for r in qrels if r[0] not in gone_q]
        for name in RUNS:
            gone = {q for q in chosen if q != keep and rng.random() < 0.35}
            runs[name] = [r for r in runs[name] if r[0] not in gone]
            if gone and rng.random() < 0.6:
                empty[name] = sorted(gone)[:2]
    if empty:
        tags.append("empty")
    if rng.random() < 0.1:
        tags.append("duplicated")
        q, d, g = qrels[int(rng.integers(len(qrels)))]
        qrels.append((q, d, int(rng.choice([g, 0, 2]))))
    options = _options(rng)
    trec = [TREC_NAMES[i] for i in rng.choice(len(TREC_NAMES), size=int(rng.integers(1, 4)),
                                              replace=False)]
    # one parameter list per trec_eval measure: given twice (-m ndcg_cut.10 -m ndcg_cut.3),
    # trec_eval keeps the first and trecqr does too, where pytrec_eval computes both
    trec = [m for i, m in enumerate(trec)
            if m[0].split(".")[0] not in {t[0].split(".")[0] for t in trec[:i]}]
    irm = [(str(n), str(n))
           for n in rng.choice(IRM_NAMES, size=int(rng.integers(1, 4)), replace=False)]
    if rng.random() < 0.08:
        irm.append((str(rng.choice(BARE_NAMES)),) * 2)
    if options and rng.random() < 0.7:
        measures = trec
    else:
        measures = trec + irm
        rng.shuffle(measures)
    if any(s for r in runs.values() for s in _ties(r)):
        tags.append("ties")
    return Case(seed, source, qrels, runs, empty, options, [tuple(m) for m in measures], tags)


def _ranking(rng, qid, base, judged, pool):
    """About 20-100 (docno, score) of one topic: the real run's ranking when there is one,
    else judged documents mixed with others of the pool; scores with 3 decimals (distinct as
    32-bit floats too, so 9.0.8 and 10.0 sort them alike), some tied exactly."""
    if base:
        docs = [d for d, _ in base[:int(rng.integers(20, 100))]]
    else:
        docs = list(judged)[:5] + [str(d) for d in rng.choice(pool, size=30, replace=False)]
        docs = list(dict.fromkeys(docs))
        rng.shuffle(docs)
    scores = np.round(np.sort(rng.random(len(docs)) * 50)[::-1], 3)
    for i in range(1, len(scores)):
        if rng.random() < 0.08:
            scores[i] = scores[i - 1]                     # an exact tie
    return list(zip(docs, (float(s) for s in scores)))


def _ties(rows):
    seen = set()
    for q, _, s in rows:
        if (q, s) in seen:
            yield True
        seen.add((q, s))


def _options(rng) -> dict:
    options = {}
    for flag, value, p in (("complete", True, 0.25), ("relevance_level", 2, 0.15),
                           ("max_docs", int(rng.choice([1, 5, 10, 50])), 0.2),
                           ("judged_only", True, 0.15), ("compat", "10.0", 0.2)):
        if rng.random() < p:
            options[flag] = value
    return options
