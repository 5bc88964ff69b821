"""Shared inputs of the statistics tests (tests/stats/): the CAsT 2021 organisers' five
document runs scored by trecqr (map and ndcg_cut.3 per topic, the official document qrels),
as runs x topics matrices over the topics every run is evaluated on.

A plain module, not a conftest.py: a second conftest.py outside a package would replace
tests/conftest.py in ``sys.modules`` and break the ``from conftest import ...`` of the other
test files."""

from __future__ import annotations

import functools

import numpy as np

import trecqr
from conftest import data_path
from trecqr.formats import read_run
from trecqr.report.stats import reproduction

CAST_RUNS = ["docrun_org_convdr.run", "docrun_org_convdr_bert.run",
             "docrun_org_manual_ance.run", "docrun_org_manual_ance_bert.run",
             "docrun_org_manual_bm25.run"]
MEASURES = ["map", "ndcg_cut_3"]


@functools.lru_cache(maxsize=None)
def cast_scores() -> dict:
    """{"qrels": path, "runs": [path], "topics": [qid], "map": matrix, "ndcg_cut_3":
    matrix}, each matrix runs x topics (trecqr's trec_eval-exact per-topic values)."""
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    runs = [data_path("cast2021", r) for r in CAST_RUNS]
    per = [trecqr.evaluate(qrels, r, ["map", "ndcg_cut.3"]).per_query() for r in runs]
    topics = sorted(set.intersection(*(set(p) for p in per)))
    out = {"qrels": qrels, "runs": runs, "topics": topics}
    for m in MEASURES:
        out[m] = np.array([[p[t][m] for t in topics] for p in per])
    return out


def pairs(n: int) -> list:
    """(i, j) for i < j, in row order (statsmodels' and scipy's order of pairs)."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def perturb_run(src, dst, seed: int) -> None:
    """A reproduction: each topic's ranking with a fifth of its adjacent pairs swapped and a
    tenth of its documents replaced by documents the original lacks; scores go down."""
    rng = np.random.default_rng(seed)
    with open(dst, "w", encoding="utf-8") as out:
        for topic, docs in reproduction.rankings_of(read_run(src)).items():
            docs = list(docs)
            for _ in range(len(docs) // 5):
                i = int(rng.integers(0, len(docs) - 1))
                docs[i], docs[i + 1] = docs[i + 1], docs[i]
            for i in rng.choice(len(docs), size=len(docs) // 10, replace=False):
                docs[i] = f"NEW_{topic}_{i}"
            out.writelines(f"{topic} Q0 {d} {r} {1000 - r} repro\n"
                           for r, d in enumerate(docs, 1))
