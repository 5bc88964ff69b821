"""BM25 indexing and search throughput of trecqr's two BM25 backends, side by side in one run:
bm25s (embedded) and Lucene (Pyserini 0.22.1's Anserini, where Pyserini and Java are installed).

Usage: python benchmarks/bench_retrieval.py [--size 100000] [--queries 1000] [--seed 0]
       python benchmarks/bench_retrieval.py --size 1000000      # the README's table

A synthetic collection of N passages is generated (seeded): a vocabulary of pseudo-words whose
frequencies follow a Zipf law (s = 1.07, as in English text), passage lengths around MS MARCO's
(~56 words), written as Pyserini-style JSONL ({"id", "contents"}) to benchmarks/data/ (git-ignored;
reused when present). Q queries of 2-6 words are drawn from the same distribution. Each step runs
in its own process and is timed end to end (start-up and index loading included); peak RSS is the
child's ru_maxrss:

- `trecqr index` (bm25s, Lucene analyzer), then `trecqr search` at depth 100 with 1 and 2 threads;
- the same with `trecqr index --backend lucene` (Anserini's indexer as a Java child process on
  the JSONL file, which is linked, not copied: one file, so one indexing thread) and `trecqr
  search` on that index (Anserini's SimpleSearcher in-process, Lucene's float32 scores), if
  Pyserini is importable.

Agreement of top-10 lists (Jaccard@10 mean over queries, and the share of queries with the same
top-1 passage) is measured on real queries: the QReCC demo topics (raw, human and GPT rewrites) on
fixtures/qrecc-demo/collection.jsonl, with the QReCC preset k1=0.82 b=0.68, and on the synthetic
queries. Lucene vs bm25s when Pyserini is installed; otherwise bm25s k1=0.82 b=0.68 vs bm25s k1=0.9
b=0.4 as a smoke test of the same code path (that row measures parameter sensitivity, not backend
agreement).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"  # --data changes it
DEMO = ROOT / "fixtures" / "qrecc-demo"
DEMO_TOPICS = ["topics-raw.tsv", "topics-human.tsv", "topics-gpt.tsv"]
QRECC_K1, QRECC_B = 0.82, 0.68
DEPTH = 100
# Lucene's English stop words: kept out of the synthetic vocabulary so every word is a term
STOP = frozenset("a an and are as at be but by for if in into is it no not of on or such that the "
                 "their then there these they this to was will with".split())


# ---------------------------------------------------------------- data

def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    """size distinct lowercase pseudo-words (3-10 letters, short ones more frequent)."""
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype="S1")
    words: dict = {}
    while len(words) < size:
        n = 2 * (size - len(words))
        lens = rng.integers(3, 11, n)
        chars = letters[rng.integers(0, 26, (n, 10))]
        for row, ln in zip(chars, lens):
            w = b"".join(row[:ln]).decode()
            if w not in STOP:
                words.setdefault(w, None)
    out = np.array(sorted(words, key=len)[:size], dtype=object)  # frequent words are short
    return out


def _zipf_sampler(rng: np.random.Generator, vocab_size: int, s: float = 1.07):
    cdf = np.cumsum(1.0 / np.arange(1, vocab_size + 1) ** s)
    cdf /= cdf[-1]
    return lambda n: np.minimum(np.searchsorted(cdf, rng.random(n)), vocab_size - 1)


def make_collection(passages: int, queries: int, seed: int = 0) -> tuple[Path, Path]:
    """(collection folder holding collection.jsonl, topics TSV); cached in benchmarks/data/."""
    folder = DATA / f"retrieval-{passages}-s{seed}"
    coll = folder / "collection" / "collection.jsonl"
    topics = folder / f"topics-{queries}.tsv"
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng, min(1_000_000, max(50_000, passages // 4)))
    draw = _zipf_sampler(rng, len(vocab))
    if not coll.exists():
        coll.parent.mkdir(parents=True, exist_ok=True)
        tmp = coll.with_suffix(".tmp")
        chunk = 50_000
        with open(tmp, "w", encoding="utf-8") as fh:
            for start in range(0, passages, chunk):
                n = min(chunk, passages - start)
                lens = np.clip(rng.normal(56, 20, n).astype(np.int64), 8, 200)
                words = vocab[draw(int(lens.sum()))]
                ends = np.cumsum(lens)
                fh.write("".join(
                    json.dumps({"id": f"d{start + i}",
                                "contents": " ".join(words[e - ln:e])}) + "\n"
                    for i, (e, ln) in enumerate(zip(ends.tolist(), lens.tolist()))))
        os.replace(tmp, coll)
    if not topics.exists():
        qrng = np.random.default_rng(seed + 1)
        qdraw = _zipf_sampler(qrng, len(vocab))
        lens = qrng.integers(2, 7, queries)
        with open(topics, "w", encoding="utf-8") as fh:
            for i, ln in enumerate(lens):
                fh.write(f"q{i}\t{' '.join(vocab[qdraw(int(ln))])}\n")
    return coll.parent, topics


# ---------------------------------------------------------------- timing

def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of a child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed:\n{err.decode()[-1500:]}")
    return wall, usage.ru_maxrss


def trecqr_cmd() -> list[str]:
    script = Path(sys.executable).parent / "trecqr"
    return [str(script)] if script.exists() else [
        sys.executable, "-c", "from trecqr.runtime.launch import entry; entry()"]


def pyserini_available() -> bool:
    """Pyserini importable and a Java runtime to run it (JAVA_HOME, else one under /usr/lib/jvm)."""
    if importlib.util.find_spec("pyserini") is None:
        return False
    from trecqr.retrieval import java_runtime

    return bool(os.environ.get("JAVA_HOME") or java_runtime.pick_java_home()
                or shutil.which("java"))


def trecqr_index(collection: Path, out: Path, k1: float, b: float, backend: str = "bm25s",
                 threads: int | None = None) -> list[str]:
    cmd = trecqr_cmd() + ["index", str(collection), "-o", str(out), "--k1", str(k1), "--b", str(b),
                          "--format", "jsonl", "--quiet", "--backend", backend]
    return cmd + (["--threads", str(threads)] if threads else [])


def trecqr_search(index: Path, topics: Path, run: Path, threads: int, k: int = DEPTH) -> list[str]:
    return trecqr_cmd() + ["search", str(index), str(topics), "-o", str(run), "-k", str(k),
                           "--threads", str(threads), "--quiet"]


# ---------------------------------------------------------------- agreement

def top_k(run_path: Path, k: int = 10) -> dict:
    """{qid: [docno, ...]} of a TREC run, ranked as trec_eval does (score desc, docno desc)."""
    rows: dict = {}
    with open(run_path, encoding="utf-8") as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 5:
                rows.setdefault(f[0], []).append((-float(f[4]), f[2]))
    out = {}
    for qid, r in rows.items():
        r.sort(key=lambda t: t[1], reverse=True)  # docno desc, then a stable sort by score
        r.sort(key=lambda t: t[0])
        out[qid] = [d for _, d in r[:k]]
    return out


def agreement(run_a: Path | dict, run_b: Path | dict, k: int = 10,
              qids: list | None = None) -> dict:
    """Jaccard@k mean and identical-top-1 share over qids (default: the union of both runs).

    A query missing from one run has an empty list there; two empty lists count as agreeing.
    """
    a = run_a if isinstance(run_a, dict) else top_k(run_a, k)
    b = run_b if isinstance(run_b, dict) else top_k(run_b, k)
    qids = sorted(set(a) | set(b)) if qids is None else qids
    jac, top1 = [], []
    for q in qids:
        sa, sb = a.get(q, [])[:k], b.get(q, [])[:k]
        union = set(sa) | set(sb)
        jac.append(len(set(sa) & set(sb)) / len(union) if union else 1.0)
        top1.append((sa[:1] == sb[:1]))
    return {"queries": len(qids), "jaccard": float(np.mean(jac)) if jac else float("nan"),
            "top1": float(np.mean(top1)) if top1 else float("nan")}


def demo_agreement(work: Path, pyserini: bool) -> list[tuple[str, str, dict]]:
    """Agreement rows on the QReCC demo topics."""
    work.mkdir(parents=True, exist_ok=True)
    coll = DEMO / "collection.jsonl"
    idx_a = work / "demo-bm25s-qrecc"
    timed(trecqr_index(coll, idx_a, QRECC_K1, QRECC_B))
    if pyserini:
        label = f"Lucene vs bm25s (k1={QRECC_K1} b={QRECC_B})"
        idx_b = work / "demo-lucene-qrecc"
        timed(trecqr_index(coll, idx_b, QRECC_K1, QRECC_B, backend="lucene"))
    else:
        label = f"bm25s k1={QRECC_K1} b={QRECC_B} vs bm25s k1=0.9 b=0.4 (smoke test)"
        idx_b = work / "demo-bm25s-topiocqa"
        timed(trecqr_index(coll, idx_b, 0.9, 0.4))
    rows = []
    for name in DEMO_TOPICS:
        topics = DEMO / name
        ra, rb = work / f"demo-a-{name}.run", work / f"demo-b-{name}.run"
        timed(trecqr_search(idx_a, topics, ra, 1))
        timed(trecqr_search(idx_b, topics, rb, 1))
        qids = [line.split("\t", 1)[0] for line in topics.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        rows.append((label, name.removeprefix("topics-").removesuffix(".tsv"),
                     agreement(ra, rb, 10, qids)))
    return rows


# ---------------------------------------------------------------- main

def main() -> None:
    global DATA
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", "--passages", dest="passages", type=int, default=100_000,
                    help="synthetic passages (default 100,000 for a quick run; the README's table "
                         "uses 1,000,000)")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2],
                    help="search thread counts (default 1 2)")
    ap.add_argument("--index-threads", type=int, default=None,
                    help="Lucene indexing threads (default: trecqr's, the CPUs up to 8)")
    ap.add_argument("--data", type=Path, default=DATA,
                    help="folder for the synthetic collections and indexes "
                         "(default benchmarks/data)")
    ap.add_argument("--no-lucene", action="store_true", help="bm25s only, even with Pyserini")
    ap.add_argument("--skip-agreement", action="store_true")
    a = ap.parse_args()
    DATA = a.data

    t0 = time.perf_counter()
    coll_dir, topics = make_collection(a.passages, a.queries, a.seed)
    coll = coll_dir / "collection.jsonl"
    gen = time.perf_counter() - t0
    size = coll.stat().st_size
    print(f"collection: {a.passages:,} synthetic passages ({size / 2**20:.0f} MiB, {coll}; "
          f"ready in {gen:.1f} s), {a.queries:,} queries, depth {DEPTH}", flush=True)
    work = coll_dir.parent / "work"
    work.mkdir(exist_ok=True)
    pyserini = not a.no_lucene and pyserini_available()
    rows = []  # (system, step, wall, rate, unit, rss KiB, index MiB)
    systems = [("trecqr bm25s", "bm25s")]
    if pyserini:
        systems.append(("trecqr Lucene (Pyserini 0.22.1)", "lucene"))
    for label, backend in systems:
        idx = coll_dir.parent / f"index-{backend}"
        shutil.rmtree(idx, ignore_errors=True)
        wall, rss = timed(trecqr_index(coll, idx, 0.9, 0.4, backend=backend,
                                       threads=a.index_threads if backend == "lucene" else None))
        mib = sum(f.stat().st_size for f in idx.rglob("*") if f.is_file()) / 2**20
        rows.append((label, "index", wall, a.passages / wall, "passages/s", rss, mib))
        print(f"  {backend} index: {wall:.1f} s", flush=True)
        for th in a.threads:
            wall, rss = timed(trecqr_search(idx, topics, work / f"{backend}-t{th}.run", th))
            rows.append((label, f"search, {th} thread{'s' * (th > 1)}", wall,
                         a.queries / wall, "queries/s", rss, None))
            print(f"  {backend} search {th} thread(s): {wall:.1f} s", flush=True)
    if pyserini:
        synth = agreement(work / f"bm25s-t{a.threads[0]}.run", work / f"lucene-t{a.threads[0]}.run")

    lines = [f"{a.passages:,} synthetic passages (Zipfian vocabulary), {a.queries:,} queries at "
             f"depth {DEPTH}, k1=0.9 b=0.4; one process per step, wall time includes start-up "
             f"(Python, and the JVM for Lucene) and index loading; {os.cpu_count()} CPUs", "",
             "| system | step | wall time (s) | throughput | peak RSS (MB) | index (MB) |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for system, step, wall, rate, unit, rss, mib in rows:
        lines.append(f"| {system} | {step} | {wall:.1f} | {rate:,.0f} {unit} | {rss / 1024:,.0f} | "
                     f"{'' if mib is None else f'{mib:,.0f}'} |")
    if not pyserini:
        lines.append("| trecqr Lucene (Pyserini) | - | not run (Pyserini or Java missing, or "
                     "--no-lucene) | | | |")
    print("\n" + "\n".join(lines))
    if pyserini:
        print(f"\nsynthetic queries, Lucene vs bm25s (k1=0.9 b=0.4): Jaccard@10 "
              f"{synth['jaccard']:.3f}, identical top-1 {synth['top1']:.1%} "
              f"({synth['queries']} queries)")

    if not a.skip_agreement:
        if not pyserini:
            print("\nLucene: not run; agreement below is bm25s vs bm25s with other k1/b "
                  "(smoke test of the agreement code path)")
        demo = demo_agreement(work, pyserini)
        print("\nTop-10 agreement on the QReCC demo (fixtures/qrecc-demo, "
              f"{sum(1 for _ in open(DEMO / 'collection.jsonl', encoding='utf-8')):,} passages)\n")
        print("| comparison | queries | n | Jaccard@10 (mean) | identical top-1 |")
        print("| --- | --- | ---: | ---: | ---: |")
        for label, name, r in demo:
            print(f"| {label} | {name} | {r['queries']:,} | {r['jaccard']:.3f} | {r['top1']:.1%} |")


if __name__ == "__main__":
    main()
