"""``trecqr agree`` and ``trecqr.agree_*`` against the reference packages on real data:

* labels: the LLMJudge benchmark's human qrels (TREC DL 2023, 4,423 judgments) against four of
  its LLM label sets: Cohen's kappa plain and weighted (scikit-learn's ``cohen_kappa_score``),
  Krippendorff's alpha (the ``krippendorff`` package), the confusion matrix (scikit-learn's),
  graded and binarized at -l;
* rankings: the five CAsT 2021 organiser runs ranked under the official qrels and under a
  second set derived from them: Kendall's tau and Spearman's rho equal scipy's on the means
  ``trecqr eval`` prints;
* repro: a CAsT 2021 run pair (manual BM25 the baseline, ConvDR the advanced run) against a
  perturbed copy of each: KTU, RBO, RMSE, ER, DeltaRI and the t-test's p equal repro_eval's
  to 1e-9.

Text, JSON and CSV carry the same numbers; bad options are one line and exit 2."""

from __future__ import annotations

import csv
import io
import json
import warnings

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score, confusion_matrix

import trecqr
from cast_inputs import perturb_run
from conftest import ROOT, data_path, run_cli
from trecqr.errors import UsageError

with warnings.catch_warnings():  # repro_eval imports scipy.stats.stats (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    from repro_eval.Evaluator import RpdEvaluator
    from repro_eval.measure import document_order
    from repro_eval.util import load_run

LLM_SETS = ["willia-umbrela1", "h2oloo-zeroshot1", "Olz-gpt4o", "RMITIR-llama70B"]
CAST_RUNS = ["docrun_org_convdr.run", "docrun_org_convdr_bert.run", "docrun_org_manual_ance.run",
             "docrun_org_manual_ance_bert.run", "docrun_org_manual_bm25.run"]


def _llm(name):
    return data_path("llmjudge", f"{name}.qrels")


def _grades(path) -> dict:
    return {(q, d): int(g) for q, _, d, g in (line.split() for line in
                                                open(path, encoding="utf-8") if line.strip())}


def _cli_json(args) -> dict:
    res = run_cli(["agree", *map(str, args), "--format", "json"])
    assert res.exit_code == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.parametrize("llm", LLM_SETS)
@pytest.mark.parametrize("level", [1, 2])
def test_labels_are_scikit_learns_and_krippendorffs(llm, level):
    """Every statistic of ``agree labels`` (JSON, all digits) equals its reference on the
    human grades and the LLM's, paired by (query, passage) here."""
    human, other = _grades(_llm("human-test")), _grades(_llm(llm))
    keys = sorted(human)
    a, b = np.array([human[k] for k in keys]), np.array([other[k] for k in keys])
    got = _cli_json(["labels", _llm("human-test"), _llm(llm), "-l", level])
    assert (got["shared"], got["only_a"], got["only_b"], got["topics"]) == (4423, 0, 0, 25)
    assert got["relevance_level"] == level
    for name, weights in (("cohen_kappa", None), ("weighted_kappa_linear", "linear"),
                          ("weighted_kappa_quadratic", "quadratic")):
        assert abs(got["graded"][name] - cohen_kappa_score(a, b, weights=weights)) < 1e-12
    for level_name in ("nominal", "ordinal", "interval"):
        ref = krippendorff.alpha(reliability_data=[a, b], level_of_measurement=level_name)
        assert abs(got["graded"][f"krippendorff_alpha_{level_name}"] - ref) < 1e-12
    assert got["confusion"] == confusion_matrix(a, b, labels=got["grades"]).tolist()
    ba, bb = (a >= level).astype(int), (b >= level).astype(int)
    assert abs(got["binary"]["cohen_kappa"] - cohen_kappa_score(ba, bb)) < 1e-12
    ref = krippendorff.alpha(reliability_data=[ba, bb], level_of_measurement="nominal")
    assert abs(got["binary"]["krippendorff_alpha"] - ref) < 1e-12
    assert got["binary_confusion"] == confusion_matrix(ba, bb, labels=[0, 1]).tolist()


