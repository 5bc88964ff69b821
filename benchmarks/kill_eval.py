"""Kill `trecqr eval -o out.txt` at random moments: the output is whole or absent, no temp file.

Usage (from the project root):

    nice python3 benchmarks/kill_eval.py --tries 50 --queries 2000  # a 2,000 x 1,000 = 2M-line run

The run and qrels come from benchmarks/make_data.py (MS MARCO-sized rows, seeded). One
uninterrupted `trecqr eval -q -m all_trec -o out.txt QRELS RUN` gives the reference output and
its duration T; then each try starts the same command in a fresh folder (half of them over an
existing out.txt holding an older output), sends SIGTERM, SIGHUP or SIGINT after a random delay
in [0, 2 T] (on a loaded machine a run takes longer than T), and checks: no ``.trecqr-*``
temporary file is left; out.txt is absent, the
reference output, or (when it existed) the older output, never anything else; the exit status
is 0 (finished first) or 128 + the signal, with one line on stderr ("trecqr: interrupted",
"trecqr: terminated (SIGTERM)"); a signal that arrives while the interpreter starts, before
trecqr's handlers exist, kills it by the signal's default action (counted apart: nothing was
opened yet).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CMD = [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
       "from trecqr.runtime.launch import entry; entry()"]
SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]
OLD = b"an older output\n"


def eval_args(qrels, run) -> list:
    return ["eval", "-q", "-m", "all_trec", "-o", "out.txt", str(qrels), str(run)]


def reference(qrels, run, folder: Path) -> tuple[bytes, float]:
    start = time.monotonic()
    subprocess.run(CMD + eval_args(qrels, run), cwd=folder, check=True, capture_output=True)
    took = time.monotonic() - start
    return (folder / "out.txt").read_bytes(), took


def one_try(qrels, run, folder: Path, ref: bytes, delay: float, signum: int,
            existing: bool) -> dict:
    folder.mkdir(parents=True)
    if existing:
        (folder / "out.txt").write_bytes(OLD)
    # SIGHUP at its default in the child: under nohup trecqr would keep it ignored, as asked
    proc = subprocess.Popen(CMD + eval_args(qrels, run), cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))
    time.sleep(delay)
    sent = proc.poll() is None
    if sent:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=600)
    lines = err.decode("utf-8", "replace").splitlines()
    temps = [p.name for p in folder.iterdir() if p.name.startswith(".trecqr-")]
    out = folder / "out.txt"
    content = out.read_bytes() if out.exists() else None
    if content is None:
        state = "absent"
    elif content == ref:
        state = "whole"
    elif existing and content == OLD:
        state = "older"
    else:
        state = "PARTIAL"
    # a signal that arrives while Python itself starts, before trecqr's handlers are installed
    # (the first ~0.1-0.3 s), has its default action: the process dies, having opened nothing
    startup = proc.returncode == -signum and not lines
    ok = (not temps and state != "PARTIAL" and len(lines) <= 1
          and (proc.returncode in (0, 128 + signum) or startup)
          and not (state == "absent" and existing))
    return {"ok": ok, "signal": signal.Signals(signum).name, "delay": round(delay, 3),
            "sent": sent, "code": proc.returncode, "state": state, "startup": startup,
            "temps": temps,
            "stderr": lines[-2:]}


def campaign(tries: int, queries: int, depth: int = 1000, seed: int = 0,
             data_dir: Path | None = None, verbose: bool = True) -> list:
    from make_data import make

    run, qrels = make(data_dir or HERE / "data", queries=queries, depth=depth)
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix="trecqr-kill-"))
    try:
        ref, took = reference(qrels, run, base)
        if verbose:
            print(f"{queries * depth} run lines; an uninterrupted eval takes {took:.1f} s, "
                  f"writes {len(ref)} bytes", flush=True)
        results = []
        for i in range(tries):
            r = one_try(qrels, run, base / f"try{i}", ref, rng.uniform(0, 2.0 * took),
                        rng.choice(SIGNALS), rng.random() < 0.5)
            results.append(r)
            if verbose:
                print(("ok  " if r["ok"] else "BAD ") + " ".join(
                    f"{k}={v}" for k, v in r.items() if k != "ok"), flush=True)
        return results
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tries", type=int, default=50)
    ap.add_argument("--queries", type=int, default=2000, help="x 1,000 run lines")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    results = campaign(args.tries, args.queries, seed=args.seed)
    bad = [r for r in results if not r["ok"]]
    states = {s: sum(r["state"] == s for r in results) for s in ("absent", "older", "whole")}
    killed = sum(r["sent"] and r["code"] != 0 for r in results)
    startup = sum(r["startup"] for r in results)
    print(f"\n{len(results)} tries, {killed} killed ({startup} at interpreter start-up); "
          "out.txt afterwards: "
          + ", ".join(f"{v} {k}" for k, v in states.items())
          + f"; {len(bad)} with a temporary file, a partial output, >1 stderr line or "
            "another exit status")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
