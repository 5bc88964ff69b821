"""trecqr's C kernels: ``trecqr kernels`` lists the four, each loaded from the installed package
(the same modules their callers use), in a fixed three-column format; a missing one is named
with its import error, one line on stderr and exit status 1. A build from source without a
working C compiler stops with one line that says so (build_kernels.py), no traceback.
pyproject.toml names every C source and header of the package, so the sdist carries them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import trecqr
from conftest import ROOT, run_cli
from trecqr.cli import kernels_loaded as kernels
from trecqr.formats import run as run_module
from trecqr.fusion import pool as pool_module
from trecqr.engine import rankings as core_rankings
from trecqr.rankings import trec_order as trec_order_module

NAMES = ["trecqr.formats._scan", "trecqr.rankings._dicts", "trecqr.rankings._columns",
         "trecqr.fusion._pool"]
PKG = Path(trecqr.__file__).resolve().parent


def test_every_kernel_is_loaded_from_the_package():
    res = run_cli(["kernels"])
    assert res.exit_code == 0, res.output
    assert res.stderr == ""
    lines = res.stdout.splitlines()
    assert [line.split()[:2] for line in lines] == [[n, "loaded"] for n in NAMES]
    for name, line in zip(NAMES, lines):
        path = Path(line.split(None, 2)[2])
        # three columns: the name padded to the longest (24), "loaded" padded to 7
        assert line == f"{name:<{kernels.NAME_WIDTH}}  loaded   {path}"
        assert path.resolve().parent == PKG.joinpath(*name.split(".")[1:-1])
        assert path.name.startswith(name.rsplit(".", 1)[1] + ".")


def test_the_report_shows_the_modules_the_callers_use():
    """Not a second import that could succeed where the callers' failed: the same objects."""
    assert run_module.scanner() is kernels._scan
    assert core_rankings.dict_values is kernels._dicts.dict_values
    assert trec_order_module.rank_columns is kernels._columns.rank_columns
    assert pool_module._kernel is kernels._pool


_BLOCKED = """
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "trecqr.fusion._pool":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
sys.argv = ["trecqr", "kernels"]
from trecqr.runtime.launch import entry
entry()
"""


def test_a_missing_kernel_is_named_with_its_import_error():
    res = subprocess.run([sys.executable, "-c", _BLOCKED], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 1, res.stderr
    lines = res.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [[n, "loaded"] for n in NAMES[:3]]
    # Python's own words for `from .fusion import _pool` when no built module is there
    assert lines[3] == ("trecqr.fusion._pool       missing  cannot import name '_pool' from "
                        f"'trecqr.fusion' ({PKG / 'fusion' / '__init__.py'})")
    assert res.stderr == (
        "trecqr: 1 of 4 C kernels missing (trecqr.fusion._pool); trecqr cannot score without "
        "them: reinstall trecqr from a wheel, or from source with a C compiler "
        "(pip install --force-reinstall trecqr)\n")


def ext_modules() -> list:
    """pyproject.toml's ``[[tool.setuptools.ext-modules]]`` tables."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "ext-modules"]


def kernel_sources() -> list:
    """The C files pyproject.toml names (each kernel's sources and the headers it depends on):
    what the sdist carries and a build from source compiles."""
    return [f for m in ext_modules() for f in m["sources"] + m.get("depends", [])]


def test_pyproject_names_every_c_file_of_the_package():
    """A C source or header that pyproject.toml does not name is missing from the sdist: a
    build from it fails, or compiles a stale part (setuptools rebuilds on the named ones)."""
    on_disk = {p.relative_to(ROOT).as_posix() for ext in ("*.c", "*.h")
               for p in (ROOT / "trecqr").rglob(ext)}
    assert sorted(set(kernel_sources())) == sorted(on_disk)
    assert [m["name"] for m in ext_modules()] == NAMES


def test_a_build_without_a_c_compiler_fails_in_one_line(tmp_path):
    """setuptools' build_ext, as pip runs it on the sdist, with CC=false: the probe stops it
    before any kernel, with the one line (no traceback, no compiler command lines)."""
    for rel in ["pyproject.toml", "build_kernels.py", "README.md", *set(kernel_sources())]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    env = {**os.environ, "CC": "false"}
    res = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()",
                          "build_ext"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 1
    errors = [line for line in res.stderr.splitlines() if line.startswith("error")]
    assert errors == [
        "error: trecqr's C kernels need a C compiler, and 'false' (CC=false) did not compile a "
        "test file: install one (gcc or clang; Visual Studio Build Tools on Windows), or install "
        "a trecqr wheel, which needs none (pip install --only-binary trecqr trecqr)"]
    assert "Traceback" not in res.stderr and "probe.c" not in res.stdout + res.stderr
    assert not list(tmp_path.rglob("*.so")) and not list(tmp_path.rglob("*.o"))


def test_the_wheel_checks_table_is_trecqrs_output():
    """benchmarks/wheel_check.expected (trec_eval 9.0.8's table for README command 1), which the
    wheel check and the release's wheel test compare with, is what this tree prints."""
    fx = ROOT / "fixtures/cast2021"
    res = run_cli(["eval", "-m", "official", "-m", "ndcg_cut.3", fx / "qrels.txt",
                   fx / "manual_bm25.run"])
    assert res.exit_code == 0, res.output
    assert res.stdout == (ROOT / "benchmarks/wheel_check.expected").read_text()


def test_pyproject_requires_the_kernels_and_releases_wheels_for_three_systems():
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    tool = cfg["tool"]
    assert [(e["name"], e.get("optional", False)) for e in tool["setuptools"]["ext-modules"]] == \
        [(n, False) for n in NAMES]
    assert tool["setuptools"]["cmdclass"] == {"build_ext": "build_kernels.BuildKernels"}
    assert "build_kernels.py" in (ROOT / "MANIFEST.in").read_text().split()
    wheels = tool["cibuildwheel"]
    assert wheels["build"] == ["cp310-*", "cp311-*", "cp312-*", "cp313-*"]
    assert {system: wheels[system]["archs"] for system in ("linux", "macos", "windows")} == {
        "linux": ["x86_64", "aarch64"], "macos": ["x86_64", "arm64"], "windows": ["AMD64"]}
    assert wheels["test-command"].endswith("benchmarks/wheel_check.py --installed")