def test_labels_text_csv_and_python_say_the_same():
    """The text states the shared count and the threshold; CSV and Python hold JSON's
    numbers."""
    args = [_llm("human-test"), _llm("Olz-gpt4o")]
    doc = _cli_json(["labels", *args])
    text = run_cli(["agree", "labels", *args]).stdout
    assert "judgments: 4423 shared (25 topics), 0 only in A, 0 only in B" in text
    assert "binary (grade >= 1)" in text and f"{doc['graded']['cohen_kappa']:.4f}" in text
    rows = list(csv.DictReader(io.StringIO(run_cli(["agree", "labels", *args, "--format",
                                                    "csv"]).stdout)))
    values = {(r["statistic"], r["labels"]): r["value"] for r in rows if not r["grade_a"]}
    assert float(values[("krippendorff_alpha_ordinal", "graded")]) == \
        doc["graded"]["krippendorff_alpha_ordinal"]
    assert float(values[("cohen_kappa", "binary (grade >= 1)")]) == doc["binary"]["cohen_kappa"]
    result = trecqr.agree_labels(*args)
    py = result.to_dict()
    assert py["graded"] == doc["graded"] and py["confusion"] == doc["confusion"]
    assert repr(result) == (f"LabelAgreement(human-test.qrels vs Olz-gpt4o.qrels: 4423 shared, "
                            f"kappa {doc['graded']['cohen_kappa']:.4f}, binary kappa "
                            f"{doc['binary']['cohen_kappa']:.4f} at grade >= 1)")


def test_labels_count_the_judgments_only_one_makes(tmp_path):
    """Agreement is over the shared pairs; the others are counted (every third human
    judgment and every fifth LLM one dropped)."""
    human, llm = (open(p, encoding="utf-8").readlines()
                  for p in (_llm("human-test"), _llm("willia-umbrela1")))
    a, b = tmp_path / "a.qrels", tmp_path / "b.qrels"
    a.write_text("".join(line for i, line in enumerate(human) if i % 3))
    b.write_text("".join(line for i, line in enumerate(llm) if i % 5))
    ga, gb = _grades(a), _grades(b)
    keys = sorted(set(ga) & set(gb))
    got = _cli_json(["labels", a, b])
    assert (got["shared"], got["only_a"], got["only_b"]) == \
        (len(keys), len(ga) - len(keys), len(gb) - len(keys))
    ref = cohen_kappa_score([ga[k] for k in keys], [gb[k] for k in keys], weights="linear")
    assert abs(got["graded"]["weighted_kappa_linear"] - ref) < 1e-12


@pytest.fixture(scope="module")
def second_qrels(tmp_path_factory):
    """The official CAsT 2021 qrels with every grade > 0 made 1 (a second set of judgments
    that reorders the runs under ndcg_cut.3)."""
    path = tmp_path_factory.mktemp("rank") / "binary.qrels"
    lines = (line.split() for line in open(data_path("cast2021", "qrels-docs.2021.qrel")))
    path.write_text("".join(f"{q} {z} {d} {min(int(g), 1)}\n" for q, z, d, g in lines))
    return path


