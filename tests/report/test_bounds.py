"""--bounds on eval and compare: the lower value is today's, byte for byte; the upper value is
the measure on a qrels file with the run's unjudged retrieved documents added at grade -l,
built here independently (trec_eval's order: score descending, docno descending; -M cut) and
scored by trecqr and by trec_eval 9.0.8's own binary when it is installed; the unjudged share
of the top k is trec_eval 10.0's ``unj.k``. Real runs: the CAsT 2021 organisers' manual BM25
and ConvDR runs against the official document qrels (fixtures/cast2021), and the CAsT 2021
demo's BM25 run (its known-item qrels), checked by hand on two topics."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import trecqr
from conftest import ROOT, run_cli

CAST = ROOT / "fixtures" / "cast2021"
QRELS, RUNS = CAST / "qrels.txt", [CAST / "manual_bm25.run", CAST / "convdr.run"]
MEASURES = ["map", "P.10", "ndcg_cut.3", "recip_rank", "Rprec", "recall.100", "bpref", "ndcg"]
TE908 = Path(os.environ.get("TRECQR_TE908", "/work/te/te908"))


def _lines(path):
    return [line.split() for line in Path(path).read_text().splitlines() if line.strip()]


def _completed(qrels, run, tmp_path, grade=1, max_docs=None) -> Path:
    """The qrels with every document the run ranks in its first max_docs of a judged topic,
    and the qrels lack (or grade below 0), added at ``grade``: a file, as trec_eval reads."""
    judged = {(q, d): int(g) for q, _, d, g in _lines(qrels)}
    topics = {q for q, _ in judged}
    ranked = {}
    for q, _, d, _, s, _ in _lines(run):
        ranked.setdefault(q, []).append((np.float32(float(s)), d))  # 9.0.8 reads floats
    out = dict(judged)
    for q, docs in ranked.items():
        if q not in topics:
            continue
        docs.sort(key=lambda x: (x[0], x[1]), reverse=True)
        for _, d in docs[:max_docs]:
            if judged.get((q, d), -1) < 0:
                out[(q, d)] = grade
    path = tmp_path / f"completed-{Path(run).stem}-{max_docs}.qrels"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in sorted(out.items())))
    return path


def _eval(args) -> str:
    res = run_cli(["eval", "--quiet", *args])
    assert res.exit_code == 0, res.stderr
    return res.stdout


def _rows(text) -> dict:
    return {(m, q): v for m, q, v in (line.split("\t") for line in text.splitlines())}


def _m(measures):
    return [a for m in measures for a in ("-m", m)]


@pytest.mark.parametrize("extra", [[], ["-q"], ["-M", "20", "-c"], ["-l", "2"]])
def test_lower_is_todays_output_and_upper_is_the_completed_qrels(extra, tmp_path):
    """Without the _upper and _unjudged rows, eval --bounds prints what eval prints, byte for
    byte; each _upper row is eval's row of the same name on the completed qrels file."""
    level = int(extra[extra.index("-l") + 1]) if "-l" in extra else 1
    max_docs = int(extra[extra.index("-M") + 1]) if "-M" in extra else None
    for run in RUNS:
        plain = _eval([*extra, *_m(MEASURES), QRELS, run])
        both = _eval([*extra, "--bounds", *_m(MEASURES), QRELS, run])
        kept = [line for line in both.splitlines(keepends=True)
                if not line.split("\t")[0].rstrip().endswith(("_upper", "_unjudged"))]
        assert "".join(kept) == plain
        completed = _completed(QRELS, run, tmp_path, level, max_docs)
        upper = _rows(_eval([*extra, *_m(MEASURES), completed, run]))
        got = _rows(both)
        for (m, q), v in upper.items():
            assert got[(m.rstrip() + "_upper").ljust(22), q] == v, (run, m, q)
        assert len([k for k in got if k[0].strip().endswith("_upper")]) == len(upper)


@pytest.mark.skipif(not TE908.exists(), reason="trec_eval 9.0.8 binary not installed")
def test_upper_is_trec_eval_on_the_completed_qrels(tmp_path):
    """trec_eval 9.0.8 itself on the completed qrels file prints the _upper values."""
    for run in RUNS:
        for extra, max_docs in (([], None), (["-M", "20"], 20)):
            completed = _completed(QRELS, run, tmp_path, 1, max_docs)
            ref = subprocess.run([str(TE908), "-q", *extra, *_m(MEASURES), str(completed),
                                  str(run)], capture_output=True, text=True, check=True).stdout
            got = _rows(_eval(["-q", *extra, "--bounds", *_m(MEASURES), QRELS, run]))
            for (m, q), v in _rows(ref).items():
                if m.strip() != "runid":
                    assert got[((m.strip() + "_upper").ljust(22), q)] == v, (run, m, q)


