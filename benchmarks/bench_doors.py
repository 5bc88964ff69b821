"""Every door of trecqr side by side with pytrec_eval, ir_measures and ranx, in one process.

    nice python benchmarks/bench_doors.py [--repeat 5] [--sizes 1x10,1x100,...] [--max-seconds 2]

Data (seeded): TOPICS x DOCS run with uniform random scores, three judgments per topic (two of
the retrieved documents and one unretrieved, grades 1-2). Measures: RR, nDCG@3, R@10, R@100
(pytrec_eval: recip_rank, ndcg_cut.3, recall.10,100; ranx: mrr, ndcg@3, recall@10, recall@100).

Doors timed (milliseconds, best of --repeat; a call faster than 20 ms is repeated in a loop
and the loop's mean is one sample):

* ``pytrec_eval`` ``RelevanceEvaluator(qrels, ms).evaluate(run)`` (construct + evaluate) and
  ``evaluate`` on a reused evaluator;
* ``trecqr.RelevanceEvaluator``, the same two;
* ``ir_measures.calc_aggregate`` on the dicts; ``ranx.evaluate`` on ``Qrels``/``Run`` built
  from the dicts (warmed up: numba compiled before the clock starts; building them is timed);
* ``trecqr.evaluate`` on the dicts, on pandas DataFrames (ir_measures' columns), on TREC files.

The values of every tool are checked against pytrec_eval's means (to 1e-9; ranx rounds
nothing but sums in another order); the table prints ms and each door's ratio to its target
(RelevanceEvaluator: pytrec_eval; trecqr.evaluate: the faster of ir_measures and ranx).
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time

import numpy as np

SIZES = ["1x10", "1x100", "8x100", "64x100", "2514x100", "8209x100", "5000x1000"]
PYTREC = {"recip_rank", "ndcg_cut.3", "recall.10,100"}
PYTREC_KEYS = ["recip_rank", "ndcg_cut_3", "recall_10", "recall_100"]
IRM = ["RR", "nDCG@3", "R@10", "R@100"]
RANX = ["mrr", "ndcg@3", "recall@10", "recall@100"]


def make(topics: int, docs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(topics):
        qid = f"q{q}"
        ids = [f"d{x}" for x in rng.choice(10 * docs + 10, docs + 1, replace=False)]
        run[qid] = dict(zip(ids[:docs], rng.random(docs).tolist()))
        judged = rng.choice(docs, min(2, docs), replace=False).tolist()
        qrels[qid] = {ids[i]: int(rng.integers(1, 3)) for i in judged}
        qrels[qid][ids[docs]] = 1
    return qrels, run


def best(fn, repeat: int, max_seconds: float) -> float:
    """Best of repeat samples, in ms; fast calls are looped so a sample lasts >= 20 ms."""
    gc.collect()
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    loops = max(1, int(0.02 / max(once, 1e-7)))
    samples = []
    deadline = time.perf_counter() + max_seconds
    for i in range(repeat):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        samples.append((time.perf_counter() - t0) / loops)
        if time.perf_counter() > deadline and i >= 1:
            break
    return 1000 * min(samples)


def write_files(tmp: str, qrels: dict, run: dict):
    qpath, rpath = os.path.join(tmp, "qrels.txt"), os.path.join(tmp, "run.txt")
    with open(qpath, "w") as f:
        f.writelines(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    with open(rpath, "w") as f:
        for q, docs in run.items():
            ranked = sorted(docs.items(), key=lambda kv: -kv[1])
            f.writelines(f"{q} Q0 {d} {i} {s!r} r\n" for i, (d, s) in enumerate(ranked, 1))
    return qpath, rpath


def frames(qrels: dict, run: dict):
    import pandas as pd

    q = pd.DataFrame([(a, b, g) for a, docs in qrels.items() for b, g in docs.items()],
                     columns=["query_id", "doc_id", "relevance"])
    r = pd.DataFrame([(a, b, s) for a, docs in run.items() for b, s in docs.items()],
                     columns=["query_id", "doc_id", "score"])
    return q, r


def pytrec_means(per_query: dict) -> list:
    return [float(np.mean([v[k] for v in per_query.values()])) for k in PYTREC_KEYS]


def measure(size: str, args) -> dict:
    import ir_measures
    import pytrec_eval
    import ranx

    import trecqr

    topics, docs = map(int, size.split("x"))
    qrels, run = make(topics, docs)
    qf, rf = frames(qrels, run)
    rep, cap = args.repeat, args.max_seconds
    t: dict = {}
    vals: dict = {}
    expected = pytrec_means(pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run))

    t["pytrec_eval"] = best(lambda: pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run),
                            rep, cap)
    pe = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    t["pytrec_eval reused"] = best(lambda: pe.evaluate(run), rep, cap)
    vals["trecqr RelevanceEvaluator"] = pytrec_means(
        trecqr.RelevanceEvaluator(qrels, PYTREC).evaluate(run))
    t["trecqr RelevanceEvaluator"] = best(
        lambda: trecqr.RelevanceEvaluator(qrels, PYTREC).evaluate(run), rep, cap)
    te = trecqr.RelevanceEvaluator(qrels, PYTREC)
    t["trecqr RelevanceEvaluator reused"] = best(lambda: te.evaluate(run), rep, cap)

    irm = [ir_measures.parse_measure(m) for m in IRM]
    agg = ir_measures.calc_aggregate(irm, qrels, run)
    vals["ir_measures"] = [agg[m] for m in irm]
    t["ir_measures"] = best(lambda: ir_measures.calc_aggregate(irm, qrels, run), rep, cap)

    def with_ranx():
        return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX)
    got = with_ranx()  # warm-up: numba compiles here
    vals["ranx"] = [got[m] for m in RANX]
    t["ranx"] = best(with_ranx, rep, cap)

    for door, (q, r) in {"trecqr.evaluate dicts": (qrels, run),
                         "trecqr.evaluate DataFrame": (qf, rf)}.items():
        vals[door] = list(trecqr.evaluate(q, r, IRM).aggregate().values())
        t[door] = best(lambda q=q, r=r: trecqr.evaluate(q, r, IRM), rep, cap)
    with tempfile.TemporaryDirectory() as tmp:
        qpath, rpath = write_files(tmp, qrels, run)
        vals["trecqr.evaluate files"] = list(trecqr.evaluate(qpath, rpath, IRM).aggregate()
                                             .values())
        t["trecqr.evaluate files"] = best(lambda: trecqr.evaluate(qpath, rpath, IRM), rep, cap)

    for door, v in vals.items():
        if not np.allclose(v, expected, rtol=0, atol=1e-9):
            raise SystemExit(f"{size}: {door} gives {v}, pytrec_eval {expected}")
    return t


COLUMNS = ["pytrec_eval", "pytrec_eval reused", "trecqr RelevanceEvaluator",
           "trecqr RelevanceEvaluator reused", "ir_measures", "ranx",
           "trecqr.evaluate dicts", "trecqr.evaluate DataFrame", "trecqr.evaluate files"]
HEAD = ["pytrec_eval", "pytrec_eval reused", "trecqr RE", "trecqr RE reused", "ir_measures",
        "ranx", "evaluate dicts", "evaluate DataFrame", "evaluate files"]


def table(results: dict) -> str:
    lines = ["| topics x docs | " + " | ".join(HEAD) + " | RE / pytrec_eval | RE reused / "
             "reused | evaluate dicts / best of ir_measures, ranx | DataFrame / best |",
             "| --- |" + " ---: |" * (len(HEAD) + 4)]
    for size, t in results.items():
        other = min(t["ir_measures"], t["ranx"])
        cells = [f"{t[c]:.3f}" if t[c] < 1 else f"{t[c]:.2f}" if t[c] < 100 else f"{t[c]:.0f}"
                 for c in COLUMNS]
        ratios = [t["trecqr RelevanceEvaluator"] / t["pytrec_eval"],
                  t["trecqr RelevanceEvaluator reused"] / t["pytrec_eval reused"],
                  t["trecqr.evaluate dicts"] / other, t["trecqr.evaluate DataFrame"] / other]
        lines.append(f"| {size.replace('x', ' x ')} | " + " | ".join(cells) + " | "
                     + " | ".join(f"{r:.2f}x" for r in ratios) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--max-seconds", type=float, default=3.0,
                    help="stop sampling a door after this long (at least 2 samples)")
    args = ap.parse_args()
    results = {size: measure(size, args) for size in args.sizes.split(",")}
    print(f"milliseconds, best of {args.repeat}; values identical to pytrec_eval's")
    print(table(results))


if __name__ == "__main__":
    main()
