"""What ``trecqr eval`` on a small run imports: start-up is most of its time (trec_eval takes
about 10 ms), so a module a small run does not use must not be loaded (benchmarks/
bench_startup.py times it). Deterministic: the modules loaded are read from ``sys.modules`` of
a fresh interpreter, not timed.

* Reading a small run and qrels (the C scanner; the qrels split in Python into the lists the
  C pass's dicts are made from) loads neither Arrow's compute kernels nor its CSV reader.
* ``pyarrow.compute`` loads on its first use (:mod:`trecqr.runtime.deferred`): ``trecqr eval``
  on the fixture and on an organisers' CAsT 2021 run (1.1 MB, its qrels read by Arrow's CSV
  reader) never uses it, nor ``numpy.ma`` (which a plain ``np.unique`` imports).
* The console script runs no garbage collection on the fixture (its imports and lists stay
  under the threshold it sets).
* The whole command loads no pandas, no Arrow CSV reader, no process pool, no optional extra
  and none of the packages of other commands (datasets, retrieval, fusion, reports).
* ``trecqr fuse`` loads no pandas either (pyarrow imports it to convert Python values).
* Arrow's allocator is set when pyarrow loads, not by loading it.
"""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import ROOT, data_path

QRELS = ROOT / "fixtures" / "cast2021" / "qrels.txt"
RUN = ROOT / "fixtures" / "cast2021" / "manual_bm25.run"

# the modules loaded when the command (argv[2:]) ends, written to argv[1] (the command ends
# with os._exit: atexit does not run)
_EVAL = """
import gc, json, os, sys
real_exit, where, command = os._exit, sys.argv[1], sys.argv[2:]
collections, started = [], []  # counted from entry() on: compiling launch.py from source
import trecqr.runtime.launch as launch  # (no .pyc) may collect before it
install = launch._install
launch._install = lambda: (started.append(True), install())
gc.callbacks.append(lambda phase, info: phase == "start" and started and collections.append(1))
def _exit(code):
    with open(where, "w") as fh:
        json.dump(sorted(sys.modules) + [f"gc collections: {len(collections)}"], fh)
    real_exit(code)
os._exit = _exit
sys.argv = ["trecqr", *command]
from trecqr.runtime.launch import entry
entry()
"""

_READ = """
import json, os, sys
from trecqr.formats.qrels import read_qrels
from trecqr.formats.run import read_run
run, qrels = read_run(sys.argv[2]), read_qrels(sys.argv[1])
lists = (run.qid_list(), run.docno_list(), qrels.qid_list(), qrels.docno_list())
assert all(len(x) for x in lists)
print(json.dumps([type(run).__name__, type(qrels).__name__, sorted(sys.modules)]))
"""

# never needed by a small run's eval
NOT_LOADED = ["pandas", "pyarrow.csv", "pyarrow.parquet", "pyarrow.dataset", "scipy",
              "multiprocessing", "concurrent.futures", "ctypes.util", "subprocess", "tqdm",
              "ir_measures", "pytrec_eval", "matplotlib", "trecqr.datasets", "trecqr.protocols",
              "trecqr.retrieval", "trecqr.fusion", "trecqr.generative", "trecqr.workflows",
              "trecqr.report.stats"]


def _loaded(names: list, unwanted: list) -> list:
    return sorted(m for m in names for u in unwanted if m == u or m.startswith(u + "."))


def test_reading_a_small_run_and_qrels_loads_no_arrow_kernels():
    out = subprocess.run([sys.executable, "-c", _READ, str(QRELS), str(RUN)],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    run_kind, qrels_kind, modules = json.loads(out)
    assert (run_kind, qrels_kind) == ("ScannedRun", "ListedQrels")
    assert "numpy" in modules and "trecqr.formats._scan" in modules  # the check sees them
    assert _loaded(modules, ["pyarrow.compute", "pyarrow.csv", "pandas"]) == []


def test_small_eval_loads_only_what_it_uses(tmp_path):
    where = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", _EVAL, where, "eval", QRELS, RUN],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(where.read_text())
    assert proc.stdout.startswith("runid") and "trecqr.engine.execute" in modules
    assert _loaded(modules, NOT_LOADED + UNUSED_BY_EVAL) == []
    # the console script's garbage collector threshold: none of its passes (10-30 ms) here
    assert "gc collections: 0" in modules


# loaded by neither small run: Arrow's compute functions, numpy.ma, --bounds' report
UNUSED_BY_EVAL = ["pyarrow.compute", "pyarrow._compute", "numpy.ma", "html",
                  "trecqr.report.bounds"]


def test_eval_of_an_organisers_run_loads_no_compute_functions(tmp_path):
    where = tmp_path / "modules.json"
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    run = data_path("cast2021", "docrun_org_manual_bm25.run")
    proc = subprocess.run([sys.executable, "-c", _EVAL, where, "eval", qrels, run],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(where.read_text())
    assert "pyarrow.csv" in modules  # the qrels (507 KB) take Arrow's reader
    assert _loaded(modules, UNUSED_BY_EVAL) == []


def test_fuse_loads_no_pandas(tmp_path):
    """pyarrow imports pandas (about 0.25 s) to convert any Python or numpy value, a scalar
    included; fusing two runs and writing the result makes every column from Arrow arrays."""
    where, runs = tmp_path / "modules.json", [data_path("cast2021", f"docrun_org_{n}.run")
                                              for n in ("manual_bm25", "manual_ance_bert")]
    proc = subprocess.run([sys.executable, "-c", _EVAL, where, "fuse", *runs, "-o",
                           tmp_path / "rrf.run", "--method", "rrf"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(where.read_text())
    assert "trecqr.fusion.pool" in modules and (tmp_path / "rrf.run").stat().st_size > 0
    assert _loaded(modules, ["pandas"]) == []


_ALLOCATOR = """
import sys
from trecqr import cli
calls = []
cli._lean_arrow_memory = lambda: calls.append("pyarrow" in sys.modules)
cli._lean_arrow_memory_when_loaded()
before = ("pyarrow" in sys.modules, list(calls))
import pyarrow
print(before, calls, any(type(f).__name__ == "_WhenArrowLoads" for f in sys.meta_path))
"""


def test_arrow_allocator_is_set_when_pyarrow_loads_not_by_loading_it():
    """The command line sets Arrow's allocator (jemalloc, no decay) once pyarrow is imported,
    and does not import pyarrow to do it: a command that never needs Arrow does not load it."""
    out = subprocess.run([sys.executable, "-c", _ALLOCATOR], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout.strip()
    assert out == "(False, []) [True] False"
