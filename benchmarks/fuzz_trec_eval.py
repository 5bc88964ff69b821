"""Differential fuzzing: `trecqr eval` against trec_eval binaries on random runs and qrels.

Usage: python benchmarks/fuzz_trec_eval.py --te908 PATH --te10 PATH [--cases 300 --seed 0]

Each case is a random run (sorted or shuffled lines, coarse scores with many ties, near-ties
below float32 precision, numeric, prefixed and URL docids, topics like 7 and 3_12) and random
qrels (grades -1..3, topics missing on either side), scored with `-q -m all_trec` and random
-c, -M, -J, -l under a random --compat; outputs must be identical byte for byte. Cases where
trec_eval itself fails (for example a topic whose grades are all negative) are counted apart.
Build trec_eval with its own Makefile: its rbp reads two uninitialised variables, so an
optimised (-O2) build prints other rbp values than the published outputs.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile


def make_case(rng: random.Random, folder: str) -> None:
    topics = list(dict.fromkeys(
        str(rng.choice([rng.randint(1, 30), f"{rng.randint(1, 9)}_{rng.randint(1, 12)}"]))
        for _ in range(rng.randint(1, 8))))
    url = rng.random() < 0.3
    sorted_run = rng.random() < 0.7
    run, names = [], {}
    for t in topics:
        docs = rng.sample(range(400), rng.randint(1, 120))
        coarse = rng.random() < 0.5
        scores = [round(rng.random() * 5, 1) if coarse else rng.random() * 10 for _ in docs]
        if rng.random() < 0.3:
            scores = [s + rng.choice([0.0, 1e-9, 2e-9]) for s in scores]
        rows = list(zip(docs, scores))
        if sorted_run:
            rows.sort(key=lambda x: -x[1])
        for rank, (doc, score) in enumerate(rows, 1):
            name = f"http://x.org/p{doc}_p{doc % 7}" if url else rng.choice([f"D{doc}", str(doc)])
            names.setdefault(t, []).append(name)
            run.append(f"{t} Q0 {name} {rank} {score!r} fuzz\n")
    if not sorted_run:
        rng.shuffle(run)
    qrels, seen = [], set()
    for t in topics + (["999"] if rng.random() < 0.3 else []):
        if rng.random() < 0.15:
            continue
        for doc in rng.sample(range(400), rng.randint(1, 60)):
            name = rng.choice(names.get(t, []) + [f"D{doc}", str(doc)])
            if (t, name) not in seen:
                seen.add((t, name))
                qrels.append(f"{t} 0 {name} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}\n")
    with open(os.path.join(folder, "run"), "w") as fh:
        fh.writelines(run)
    with open(os.path.join(folder, "qrels"), "w") as fh:
        fh.writelines(qrels)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--te908", required=True, help="trec_eval 9.0.8 binary")
    ap.add_argument("--te10", required=True, help="trec_eval 10.0 binary")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    binaries = {"9.0.8": a.te908, "10.0": a.te10}
    mismatches = trec_eval_failed = 0
    for seed in range(a.seed, a.seed + a.cases):
        rng = random.Random(seed)
        with tempfile.TemporaryDirectory() as folder:
            make_case(rng, folder)
            compat = rng.choice(list(binaries))
            opts = []
            if rng.random() < 0.5 or compat == "10.0":
                opts.append("-c")  # 10.0 stops on judged topics without results otherwise
            if rng.random() < 0.3:
                opts += ["-M", str(rng.randint(0, 50))]
            if rng.random() < 0.3:
                opts.append("-J")
            if rng.random() < 0.3:
                opts += ["-l", str(rng.randint(0, 3))]
            args = ["-q", "-m", "all_trec", *opts, os.path.join(folder, "qrels"),
                    os.path.join(folder, "run")]
            theirs = subprocess.run([binaries[compat], *args], capture_output=True, text=True)
            ours = subprocess.run(["trecqr", "eval", "--quiet", "--compat", compat, *args],
                                  capture_output=True, text=True)
            if theirs.returncode != 0:
                trec_eval_failed += 1
                continue
            if ours.stdout != theirs.stdout:
                mismatches += 1
                diff = [(x, y) for x, y in zip(theirs.stdout.splitlines(),
                                               ours.stdout.splitlines()) if x != y][:3]
                print(f"MISMATCH seed {seed} --compat {compat} {' '.join(opts)}: {diff}"
                      f" {ours.stderr.strip()[:200]}")
    print(f"{a.cases} cases: {mismatches} mismatches; trec_eval failed on {trec_eval_failed}")


if __name__ == "__main__":
    main()
