"""Tables with a paper's names: runs named with --name RUN=LABEL or -n LABEL, measures labelled
(default labels shared with cqr: MRR, NDCG@3; --label MEASURE=LABEL), measures in the order
given in every output, and a LaTeX table with booktabs, caption, label and the markers
explained in its footnote line; on the TREC CAsT 2021 organiser runs."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner
from conftest import data_path

import trecqr
from trecqr.cli.report import compare_command
from trecqr.report.breakdown import breakdown
from trecqr.report.labels import measure_label
from trecqr.workflows.cqr import COLUMNS

GIVEN = ["ndcg_cut.3", "recip_rank", "map"]


def qrels():
    return str(data_path("cast2021", "qrels-docs.2021.qrel"))


def runs(*names):
    return [str(data_path("cast2021", f"docrun_org_{n}.run")) for n in names]


def invoke(args):
    res = CliRunner().invoke(compare_command, args)
    assert "Traceback" not in res.output
    return res


def test_measures_in_the_order_given_in_every_output():
    """-m ndcg_cut.3 -m recip_rank -m map stays in that order (trec_eval's would be map,
    recip_rank, ndcg_cut_3) in the means, text, Markdown, LaTeX, CSV, JSON and breakdown."""
    cmp = trecqr.compare(qrels(), runs("manual_bm25", "convdr"), GIVEN, permutations=100,
                         bootstrap=100)
    assert cmp.measures == ["ndcg_cut_3", "recip_rank", "map"]
    assert [p.measure for p in cmp.pairs] == cmp.measures
    base = [qrels(), *runs("manual_bm25", "convdr"), "--permutations", "100", "--bootstrap",
            "100"] + [x for m in GIVEN for x in ("-m", m)]
    text = invoke(base).output
    assert "run                          NDCG@3      MRR      MAP" in text
    assert invoke(base + ["--format", "markdown"]).output.startswith("| run | NDCG@3 | MRR | MAP |")
    assert "Run & NDCG@3 & MRR & MAP \\\\" in invoke(base + ["--format", "latex"]).output
    rows = list(csv.DictReader(io.StringIO(invoke(base + ["--format", "csv"]).output)))
    assert [r["measure"] for r in rows] == ["ndcg_cut_3", "recip_rank", "map"]
    d = json.loads(invoke(base + ["--format", "json"]).output)
    assert d["measures"] == ["ndcg_cut_3", "recip_rank", "map"]
    assert d["labels"] == {"ndcg_cut_3": "NDCG@3", "recip_rank": "MRR", "map": "MAP"}
    bd = breakdown(qrels(), runs("manual_bm25", "convdr"), GIVEN)
    assert bd.measures == ["ndcg_cut_3", "recip_rank", "map"]


def test_cqr_and_compare_share_the_labels():
    """cqr's report keys (MRR, NDCG@3, R@10, R@100) are report/labels.py's labels of the
    measures behind them, the labels compare's tables print."""
    for key, (name, _) in COLUMNS.items():
        assert measure_label(name) == key
    assert [measure_label(m) for m in ("recip_rank", "ndcg_cut_3", "P_5", "RR@3", "gm_map")] \
        == ["MRR", "NDCG@3", "P@5", "RR@3", "gm_map"]


def test_names_and_labels_in_python():
    cmp = trecqr.compare(qrels(), runs("manual_bm25", "manual_ance"), ["map", "ndcg_cut.3"],
                         names={"docrun_org_manual_ance": "ANCE"},
                         labels={"ndcg_cut.3": "nDCG@3", "map": "AP"}, permutations=100,
                         bootstrap=100, baseline="docrun_org_manual_bm25.run")
    assert cmp.runs == ["docrun_org_manual_bm25.run", "ANCE"]
    assert cmp.to_markdown().splitlines()[0] == "| run | AP | nDCG@3 |"
    assert cmp.to_markdown().splitlines()[3] == "| ANCE | **0.2667**\u2020 | **0.5300**\u2020 |"
    with pytest.raises(trecqr.UsageError, match="labels: 'P.5' is none of the measures"):
        trecqr.compare(qrels(), runs("manual_bm25", "manual_ance"), ["map"], labels={"P.5": "x"})