def test_rankings_are_scipys_on_evals_means(second_qrels):
    official = data_path("cast2021", "qrels-docs.2021.qrel")
    runs = [data_path("cast2021", r) for r in CAST_RUNS]
    got = _cli_json(["rankings", official, second_qrels, *runs, "-m", "ndcg_cut.3", "-m",
                     "map"])
    # in the order given
    assert got["runs"] == CAST_RUNS and got["measures"] == ["ndcg_cut_3", "map"]
    for m, name in (("map", "map"), ("ndcg_cut.3", "ndcg_cut_3")):
        x = np.array([trecqr.evaluate(official, r, [m]).aggregate()[name] for r in runs])
        y = np.array([trecqr.evaluate(second_qrels, r, [m]).aggregate()[name] for r in runs])
        assert got["scores_a"][name] == x.tolist() and got["scores_b"][name] == y.tolist()
        s = got["stats"][name]
        assert abs(s["kendall_tau"] - stats.kendalltau(x, y).statistic) < 1e-12
        assert abs(s["spearman"] - stats.spearmanr(x, y).statistic) < 1e-12
        assert s["tau_ap"] is not None and s["rbo"] is not None
    assert got["stats"]["ndcg_cut_3"]["kendall_tau"] < 1  # the second qrels reorder the runs
    py = trecqr.agree_rankings(official, second_qrels, runs, ["ndcg_cut.3"], rbo_p=0.8)
    assert py.stats["ndcg_cut_3"]["kendall_tau"] == got["stats"]["ndcg_cut_3"]["kendall_tau"]
    text = run_cli(["agree", "rankings", official, second_qrels, *runs, "-m", "ndcg_cut.3"])
    assert "tau_AP takes A's ranking as the reference" in text.stdout
    assert "158 qrels topics every run has" in text.stdout


def test_tied_runs_leave_tau_ap_and_rbo_undefined_and_say_why(second_qrels, tmp_path):
    """A qrels under which every run scores 0: tau is nan (JSON null) and a note says so."""
    empty = tmp_path / "zero.qrels"
    empty.write_text("".join(f"{q} 0 {d} 0\n" for q, _, d, _ in
                             (line.split() for line in open(second_qrels))))
    runs = [data_path("cast2021", r) for r in CAST_RUNS]
    got = _cli_json(["rankings", second_qrels, empty, *runs, "-m", "map"])
    assert all(v is None for v in got["stats"]["map"].values())
    assert any("tie" in n for n in got["notes"])


@pytest.fixture(scope="module")
def repro_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("repro")
    out = {"qrels": data_path("cast2021", "qrels-docs.2021.qrel")}
    for key, name, seed in (("b", "docrun_org_manual_bm25.run", 1),
                            ("a", "docrun_org_convdr.run", 2)):
        out[f"{key}_orig"] = data_path("cast2021", name)
        out[f"{key}_rep"] = folder / f"{key}.run"
        perturb_run(out[f"{key}_orig"], out[f"{key}_rep"], seed)
    return out


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_repro_is_repro_evals(repro_runs):
    r = repro_runs
    got = _cli_json(["repro", r["a_orig"], r["a_rep"], "--baseline", r["b_orig"], r["b_rep"],
                     "--qrels", r["qrels"], "-m", "map", "-m", "ndcg_cut.10", "-m", "P.10"])
    rpd = RpdEvaluator(qrels_orig_path=str(r["qrels"]), run_b_orig_path=str(r["b_orig"]),
                       run_a_orig_path=str(r["a_orig"]), run_b_rep_path=str(r["b_rep"]),
                       run_a_rep_path=str(r["a_rep"]))
    rpd.trim()
    rpd.evaluate()
    er, dri, rmse, pvalues = rpd.er(), rpd.dri(), rpd.rmse(), rpd.ttest()
    for row, key in zip(got["order"], ("a", "b")):
        orig, rep = load_run(str(r[f"{key}_orig"])), load_run(str(r[f"{key}_rep"]))
        assert abs(row["ktu"] - document_order.KTU(orig, rep)) < 1e-9
        assert abs(row["rbo"] - document_order.RBO(orig, rep, p=0.95, depth=1000,
                                                   pbar=False, per_topic=False)) < 1e-9
        assert row["topics"] == 239
    names = {"map": "AP", "ndcg_cut_10": "nDCG@10", "P_10": "P@10"}
    assert {e["measure"] for e in got["effect"]} == set(names)
    for e in got["effect"]:
        name = names[e["measure"]]
        assert e["topics"] == 158
        assert abs(e["effect_ratio"] - er[name]) < 1e-9
        assert abs(e["delta_ri"] - dri[name]) < 1e-9
        assert abs(e["rmse_advanced"] - rmse["advanced"][name]) < 1e-9
        assert abs(e["rmse_baseline"] - rmse["baseline"][name]) < 1e-9
        assert abs(e["p_advanced"] - pvalues["advanced"][name]) < 1e-9
        assert abs(e["p_baseline"] - pvalues["baseline"][name]) < 1e-9
    py = trecqr.agree_repro(r["a_orig"], r["a_rep"], baseline=(r["b_orig"], r["b_rep"]),
                            qrels=r["qrels"], measures=["map"])
    assert py.effect[0]["effect_ratio"] == got["effect"][0]["effect_ratio"]
    text = run_cli(["agree", "repro", r["a_orig"], r["a_rep"]]).stdout
    assert f"{got['order'][0]['ktu']:.4f}" in text and "depth 1000" in text
    rows = list(csv.reader(io.StringIO(run_cli(["agree", "repro", r["a_orig"], r["a_rep"],
                                                "--format", "csv"]).stdout)))
    assert ["", "advanced", "ktu", repr(got["order"][0]["ktu"])] in rows


