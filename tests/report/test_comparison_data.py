"""A Comparison is plain data: a dataclass of computed values whose module imports no renderer
(the renderers import it), whose fields are JSON, and which the notebook's view class (a
subclass) wraps without copying numbers; the computation gives the same values through
trecqr.compare and report/comparison_stats."""

from __future__ import annotations

import ast
import dataclasses
import json

from conftest import ROOT, data_path

import trecqr
from trecqr.report.comparison import Comparison
from trecqr.report.comparison_stats import compute
from trecqr.report.comparison_views import ComparisonViews

RENDERERS = {"trecqr.report.comparison_text", "trecqr.report.tables", "trecqr.report.html",
             "trecqr.report.comparison_views", "trecqr.report.compare"}


def _imports(path):
    tree = ast.parse(path.read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


def test_the_data_imports_no_renderer_and_the_renderers_import_it():
    assert not _imports(ROOT / "trecqr/report/comparison.py") & RENDERERS
    assert not _imports(ROOT / "trecqr/report/comparison_stats.py") & RENDERERS
    for renderer in ("comparison_text", "tables"):
        assert "trecqr.report.comparison" in _imports(ROOT / f"trecqr/report/{renderer}.py")
    # breakdown takes its tests from report/stats, not from compare
    assert "trecqr.report.compare" not in _imports(ROOT / "trecqr/report/breakdown.py")


def test_plain_data_and_its_views_hold_the_same_values():
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    runs = [data_path("cast2021", f"docrun_org_{n}.run") for n in ("manual_bm25", "convdr")]
    plain = compute(qrels, runs, ["map"], permutations=100, bootstrap=100)
    shown = trecqr.compare(qrels, runs, ["map"], permutations=100, bootstrap=100)
    assert type(plain) is Comparison and dataclasses.is_dataclass(plain)
    assert isinstance(shown, ComparisonViews) and isinstance(shown, Comparison)
    assert plain.to_dict() == shown.to_dict()
    json.dumps(plain.to_dict(), allow_nan=False)
    assert repr(plain) == repr(shown)
    assert repr(plain).startswith("<Comparison: 2 runs x 1 measures (map), baseline "
                                  "docrun_org_manual_bm25.run, t test, holm correction")
