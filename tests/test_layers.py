"""trecqr's layers, checked on the source: every ``import`` / ``from ... import`` line of trecqr/
(top level or inside a function, ``if TYPE_CHECKING`` included: an import line is a dependency
wherever it is) must point down, and no two modules may import each other.

The rule, precisely:

* A module is a file of trecqr/ (``trecqr/x.py`` is ``trecqr.x``, ``trecqr/x/__init__.py`` is
  ``trecqr.x``). Its layer is that of the first entry of :data:`LAYERS` whose name is the
  module's name or a package above it (``trecqr.scorer.rankings`` is in ``trecqr.scorer``);
  the entry ``trecqr`` names trecqr/__init__.py only. ``trecqr`` itself (the package's lazy export table, trecqr/__init__.py) sits on top: it
  re-exports the public API, so nothing inside the package may import it.
* The layers, lowest first (a layer may import itself and any layer below):

  ====  ===========================================================  ==========================
  rank  modules                                                      what
  ====  ===========================================================  ==========================
  0     trecqr.errors, trecqr.version, trecqr.tempfiles,             errors, temporary files,
        trecqr.interrupts, trecqr.transactions, trecqr.workers,      signals as exceptions,
        trecqr.special_files, trecqr.reporting,                      output transactions, worker
        trecqr.holdpoints, trecqr.extras, trecqr.memory              pools, FIFO/device inputs,
                                                                     progress and info lines,
                                                                     test hold points, extras,
                                                                     memory limits
  1     trecqr.formats                                               TREC files in and out
  2     trecqr.scorer                                                rankings, evaluation core
  3     trecqr.measures                                              measure families
  4     trecqr.api, trecqr.api_many, trecqr.api_trec_eval,           the Python API, trec_eval's
        trecqr.api_views                                             pipeline, notebook views
  5     trecqr.adapters, trecqr.retrieval, trecqr.generative,        datasets, retrieval,
        trecqr.report, trecqr.fusion, trecqr.stats                   generative metrics, reports,
                                                                     fusion, statistics
  6     trecqr.compat, trecqr.api_engine, trecqr.kernels             pytrec_eval drop-in; which
                                                                     engine scores trecqr eval;
                                                                     which C kernels loaded
  7     trecqr.cli, trecqr.launch, trecqr.__main__                   the command line (click,
                                                                     process lifecycle)
  8     trecqr                                                       package exports
  ====  ===========================================================  ==========================

  (errors/formats -> scorer -> measures -> api -> compat -> cli, with the domain packages of
  rank 5 above the API; the order inside rank 5 is not fixed, but its modules may not import
  each other both ways.)
* An import is resolved to the deepest trecqr module it names: ``from ..formats import run``
  is ``trecqr.formats.run``, ``from ..formats.run import Run`` is ``trecqr.formats.run``,
  ``from . import irds`` is the sibling ``irds``. An import of a name from a package
  (``from ..formats import Run``) is an import of the package's ``__init__``.
* Mutual imports: for modules A != B, A importing B and B importing A is a cycle, whatever
  their layers (a module importing its own package's ``__init__`` is not counted).
* Every module must be in a layer: a new top-level module fails until it is placed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "trecqr"

LAYERS = [
    (0, ("trecqr.errors", "trecqr.version", "trecqr.tempfiles", "trecqr.interrupts",
         "trecqr.transactions", "trecqr.workers", "trecqr.special_files", "trecqr.reporting",
         "trecqr.holdpoints", "trecqr.extras", "trecqr.memory")),
    (1, ("trecqr.formats",)),
    (2, ("trecqr.scorer",)),
    (3, ("trecqr.measures",)),
    (4, ("trecqr.api", "trecqr.api_many", "trecqr.api_trec_eval", "trecqr.api_views")),
    (5, ("trecqr.adapters", "trecqr.retrieval", "trecqr.generative", "trecqr.report",
         "trecqr.fusion", "trecqr.stats")),
    (6, ("trecqr.compat", "trecqr.api_engine", "trecqr.kernels")),
    (7, ("trecqr.cli", "trecqr.launch", "trecqr.__main__")),
    (8, ("trecqr",)),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def layer(module: str) -> int | None:
    best = None
    for rank, names in LAYERS:
        for name in names:
            if module == name or (name != "trecqr" and module.startswith(name + ".")):
                if best is None or len(name) > best[1]:
                    best = (rank, len(name))
    return None if best is None else best[0]


def _resolve(target: str, known: dict) -> str:
    """The deepest known module named by a dotted target (a module or a name in one)."""
    while target not in known and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


def imports(module: str, path: Path, known: dict) -> list:
    """(imported module, line) for every import line of the module that names trecqr."""
    is_pkg = path.name == "__init__.py"
    package = module if is_pkg else module.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            if target == "trecqr" or target.startswith("trecqr."):
                out.append((_resolve(target, known), node.lineno))
    return out


def graph() -> list:
    known = modules()
    return [(m, t, line) for m, p in known.items() for t, line in imports(m, p, known)]


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer(m) is None] == []


def test_no_module_imports_from_a_layer_above():
    upward = sorted({f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)}), line {line}"
                     for m, t, line in graph() if layer(t) > layer(m)})
    assert upward == [], "imports that point up:\n" + "\n".join(upward)


def test_no_two_modules_import_each_other():
    edges = {(m, t) for m, t, _ in graph() if m != t and not m.startswith(t + ".")}
    cycles = sorted({tuple(sorted(e)) for e in edges if (e[1], e[0]) in edges})
    assert cycles == []


def test_the_rule_sees_what_it_should():
    """The resolver on known lines: relative, absolute, package-level and sibling imports."""
    known = modules()
    got = dict(((m, t), line) for m, t, line in graph())
    assert ("trecqr.report.tables", "trecqr.report.comparison") in got  # from .x import y
    assert ("trecqr.generative.suggest", "trecqr.api") in got  # from ..api import evaluate
    assert ("trecqr.adapters.session_readers", "trecqr.adapters.irds") in got  # from . import irds
    assert layer("trecqr.scorer.rankings") == 2 and layer("trecqr.report.compare") == 5
    assert layer("trecqr") == 8 and layer("trecqr.nothing") is None and "trecqr.formats" in known
    assert layer("trecqr.scorer") == 2 and layer("trecqr.measures.names") == 3