@pytest.mark.parametrize("args, message", [
    (["repro", "{a}", "{b}", "-m", "map"], "-m needs --qrels QRELS"),
    (["repro", "{a}", "{b}", "--qrels", "{q}"], "--qrels needs -m MEASURE"),
    (["repro", "{a}", "{b}", "-c"], "-c set how the runs are scored"),
    (["repro", "{a}", "{c}"], "KTU compares rankings of equal length (--depth 18)"),
    (["repro", "{a}", "{b}", "--depth", "2147483648"], "--depth must be from 1 to 100,000"),
    (["rankings", "{q}", "{q}", "{a}", "{b}", "-m", "map"], "at least 3 runs"),
    (["labels", "{q}", "{h}"], "judge no (topic, document) pair in common"),
])
def test_bad_options_are_one_line(args, message):
    paths = {"{a}": data_path("cast2021", "docrun_org_convdr.run"),
             "{b}": data_path("cast2021", "docrun_org_convdr.run"),
             "{c}": data_path("cast2021", "docrun_org_manual_bm25.run"),
             "{q}": data_path("cast2021", "qrels-docs.2021.qrel"),
             "{h}": _llm("human-test")}
    res = run_cli(["agree", *(str(paths.get(a, a)) for a in args)])
    assert res.exit_code == 2 and res.stdout == ""
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_python_hints_name_python_arguments():
    with pytest.raises(UsageError, match=r"\(depth=18\)"):
        trecqr.agree_repro(data_path("cast2021", "docrun_org_convdr.run"),
                           data_path("cast2021", "docrun_org_manual_bm25.run"))
    with pytest.raises(UsageError, match="qrels=..."):
        trecqr.agree_repro(data_path("cast2021", "docrun_org_convdr.run"),
                           data_path("cast2021", "docrun_org_convdr.run"), measures=["map"])


def test_a_huge_max_docs_is_no_cut(tmp_path):
    """-M past the largest C long is trec_eval's atol saturating at LONG_MAX: no cut, the same
    output as without -M, for agree and eval (it overflowed the ranking kernel's argument)."""
    fixture = ROOT / "fixtures" / "cast2021"
    third = tmp_path / "third.run"
    third.write_bytes((fixture / "convdr.run").read_bytes())
    qrels, runs = str(fixture / "qrels.txt"), [str(fixture / "convdr.run"),
                                              str(fixture / "manual_bm25.run"), str(third)]
    for base in (["agree", "rankings", qrels, qrels, *runs, "-m", "P.10", "--format", "csv"],
                 ["eval", "-m", "P.10", "-m", "map", qrels, runs[0]]):
        plain, huge = run_cli(base), run_cli([*base, "-M", "99999999999999999999"])
        assert plain.exit_code == huge.exit_code == 0, huge.stderr
        assert huge.stdout == plain.stdout
