"""Seeded random qrels/runs (pytrec_eval dicts) that stress what compatibility depends on.

Scores tie exactly, differ by 1e-9 (equal as C floats: trec_eval 9.0.8 ties them, Python's
sort does not) or by 1e-7 (distinct as floats); grades run from -1 to 3; topics are missing
from either side; docnos are numeric (strcmp order differs from numeric order) or URL-like.

Two inputs are avoided because pytrec_eval itself misbehaves on them (trec_eval 9.0.8 keeps
per-topic state in statics): a judged topic whose grades are all negative (its
``num_rel_levels`` is left over from the previous topic; ndcg can loop forever), and an
empty ranking as the first topic evaluated (pytrec_eval reads unallocated memory).
"""

from __future__ import annotations

import numpy as np


def make_case(seed: int):
    rng = np.random.default_rng(seed)
    url = rng.random() < 0.5

    def doc(i: int) -> str:
        return f"http://ex.org/{i}?a=b" if url and i % 3 == 0 else str(i)

    qrels, run = {}, {}
    for _ in range(int(rng.integers(2, 12))):
        qid = str(int(rng.integers(0, 40)))
        ndoc = int(rng.integers(5, 60))
        pool = rng.choice(200, size=ndoc + 20, replace=False)
        if rng.random() < 0.85:
            judged = pool[: int(rng.integers(1, ndoc + 10))]
            grades = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=len(judged))
            grades[0] = max(grades[0], 0)
            qrels[qid] = {doc(int(d)): int(g) for d, g in zip(judged, grades)}
        if rng.random() < 0.85:
            start = int(rng.integers(0, 10))
            ret = pool[start:start + ndoc]
            if rng.random() < 0.5:
                base = rng.choice([0.5, 1.0, 2.0, 3.0], size=len(ret))
            else:
                base = rng.random(len(ret))
            jitter = rng.choice([0.0, 1e-9, -1e-9, 1e-7], size=len(ret))
            run[qid] = {doc(int(d)): float(b + j) for d, b, j in zip(ret, base, jitter)}
        elif rng.random() < 0.3:
            run[qid] = {}
    # an empty ranking must not be the first topic pytrec_eval evaluates
    scored = [q for q in run if q in qrels and run[q]]
    if scored:
        run = {scored[0]: run[scored[0]], **{q: d for q, d in run.items() if q != scored[0]}}
    else:
        run = {q: d for q, d in run.items() if d}
    return qrels, run


def write_case(qrels: dict, run: dict, directory):
    """Write the case as TREC files; returns (qrels path, run path)."""
    qpath, rpath = directory / "qrels.txt", directory / "run.txt"
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items()
                             for d, g in docs.items()))
    rpath.write_text("".join(f"{q} Q0 {d} 0 {s!r} gen\n" for q, docs in run.items()
                             for d, s in docs.items()))
    return qpath, rpath


def same(a: float, b: float) -> bool:
    """Exact equality, NaN equal to NaN (trec_eval's 0/0 for an empty ranking)."""
    return a == b or (a != a and b != b)
