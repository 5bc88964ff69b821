"""Markdown and LaTeX tables of a Comparison (trecqr.report.tables) on the CAsT 2021 runs."""

from __future__ import annotations

import math
import re

import pytest
from conftest import data_path

import trecqr
from trecqr.report.compare import Comparison, PairResult, compare
from trecqr.report.tables import latex_escape, render_latex, render_markdown

DAGGER_MD, DAGGER_TEX = "\u2020", r"$^{\dagger}$"  # the first baseline's marker

RUNS = ["convdr", "convdr_bert", "manual_ance", "manual_ance_bert", "manual_bm25"]
MEASURES = ["map", "recip_rank", "ndcg_cut.3"]


@pytest.fixture(scope="module")
def cast():
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    runs = [data_path("cast2021", f"docrun_org_{r}.run") for r in RUNS]
    cmp = compare(qrels, runs, MEASURES, permutations=500, bootstrap=500)
    aggs = {f"docrun_org_{r}.run": trecqr.evaluate(qrels, p, MEASURES).aggregate()
            for r, p in zip(RUNS, runs)}
    return cmp, aggs


def _best(aggs, m):
    return max(aggs, key=lambda r: aggs[r][m])


def _tex_rows(tex):
    lines = tex.splitlines()
    start, end = lines.index(r"\midrule"), lines.index(r"\bottomrule")
    return lines[start - 1], lines[start + 1:end]


