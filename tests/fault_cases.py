"""Shared by the fault suites (tests/test_faults_*.py): the ``trecqr`` console script run as a
user runs it, in a child process (so closed or full stdout, FIFOs, signals and non-UTF-8 names
are real); the checks every error path must pass (exit 2, no traceback, no "internal error",
one stderr line; nothing left behind); bad files made from trec_eval's own test files; and the
index and large collection that several suites read (module-scoped where they are used).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, TE, run_cli


FX = ROOT / "fixtures"
Q, R = TE / "qrels.test", TE / "results.test"
CMD = [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
       "from trecqr.runtime.launch import entry; entry()"]


def trecqr(args, cwd=None, env=None, timeout=120, **kw):
    e = dict(os.environ)
    e.pop("TRECQR_DEBUG", None)
    e.update(env or {})
    return subprocess.run(CMD + [a if isinstance(a, bytes) else str(a) for a in args], cwd=cwd,
                          env=e, capture_output=True, timeout=timeout, **kw)


def one_line(res, code=2) -> str:
    """Assert exit `code`, no traceback, one stderr line; return it."""
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode == code, err
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def usage_error(res, option: str) -> None:
    err = res.stderr.decode()
    assert res.returncode == 2 and "Traceback" not in err
    assert f"Invalid value for '{option}'" in err, err


def nothing_left(folder: Path, keep=()) -> None:
    left = sorted(p.name for p in folder.iterdir() if p.name not in keep)
    assert left == [], left


# root writes into a read-only folder: as root, trecqr runs without the capabilities that let
# it (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its bounding set)
AS_USER = [] if os.geteuid() != 0 else \
    ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.fixture
def read_only_folder(tmp_path):
    """An empty folder no one may write into (as root: through AS_USER); skipped as root
    without setpriv."""
    if AS_USER and shutil.which("setpriv") is None:
        pytest.skip("running as root, and no setpriv to drop root's override")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    yield ro
    ro.chmod(0o755)


@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robust-index") / "idx"
    res = trecqr(["index", FX / "cast2021-demo/collection.jsonl", "-o", folder, "--quiet"])
    assert res.returncode == 0, res.stderr
    return folder


@pytest.fixture(scope="module")
def large_collection(tmp_path_factory):
    """20,000 synthetic passages: the bm25s index tokenises them in 3 batches, in worker
    processes."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_retrieval

    bench_retrieval.DATA = tmp_path_factory.mktemp("collection")
    folder, _ = bench_retrieval.make_collection(20_000, 10, seed=1)
    return folder / "collection.jsonl"


RUN_LINES = (TE / "results.test").read_text().splitlines()
QRELS_LINES = (TE / "qrels.test").read_text().splitlines()
RUN_FIELDS = "(qid Q0 docno rank score runid)"
QRELS_FIELDS = "(qid iter docno grade)"


def bad_file(tmp_path, name, lines=None, data: bytes | None = None):
    path = tmp_path / name
    if data is None:
        data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return path


def edited(lines, number, fn):
    """A copy of lines with line `number` (1-based) replaced by fn(its fields)."""
    out = list(lines)
    out[number - 1] = " ".join(fn(out[number - 1].split()))
    return out


def eval_error(args, cwd=None, input=None) -> str:
    """Run ``trecqr eval args``; assert exit 2, no output, no traceback; return the one line."""
    result = run_cli(["eval", *args], cwd=cwd, input=input)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def qrels():
    return TE / "qrels.test"


@pytest.fixture
def run():
    return TE / "results.test"


CAST = ROOT / "fixtures" / "cast2021-demo"
