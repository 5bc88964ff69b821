"""pytrec_eval's own input, side by side: RelevanceEvaluator(qrels, measures).evaluate(run) on
dicts, pytrec_eval against trecqr, each in a fresh process, runs interleaved.

    python benchmarks/bench_dicts.py [--queries 5000] [--docs 1000] [--repeat 5]

The run: QUERIES topics x DOCS documents with uniform random scores (seeded); the qrels: 70
judgments per topic (50 of the retrieved documents graded 0-2, 20 unretrieved relevant).
Measure sets: the 5 of a CQR paper (map, ndcg_cut.3, recip_rank, P.10, recall.100) and
``all_trec`` (34 measures, 95 keys). Reported per set: median wall time and CPU time of
construction + evaluate (the dicts are built before the clock starts, and both modules are
imported), the peak memory added by them (ru_maxrss after minus before), and trecqr / pytrec_eval.
The values of both are compared key for key (bit for bit) once per set.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

MEASURES = {"5": ["map", "ndcg_cut.3", "recip_rank", "P.10", "recall.100"], "all": ["all_trec"]}

CHILD = r"""
import gc, json, resource, sys, time
import numpy as np
mod_name, which, nq, nd, check = (sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
                                  sys.argv[5])
rng = np.random.default_rng(0)
qrels, run = {}, {}
for q in range(nq):
    qid = f"q{q}"
    docs = [f"d{x}" for x in rng.choice(200000, nd, replace=False)]
    run[qid] = dict(zip(docs, rng.random(nd).tolist()))
    judged = rng.choice(nd, min(50, nd), replace=False)
    qrels[qid] = {docs[i]: int(rng.integers(0, 3)) for i in judged}
    for x in range(20):
        qrels[qid][f"x{x}"] = 1
mod = __import__(mod_name)
Evaluator = mod.RelevanceEvaluator
measures = set(json.loads(sys.argv[6]))
gc.collect()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
c0, t0 = time.process_time(), time.perf_counter()
result = Evaluator(qrels, measures).evaluate(run)
t1, c1 = time.perf_counter(), time.process_time()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = {"wall": t1 - t0, "cpu": c1 - c0, "mem_mb": (peak - base) / 1024,
       "keys": len(next(iter(result.values())))}
if check != "-":
    with open(check, "w") as f:
        json.dump(result, f)
print(json.dumps(out))
"""


def child(module: str, which: str, args, check: str = "-") -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, module, which, str(args.queries),
                          str(args.docs), check, json.dumps(MEASURES[which])],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=5000)
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import tempfile

    rows = []
    for which in MEASURES:
        with tempfile.TemporaryDirectory() as tmp:  # the values, compared once
            a = child("pytrec_eval", which, args, f"{tmp}/a.json")
            b = child("trecqr", which, args, f"{tmp}/b.json")
            with open(f"{tmp}/a.json") as fa, open(f"{tmp}/b.json") as fb:
                same = json.load(fa) == json.load(fb)
        runs = {"pytrec_eval": [a], "trecqr": [b]}
        for _ in range(args.repeat - 1):
            for module in runs:  # interleaved: both see the same machine load
                runs[module].append(child(module, which, args))
        med = {m: {k: statistics.median(r[k] for r in rs) for k in ("wall", "cpu", "mem_mb")}
               for m, rs in runs.items()}
        rows.append((which, b["keys"], med, same))

    print(f"{args.queries} queries x {args.docs} docs, median of {args.repeat} interleaved runs")
    print("| measures | keys | pytrec_eval wall / cpu / +mem | trecqr wall / cpu / +mem "
          "| ratio wall / cpu | same values |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for which, keys, med, same in rows:
        p, t = med["pytrec_eval"], med["trecqr"]
        print(f"| {which} | {keys} | {p['wall']:.2f} s / {p['cpu']:.2f} s / {p['mem_mb']:.0f} MB "
              f"| {t['wall']:.2f} s / {t['cpu']:.2f} s / {t['mem_mb']:.0f} MB "
              f"| {t['wall'] / p['wall']:.2f}x / {t['cpu'] / p['cpu']:.2f}x "
              f"| {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
