"""Run pytrec_eval's and ir_measures' own test suites with trecqr in place of pytrec_eval.

    python benchmarks/reference_suites.py --pytrec-eval PYTREC_EVAL_CHECKOUT \\
        --trec-eval TREC_EVAL_CHECKOUT [--ir-measures IR_MEASURES_CHECKOUT]

The checkouts are clones (or bare git directories) of terrierteam/pytrec_eval,
usnistgov/trec_eval and terrierteam/ir_measures; nothing of them is part of trecqr. The suites
are copied into a temporary folder beside a one-file ``pytrec_eval`` package that makes
``import pytrec_eval`` resolve to ``trecqr`` itself (``sys.modules`` alias), then run:

* pytrec_eval's tests/pytrec_eval_tests.py directly (7 tests: 5 unit tests and the 2
  trec_eval output comparisons its ``__main__`` adds) and under pytest (the 5 unit tests; the
  file defines the other 2 only when run as a script), with trec_eval's test/ folder at the
  commit pytrec_eval pins as its submodule;
* ir_measures' test_pytrec_eval.py, test_util.py, test_judged.py and test_aggregate.py under
  pytest (tag v0.4.3 unless --ir-measures-ref says otherwise);
* ir_measures' test_util.py, test_judged.py and test_aggregate.py again, with the real
  pytrec_eval and trecqr's ir_measures provider first in the default pipeline (a conftest.py
  calls ``trecqr.register_ir_measures()`` and fails the session if trecqr computed nothing).

Exit status 0 when every suite passes.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SHIM = "import sys, trecqr\nsys.modules[__name__] = trecqr\n"
IRM_TESTS = ["tests/test_pytrec_eval.py", "tests/test_util.py", "tests/test_judged.py",
             "tests/test_aggregate.py"]
PROVIDER_TESTS = ["tests/test_util.py", "tests/test_judged.py", "tests/test_aggregate.py"]
PROVIDER_CONFTEST = """\
import trecqr
from trecqr.api import irm_provider

trecqr.register_ir_measures()
CALLS = []
_iter_calc = irm_provider.TrecqrEvaluator._iter_calc


def _counted(self, run):
    CALLS.append(self.measures)
    yield from _iter_calc(self, run)


irm_provider.TrecqrEvaluator._iter_calc = _counted


def pytest_sessionfinish(session, exitstatus):
    print(f"\\ntrecqr's provider scored {len(CALLS)} runs")
    if not CALLS:
        session.exitstatus = 1
"""


def git_dir(path: str) -> str:
    p = Path(path)
    return str(p / ".git") if (p / ".git").exists() else str(p)


def export(repo: str, ref: str, paths: list, dest: Path) -> None:
    """``git archive`` of paths at ref, unpacked into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "--git-dir", git_dir(repo), "archive", ref, *paths],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(dest)], input=archive, check=True)


def submodule_commit(repo: str, ref: str, path: str) -> str:
    out = subprocess.run(["git", "--git-dir", git_dir(repo), "ls-tree", ref, path],
                         check=True, capture_output=True, text=True).stdout.split()
    return out[2]


def run(cmd, cwd, env) -> bool:
    print(f"$ {' '.join(cmd)}  (in {cwd})", flush=True)
    return subprocess.run(cmd, cwd=cwd, env=env).returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pytrec-eval", required=True)
    ap.add_argument("--trec-eval", required=True)
    ap.add_argument("--ir-measures")
    ap.add_argument("--pytrec-eval-ref", default="HEAD")
    ap.add_argument("--ir-measures-ref", default="v0.4.3")
    args = ap.parse_args()

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "shim" / "pytrec_eval").mkdir(parents=True)
        (tmp / "shim" / "pytrec_eval" / "__init__.py").write_text(SHIM)
        env = dict(os.environ, PYTHONPATH=str(tmp / "shim"), PYTHONDONTWRITEBYTECODE="1")

        pte = tmp / "pytrec_eval"
        export(args.pytrec_eval, args.pytrec_eval_ref, ["tests"], pte)
        pinned = submodule_commit(args.pytrec_eval, args.pytrec_eval_ref, "trec_eval")
        export(args.trec_eval, pinned, ["test"], pte / "trec_eval")
        results["pytrec_eval tests, run directly"] = run(
            [sys.executable, "tests/pytrec_eval_tests.py", "-v"], pte, env)
        results["pytrec_eval tests, under pytest"] = run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v",
             "tests/pytrec_eval_tests.py"], pte, env)

        if args.ir_measures:
            irm = tmp / "ir_measures"
            export(args.ir_measures, args.ir_measures_ref, ["tests"], irm)
            results[f"ir_measures {args.ir_measures_ref} tests"] = run(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *IRM_TESTS],
                irm, env)
            with_provider = tmp / "ir_measures_provider"
            export(args.ir_measures, args.ir_measures_ref, ["tests"], with_provider)
            (with_provider / "tests" / "conftest.py").write_text(PROVIDER_CONFTEST)
            here = str(Path(__file__).resolve().parent.parent)  # this checkout's trecqr
            results[f"ir_measures {args.ir_measures_ref} tests, trecqr's provider first"] = run(
                [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s",
                 *PROVIDER_TESTS], with_provider,
                dict(os.environ, PYTHONPATH=here, PYTHONDONTWRITEBYTECODE="1"))

    print()
    for name, ok in results.items():
        print(f"{'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
