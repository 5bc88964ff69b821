"""Each pytrec_eval measure, and the sets BEIR and MTEB ask for, side by side: trecqr's
RelevanceEvaluator against pytrec_eval's, construction + evaluate, in one process.

    nice python benchmarks/bench_measures.py [--sizes 1x10,100x100] [--rounds 7]

A training or validation loop calls the evaluator on a few topics at a time, so the small
sizes are the ones that show a fixed cost: trecqr's C pass over dicts computes most measures
as pytrec_eval does, without arrays; the others go through numpy, whose per-call cost is
about 0.1 to 0.5 ms. Data: TOPICS x DOCS random scores (seeded), 20 judgments per topic
graded 0-2. Each call is timed best of ROUNDS (calls under 20 ms looped); the two tools
alternate. Values are compared key for key once per row (``runid``, which pytrec_eval never
sets, aside). Prints a Markdown table: milliseconds and trecqr / pytrec_eval.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

import pytrec_eval

import trecqr

KS = "1,3,5,10,100,1000"
SETS = {  # what their evaluators pass to pytrec_eval.RelevanceEvaluator
    "BEIR EvaluateRetrieval": {f"map_cut.{KS}", f"ndcg_cut.{KS}", f"recall.{KS}", f"P.{KS}"},
    "MTEB retrieval": {f"map_cut.{KS}", f"ndcg_cut.{KS}", f"recall.{KS}", f"P.{KS}",
                       f"success.{KS}"},
    "official": {"official"},
    "all_trec": {"all_trec"},
}


def data(topics: int, docs: int):
    r = random.Random(topics * 100003 + docs)
    qrels = {f"q{t}": {f"d{r.randrange(2 * docs)}": r.randrange(3) for _ in range(20)}
             for t in range(topics)}
    run = {f"q{t}": {f"d{j}": r.random() for j in range(docs)} for t in range(topics)}
    return qrels, run


def best_ms(module, qrels, measures, run, rounds: int) -> float:
    call = lambda: module.RelevanceEvaluator(qrels, measures).evaluate(run)  # noqa: E731
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    loops = max(1, int(0.02 / max(once, 1e-7)))
    best = math.inf
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(loops):
            call()
        best = min(best, (time.perf_counter() - start) / loops)
    return best * 1e3


def same(a: dict, b: dict) -> bool:
    def bits(k, v):
        return None if k == "runid" else ("nan" if v != v else v)
    return a.keys() == b.keys() and all(
        {k: bits(k, v) for k, v in a[q].items()} == {k: bits(k, v) for k, v in b[q].items()}
        for q in a)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1x10,100x100")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    sizes = [tuple(map(int, s.split("x"))) for s in args.sizes.split(",")]
    rows = [(name, {name}) for name in sorted(pytrec_eval.supported_measures)]
    rows += list(SETS.items())
    head = "| measures | " + " | ".join(
        f"{t} x {d}: pytrec_eval | trecqr | ratio" for t, d in sizes) + " |"
    print(head)
    print("| --- |" + " ---: | ---: | ---: |" * len(sizes))
    inputs = {s: data(*s) for s in sizes}
    for name, measures in rows:
        cells = []
        for size in sizes:
            qrels, run = inputs[size]
            if not same(trecqr.RelevanceEvaluator(qrels, measures).evaluate(run),
                        pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)):
                print(f"{name} {size}: values differ", file=sys.stderr)
                return 1
            pt, tq = math.inf, math.inf
            for _ in range(2):  # alternate the tools
                pt = min(pt, best_ms(pytrec_eval, qrels, measures, run, args.rounds))
                tq = min(tq, best_ms(trecqr, qrels, measures, run, args.rounds))
            cells.append(f"{pt:.3f} | {tq:.3f} | {tq / pt:.2f}x")
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
