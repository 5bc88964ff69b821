"""Every door of trecqr side by side with pytrec_eval, ir_measures and ranx, in one process.

    nice python benchmarks/bench_doors.py [--repeat 5] [--sizes 1x10,1x100,...] [--max-seconds 2]
                                          [--doors "pytrec_eval,trecqr.evaluate DataFrame,..."]

Data (seeded): TOPICS x DOCS run with uniform random scores, three judgments per topic (two of
the retrieved documents and one unretrieved, grades 1-2). Measures: RR, nDCG@3, R@10, R@100
(pytrec_eval: recip_rank, ndcg_cut.3, recall.10,100; ranx: mrr, ndcg@3, recall@10, recall@100).

Doors timed (milliseconds, best of --repeat rounds, the doors sampled in turn in each round;
a call faster than 20 ms is repeated in a loop and the loop's mean is one sample):

* ``pytrec_eval`` ``RelevanceEvaluator(qrels, ms).evaluate(run)`` (construct + evaluate) and
  ``evaluate`` on a reused evaluator;
* ``trecqr.RelevanceEvaluator``, the same two;
* ``ir_measures.calc_aggregate`` on the dicts; ``ranx.evaluate`` on ``Qrels``/``Run`` built
  from the dicts (warmed up: numba compiled before the clock starts; building them is timed);
* ``trecqr.evaluate(...).aggregate()`` (the means, as ``calc_aggregate`` gives them) on the
  dicts, on pandas DataFrames (ir_measures' columns), on TREC files;
* ``ir_measures.calc_aggregate`` on the same DataFrames, and ``ranx.evaluate`` on
  ``Qrels.from_df``/``Run.from_df`` of them (their id columns as ``object``, which ranx
  requires; pandas 3 makes ``str`` columns): the peers of ``trecqr.evaluate`` on DataFrames;
* ``ir_measures.calc_aggregate`` on the same TREC files (``read_trec_qrels``/``read_trec_run``),
  the fair peer of ``trecqr.evaluate`` on files.

The values of every tool are checked against pytrec_eval's means (to 1e-9; ranx rounds
nothing but sums in another order); the table prints ms and each door's ratio to its target
(RelevanceEvaluator: pytrec_eval; trecqr.evaluate: the faster of ir_measures and ranx on the
same input, and, stricter, on dicts).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
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


def loops_for(fn) -> int:
    """How many calls make a sample of at least 20 ms (one call: warm-up)."""
    t0 = time.perf_counter()
    fn()
    return max(1, int(0.02 / max(time.perf_counter() - t0, 1e-7)))


def best_of(doors: dict, repeat: int, max_seconds: float) -> dict:
    """Best sample of each door, in ms: the doors sampled in turn, round after round (a load
    spike on the shared machine then hits every door alike, not one), until ``repeat``
    rounds or, past two rounds, ``max_seconds`` per door."""
    loops = {name: loops_for(fn) for name, fn in doors.items()}
    samples: dict = {name: [] for name in doors}
    spent = dict.fromkeys(doors, 0.0)
    for i in range(repeat):
        for name, fn in doors.items():
            if i >= 2 and spent[name] > max_seconds:
                continue
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(loops[name]):
                fn()
            took = time.perf_counter() - t0
            spent[name] += took
            samples[name].append(took / loops[name])
    return {name: 1000 * min(v) for name, v in samples.items()}


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
    # ranx's from_df takes object-dtype id columns only (pandas 3 makes str columns)
    qf_obj = qf.astype({"query_id": object, "doc_id": object})
    rf_obj = rf.astype({"query_id": object, "doc_id": object})
    irm = [ir_measures.parse_measure(m) for m in IRM]
    pe = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    te = trecqr.RelevanceEvaluator(qrels, PYTREC)

    def with_ranx():
        return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), RANX)

    def ranx_frames():
        return ranx.evaluate(
            ranx.Qrels.from_df(qf_obj, q_id_col="query_id", doc_id_col="doc_id",
                               score_col="relevance"),
            ranx.Run.from_df(rf_obj, q_id_col="query_id", doc_id_col="doc_id",
                             score_col="score"),
            RANX)

    with tempfile.TemporaryDirectory() as tmp:
        qpath, rpath = write_files(tmp, qrels, run)

        def irm_files():
            return ir_measures.calc_aggregate(irm, ir_measures.read_trec_qrels(qpath),
                                              ir_measures.read_trec_run(rpath))

        # each door, and its means in pytrec_eval's order (what the check compares)
        doors = {
            "pytrec_eval": lambda: pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run),
            "pytrec_eval reused": lambda: pe.evaluate(run),
            "trecqr RelevanceEvaluator": lambda: trecqr.RelevanceEvaluator(qrels, PYTREC)
            .evaluate(run),
            "trecqr RelevanceEvaluator reused": lambda: te.evaluate(run),
            "ir_measures": lambda: ir_measures.calc_aggregate(irm, qrels, run),
            "ranx": with_ranx,  # its first call (numba compiling) is the warm-up
            # .aggregate(): the means, as calc_aggregate returns them (evaluate computes them;
            # the per-topic Evaluation behind per_query() is built when first read)
            "trecqr.evaluate dicts": lambda: trecqr.evaluate(qrels, run, IRM).aggregate(),
            "trecqr.evaluate DataFrame": lambda: trecqr.evaluate(qf, rf, IRM).aggregate(),
            "ir_measures DataFrame": lambda: ir_measures.calc_aggregate(irm, qf, rf),
            "ranx DataFrame": ranx_frames,
            "trecqr.evaluate files": lambda: trecqr.evaluate(qpath, rpath, IRM).aggregate(),
            "ir_measures files": irm_files,
        }
        means = {
            "pytrec_eval": pytrec_means, "pytrec_eval reused": pytrec_means,
            "trecqr RelevanceEvaluator": pytrec_means,
            "trecqr RelevanceEvaluator reused": pytrec_means,
            "ranx": lambda got: [got[m] for m in RANX],
            "ranx DataFrame": lambda got: [got[m] for m in RANX],
        }
        doors = {name: fn for name, fn in doors.items() if name in args.doors}
        expected = pytrec_means(pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run))
        for door, fn in doors.items():
            got = fn()
            v = means[door](got) if door in means else \
                [got[m] for m in irm] if "ir_measures" in door else list(got.values())
            if not np.allclose(v, expected, rtol=0, atol=1e-9):
                raise SystemExit(f"{size}: {door} gives {v}, pytrec_eval {expected}")
        return best_of(doors, args.repeat, args.max_seconds)


COLUMNS = ["pytrec_eval", "pytrec_eval reused", "trecqr RelevanceEvaluator",
           "trecqr RelevanceEvaluator reused", "ir_measures", "ranx",
           "trecqr.evaluate dicts", "trecqr.evaluate DataFrame", "ir_measures DataFrame",
           "ranx DataFrame", "trecqr.evaluate files", "ir_measures files"]
HEAD = ["pytrec_eval", "pytrec_eval reused", "trecqr RE", "trecqr RE reused", "ir_measures",
        "ranx", "evaluate dicts", "evaluate DataFrame", "ir_measures DataFrame",
        "ranx DataFrame", "evaluate files", "ir_measures files"]


def best(*times: float) -> float:
    """The fastest of the peers' times; NaN when one of them was not timed (--doors)."""
    return float("nan") if any(t != t for t in times) else min(times)


