"""The paper table compiles: ``trecqr compare --format latex`` with the paper's names, labels, a
caption, a label and two baselines, put in a one-page article with booktabs, goes through
pdflatex, and the PDF's text has the runs, the measure labels and the markers in order.

pdflatex (Debian's texlive-latex-recommended: booktabs) and pdftotext (poppler-utils) are
installed by .ci/run; without them this test skips, unless CI is set: then it fails.
docs/compare-latex-table.png is this PDF's page (docs/make_latex_table.py).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

import pytest

from conftest import DATA, ROOT, run_cli

_spec = importlib.util.spec_from_file_location("make_latex_table",
                                               ROOT / "docs" / "make_latex_table.py")
make_latex_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_latex_table)


def _tools():
    missing = [t for t in ("pdflatex", "pdftotext") if shutil.which(t) is None]
    if missing:
        message = (f"{', '.join(missing)} not installed (Debian: apt-get install "
                   "texlive-latex-recommended poppler-utils)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def test_the_paper_table_compiles_with_names_order_and_markers(tmp_path):
    _tools()
    got = run_cli(make_latex_table.paper_table_args(DATA))
    assert got.exit_code == 0, got.stderr
    assert "\\toprule" in got.stdout and "\\label{tab:cast21}" in got.stdout
    pdf = make_latex_table.compile_table(got.stdout, tmp_path)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True,
                          text=True).stdout
    lines = [re.sub(r"\s+", " ", line).strip() for line in text.splitlines() if line.strip()]
    assert lines[0] == "Table 1: TREC CAsT 2021, document runs."
    assert lines[1] == "Run NDCG@3 AP MRR"  # the measures in the order given, with their labels
    rows = [line.split(" ")[0] for line in lines[2:6]]
    assert rows == ["BM25", "ConvDR", "ANCE", "ANCE+BERT"]  # the runs in the order given
    assert lines[2].startswith("BM25 (baseline †") and lines[3].startswith("ConvDR (baseline ‡")
    # ANCE beats both baselines on every measure (the same pairs compare's JSON marks)
    assert lines[4].split(" ")[1:] == ["0.5300†‡", "0.2667†‡", "0.8058†‡"]
    legend = " ".join(lines[6:])
    assert "significantly different from the baselines BM25 / ConvDR" in legend
