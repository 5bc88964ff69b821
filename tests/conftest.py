"""Shared test helpers: where the real data lives, running the CLI in-process, and the suite's
order (``--shuffle SEED`` runs the files, and the tests in each file, in a seeded random order, to
show that no test depends on another's leftovers; the same seed gives every xdist worker the same
order, which xdist requires)."""

from __future__ import annotations

import atexit
import compileall
import contextlib
import fcntl
import os
import pickle
import random
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

# tests/ mirrors the package's floors (tests/engine/, tests/report/...); a few test files share
# fixtures and cases with a file on another floor (test_stream reads test_conformance's cases):
# every test folder is importable whatever order pytest (or an xdist worker) collects the folders in
_TESTS = Path(__file__).resolve().parent
sys.path[1:1] = [str(p.parent) for p in sorted(_TESTS.glob("*/**/test_*.py"))
                 if str(p.parent) not in sys.path and str(p.parent) != str(_TESTS)]
sys.path[1:] = list(dict.fromkeys(sys.path[1:]))

# ir_datasets makes folders under its home when imported, and fixes its datasets' file paths
# under it then: every test process gets a private home before anything imports ir_datasets, so
# nothing reads or writes ~/.ir_datasets and the paths do not depend on which test came first
IRDS_HOME = Path(tempfile.mkdtemp(prefix="trecqr-irds-"))
os.environ["IR_DATASETS_HOME"] = str(IRDS_HOME)
atexit.register(shutil.rmtree, IRDS_HOME, ignore_errors=True)

# ranx, an oracle here, compiles its numba functions on first use, and a fresh venv has no cache:
# most of the ranx group's time (its fusion oracle runs without the JIT instead, in a child:
# tests/fusion/ranx_fusion_oracle.py). LLVM's level 1 instead of 3 compiles them in two thirds
# of the time (the fusion test when it compiled ranx's 25 methods: 105 s against 152 s) and runs
# them no slower there (32 s against 38 s, cached). The values do not change: numba compiles
# without fast-math, so no level reorders a floating-point operation. Set before anything
# imports numba (a worker or a subprocess inherits it); a value given by the caller is kept.
os.environ.setdefault("NUMBA_OPT", "1")

# Under xdist every core already runs a worker: a worker's torch, OpenBLAS or OpenMP pool of one
# thread per core would share the cores with the other workers, and their threads spin while
# they wait for each other (on 2 cores the suite took 318 s with the libraries' own pools and
# 282 s with one thread each). One thread per worker, set before anything loads them (the
# subprocesses a test starts inherit it); the values do not depend on it (no test depends on a
# thread count). Under -n 0 the libraries keep their own; a value given by the caller is kept.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    for _pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_pool, "1")

from trecqr.datasets.sessions.model import MISSING_LAST, MISSING_ZERO, candidate_id  # noqa: E402


ROOT = Path(__file__).resolve().parent.parent

# setup.cfg runs `--dist loadfile --no-loadscope-reorder`: each test file goes whole to one xdist
# worker, so a module-scoped fixture is built once (with per-test distribution each worker built
# its own), and the files go out in collection order. The files below are the suite's longest
# (index builds, docs examples, oracle matrices, subprocesses importing torch or pyterrier), or
# open a SAME_WORKER group (below): collected first, so they start first instead of ending the
# run on one worker while the other idles. A fixed list, not timings: the order is the same on
# every run and every worker (xdist requires it).
HEAVY_FIRST = (
    "retrieval/test_candidate_vectors.py",  # builds the session's dense index; opens its group
    "retrieval/test_retrieval_dense.py",
    "workflows/test_candidates_dense.py",
    "retrieval/test_demo_retrieval.py",
    "datasets/test_fields_candidates.py",
    "generative/test_retrieval_sim_lucene.py",
    "retrieval/test_retrieval_lucene.py",
    "retrieval/test_retrieval_backends.py",
    "api/test_oracle_matrix.py",  # opens the ranx group
    "fusion/test_fuse_ranx.py",
    "docs/test_docs.py",
    "cli/test_faults_files_and_streams.py",
    "cli/test_faults_file_contents.py",
    "cli/test_core_install.py",
    "cli/test_faults_signals.py",
    "report/test_report_html.py",
    "engine/test_populations.py",
    "protocols/test_scai.py",
    "report/test_report_html_layout.py",
    "generative/test_generative.py",
    "api/test_oracle_edges_irm.py",
    "api/test_pipelines_pytrec.py",  # a subprocess importing mteb
)


