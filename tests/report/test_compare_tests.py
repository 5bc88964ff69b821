"""trecqr compare's tests, corrections, baselines and ANOVA against their references on the five
TREC CAsT 2021 organiser runs (map and ndcg_cut.3): Wilcoxon = scipy.stats.wilcoxon, the
corrections = statsmodels' multipletests, the randomised Tukey HSD = the classical two-way HSD's
significant pairs (and repeatable for a seed), the ANOVA = statsmodels' anova_lm; each baseline
marked with its own marker in text, Markdown, LaTeX and JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from click.testing import CliRunner
from conftest import data_path
from scipy import stats
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests

import trecqr
from trecqr.cli.report import compare_command
from trecqr.report.compare import render
from trecqr.report.stats import anova

NAMES = ["manual_bm25", "convdr", "convdr_bert", "manual_ance", "manual_ance_bert"]
MEASURES = ["map", "ndcg_cut.3"]
COLS = ["map", "ndcg_cut_3"]


def qrels():
    return str(data_path("cast2021", "qrels-docs.2021.qrel"))


def runs():
    return [str(data_path("cast2021", f"docrun_org_{n}.run")) for n in NAMES]


def run(name):
    return f"docrun_org_{name}.run"


@pytest.fixture(scope="module")
def per_topic():
    """{run name: {measure: vector over the sorted topics}} from trecqr.evaluate."""
    out = {}
    for n, path in zip(NAMES, runs()):
        pq = trecqr.evaluate(qrels(), path, MEASURES).per_query()
        topics = sorted(pq)
        out[run(n)] = {m: np.array([pq[t][m] for t in topics]) for m in COLS}
    return out


def _vectors(per_topic, pair):
    return per_topic[pair.run][pair.measure], per_topic[pair.baseline][pair.measure]


def test_wilcoxon_is_scipy(per_topic):
    """Every pair's statistic and p-value are scipy.stats.wilcoxon's (defaults: zeros dropped,
    no continuity correction), and they decide significance under --test wilcoxon."""
    cmp = trecqr.compare(qrels(), runs(), MEASURES, test="wilcoxon", correction="none",
                         permutations=200, bootstrap=200)
    assert len(cmp.pairs) == 8 and "= 8 Wilcoxon signed-rank tests" in cmp.family
    for p in cmp.pairs:
        ref = stats.wilcoxon(*_vectors(per_topic, p))
        assert (p.w, p.p_wilcoxon) == (ref.statistic, ref.pvalue)
        assert p.p_adj == p.p_wilcoxon and p.significant == (ref.pvalue <= 0.05)
    text = render(cmp)
    assert "adj p(wsr)" in text and "Wilcoxon signed-rank test, unadjusted p <= 0.05" in text


@pytest.mark.parametrize("ours,theirs", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                         ("bh", "fdr_bh"), ("by", "fdr_by")])
def test_corrections_are_statsmodels_multipletests(ours, theirs):
    """The adjusted p-values of the chosen test over the family (every pair x measure) are
    statsmodels' multipletests to 1e-12, and its rejections are the significant pairs."""
    cmp = trecqr.compare(qrels(), runs(), MEASURES, correction=ours, permutations=200,
                         bootstrap=200)
    raw = [p.p_t for p in cmp.pairs]
    reject, adj, _, _ = multipletests(raw, alpha=0.05, method=theirs)
    assert [p.p_adj for p in cmp.pairs] == pytest.approx(list(adj), rel=1e-12, abs=0)
    assert [p.p_t_adj for p in cmp.pairs] == [p.p_adj for p in cmp.pairs]
    assert [p.significant for p in cmp.pairs] == list(reject)
    assert f"correction: {ours}" in render(cmp)


@pytest.fixture(scope="module")
def tukey():
    return trecqr.compare(qrels(), runs(), MEASURES, test="tukey-hsd", permutations=100_000,
                          bootstrap=200, seed=2012)


