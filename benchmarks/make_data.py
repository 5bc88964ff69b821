"""Generate an MS MARCO-sized run and qrels (6,980 queries x 1,000 docs) for benchmarks.

Docids are MS MARCO-like integers (0..8.8M) without repeats within a query; scores are BM25-like
floats with 6 decimals (so some ties occur); qrels have ~1.1 relevant passages per query, about
half of them retrieved. Deterministic (seeded); written to benchmarks/data/ (git-ignored).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def make(out: Path, queries: int = 6980, depth: int = 1000, seed: int = 0) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = out / f"run.{queries}x{depth}.txt", out / f"qrels.{queries}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    rng = np.random.default_rng(seed)
    ndocs = 8_841_823
    qids = np.arange(queries) * 7 + 1_000_000
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for q in qids:
            start = rng.integers(0, ndocs)
            stride = int(rng.integers(1, 5000)) * 2 + 1
            docs = (start + stride * np.arange(depth)) % ndocs
            scores = np.round(np.sort(rng.gamma(2.0, 4.0, depth))[::-1] + 5, 6)
            run.write("".join(f"{q} Q0 {d} {r} {s:.6f} bench\n"
                              for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist()), 1)))
            nrel = 1 + (rng.random() < 0.1)
            judged = {int(docs[rng.integers(0, depth)]) if rng.random() < 0.5
                      else int((start + 3 + i) % ndocs) for i in range(nrel)}
            qrels.write("".join(f"{q} 0 {doc} 1\n" for doc in sorted(judged)))
    return run_path, qrels_path


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data")
    a = ap.parse_args()
    print(*make(a.out, a.queries, a.depth))
