"""One parse of trecqr's import lines, read by tests/test_imports.py (what each module loads, and
whether inside a function) and tests/test_layers.py (which trecqr module each line depends on).

Each file of trecqr/ is parsed once per test process; every ``import`` / ``from ... import``
line becomes an :class:`ImportLine`, which can name its targets two ways:

* :meth:`ImportLine.loaded`: the modules the line loads. ``from .x import y`` in
  trecqr/a/b.py is ``trecqr.a.x``, ``from . import y`` is ``trecqr.a.y`` (and so is ``from
  trecqr.a import y`` when trecqr/a/y.py exists), ``import a.b as c`` is ``a.b``.
* :meth:`ImportLine.depends_on`: the deepest trecqr module each imported name resolves to.
  ``from ..formats import run`` is ``trecqr.formats.run`` (a module), ``from ..formats import
  Run`` is ``trecqr.formats`` (a name in the package's ``__init__``); lines that name no trecqr
  module give nothing.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "trecqr"


def module_name(path: Path) -> str:
    """``trecqr/x.py`` is ``trecqr.x``, ``trecqr/x/__init__.py`` is ``trecqr.x``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.lru_cache(maxsize=1)
def _modules() -> tuple:
    return tuple((module_name(p), p) for p in sorted(PKG.rglob("*.py")))


def modules() -> dict:
    """{module name: path} of every file of trecqr/."""
    return dict(_modules())


@dataclass(frozen=True)
class ImportLine:
    module: str        # the importing module
    base: str          # `import a.b`: "" ; `from X import ...`: X, made absolute
    names: tuple       # `import a.b, c`: ("a.b", "c"); `from X import y, z`: ("y", "z")
    bare_from: bool    # `from . import y` (no module after the dots)
    line: int
    in_function: bool  # inside a def, async def or lambda

    def loaded(self) -> list:
        if not self.base:
            return list(self.names)
        known = modules()
        subs = [f"{self.base}.{n}" for n in self.names]
        if self.bare_from:
            return subs
        # `from trecqr.a import b` loads the submodule trecqr.a.b when there is one
        return list(dict.fromkeys(s if s in known else self.base for s in subs))

    def depends_on(self, known: dict) -> list:
        targets = list(self.names) if not self.base else [f"{self.base}.{n}" for n in self.names]
        out = []
        for target in targets:
            if target == "trecqr" or target.startswith("trecqr."):
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                out.append(target)
        return out


def _lines(module: str, path: Path) -> list:
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                      ast.Lambda))
            if isinstance(child, ast.Import):
                out.append(ImportLine(module, "", tuple(a.name for a in child.names), False,
                                      child.lineno, in_function))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[:len(parts) - (child.level - 1)]
                    base = ".".join(parts + ([child.module] if child.module else []))
                out.append(ImportLine(module, base, tuple(a.name for a in child.names),
                                      child.module is None, child.lineno, in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return out


@functools.lru_cache(maxsize=1)
def _all_lines() -> tuple:
    return tuple(line for m, p in _modules() for line in _lines(m, p))


def import_lines(module: str | None = None) -> list:
    """Every import line of trecqr/ (or of one module), in file order."""
    return [i for i in _all_lines() if module is None or i.module == module]


def trecqr_edges() -> list:
    """(importer, imported trecqr module, line) for every dependency between trecqr modules."""
    known = modules()
    return [(i.module, t, i.line) for i in _all_lines() for t in i.depends_on(known)]