def test_unjudged_share_is_trec_eval_10s_unj():
    """P_10_unjudged and ndcg_cut_3_unjudged are unj_10 and unj_3 (trec_eval 10.0's measure,
    which trecqr reproduces), per topic and in the mean; map's share is of every retrieved
    document, counted here by hand."""
    for run in RUNS:
        got = _rows(_eval(["-q", "--compat", "10.0", "--bounds", "-m", "P.10", "-m",
                           "ndcg_cut.3", "-m", "map", QRELS, run]))
        unj = _rows(_eval(["-q", "--compat", "10.0", "-m", "unj.3,10", QRELS, run]))
        for (m, q), v in unj.items():
            name = {"unj_10": "P_10_unjudged", "unj_3": "ndcg_cut_3_unjudged"}[m.strip()]
            assert got[(name.ljust(22), q)] == v
        judged = {(q, d) for q, _, d, _ in _lines(QRELS)}
        for q in ("106_1", "107_3"):
            docs = [d for q2, _, d, *_ in _lines(run) if q2 == q]
            share = sum((q, d) not in judged for d in docs) / len(docs)
            assert got[("map_unjudged".ljust(22), q)] == f"{share:6.4f}"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    """The CAsT 2021 demo's BM25 run of the manual rewrites, top 10 (the report page's run)."""
    demo = ROOT / "fixtures" / "cast2021-demo"
    folder = tmp_path_factory.mktemp("demo")
    res = run_cli(["index", demo / "collection.jsonl", "-o", folder / "index", "--quiet"])
    assert res.exit_code == 0, res.stderr
    run = folder / "manual.run"
    res = run_cli(["search", folder / "index", demo / "topics-manual.tsv", "-o", run, "-k", "10",
                   "--quiet"])
    assert res.exit_code == 0, res.stderr
    return demo / "qrels.txt", run


def test_the_demo_run_by_hand_on_two_topics(demo_run):
    """Known-item qrels: one relevant passage per turn, the rest of the top 10 unjudged. With
    the unjudged counted relevant, P@10 is the share of the top 10 the run fills (every
    retrieved passage is then relevant), recip_rank 1; the lower values are eval's."""
    qrels, run = demo_run
    plain_text = _eval(["-q", "-m", "P.10", "-m", "recip_rank", qrels, run])
    got_text = _eval(["-q", "--bounds", "-m", "P.10", "-m", "recip_rank", qrels, run])
    assert "".join(line for line in got_text.splitlines(keepends=True)
                   if "_upper" not in line and "_unjudged" not in line) == plain_text
    plain, got = _rows(plain_text), _rows(got_text)
    ranked = {}
    for q, _, d, *_ in _lines(run):
        ranked.setdefault(q, []).append(d)
    gold = {q: d for q, _, d, _ in _lines(qrels)}
    for q in ("106_1", "106_2"):
        docs = ranked[q]
        assert got[("P_10".ljust(22), q)] == plain[("P_10".ljust(22), q)] == \
            f"{(gold[q] in docs) / 10:6.4f}"
        assert got[("P_10_upper".ljust(22), q)] == f"{len(docs) / 10:6.4f}"
        assert got[("recip_rank_upper".ljust(22), q)] == "1.0000"
        assert got[("P_10_unjudged".ljust(22), q)] == \
            f"{sum(d != gold[q] for d in docs) / 10:6.4f}"
    assert float(got[("P_10_unjudged".ljust(22), "all")]) > 0.85  # "90% unjudged"


def test_json_and_ir_measures_names(tmp_path):
    """The same values through JSON, and ir_measures names get bounds too (k from @k)."""
    run = RUNS[1]
    text = _rows(_eval(["--bounds", "-m", "nDCG@10", "-m", "P.10", QRELS, run]))
    doc = json.loads(_eval(["--bounds", "-m", "nDCG@10", "-m", "P.10", "--format", "json",
                            QRELS, run]))
    for name in ("nDCG@10", "nDCG@10_upper", "nDCG@10_unjudged", "P_10_upper"):
        assert f"{doc['summary'][name]:6.4f}" == text[(name.ljust(22), "all")]
    assert doc["summary"]["nDCG@10_unjudged"] == doc["summary"]["P_10_unjudged"]


def test_compare_bounds_are_evals(tmp_path):
    """compare --bounds: each run's lower value is its mean, its upper and unjudged values
    are eval --bounds' (the same population: trec_eval's rule, or -c)."""
    for extra in ([], ["-c"]):
        res = run_cli(["compare", QRELS, *RUNS, "-m", "map", "-m", "P.10", "--bounds",
                       "--permutations", "20", "--bootstrap", "20", "--format", "json",
                       "--quiet", *extra])
        assert res.exit_code == 0, res.stderr
        doc = json.loads(res.stdout)
        assert doc["bounds"]["grade"] == 1
        for row in doc["bounds"]["rows"]:
            run = CAST / row["run"]
            ev = trecqr.evaluate(QRELS, run, ["map", "P.10"], complete=bool(extra))
            assert row["lower"] == ev.aggregate()[row["measure"]]
            want = json.loads(_eval(["--bounds", *extra, "-m", "map", "-m", "P.10", "--format",
                                     "json", QRELS, run]))["summary"]
            assert row["upper"] == want[row["measure"] + "_upper"]
            assert row["unjudged"] == pytest.approx(want[row["measure"] + "_unjudged"],
                                                    abs=1e-15)
        res = run_cli(["compare", QRELS, *RUNS, "-m", "map", "--bounds", "--permutations",
                       "20", "--bootstrap", "20", "--format", "csv", *extra])
        head, first = res.stdout.splitlines()[:2]
        assert head.endswith("upper_baseline,upper_run,unjudged_baseline,unjudged_run")
        assert first.split(",")[-4:-2] == [repr(r["upper"]) for r in doc["bounds"]["rows"]
                                           if r["measure"] == "map"]


