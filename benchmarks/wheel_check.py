"""The wheel needs no compiler: build it, install it where no C compiler can be found, and check
that it scores README command 1's run as trec_eval does with its C kernels loaded.

    python benchmarks/wheel_check.py [--keep DIR]

Steps (each one printed; any failure stops the script with exit status 1):

1. ``python -m build`` makes the sdist and the wheel of this checkout (the ``build`` package in
   the Python running this script; its isolated build environment fetches setuptools).
2. A fresh virtual environment (``python -m venv``, no system site-packages).
3. With the compiler hidden: ``CC=false`` and ``PATH`` holding the new environment's ``bin``
   only (nothing else of the calling environment but ``HOME`` and the ``PIP_*`` settings, so
   pip finds its cache and index), check that ``gcc`` and ``cc`` are not found, then
   ``pip install`` the wheel (its dependencies come as wheels from the index or pip's cache).
4. In that environment, from this checkout: ``trecqr kernels`` must list the four kernels
   loaded from the environment's site-packages; ``trecqr eval -m official -m ndcg_cut.3
   fixtures/cast2021/qrels.txt fixtures/cast2021/manual_bm25.run`` must print
   benchmarks/wheel_check.expected byte for byte (trec_eval 9.0.8's output on the same files).
5. Still without a compiler, ``pip install`` of the sdist must fail, and the build's output must
   hold the one line that says a C compiler is needed.

``--installed`` runs step 4 alone on the trecqr installed for the Python running the script
(``python -m trecqr``, from a temporary folder so that this checkout's source is not imported):
the release's wheel test (pyproject.toml, ``[tool.cibuildwheel]``). docs/install.md shows the
last full run. The temporary folder is removed at the end unless --keep.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "benchmarks" / "wheel_check.expected"
EVAL = ["eval", "-m", "official", "-m", "ndcg_cut.3", "fixtures/cast2021/qrels.txt",
        "fixtures/cast2021/manual_bm25.run"]
KERNELS = ["trecqr.formats._scan", "trecqr.rankings._dicts", "trecqr.rankings._columns",
           "trecqr.fusion._pool"]
NO_COMPILER_LINE = "error: trecqr's C kernels need a C compiler, and "


class Failed(Exception):
    pass


def step(text: str) -> None:
    print(f"== {text}", flush=True)


def run(cmd, env=None, cwd=ROOT, check=True) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                         text=True)
    if check and res.returncode != 0:
        raise Failed(f"{' '.join(map(str, cmd))} exited {res.returncode}:\n"
                     f"{res.stdout[-3000:]}{res.stderr[-3000:]}")
    return res


def no_compiler_env(venv: Path) -> dict:
    """An environment where the only programs on PATH are the venv's, and CC fails."""
    env = {k: v for k, v in os.environ.items() if k.startswith("PIP_")}
    env.update(HOME=os.environ.get("HOME", "/"), PATH=str(venv / "bin"), CC="false",
               LANG="C.UTF-8")
    return env


def check_installed(trecqr, py, env, cwd) -> None:
    """Step 4: the kernels loaded from py's site-packages, and README command 1's table."""
    step("trecqr kernels")
    res = run([*trecqr, "kernels"], env=env, cwd=cwd)
    print(res.stdout, end="")
    site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
               env=env, cwd=cwd).stdout.strip()
    lines = res.stdout.splitlines()
    if [line.split()[:2] for line in lines] != [[k, "loaded"] for k in KERNELS] or \
            not all(line.split(None, 2)[2].startswith(site + os.sep) for line in lines):
        raise Failed(f"the kernels are not all loaded from {site}:\n{res.stdout}")

    step("trecqr " + " ".join(EVAL))
    files = EVAL[-2:] if Path(cwd) == ROOT else [ROOT / f for f in EVAL[-2:]]
    res = run([*trecqr, *EVAL[:-2], *files], env=env, cwd=cwd)
    print(res.stdout + res.stderr, end="")
    if res.stdout != EXPECTED.read_text():
        raise Failed(f"the table differs from {EXPECTED.relative_to(ROOT)}")
    print(f"   = {EXPECTED.relative_to(ROOT)} (trec_eval 9.0.8), byte for byte")


def check(tmp: Path) -> None:
    dist = tmp / "dist"
    step(f"build: {sys.executable} -m build --outdir {dist}")
    # from the temporary folder: in the checkout, the build/ folder setuptools leaves there
    # would be imported as the `build` package
    run([sys.executable, "-m", "build", "--outdir", dist, ROOT], cwd=tmp)
    wheels, sdists = glob.glob(str(dist / "*.whl")), glob.glob(str(dist / "*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise Failed(f"expected one wheel and one sdist in {dist}: {os.listdir(dist)}")
    print(f"   {Path(sdists[0]).name}\n   {Path(wheels[0]).name}")

    venv = tmp / "venv"
    step(f"fresh venv: {venv}")
    run([sys.executable, "-m", "venv", venv])
    env = no_compiler_env(venv)
    py = venv / "bin" / "python"
    found = run([py, "-c", "import shutil; print([shutil.which(c) for c in "
                 "('gcc', 'cc', 'clang')])"], env=env).stdout.strip()
    print(f"   CC=false, PATH={env['PATH']}; gcc, cc, clang found: {found}")
    if found != "[None, None, None]":
        raise Failed(f"a compiler is still on PATH: {found}")

    step("pip install the wheel (no compiler)")
    run([py, "-m", "pip", "install", "-q", wheels[0]], env=env)

    check_installed([venv / "bin" / "trecqr"], py, env, ROOT)

    step("pip install the sdist (no compiler): must fail in one line")
    res = run([py, "-m", "pip", "install", "--no-deps", "--no-cache-dir", sdists[0]], env=env,
              check=False)
    said = [line.strip() for line in (res.stdout + res.stderr).splitlines()
            if line.strip().startswith(NO_COMPILER_LINE)]
    if res.returncode == 0 or len(said) != 1:
        raise Failed(f"pip install of the sdist exited {res.returncode} without the line:\n"
                     f"{res.stdout[-3000:]}{res.stderr[-3000:]}")
    print(f"   exit {res.returncode}: {said[0]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--installed", action="store_true",
                        help="step 4 only, on the trecqr installed for this Python (a release's "
                             "wheel test: pyproject.toml's [tool.cibuildwheel] test-command)")
    args = parser.parse_args()
    if args.installed:  # python -m trecqr from a folder that is not the checkout
        with tempfile.TemporaryDirectory(prefix="trecqr-wheel-") as tmp:
            try:
                check_installed([sys.executable, "-m", "trecqr"], sys.executable, None, tmp)
            except Failed as exc:
                print(f"FAILED: {exc}", file=sys.stderr)
                return 1
        print("== ok: the installed trecqr runs its C kernels")
        return 0
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="trecqr-wheel-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        check(tmp)
    except Failed as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    print("== ok: the wheel installs and runs its C kernels without a compiler")
    return 0


if __name__ == "__main__":
    sys.exit(main())