def test_randomised_tukey_hsd_every_pair(tukey, per_topic):
    """Every pair of the five runs gets a p-value per measure (correction none: Tukey's
    adjusts over the pairs); at 100,000 permutations the pairs significant at 0.05 and 0.01
    are those of the classical two-way Tukey HSD (trecqr.report.stats.anova.tukey_hsd, equal
    to statsmodels in tests/stats)."""
    assert tukey.correction == "none" and len(tukey.pairs) == 10 * 2
    assert tukey.family == ("10 pairs (all pairs of 5 runs) x 2 measures = 20 randomised Tukey "
                            "HSD p-values")
    names = [run(n) for n in NAMES]
    for m in COLS:
        classical = anova.tukey_hsd(np.array([per_topic[r][m] for r in names])).pvalues
        for p in (p for p in tukey.pairs if p.measure == m):
            ref = classical[names.index(p.baseline), names.index(p.run)]
            assert p.n == 158 and p.p_adj == p.p_tukey
            for alpha in (0.05, 0.01):
                assert (p.p_tukey <= alpha) == (ref <= alpha), (p, ref)
            assert abs(p.p_tukey - ref) < 0.06  # tests/stats: why not within Monte Carlo error


def test_randomised_tukey_hsd_is_seeded():
    a = trecqr.compare(qrels(), runs()[:3], ["map"], test="tukey-hsd", permutations=2000,
                       bootstrap=100, seed=5)
    b = trecqr.compare(qrels(), runs()[:3], ["map"], test="tukey-hsd", permutations=2000,
                       bootstrap=100, seed=5)
    c = trecqr.compare(qrels(), runs()[:3], ["map"], test="tukey-hsd", permutations=2000,
                       bootstrap=100, seed=6)
    assert [p.p_tukey for p in a.pairs] == [p.p_tukey for p in b.pairs]
    assert [p.p_tukey for p in a.pairs] != [p.p_tukey for p in c.pairs]


def test_anova_is_statsmodels_anova_lm(per_topic):
    """--anova: per measure, the two-way ANOVA (systems x topics) equals statsmodels'
    anova_lm of score ~ C(system) + C(topic) to 1e-9, over the 158 topics every run has."""
    cmp = trecqr.compare(qrels(), runs(), MEASURES, anova=True, permutations=200, bootstrap=200)
    names = [run(n) for n in NAMES]
    for m in COLS:
        x = np.array([per_topic[r][m] for r in names])
        frame = pd.DataFrame({"score": x.ravel(), "system": np.repeat(names, x.shape[1]),
                              "topic": np.tile([f"t{k:03d}" for k in range(x.shape[1])], 5)})
        ref = anova_lm(smf.ols("score ~ C(system) + C(topic)", frame).fit())
        got = cmp.anova[m]
        assert got["topics"] == 158 and got["df_system"] == 4 and got["df_error"] == 4 * 157
        assert got["ss_system"] == pytest.approx(ref.loc["C(system)", "sum_sq"], rel=1e-9)
        assert got["ss_error"] == pytest.approx(ref.loc["Residual", "sum_sq"], rel=1e-9)
        assert got["f_system"] == pytest.approx(ref.loc["C(system)", "F"], rel=1e-9)
        assert got["p_system"] == pytest.approx(ref.loc["C(system)", "PR(>F)"], rel=1e-6)
        assert got["eta2"] == pytest.approx(
            ref.loc["C(system)", "sum_sq"] / ref["sum_sq"].sum(), rel=1e-9)
    text = render(cmp)
    assert "two-way ANOVA without replication (systems x topics, the 158 topics every run " \
           "has)" in text
    assert json.loads(render(cmp, "json"))["anova"]["map"]["df_system"] == 4


