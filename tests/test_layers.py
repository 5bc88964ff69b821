"""trecqr's layers, checked on the source: every ``import`` / ``from ... import`` line of trecqr/
(top level or inside a function, ``if TYPE_CHECKING`` included: an import line is a dependency
wherever it is) must point down, and no two modules may import each other.

The rule, precisely:

* A module is a file of trecqr/ (``trecqr/x.py`` is ``trecqr.x``, ``trecqr/x/__init__.py`` is
  ``trecqr.x``). Its layer is that of the first entry of :data:`LAYERS` whose name is the
  module's name or a package above it (``trecqr.rankings.build`` is in ``trecqr.engine``);
  the entry ``trecqr`` names trecqr/__init__.py only. ``trecqr`` itself (the package's lazy export
  table, trecqr/__init__.py) sits on top: it
  re-exports the public API, so nothing inside the package may import it.
* The floors, lowest first (a floor may import itself and any floor below):

  =====  =========================================================  ==============================
  floor  modules                                                    what
  =====  =========================================================  ==============================
  0      trecqr.errors, trecqr.version                              the ground floor
  1      trecqr.runtime                                             process plumbing
  2      trecqr.formats                                             files and objects as columns
  3      trecqr.rankings                                            rankings in each reference's
                                                                    order
  4      trecqr.measures                                            measure declarations, kernels
  5      trecqr.engine                                              plan, execute, streaming
  6      trecqr.api                                                 evaluate, Results, drop-ins
  7      trecqr.fusion, trecqr.generative, trecqr.datasets,         the domain packages
         trecqr.protocols, trecqr.retrieval, trecqr.report
  8      trecqr.workflows                                           end-to-end flows (cqr)
  9      trecqr.cli, trecqr.__main__                                the command line
  10     trecqr                                                     package exports
  =====  =========================================================  ==============================

  One documented exception (:data:`BOOTSTRAP`): the console script's first module,
  ``trecqr.runtime.launch``, installs signal handlers before anything is imported and then
  calls the command line, so it imports ``trecqr.cli`` (floor 9) inside its function.
* Circles: no set of modules may import one another in a circle, of any length (strongly
  connected components of the import graph, a module importing its own package's ``__init__``
  not counted).
* An import is resolved (tests/import_graph.py, the parse shared with tests/test_imports.py)
  to the deepest trecqr module it names: ``from ..formats import run``
  is ``trecqr.formats.run``, ``from ..formats.run import Run`` is ``trecqr.formats.run``,
  ``from . import irds`` is the sibling ``irds``. An import of a name from a package
  (``from ..formats import Run``) is an import of the package's ``__init__``.
* Every module must be in a layer: a new top-level module fails until it is placed here.
"""

from __future__ import annotations

from import_graph import modules, trecqr_edges

LAYERS = [
    (0, ("trecqr.errors", "trecqr.version")),
    (1, ("trecqr.runtime",)),
    (2, ("trecqr.formats",)),
    (3, ("trecqr.rankings",)),
    (4, ("trecqr.measures",)),
    (5, ("trecqr.engine",)),
    (6, ("trecqr.api",)),
    (7, ("trecqr.fusion", "trecqr.generative", "trecqr.datasets", "trecqr.protocols",
         "trecqr.retrieval", "trecqr.report")),
    (8, ("trecqr.workflows",)),
    (9, ("trecqr.cli", "trecqr.__main__")),
    (10, ("trecqr",)),
]

BOOTSTRAP = {("trecqr.runtime.launch", "trecqr.cli"),
             ("trecqr.runtime.launch", "trecqr.cli.failures")}


def layer(module: str) -> int | None:
    best = None
    for rank, names in LAYERS:
        for name in names:
            if module == name or (name != "trecqr" and module.startswith(name + ".")):
                if best is None or len(name) > best[1]:
                    best = (rank, len(name))
    return None if best is None else best[0]


def graph() -> list:
    """(importer, imported trecqr module, line): tests/import_graph.py's shared parse."""
    return trecqr_edges()


def test_every_module_has_a_layer():
    assert [m for m in modules() if layer(m) is None] == []


def test_no_module_imports_from_a_layer_above():
    upward = sorted({f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)}), line {line}"
                     for m, t, line in graph() if layer(t) > layer(m) and (m, t) not in BOOTSTRAP})
    assert upward == [], "imports that point up:\n" + "\n".join(upward)


def circles(edges: set) -> list:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    succ: dict = {}
    for m, t in edges:
        succ.setdefault(m, set()).add(t)
        succ.setdefault(t, set())
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found = []
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(succ[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(found)


def import_edges() -> set:
    return {(m, t) for m, t, _ in graph() if m != t and not m.startswith(t + ".")}


# Circles found when the finder was written, being broken (issue 30: ``Comparison`` becomes plain
# data, rendered by the renderers). The list may only shrink; a new circle fails.
KNOWN_CIRCLES = []


def test_no_circle_of_any_length():
    assert [c for c in circles(import_edges()) if c not in KNOWN_CIRCLES] == []


def test_the_circle_finder_sees_long_circles():
    edges = {("a", "b"), ("b", "c"), ("c", "d"), ("d", "a"), ("d", "e"), ("x", "y"), ("y", "x")}
    assert circles(edges) == [["a", "b", "c", "d"], ["x", "y"]]
    assert circles({("a", "b"), ("b", "c")}) == []


def test_the_rule_sees_what_it_should():
    """The resolver on known lines: relative, absolute, package-level and sibling imports."""
    known = modules()
    got = dict(((m, t), line) for m, t, line in graph())
    assert ("trecqr.report.tables", "trecqr.report.comparison") in got  # from .x import y
    # from ..api import evaluate
    assert ("trecqr.generative.suggest", "trecqr.api.evaluation") in got
    assert ("trecqr.datasets.sessions.readers", "trecqr.datasets.irds") in got  # from . import irds
    assert layer("trecqr.rankings.build") == 3 and layer("trecqr.report.compare") == 7
    assert layer("trecqr") == 10 and layer("trecqr.nothing") is None and "trecqr.formats" in known
    assert layer("trecqr.engine") == 5 and layer("trecqr.engine.names") == 5