def test_latex_paper_table_from_the_command_line(tmp_path):
    """--name, -n, --label, --caption, --latex-label and two baselines: the names, order and
    markers of the table, booktabs rules, and the footnote line explaining the markers."""
    out = tmp_path / "table.tex"
    args = [qrels(), *runs("manual_bm25", "convdr", "manual_ance", "manual_ance_bert"),
            "-m", "ndcg_cut.3", "-m", "map", "--name", "docrun_org_manual_bm25=BM25",
            "--name", "docrun_org_convdr.run=ConvDR", "--name", "docrun_org_manual_ance=ANCE",
            "--name", "docrun_org_manual_ance_bert=ANCE+BERT", "--label", "map=AP",
            "--baseline", "BM25", "--baseline", "ConvDR", "--caption", "CAsT 2021 runs.",
            "--latex-label", "tab:cast21", "--permutations", "500", "--bootstrap", "500",
            "--format", "latex", "-o", str(out)]
    res = invoke(args)
    assert res.exit_code == 0, res.output
    tex = out.read_text().splitlines()
    assert tex[:5] == [r"\begin{table}[t]", r"\centering", r"\caption{CAsT 2021 runs.}",
                       r"\label{tab:cast21}", r"\begin{tabular}{lrr}"]
    body = tex[tex.index(r"\toprule"):tex.index(r"\bottomrule") + 1]
    assert body == [
        r"\toprule",
        r"Run & NDCG@3 & AP \\",
        r"\midrule",
        r"BM25 (baseline $^{\dagger}$) & 0.3974 & 0.2161 \\",
        r"ConvDR (baseline $^{\ddagger}$) & 0.3542 & 0.2024 \\",
        r"ANCE & \textbf{0.5300}$^{\dagger\ddagger}$ & 0.2667$^{\dagger\ddagger}$ \\",
        r"ANCE+BERT & 0.5196$^{\dagger\ddagger}$ & \textbf{0.2936}$^{\dagger\ddagger}$ \\",
        r"\bottomrule"]
    foot = tex[tex.index(r"\par\smallskip") + 1]
    assert foot.startswith(r"{\footnotesize Means; best per column in bold. $^{\dagger}$ / "
                           r"$^{\ddagger}$: significantly different from the baselines BM25 / "
                           r"ConvDR (paired two-sided t-test; Holm correction;")
    short = invoke(args[:1] + args[1:5] + ["-m", "map", "-n", "BM25", "-n", "ConvDR", "-n",
                                           "ANCE", "-n", "ANCE+BERT", "--permutations", "500",
                                           "--bootstrap", "500", "--format", "latex"])
    assert "ANCE+BERT & \\textbf{0.2936}$^{\\dagger}$ \\\\" in short.output


@pytest.mark.parametrize("extra,message", [
    (["-n", "A"], "-n gives 1 names for 2 runs: one -n LABEL per run"),
    (["-n", "A", "-n", "B", "--name", "x=y"], "-n and --name exclude each other"),
    (["--name", "BM25"], "--name 'BM25': expected RUN=LABEL"),
    (["--name", "nope=X"], "--name 'nope' is none of the runs"),
    (["-n", "A", "-n", "A"], "two runs named alike"),
    (["--label", "P.5=P@5"], "--label P.5=P@5: 'P.5' is none of the measures (map)"),
])
def test_bad_names_and_labels_one_line(extra, message):
    res = invoke([qrels(), *runs("manual_bm25", "convdr"), "-m", "map", *extra])
    assert res.exit_code == 2 and message in res.output
    assert len(res.output.strip().splitlines()) == 1