def table(results: dict) -> str:
    lines = ["| topics x docs | " + " | ".join(HEAD) + " | RE / pytrec_eval | RE reused / "
             "reused | evaluate dicts / best of ir_measures, ranx | DataFrame / best on "
             "DataFrames | DataFrame / best on dicts | files / ir_measures files | "
             "files / best on dicts | DataFrame / trecqr RE |",
             "| --- |" + " ---: |" * (len(HEAD) + 8)]
    nan = float("nan")
    for size, t in results.items():
        t = {c: t.get(c, nan) for c in COLUMNS}  # a door not timed (--doors): "-"
        other = best(t["ir_measures"], t["ranx"])
        cells = ["-" if t[c] != t[c] else f"{t[c]:.3f}" if t[c] < 1 else f"{t[c]:.2f}"
                 if t[c] < 100 else f"{t[c]:.0f}" for c in COLUMNS]
        ratios = [t["trecqr RelevanceEvaluator"] / t["pytrec_eval"],
                  t["trecqr RelevanceEvaluator reused"] / t["pytrec_eval reused"],
                  t["trecqr.evaluate dicts"] / other,
                  t["trecqr.evaluate DataFrame"] / best(t["ir_measures DataFrame"],
                                                        t["ranx DataFrame"]),
                  t["trecqr.evaluate DataFrame"] / other,
                  t["trecqr.evaluate files"] / t["ir_measures files"],
                  t["trecqr.evaluate files"] / other,
                  t["trecqr.evaluate DataFrame"] / t["trecqr RelevanceEvaluator"]]
        lines.append(f"| {size.replace('x', ' x ')} | " + " | ".join(cells) + " | "
                     + " | ".join("-" if r != r else f"{r:.2f}x" for r in ratios) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--max-seconds", type=float, default=3.0,
                    help="stop sampling a door after this long (at least 2 samples)")
    ap.add_argument("--doors", default=",".join(COLUMNS),
                    help="the doors to time, comma-separated (default: all); the others, and "
                    "the ratios that need them, are shown as -")
    args = ap.parse_args()
    args.doors = args.doors.split(",")
    unknown = sorted(set(args.doors) - set(COLUMNS))
    if unknown:
        ap.error(f"unknown doors {unknown}; the doors are: {', '.join(COLUMNS)}")
    results = {}
    for size in args.sizes.split(","):
        results[size] = measure(size, args)
        print(table({size: results[size]}).splitlines()[-1], file=sys.stderr, flush=True)
    print(f"milliseconds, best of {args.repeat} rounds; values identical to pytrec_eval's")
    print(table(results))


if __name__ == "__main__":
    main()
