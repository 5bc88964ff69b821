"""What a notebook shows: short reprs and HTML tables of Results and Comparison, wide per-topic
DataFrames, Comparison.to_dataframe/to_latex, and the list of measure names (``trecqr
measures``, ``trecqr eval -m help``). Real data: the CAsT 2021 document runs."""

from __future__ import annotations

import ir_measures
import pytest

import trecqr
from conftest import data_path, run_cli
from trecqr.measures.catalog import measure_catalog
from trecqr.measures.table import NICKNAMES, TABLE

MEASURES = ["map", "ndcg_cut.3", "recip_rank", "P.10", "nDCG@3", "RR@3"]
RUNS = ["manual_bm25", "manual_ance", "convdr"]


@pytest.fixture(scope="module")
def results():
    return trecqr.evaluate(data_path("cast2021", "qrels-docs.2021.qrel"),
                           data_path("cast2021", "docrun_org_manual_bm25.run"), MEASURES)


@pytest.fixture(scope="module")
def comparison():
    folder = data_path("cast2021")
    return trecqr.compare(folder / "qrels-docs.2021.qrel",
                          [folder / f"docrun_org_{n}.run" for n in RUNS], ["map", "ndcg_cut.3"],
                          permutations=200, bootstrap=200)


def test_results_repr_is_one_short_line(results):
    text = repr(results)  # was the dataclass dump: 4,390 characters of arrays and addresses
    assert text == ("<Results: 158 topics, 6 measures: map=0.2161, recip_rank=0.7085, "
                    "P_10=0.4494, ndcg_cut_3=0.3974, ... (2 more)>")


def test_results_html_holds_every_summary(results):
    page = results._repr_html_()
    assert page.startswith("<table>") and page.count("<tr>") == 1 + 6
    assert "<th>nDCG@3</th><td>0.3974</td>" in page and "158 topics" in page


def test_results_wide_frame(results):
    wide = results.to_dataframe(wide=True)
    per_query = results.per_query()
    assert wide.shape == (158, 6) and wide.index.name == "query_id"
    assert sorted(wide.index) == sorted(per_query)  # in natural order: test_results_frames
    assert wide.loc["106_1"].to_dict() == per_query["106_1"]
    assert wide["map"].mean() == pytest.approx(results.aggregate()["map"], abs=1e-15)
    long = results.to_dataframe()
    assert list(long.columns) == ["query_id", "measure", "value"] and len(long) == 158 * 6


def test_comparison_repr_html_frames_and_latex(comparison):
    assert repr(comparison) == (
        "<Comparison: 3 runs x 2 measures (map, ndcg_cut_3), baseline "
        "docrun_org_manual_bm25.run, t test, holm correction, alpha 0.05: 2 of 4 differences "
        "significant>")
    means = comparison.to_dataframe()
    assert list(means.index) == [f"docrun_org_{n}.run" for n in RUNS]
    assert list(means.columns) == ["map", "ndcg_cut_3"]
    assert means.loc["docrun_org_manual_ance.run", "map"] == \
        comparison.means["docrun_org_manual_ance.run"]["map"]
    pairs = comparison.to_dataframe(pairs=True)
    assert len(pairs) == 4 and pairs["significant"].sum() == 2 and "p_t_adj" in pairs
    page = comparison._repr_html_()
    assert "<b>0.2667</b>\u2020" in page and "(baseline)" in page
    tex = comparison.to_latex()
    assert "\\textbf{0.2667}$^{\\dagger}$" in tex and "\\toprule" in tex
    folder = data_path("cast2021")
    cli = run_cli(["compare", str(folder / "qrels-docs.2021.qrel"),
                   *[str(folder / f"docrun_org_{n}.run") for n in RUNS], "-m", "map", "-m",
                   "ndcg_cut.3", "--permutations", "200", "--bootstrap", "200",
                   "--format", "latex"])
    assert cli.exit_code == 0 and cli.stdout == tex
    assert comparison.to_markdown().startswith("| run | MAP | NDCG@3 |")


def test_the_catalog_names_every_measure():
    rows = measure_catalog()
    names = {(r.kind, r.name): r for r in rows}
    assert {n for k, n in names if k == "trec_eval"} == set(TABLE["10.0"])
    assert {n for k, n in names if k == "nickname"} == set(NICKNAMES["10.0"])
    assert {n for k, n in names if k == "ir_measures"} == set(ir_measures.measures.registry)
    assert names[("trec_eval", "ndcg_cut")].family == "ndcg"
    assert names[("ir_measures", "Judged")].family == "judged"
    assert names[("ir_measures", "alpha_nDCG")].family == "pyndeval"
    assert names[("ir_measures", "MRR")].description.startswith("alias of RR")
    assert all(r.description and "\n" not in r.description for r in rows)
    assert {r.name for r in measure_catalog("9.0.8") if r.kind == "trec_eval"} == \
        set(TABLE["9.0.8"])


def test_measures_command_and_eval_m_help():
    listed = run_cli(["measures"])
    assert listed.exit_code == 0
    lines = listed.stdout.splitlines()
    assert len(lines) == len(measure_catalog()) + 5  # 3 section titles, 2 blank lines
    assert any(line.split()[:2] == ["ndcg_cut", "ndcg"] for line in lines)
    assert all(len(line) <= 100 for line in lines)
    helped = run_cli(["eval", "-m", "help"])  # no QRELS and RUN needed (was: unknown measure)
    assert helped.exit_code == 0 and helped.stdout == listed.stdout
    only = run_cli(["measures", "--kind", "nickname", "--compat", "9.0.8"])
    assert only.stdout.splitlines()[0] == "trec_eval nicknames (-m NAME)"
    assert len(only.stdout.splitlines()) == 1 + len(NICKNAMES["9.0.8"])


def test_shell_completion_lists_the_lazy_commands():
    import os
    import subprocess
    import sys

    env = dict(os.environ, _TRECQR_COMPLETE="bash_complete", COMP_WORDS="trecqr mea",
               COMP_CWORD="1")
    code = "from trecqr.cli import main; main(prog_name='trecqr')"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["plain,measures"]