def _balanced(tex):
    depth = 0
    for i, ch in enumerate(tex):
        if ch in "{}" and (i == 0 or tex[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            if depth < 0:
                return False
    return depth == 0


def test_latex_table_cast2021(cast):
    cmp, aggs = cast
    assert cmp.measures == ["map", "recip_rank", "ndcg_cut_3"]
    tex = render_latex(cmp, caption="CAsT 2021 document runs", label="tab:cast21")
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 1
    assert r"\begin{tabular}{lrrr}" in tex and r"\end{tabular}" in tex
    assert r"\caption{CAsT 2021 document runs}" in tex and r"\label{tab:cast21}" in tex
    assert _balanced(tex)
    header, rows = _tex_rows(tex)
    assert header == r"Run & MAP & MRR & NDCG@3 \\"  # report/labels.py's labels
    assert len(rows) == 5
    for line in [header] + rows:
        assert line.endswith(r" \\") and line.count("&") == 3 and line.count(r"\&") == 0
    names = [r.split(" & ")[0] for r in rows]
    assert names == [r"docrun\_org\_convdr.run (baseline)", r"docrun\_org\_convdr\_bert.run",
                     r"docrun\_org\_manual\_ance.run", r"docrun\_org\_manual\_ance\_bert.run",
                     r"docrun\_org\_manual\_bm25.run"]
    assert "docrun_org" not in tex  # every underscore escaped
    cells = {(run, m): cell for run, row in zip(cmp.runs, rows)
             for m, cell in zip(cmp.measures, row[:-3].split(" & ")[1:])}
    # exactly one bold cell per column, on the run trecqr.evaluate ranks first
    for m in cmp.measures:
        bold = [r for r in cmp.runs if r"\textbf{" in cells[(r, m)]]
        assert bold == [_best(aggs, m)]
        assert cells[(bold[0], m)].startswith(rf"\textbf{{{aggs[bold[0]][m]:.4f}}}")
    assert _best(aggs, "ndcg_cut_3") == "docrun_org_manual_ance.run"
    assert _best(aggs, "map") == _best(aggs, "recip_rank") == "docrun_org_manual_ance_bert.run"
    # means rounded to 4 places, marks exactly on the pairs compare.py calls significant
    sig = {(p.run, p.measure) for p in cmp.pairs if p.significant}
    assert sig == {("docrun_org_convdr_bert.run", "map")} | {
        (f"docrun_org_{r}.run", m) for r in ("manual_ance", "manual_ance_bert")
        for m in cmp.measures}
    assert all(p.diff > 0 for p in cmp.pairs if p.significant)
    for (r, m), cell in cells.items():
        assert f"{aggs[r][m]:.4f}" in cell
        assert cell.endswith(DAGGER_TEX) == ((r, m) in sig)
        assert r"\ddagger" not in cell
    assert cells[("docrun_org_convdr_bert.run", "map")] == r"0.2203$^{\dagger}$"
    assert cells[("docrun_org_manual_ance.run", "ndcg_cut_3")] == r"\textbf{0.5300}$^{\dagger}$"
    assert cells[("docrun_org_convdr.run", "map")] == "0.2024"
    # legend: marks, test, correction, alpha, family
    leg = tex.split(r"\par\smallskip")[1]
    assert r"$^{\dagger}$: significantly different from the baseline docrun\_org\_convdr.run" in leg
    assert "paired two-sided t-test" in leg and "Holm correction" in leg
    assert r"$\alpha$ = 0.05" in leg
    assert (r"family: 4 runs vs baseline docrun\_org\_convdr.run x 3 measures = 12 t-tests"
            in leg)
    assert tex.rstrip().endswith(r"\end{table}")


def test_markdown_table_cast2021(cast):
    cmp, aggs = cast
    md = render_markdown(cmp)
    lines = md.splitlines()
    assert lines[0] == r"| run | MAP | MRR | NDCG@3 |"
    assert lines[1] == "| :--- | ---: | ---: | ---: |"
    rows = lines[2:7]
    assert lines[7] == ""
    for line in lines[:7]:
        assert line.startswith("| ") and line.endswith(" |") and line.count(" | ") == 3
    cells = {}
    for run, line in zip(cmp.runs, rows):
        parts = line[2:-2].split(" | ")
        assert parts[0] == run.replace("_", r"\_") + (" (baseline)" if run == cmp.runs[0] else "")
        for m, c in zip(cmp.measures, parts[1:]):
            cells[(run, m)] = c
    sig = {(p.run, p.measure) for p in cmp.pairs if p.significant}
    for m in cmp.measures:
        bold = [r for r in cmp.runs if cells[(r, m)].startswith("**")]
        assert bold == [_best(aggs, m)]
    for (r, m), c in cells.items():
        plain = c.replace("**", "").rstrip(DAGGER_MD)
        assert plain == f"{aggs[r][m]:.4f}"
        assert c.endswith(DAGGER_MD) == ((r, m) in sig)
    assert cells[("docrun_org_manual_ance_bert.run", "map")] == f"**0.2936**{DAGGER_MD}"
    assert cells[("docrun_org_manual_bm25.run", "recip_rank")] == "0.7085"
    leg = lines[8]
    assert leg.startswith(f"Means; best per column in bold. {DAGGER_MD}: "
                          "significantly different from the baseline")
    assert "paired two-sided t-test; Holm correction; adjusted p <= alpha = 0.05" in leg
    assert r"family: 4 runs vs baseline docrun\_org\_convdr.run x 3 measures = 12 t-tests" in leg


def test_places_rounds(cast):
    cmp, aggs = cast
    tex = render_latex(cmp, places=2)
    md = render_markdown(cmp, places=2)
    _, rows = _tex_rows(tex)
    assert rows[0] == r"docrun\_org\_convdr.run (baseline) & 0.20 & 0.67 & 0.35 \\"
    assert rows[2] == (r"docrun\_org\_manual\_ance.run & 0.27$^{\dagger}$ & 0.81$^{\dagger}$ & "
                       r"\textbf{0.53}$^{\dagger}$ \\")
    assert r"\textbf{0.29}$^{\dagger}$ & \textbf{0.83}$^{\dagger}$ & 0.52$^{\dagger}$" in rows[3]
    assert "0.2024" not in tex and "0.2024" not in md
    assert ("| docrun\\_org\\_manual\\_bm25.run | 0.22 | 0.71 | 0.40 |") in md
    for r in cmp.runs:
        for m in cmp.measures:
            assert re.search(rf"(?<![\d.]){aggs[r][m]:.2f}(?!\d)", md)
    bare = render_latex(cmp, places=0, float_env=False)
    assert r"\begin{table}" not in bare and bare.splitlines()[-1].startswith("% Means;")
    # places=0: every map prints 0 and every recip_rank 1, so all tie and all are bold;
    # ndcg_cut_3 prints 1 for the two manual ANCE runs only
    rows0 = _tex_rows(bare)[1]
    assert rows0[0] == r"docrun\_org\_convdr.run (baseline) & \textbf{0} & \textbf{1} & 0 \\"
    assert rows0[3] == (r"docrun\_org\_manual\_ance\_bert.run & \textbf{0}$^{\dagger}$ & "
                        r"\textbf{1}$^{\dagger}$ & \textbf{1}$^{\dagger}$ \\")


def _synthetic():
    runs = ["base_1", "a&b%#", "c{d}~"]
    means = {"base_1": {"P_5": 0.5, "err@20": 0.25}, "a&b%#": {"P_5": 0.5, "err@20": 0.3},
             "c{d}~": {"P_5": 0.25, "err@20": math.nan}}
    pairs = [PairResult("base_1", "a&b%#", "P_5", 10, .5, .5, 0., 0., 0., 0., 0., 1., 1.),
             PairResult("base_1", "a&b%#", "err@20", 10, .25, .3, .05, 0., .1, 1., 3., .01, .01,
                        significant=True),
             PairResult("base_1", "c{d}~", "P_5", 10, .5, .25, -.25, -.3, -.2, -2., -5., .001,
                        .002, significant=True),
             PairResult("base_1", "c{d}~", "err@20", 10, .25, math.nan, math.nan, math.nan,
                        math.nan, math.nan, math.nan, math.nan, math.nan)]
    return Comparison(runs, ["P_5", "err@20"], means, {r: 10 for r in runs}, pairs,
                      "complete", "randomization", "bonferroni", 0.01, 1000, 10, 7,
                      "2 runs vs baseline base_1 x 2 measures = 4 randomization tests")


def test_ties_worse_marks_nan_and_escaping():
    """A significantly worse run gets the baseline's marker too (two-sided tests: the means
    show the direction); ties are all bold; nan prints -- / -; LaTeX specials are escaped."""
    cmp = _synthetic()
    tex = render_latex(cmp, places=3)
    assert _balanced(tex)
    header, rows = _tex_rows(tex)
    assert header == r"Run & P\_5 & err@20 \\"  # no labels given: the names, escaped
    assert rows == [r"base\_1 (baseline) & \textbf{0.500} & 0.250 \\",
                    r"a\&b\%\# & \textbf{0.500} & \textbf{0.300}$^{\dagger}$ \\",
                    r"c\{d\}\textasciitilde{} & 0.250$^{\dagger}$ & -- \\"]
    for line in [header] + rows:
        assert line.replace(r"\&", "").count("&") == 2
    assert "randomization test, 1000 sign flips, seed 7; Bonferroni correction" in tex
    assert r"$\alpha$ = 0.01" in tex and "all 10 qrels topics" in tex
    assert r"\caption" not in tex and r"\label" not in tex
    md = render_markdown(cmp, places=3)
    assert md.splitlines()[2:5] == [
        r"| base\_1 (baseline) | **0.500** | 0.250 |",
        f"| a&b%# | **0.500** | **0.300**{DAGGER_MD} |",
        f"| c{{d}}~ | 0.250{DAGGER_MD} | - |"]
    # lower-is-better columns take the minimum
    tex_low = render_latex(cmp, places=3, lower_better={"P_5"})
    assert r"c\{d\}\textasciitilde{} & \textbf{0.250}$^{\dagger}$ & -- \\" in tex_low
    assert latex_escape(r"x\y^z") == r"x\textbackslash{}y\textasciicircum{}z"
