"""trecqr compare: means equal trec_eval's, t-test equals scipy, seeded randomization test,
Holm/Bonferroni against hand-computed values, on the five TREC CAsT 2021 document runs."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import data_path
from scipy import stats

from trecqr.api.evaluation import evaluate
from trecqr.cli.report import compare_command as command
from trecqr.report.compare import bonferroni, compare, holm, randomization_test

NAMES = ["manual_bm25", "convdr", "convdr_bert", "manual_ance", "manual_ance_bert"]
MEASURES = ["map", "ndcg_cut.3", "recip_rank"]


def qrels():
    return str(data_path("cast2021", "qrels-docs.2021.qrel"))


def runs():
    return [str(data_path("cast2021", f"docrun_org_{n}.run")) for n in NAMES]


@pytest.fixture(scope="module")
def cmp():
    return compare(qrels(), runs(), MEASURES, permutations=2000, bootstrap=2000, seed=7)


def test_means_equal_trec_eval(cmp):
    assert cmp.measures == ["map", "ndcg_cut_3", "recip_rank"]  # as given, not trec_eval's order
    for path, name in zip(runs(), cmp.runs):
        ref = evaluate(qrels(), path, MEASURES).aggregate()
        assert cmp.num_topics[name] == 158
        for m in ("map", "recip_rank", "ndcg_cut_3"):
            assert cmp.means[name][m] == ref[m]  # bit-identical
    # trec_eval's printed values (4 places)
    assert f"{cmp.means['docrun_org_convdr.run']['map']:.4f}" == "0.2024"
    assert f"{cmp.means['docrun_org_manual_bm25.run']['ndcg_cut_3']:.4f}" == "0.3974"
    assert f"{cmp.means['docrun_org_manual_ance.run']['recip_rank']:.4f}" == "0.8058"


def test_t_test_equals_scipy(cmp):
    per = {p: evaluate(qrels(), p, MEASURES).per_query() for p in runs()}
    qids = sorted(per[runs()[0]])
    assert len(cmp.pairs) == 4 * 3
    assert cmp.family == ("4 runs vs baseline docrun_org_manual_bm25.run x 3 measures "
                          "= 12 t-tests")
    for pr in cmp.pairs:
        b = np.array([per[runs()[NAMES.index(pr.baseline[11:-4])]][q][pr.measure] for q in qids])
        a = np.array([per[runs()[NAMES.index(pr.run[11:-4])]][q][pr.measure] for q in qids])
        ref = stats.ttest_rel(a, b)
        assert pr.p_t == ref.pvalue
        assert pr.t == ref.statistic
        assert pr.n == 158
        d = a - b
        assert pr.diff == pytest.approx(d.mean(), abs=1e-15)
        assert pr.effect_dz == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert pr.ci_low < pr.diff < pr.ci_high
    # manual_ance_bert beats bm25 on map; convdr does not
    sig = {(p.run, p.measure): p.significant for p in cmp.pairs}
    assert sig[("docrun_org_manual_ance_bert.run", "map")] is True
    assert sig[("docrun_org_convdr.run", "map")] is False


def test_holm_adjusted_from_pairs(cmp):
    p = np.array([x.p_t for x in cmp.pairs])
    m = len(p)
    order = np.argsort(p)
    running = 0.0
    expect = np.empty(m)
    for rank, i in enumerate(order):  # Holm's steps written out
        running = max(running, min(1.0, (m - rank) * p[i]))
        expect[i] = running
    assert [x.p_t_adj for x in cmp.pairs] == list(expect)
    assert [x.significant for x in cmp.pairs] == list(expect <= 0.05)


def test_holm_by_hand():
    p = [0.01, 0.04, 0.03]
    # sorted: 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> max(0.06, 0.04) = 0.06)
    adj = holm(p)
    assert adj[0] == pytest.approx(0.03)
    assert adj[2] == pytest.approx(0.06)
    assert adj[1] == pytest.approx(0.06)
    assert list(adj <= 0.05) == [True, False, False]
    # Bonferroni: 3p
    assert list(bonferroni(p)) == pytest.approx([0.03, 0.12, 0.09])
    # second case: 0.001, 0.02, 0.5 -> 0.003, 0.04, 0.5: first two rejected
    adj = holm([0.5, 0.001, 0.02])
    assert list(adj) == pytest.approx([0.5, 0.003, 0.04])
    assert list(adj <= 0.05) == [False, True, True]
    assert list(bonferroni([0.5, 0.001, 0.02]) <= 0.05) == [False, True, False]


def test_randomization_seeded():
    rng = np.random.default_rng(1)
    d = rng.normal(0.02, 0.2, size=158)
    p1 = randomization_test(d, 2000, 42)
    assert p1 == randomization_test(d, 2000, 42)
    p3 = randomization_test(d, 2000, 43)
    assert p1 != p3
    # (count + 1) / (B + 1): always a multiple of 1/2001
    assert round(p1 * 2001) == pytest.approx(p1 * 2001)
    assert randomization_test(np.zeros(10), 2000, 1) == 1.0
    # close to the t-test on normal data
    assert abs(p1 - stats.ttest_1samp(d, 0).pvalue) < 0.05


def test_compare_reproducible_and_self_is_one():
    a = compare(qrels(), runs()[:2], ["map"], permutations=2000, bootstrap=500, seed=3)
    b = compare(qrels(), runs()[:2], ["map"], permutations=2000, bootstrap=500, seed=3)
    c = compare(qrels(), runs()[:2], ["map"], permutations=2000, bootstrap=500, seed=4)
    assert a.pairs[0].p_rand == b.pairs[0].p_rand
    assert (a.pairs[0].ci_low, a.pairs[0].ci_high) == (b.pairs[0].ci_low, b.pairs[0].ci_high)
    assert (a.pairs[0].p_rand, a.pairs[0].ci_low) != (c.pairs[0].p_rand, c.pairs[0].ci_low)
    s = compare(qrels(), [runs()[0], runs()[0]], ["map"], names=["x", "y"],
                permutations=2000, bootstrap=100)
    assert s.pairs[0].p_rand == 1.0 and s.pairs[0].p_t == 1.0 and s.pairs[0].diff == 0.0


def test_intersection_and_complete(tmp_path):
    # drop topic 106_1 and the 106_2.. turns of one run: intersection shrinks; -c keeps 158
    lines = data_path("cast2021", "docrun_org_convdr.run").read_text().splitlines()
    kept = [ln for ln in lines if not ln.startswith(("106_1 ", "106_2 "))]
    short = tmp_path / "short.run"
    short.write_text("\n".join(kept) + "\n")
    inter = compare(qrels(), [runs()[0], str(short)], ["map"], permutations=200, bootstrap=200)
    assert inter.pairs[0].n == 156 and inter.num_topics["short.run"] == 156
    ref = evaluate(qrels(), str(short), ["map"]).aggregate()["map"]
    assert inter.means["short.run"]["map"] == ref
    comp = compare(qrels(), [runs()[0], str(short)], ["map"], complete=True,
                   permutations=200, bootstrap=200)
    assert comp.pairs[0].n == 158
    ref_c = evaluate(qrels(), str(short), ["map"], complete=True).aggregate()["map"]
    assert comp.means["short.run"]["map"] == ref_c
    assert ref_c < ref
    res = CliRunner().invoke(command, [qrels(), runs()[0], str(short), "-m", "map", "-c",
                                       "--permutations", "200", "--bootstrap", "200"])
    assert res.exit_code == 0, res.output
    assert "topics: all 158 qrels topics (-c" in res.output
    res = CliRunner().invoke(command, [qrels(), runs()[0], str(short), "-m", "map",
                                       "--permutations", "200", "--bootstrap", "200"])
    assert ("topics: per run, the qrels topics it has (trec_eval's rule: "
            "docrun_org_manual_bm25.run 158, short.run 156); per pair, those both runs have "
            "(156)") in res.output


def test_cli_text_json_csv():
    args = [qrels(), *runs(), "-m", "map", "-m", "ndcg_cut.3", "--permutations", "2000",
            "--bootstrap", "1000", "--seed", "5", "--baseline", "docrun_org_convdr"]
    res = CliRunner().invoke(command, args)
    assert res.exit_code == 0, res.output
    out = res.output
    assert "family: 4 runs vs baseline docrun_org_convdr.run x 2 measures = 8 t-tests" in out
    assert "correction: holm" in out
    assert "p = (count + 1) / (2000 + 1)" in out
    assert "0.2936+" in out  # manual_ance_bert map, significantly better than convdr
    res = CliRunner().invoke(command, args + ["--format", "json"])
    d = json.loads(res.output)
    assert len(d["pairs"]) == 8 and d["correction"] == "holm"
    assert {p["baseline"] for p in d["pairs"]} == {"docrun_org_convdr.run"}
    res = CliRunner().invoke(command, args + ["--format", "csv", "--correction", "bonferroni"])
    rows = list(csv.DictReader(io.StringIO(res.output)))
    assert len(rows) == 8
    for r in rows:
        assert float(r["p_t_adj"]) == min(1.0, 8 * float(r["p_t"]))
    res = CliRunner().invoke(command, [qrels(), *runs()[:3], "-m", "map", "--all-pairs",
                                       "--permutations", "200", "--bootstrap", "200"])
    assert "3 pairs (all pairs of 3 runs) x 1 measure = 3 t-tests" in res.output
    res = CliRunner().invoke(command, [qrels(), *runs()[:2], "-m", "map", "--baseline", "nope"])
    assert res.exit_code == 2 and "nope" in res.output


def test_latex_table_file_from_the_cast_runs(tmp_path):
    """The issue's check: a LaTeX table from the CAsT 2021 runs, written by the command."""
    from click.testing import CliRunner

    from trecqr.cli.report import compare_command as command

    folder = data_path("cast2021")
    out = tmp_path / "table.tex"
    runs = [str(folder / f"docrun_org_{n}.run") for n in ("manual_bm25", "manual_ance", "convdr")]
    result = CliRunner().invoke(command, [str(folder / "qrels-docs.2021.qrel"), *runs, "-m", "map",
                                          "-m", "ndcg_cut.3", "--permutations", "200",
                                          "--bootstrap", "200", "--format", "latex",
                                          "-o", str(out)])
    assert result.exit_code == 0, result.output
    tex = out.read_text()
    for name in ("docrun\\_org\\_manual\\_bm25.run (baseline)", "docrun\\_org\\_manual\\_ance.run",
                 "docrun\\_org\\_convdr.run"):
        assert name in tex
    assert "\\toprule" in tex and "\\bottomrule" in tex
    assert "\\textbf{0.2667}$^{\\dagger}$" in tex  # manual_ance: best map, significantly better