def test_two_baselines_each_with_its_marker():
    """--baseline A --baseline B: every run against each (their own pair once); a mean
    significantly different from A carries A's dagger, from B B's double dagger, in text,
    Markdown, LaTeX and the JSON the page reads."""
    cmp = trecqr.compare(qrels(), runs(), MEASURES, baselines=["docrun_org_manual_bm25",
                                                               "docrun_org_convdr"],
                         permutations=200, bootstrap=200)
    assert cmp.baselines == [run("manual_bm25"), run("convdr")]
    assert len(cmp.pairs) == 7 * 2  # 4 against bm25, 3 against convdr (bm25-convdr once)
    assert cmp.family.startswith("7 pairs (every run vs baselines docrun_org_manual_bm25.run, "
                                 "docrun_org_convdr.run)")
    sig = {(p.baseline, p.run, p.measure) for p in cmp.pairs if p.significant}
    # convdr_bert: better than convdr on map (not on ndcg_cut_3 after Holm), not than bm25
    assert (run("convdr"), run("convdr_bert"), "map") in sig
    assert (run("manual_bm25"), run("convdr_bert"), "map") not in sig
    assert cmp.marks()[(run("convdr_bert"), "map")] == [(1, 1)]
    assert cmp.marks()[(run("manual_ance"), "map")] == [(0, 1), (1, 1)]
    text = render(cmp)
    assert "significantly different from the baseline \u2020 docrun_org_manual_bm25.run, " \
           "\u2021 docrun_org_convdr.run" in text
    line = next(ln for ln in text.splitlines() if ln.startswith(run("convdr_bert")))
    assert line.split()[1:] == ["0.2203\u2021", "0.4110"]
    md = render(cmp, "markdown")
    assert ("| docrun\\_org\\_manual\\_ance.run | 0.2667\u2020\u2021 | "
            "**0.5300**\u2020\u2021 |") in md
    assert "| docrun\\_org\\_convdr.run (baseline \u2021) | 0.2024 | 0.3542 |" in md
    tex = render(cmp, "latex")
    assert r"docrun\_org\_convdr\_bert.run & 0.2203$^{\ddagger}$ & 0.4110 \\" in tex
    assert r"$^{\dagger}$ / $^{\ddagger}$: significantly different from the baselines" in tex
    d = json.loads(render(cmp, "json"))
    assert d["markers"] == [{"baseline": run("manual_bm25"), "marker": "\u2020",
                             "latex": r"\dagger"},
                            {"baseline": run("convdr"), "marker": "\u2021",
                             "latex": r"\ddagger"}]
    assert d["marks"][run("manual_ance")] == {"map": "\u2020\u2021", "ndcg_cut_3": "\u2020\u2021"}
    assert d["marks"][run("convdr")]["map"] == ""
    from trecqr.report.html import summary_html  # the page's summary table: the same markers
    page = summary_html(cmp, [], 10, 4)
    assert ('id="markers">baselines \u2020 docrun_org_manual_bm25.run, '
            '\u2021 docrun_org_convdr.run') in page
    assert f'data-run="{run("manual_ance")}" data-measure="map" data-value="' in page
    cell = page.split(f'data-run="{run("manual_ance")}" data-measure="map"')[1].split("</td>")[0]
    assert cell.endswith("0.2667\u2020\u2021")
    cell = page.split(f'data-run="{run("convdr_bert")}" data-measure="map"')[1].split("</td>")[0]
    assert cell.endswith("0.2203\u2021")


def test_cli_tests_corrections_baselines_anova():
    base = [qrels(), *runs()[:3], "-m", "map", "--permutations", "300", "--bootstrap", "100"]
    res = CliRunner().invoke(compare_command, base + [
        "--test", "wilcoxon", "--correction", "by", "--baseline", "docrun_org_manual_bm25",
        "--baseline", "docrun_org_convdr.run", "--anova"])
    assert res.exit_code == 0, res.output
    assert "3 pairs (every run vs baselines" in res.output and "correction: by" in res.output
    assert "two-way ANOVA" in res.output
    res = CliRunner().invoke(compare_command, base + ["--test", "tukey-hsd", "--format", "csv"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0].endswith("p_wilcoxon,p_wilcoxon_adj,p_tukey,p_adj")
    assert len(res.output.splitlines()) == 1 + 3
    res = CliRunner().invoke(compare_command, base + ["--baseline", "x", "--all-pairs"])
    assert res.exit_code == 2 and "--baseline and --all-pairs exclude each other" in res.output
    res = CliRunner().invoke(compare_command, base + ["--baseline", "nope"])
    assert res.exit_code == 2 and "--baseline 'nope' is none of the runs" in res.output
    assert "Traceback" not in res.output
