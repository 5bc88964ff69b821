"""Breakdowns by turn depth / type / labels and plots, on the five TREC CAsT 2021 document runs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import data_path
from scipy import stats

from trecqr.api.evaluation import evaluate
from trecqr.report.breakdown import breakdown, read_labels
from trecqr.cli.report import breakdown_command, plot_command
from trecqr.report.plots import plot_depth, plot_diff, plot_dist

NAMES = ["manual_bm25", "convdr", "convdr_bert", "manual_ance", "manual_ance_bert"]
GROUPS = ["1", "2", "3", "4", "5", "6", "7", "8+"]
COUNTS = {"1": 19, "2": 19, "3": 19, "4": 18, "5": 18, "6": 18, "7": 16, "8+": 31}


def qrels():
    return str(data_path("cast2021", "qrels-docs.2021.qrel"))


def runs():
    return [str(data_path("cast2021", f"docrun_org_{n}.run")) for n in NAMES]


@pytest.fixture(scope="module")
def per_query():
    return [evaluate(qrels(), r, ["ndcg_cut.3"]).per_query() for r in runs()]


@pytest.fixture(scope="module")
def bd():
    return breakdown(qrels(), runs(), ["ndcg_cut.3"])


def _depth(q):
    turn = q.split("_")[1]
    return turn if int(turn) < 8 else "8+"


def test_depth_groups_means_counts(bd, per_query):
    assert bd.groups == GROUPS
    assert bd.counts == COUNTS
    assert bd.family == ("8 groups x 4 runs vs baseline docrun_org_manual_bm25.run x 1 measure"
                         " = 32 t-tests")
    assert bd.unlabelled == []
    for name, pq in zip(bd.runs, per_query):
        for g in GROUPS:
            vals = [v["ndcg_cut_3"] for q, v in pq.items() if _depth(q) == g]
            row = bd.get(g, name, "ndcg_cut_3")
            assert row.n == COUNTS[g] == len(vals)
            assert row.mean == pytest.approx(np.mean(vals), abs=1e-12)
    # depth 1 of manual_bm25 vs convdr, printed values
    assert f"{bd.get('1', 'docrun_org_manual_bm25.run', 'ndcg_cut_3').mean:.4f}" == "0.3184"
    assert f"{bd.get('1', 'docrun_org_convdr.run', 'ndcg_cut_3').mean:.4f}" == "0.5687"


def test_depth_t_tests_and_holm(bd, per_query):
    base = per_query[0]
    tested = [r for r in bd.rows if r.baseline]
    assert len(tested) == 32
    for r in tested:
        pq = per_query[bd.runs.index(r.run)]
        qs = sorted(q for q in base if _depth(q) == r.group)
        ref = stats.ttest_rel([pq[q]["ndcg_cut_3"] for q in qs],
                              [base[q]["ndcg_cut_3"] for q in qs])
        assert r.n_pair == len(qs)
        assert r.p_t == pytest.approx(ref.pvalue, rel=1e-9)
    p = np.array([r.p_t for r in tested])
    order = np.argsort(p)
    running, expect = 0.0, np.empty(len(p))
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        expect[i] = running
    assert [r.p_t_adj for r in tested] == pytest.approx(list(expect), rel=1e-12)
    assert [r.significant for r in tested] == list(expect <= 0.05)
    convdr1 = bd.get("1", "docrun_org_convdr.run", "ndcg_cut_3")
    assert f"{convdr1.p_t:.4f}" == "0.0099" and convdr1.significant is False


def test_max_depth_and_labels(tmp_path, per_query):
    nocap = breakdown(qrels(), runs()[:2], "ndcg_cut.3", max_depth=None)
    assert nocap.groups == [str(i) for i in range(1, 12)]
    assert [nocap.counts[g] for g in nocap.groups] == [19, 19, 19, 18, 18, 18, 16, 16, 8, 5, 2]
    lab = tmp_path / "labels.tsv"
    qids = sorted(per_query[0])
    lab.write_text("# conv parity\n" + "".join(
        f"{q}\t{'even' if int(q.split('_')[0]) % 2 == 0 else 'odd'}\n" for q in qids[:100]))
    assert len(read_labels(lab)) == 100
    bl = breakdown(qrels(), runs()[:2], ["ndcg_cut.3"], by="labels", labels=str(lab))
    assert bl.groups == ["even", "odd"]
    assert sum(bl.counts.values()) == 100 and len(bl.unlabelled) == 58
    even = [per_query[1][q]["ndcg_cut_3"] for q in qids[:100] if int(q.split("_")[0]) % 2 == 0]
    assert bl.get("even", "docrun_org_convdr.run", "ndcg_cut_3").mean == \
        pytest.approx(np.mean(even), abs=1e-12)
    types = {q: ("first_turn" if q.endswith("_1") else "no_shift") for q in qids}
    bt = breakdown(qrels(), runs()[:2], ["ndcg_cut.3"], by="type", labels=types)
    assert bt.groups == ["first_turn", "no_shift"] and bt.counts["first_turn"] == 19
    bad = tmp_path / "bad.tsv"
    bad.write_text("106_1\tx\n106_2 y\n")
    r = CliRunner().invoke(breakdown_command, [qrels(), *runs()[:2], "-m", "map", "--by",
                                               "labels", "--labels", str(bad)])
    assert r.exit_code == 2 and f"{bad}:2:" in r.output


def test_breakdown_cli_json():
    r = CliRunner().invoke(breakdown_command, [qrels(), *runs()[:2], "-m", "ndcg_cut.3",
                                               "--format", "json", "--max-depth", "5"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["groups"] == ["1", "2", "3", "4", "5+"]
    assert d["counts"]["5+"] == 18 + 18 + 16 + 16 + 8 + 5 + 2
    assert d["family"].endswith("= 5 t-tests")


def test_depth_plot_png_svg(tmp_path):
    import matplotlib.image as mpimg

    png, svg = tmp_path / "depth.png", tmp_path / "depth.svg"
    fig = plot_depth(qrels(), runs(), "ndcg_cut.3", output=png)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        [f"docrun_org_{n}" for n in NAMES]
    assert [t.get_text() for t in ax.get_xticklabels()] == GROUPS
    assert "ndcg_cut_3" in ax.get_ylabel() and "depth" in ax.get_xlabel()
    assert len(ax.collections) == 5  # one confidence band per run
    img = mpimg.imread(png)
    assert img.shape[0] == 500 and img.shape[1] == 800
    r = CliRunner().invoke(plot_command, ["depth", qrels(), *runs(), "-m", "ndcg_cut.3",
                                          "-o", str(svg)])
    assert r.exit_code == 0, r.output
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    for n in NAMES:
        assert f"docrun_org_{n}" in text
    assert "8+" in text


def test_diff_and_dist_plots(tmp_path):
    fig = plot_diff(qrels(), runs()[0], runs()[1], "ndcg_cut.3", output=tmp_path / "d.png")
    bars = fig.axes[0].patches
    heights = [b.get_height() for b in bars]
    assert len(bars) == 158 and heights == sorted(heights, reverse=True)
    assert "59 better, 78 worse, 21 tied" in fig.axes[0].get_title()
    fig = plot_dist(qrels(), runs(), "ndcg_cut.3", output=tmp_path / "b.svg", violin=True)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == \
        [f"docrun_org_{n}" for n in NAMES]
    assert (tmp_path / "b.svg").stat().st_size > 1000
    r = CliRunner().invoke(plot_command, ["dist", qrels(), runs()[0], "-m", "map", "-o",
                                          str(tmp_path / "x.jpg")])
    assert r.exit_code == 2 and "png" in r.output