def _paper(fmt, extra=()):
    res = run_cli(["compare", QRELS, *RUNS, "-m", "map", "-m", "P.10", "--bounds", "-n", "BM25",
                   "-n", "ConvDR", "--permutations", "20", "--bootstrap", "20", "--format", fmt,
                   "--quiet", *extra])
    assert res.exit_code == 0, res.stderr
    return res.stdout


def test_paper_tables_carry_the_bounds_of_compares_json():
    """compare --bounds --format markdown|latex: per measure the mean (marked, bolded), its
    upper value and its unjudged share, each the number compare --bounds --format json gives,
    rounded as its text prints it; the legend says what upper and unjudged are. Before, both
    formats refused --bounds."""
    doc = json.loads(_paper("json"))
    b = {(r["run"], r["measure"]): r for r in doc["bounds"]["rows"]}
    md = _paper("markdown").splitlines()
    assert md[0] == "| run | MAP | MAP upper | unjudged | P@10 | P@10 upper | unjudged@10 |"
    for line, run in zip(md[2:4], ("BM25", "ConvDR")):
        cells = [c.strip().strip("*").rstrip("\u2020") for c in line.strip("|").split("|")]
        assert cells[1:] == [f"{b[(run, m)][f]:.4f}" for m in ("map", "P_10")
                             for f in ("lower", "upper", "unjudged")]
        assert [float(c) for c in cells[1::3]] == [round(doc["means"][run][m], 4)
                                                  for m in ("map", "P_10")]
    assert md[1] == "| :--- |" + " ---: |" * 6
    assert md[-1].startswith("Means; best mean per measure in bold.")  # not upper, unjudged
    assert "Upper: the mean with the run's unjudged retrieved documents counted relevant at " \
           "grade 1" in md[-1] and "unjudged: the share of the measure's top k" in md[-1]
    tex = _paper("latex", ["-l", "2"]).splitlines()
    at = tex.index(r"\toprule")
    assert tex[at + 1:at + 4] == [
        r" & \multicolumn{3}{c}{MAP} & \multicolumn{3}{c}{P@10} \\",
        r"\cmidrule(lr){2-4} \cmidrule(lr){5-7}",
        r"Run & mean & upper & unjudged & mean & upper & unjudged@10 \\"]
    assert tex[at - 1] == r"\begin{tabular}{lrrrrrr}"
    assert "counted relevant at grade 2" in " ".join(tex)


def test_the_bounds_table_compiles(tmp_path):
    """The LaTeX table with its bounds goes through pdflatex; the PDF reads the grouped header
    and each run's three values per measure."""
    from test_latex_pdf import _tools, make_latex_table

    _tools()
    pdf = make_latex_table.compile_table(_paper("latex"), tmp_path)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True,
                          capture_output=True, text=True).stdout
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    assert lines[:2] == ["MAP P@10", "Run mean upper unjudged mean upper unjudged@10"]
    assert lines[2].startswith("BM25 (baseline) 0.2047 0.5735 0.6350 0.4706 0.5765 0.1059")


@pytest.mark.parametrize("args, message", [
    (["eval", "--bounds", "-J", "-m", "map"], "-J drops the unjudged documents"),
    (["eval", "--bounds", "-Z", str(CAST / "qrels.txt"), "-m", "map"], "-Z's z-scores"),
    (["eval", "--bounds", "-R", "prefs", "-m", "map"], "-R prefs is not graded qrels"),
    (["compare", "--bounds", "-J", "-m", "map"], "-J drops them"),
])
def test_options_without_meaning_are_refused(args, message):
    """One line on stderr, exit 2, before any work."""
    res = run_cli([*args, QRELS, *(RUNS if args[0] == "compare" else RUNS[:1])])
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert res.stdout == ""


def test_a_run_on_stdin_and_several_runs():
    """A run read from stdin (readable once) gets the same bounds as from its file; several
    runs get each its own (in the run column of CSV)."""
    want = _eval(["--bounds", "-m", "P.10", QRELS, RUNS[1]])
    res = run_cli(["eval", "--quiet", "--bounds", "-m", "P.10", QRELS, "-"],
                  input=Path(RUNS[1]).read_text())
    assert res.exit_code == 0 and res.stdout == want
    rows = _eval(["--bounds", "-m", "P.10", "--format", "csv", QRELS, *RUNS]).splitlines()
    for run in RUNS:
        one = _eval(["--bounds", "-m", "P.10", "--format", "csv", QRELS, run]).splitlines()[1:]
        assert [f"{run},{line}" for line in one] == [r for r in rows if r.startswith(f"{run},")]