# Files that pay the same costly in-process start-up run on one xdist worker, so it is paid once:
# torch, sentence-transformers and MiniLM (about 8 s of CPU to import and load) and the JVM of
# Lucene; the dense index (qrecc_demo_dense_build) is then built by the worker that reads it, and
# no worker waits on its lock. ranx: numba compiles its typed-dict code in every process that
# builds or reads ranx's objects (seconds; it cannot be cached). A group is one unit of work,
# sent where its first file would go in the order above; every other file is its own unit
# (--dist loadfile). Under -n 0 or another --dist the groups do nothing.
SAME_WORKER = {
    "dense and lucene": (
        "retrieval/test_candidate_vectors.py", "retrieval/test_retrieval_dense.py",
        "workflows/test_candidates_dense.py", "retrieval/test_demo_retrieval.py",
        "retrieval/test_retrieval_backends.py", "retrieval/test_retrieval_lucene.py",
        "generative/test_retrieval_sim_lucene.py", "datasets/test_fields_candidates.py",
        "report/test_cli_reports.py"),
    "ranx": ("fusion/test_fuse_ranx.py", "api/test_oracle_matrix.py",
             "report/stats/test_stats_ranx.py", "api/test_fuzz_findings.py",
             "engine/test_doors_costs.py", "formats/test_ranx_columns.py"),
}


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile with the files of each SAME_WORKER group in one unit of work."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    group_of = {(_TESTS / path).relative_to(config.rootpath).as_posix(): group
                for group, paths in SAME_WORKER.items() for path in paths}

    class SharedStartups(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return group_of.get(path, path)

    return SharedStartups(config, log)


def pytest_configure(config):
    """Byte-compile trecqr once, in this (the controlling) process before the workers start,
    when the interpreter is told not to write bytecode (PYTHONDONTWRITEBYTECODE, set on this
    project's machines): the suite starts hundreds of interpreters (subprocess tests, the
    docs' commands), and each would otherwise compile the package's modules from source again
    (about 0.1 s of CPU each). An installed wheel is compiled at install; this does the same
    for the checkout under test, in its own ``__pycache__`` folders (ignored by git)."""
    if not sys.dont_write_bytecode or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    compileall.compile_dir(ROOT / "trecqr", quiet=2)  # an unwritable checkout: left as is


def pytest_addoption(parser):
    parser.addoption("--shuffle", type=int, default=None, metavar="SEED",
                     help="run the test files, and the tests inside each, in a random order "
                          "drawn from SEED")


def pytest_collection_modifyitems(config, items):
    by_file: dict = {}
    for item in items:
        by_file.setdefault(item.path, []).append(item)
    files = list(by_file.values())
    seed = config.getoption("--shuffle")
    if seed is None:
        rank = {_TESTS / name: n for n, name in enumerate(HEAVY_FIRST)}
        # a stable sort: the other files keep pytest's order
        files.sort(key=lambda tests: rank.get(tests[0].path, len(rank)))
    else:
        draw = random.Random(seed)
        draw.shuffle(files)
        for tests in files:
            draw.shuffle(tests)
    items[:] = [item for tests in files for item in tests]


def pytest_report_header(config):
    seed = config.getoption("--shuffle")
    return None if seed is None else f"tests shuffled with --shuffle {seed}"


def _find_shared_data() -> Path:
    """The real published files (../shared/data beside the checkout), found in this order:
    $TRECQR_SHARED_DATA; shared/data beside this checkout or any folder above it; shared/data
    beside the repository this one was cloned from, when that is a local folder (a clone made
    elsewhere, e.g. under /tmp, of the working tree that sits beside shared/)."""
    env = os.environ.get("TRECQR_SHARED_DATA")
    if env:
        return Path(env).resolve()
    for folder in ROOT.parents:
        if (folder / "shared" / "data").is_dir():
            return (folder / "shared" / "data").resolve()
    try:
        import subprocess

        origin = subprocess.run(["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        origin = ""
    if origin.startswith("file://"):
        origin = origin[len("file://"):]
    if origin and os.path.isdir(origin):
        for folder in Path(origin).resolve().parents:
            if (folder / "shared" / "data").is_dir():
                return (folder / "shared" / "data").resolve()
    return (ROOT / ".." / "shared" / "data").resolve()


DATA = _find_shared_data()
TE = DATA / "trec_eval-test"


def data_path(*parts) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"test data missing: {path} (../shared/data must be present, "
                                "or TRECQR_SHARED_DATA name it)")
    return path


def cast2021_dicts():
    """The CAsT 2021 document qrels and the organisers' ConvDR document run as pytrec_eval
    dicts ({qid: {docno: grade}}, {qid: {docno: score}}), read by trecqr's file readers."""
    return files_as_dicts(data_path("cast2021", "qrels-docs.2021.qrel"),
                          data_path("cast2021", "docrun_org_convdr.run"))


def files_as_dicts(qrels_path, run_path):
    """A qrels file and a run file as pytrec_eval dicts, read by trecqr's file readers."""
    from trecqr.formats import read_qrels, read_run

    q, r = read_qrels(qrels_path), read_run(run_path)
    qrels, run = {}, {}
    for t, d, g in zip(q.qid.to_pylist(), q.docno.to_pylist(), q.grade.tolist()):
        qrels.setdefault(t, {})[d] = g
    for t, d, s in zip(r.qid.to_pylist(), r.docno.to_pylist(), r.score.tolist()):
        run.setdefault(t, {})[d] = s
    return qrels, run


def run_cli(args, cwd=None, input=None):
    """Run ``trecqr`` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from trecqr.cli import main

    runner = CliRunner()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        return runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def cli():
    return run_cli


def mrr_by_hand(insts, scores: dict, missing: str = MISSING_ZERO) -> float:
    """Mean reciprocal rank computed directly (for checking): candidates ordered by score
    descending, ties by candidate id descending; instances with candidates only."""
    total, count = 0.0, 0
    targets = {i.iid: i.target for i in insts}
    for iid, cands in scores.items():
        seen: dict = {}
        for text, s in (cands.items() if isinstance(cands, dict) else cands):
            seen.setdefault(candidate_id(text), float(s))
        if not seen:
            continue
        order = sorted(seen, key=lambda c: (-seen[c], tuple(-b for b in c.encode())))
        tid = None if targets.get(iid) is None else candidate_id(targets[iid])
        count += 1
        if tid in seen:
            total += 1.0 / (order.index(tid) + 1)
        elif missing == MISSING_LAST and tid is not None:
            total += 1.0 / len(order)
    return total / count if count else 0.0


@contextlib.contextmanager
def refused_connects():
    """socket connects (IPv4/IPv6) refused and recorded (the list yielded) inside the block, so a
    download attempt fails a dense test instead of going unnoticed."""
    attempts = []
    real = socket.socket.connect, socket.socket.connect_ex

    def refuse(self, address, *a, **kw):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            raise OSError(f"network use in a test: connect to {address!r}")
        return real[0](self, address, *a, **kw)

    def refuse_ex(self, address, *a, **kw):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address)
            return 111
        return real[1](self, address, *a, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket.socket, "connect_ex", refuse_ex)
        yield attempts


@pytest.fixture(scope="session")
def qrecc_demo_dense_build(tmp_path_factory):
    """(index folder, manifest, connects attempted while building) of a dense index (packaged
    MiniLM, one thread) of the QReCC demo collection, built once for the whole run: encoding the
    996 passages is about 30 s on this machine, and tests/retrieval/test_retrieval_dense.py,
    test_candidate_vectors.py and test_candidates_dense.py only read it (tests that write copy
    it first). Built in chunks of 300 passages (4 chunks): the streamed path. Under xdist the
    first worker to ask builds it in the run's shared temporary folder while holding a lock,
    and the others wait for the lock and read what it left (pytest-xdist's documented way to
    share one costly resource between workers)."""
    from trecqr.retrieval import dense  # the dense extra: only the modules that use it load it

    def build(folder):
        # one thread: on a busy 2-core runner, two OpenMP threads take twice as long as one
        with refused_connects() as attempts:
            manifest = dense.build_index(ROOT / "fixtures" / "qrecc-demo" / "collection.jsonl",
                                         folder, show_progress=False, threads=1, chunk_size=300)
        return manifest, list(attempts)

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.mktemp("qrecc-demo-dense") / "index"
        return (folder, *build(folder))
    shared = tmp_path_factory.getbasetemp().parent / "qrecc-demo-dense"
    shared.mkdir(exist_ok=True)
    folder, built = shared / "index", shared / "built.pickle"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or the worker dies
        if built.exists():
            return (folder, *pickle.loads(built.read_bytes()))
        result = build(folder)
        part = built.with_suffix(".part")
        part.write_bytes(pickle.dumps(result))
        part.replace(built)  # only a finished build is ever read
    return (folder, *result)


@pytest.fixture(scope="session")
def qrecc_demo_dense_index(qrecc_demo_dense_build):
    """The folder of :func:`qrecc_demo_dense_build`'s index."""
    return qrecc_demo_dense_build[0]


@pytest.fixture
def provider():
    """trecqr's ir_measures provider, registered first for the test and removed after it."""
    import ir_measures

    import trecqr

    provider = trecqr.register_ir_measures()
    yield provider
    if provider in ir_measures.DefaultPipeline.providers:
        ir_measures.DefaultPipeline.providers.remove(provider)
