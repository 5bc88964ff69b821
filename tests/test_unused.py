"""No dead code at module level: every function, class and module-level name defined in trecqr/
is used somewhere: by trecqr itself, the tests, the benchmarks or the docs (read with ast; a
name in a string counts, for the lazy tables "module:name" and ``__all__``; one in a comment
does not). A decorated function counts as used (the decorator registers it).

Names kept on purpose although nothing here uses them (a public API for others) go in
:data:`UNUSED_ON_PURPOSE`, with why.
"""

from __future__ import annotations

import ast
import collections
import re

from conftest import ROOT

UNUSED_ON_PURPOSE: dict = {}  # (path, name) -> why it stays


def _words(text: str) -> list:
    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)


def _sources(*globs) -> list:
    return sorted(p for g in globs for p in ROOT.glob(g) if p.is_file())


def definitions(path) -> list:
    """(name, line) of the module-level names a file defines, decorated functions left out."""
    out = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if not node.decorator_list:
                out.append((node.name, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [(t.id, node.lineno) for t in targets if isinstance(t, ast.Name)]
    return [(n, line) for n, line in out if not (n.startswith("__") and n.endswith("__"))]


def uses() -> collections.Counter:
    """How often each name is read anywhere (loads, attributes, imports, strings, docs)."""
    count = collections.Counter()
    for path in _sources("trecqr/**/*.py", "tests/**/*.py", "docs/**/*.py", "benchmarks/**/*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
                count[node.id] += 1
            elif isinstance(node, ast.Attribute):
                count[node.attr] += 1
            elif isinstance(node, ast.alias):
                count[node.name.rsplit(".", 1)[-1]] += 1
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                count.update(set(_words(node.value)))
    for path in _sources("**/*.md"):
        count.update(_words(path.read_text(encoding="utf-8")))
    return count


def test_no_module_level_name_is_unused():
    used = uses()
    dead = sorted(f"{p.relative_to(ROOT)}:{line}: {name}"
                  for p in _sources("trecqr/**/*.py") for name, line in definitions(p)
                  if used[name] == 0 and (str(p.relative_to(ROOT)), name) not in UNUSED_ON_PURPOSE)
    assert dead == []


def test_the_check_sees_a_dead_name(tmp_path):
    """definitions() and uses() on known code, so that a broken walker cannot pass."""
    f = tmp_path / "m.py"
    f.write_text("import x\n\n\ndef used():\n    pass\n\n\n@register\ndef hooked():\n    pass\n\n\n"
                 "LIMIT = 3\n")
    assert definitions(f) == [("used", 4), ("LIMIT", 13)]
    used = uses()
    assert used["run_guarded"] > 0 and used["qrecc_command"] > 0  # a call; a lazy "mod:name"
    assert used["definitely_not" + "_a_name_here"] == 0
