"""The SCAI-QReCC-21 evaluator (scai-conf/SCAI-QReCC-21 code/evaluation-script/
scai-qrecc21-evaluator.py, 2021-10-04) reproduced on QReCC's 2,000 sampled dev turns.

Data: ../shared/data/qrecc/dev-sampled2k_chatgpt_ICL.jsonl (smartyfh/InfoCQR @ 2953c46) gives
the ground truth (Truth_rewrite, Truth_passages, Truth_answer) and the run's Model_rewrite
(GPT_rewrite); the run's Model_passages are the demo BM25 setting (fixtures/qrecc-demo, k1=0.82
b=0.68, 100 deep) searched with all 2,000 GPT rewrites, so turns without gold carry passages too.
The reference values are computed here by the script's own steps with pytrec_eval and
rouge-score; trecqr must give them exactly.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from conftest import data_path, run_cli
from rouge_score import rouge_scorer, scoring

from trecqr.protocols import scai

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
TURNS = ("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("scai")
    res = run_cli(["index", DEMO / "collection.jsonl", "-o", d / "idx", "--k1", "0.82", "--b",
                   "0.68", "--quiet"])
    assert res.exit_code == 0, res.output
    res = run_cli(["convert", "rewrites", data_path(*TURNS), d / "gpt.tsv", "--rewrite-field",
                   "GPT_rewrite"])
    assert res.exit_code == 0, res.output
    res = run_cli(["search", d / "idx", d / "gpt.tsv", "-o", d / "gpt.run", "-k", "100",
                   "--quiet"])
    assert res.exit_code == 0, res.output
    counts = scai.write_scai_files(data_path(*TURNS), d / "gpt.run", d / "gt.json",
                                   d / "run.json")
    gt = json.loads((d / "gt.json").read_text())
    run = json.loads((d / "run.json").read_text())
    return d, counts, gt, run


def _tid(t):
    return "%d_%d" % (t["Conversation_no"], t["Turn_no"])


def reference_mrr(gt, run, eval_missing_truth):
    """The script's get_retrieval_run, get_retrieval_ground_truth and evaluate_retrieval."""
    retrieval_run = {_tid(t): t["Model_passages"] for t in run if "Model_passages" in t}
    truth = {}
    for t in gt:
        if "Truth_passages" in t and len(t["Truth_passages"]) > 0:
            truth[_tid(t)] = {p: 1 for p in t["Truth_passages"]}
        elif eval_missing_truth:
            truth[_tid(t)] = {"": 1}
    run_for_type = {k: v for k, v in retrieval_run.items() if k in truth}
    mrrs = [s["recip_rank"] for s in
            pytrec_eval.RelevanceEvaluator(truth, {"recip_rank"}).evaluate(run_for_type).values()]
    return sum(mrrs) / len(mrrs), len(mrrs)


def reference_qr(gt, run, eval_missing_truth, eval_turn_one_rewrites, seed):
    """The script's evaluate_rewriting: rouge-score under the datasets 'rouge' metric (no
    stemmer, bootstrap aggregation), with numpy seeded. The metric scores rouge1, rouge2, rougeL
    and rougeLsum and the aggregator resamples them in that order, so rouge1's draws are the
    first after the seed whether or not the other types are scored: only rouge1 is scored here,
    to keep the test fast."""
    rewrites = {_tid(t): t["Model_rewrite"] for t in run if t.get("Model_rewrite") is not None}
    scorer = rouge_scorer.RougeScorer(["rouge1"])
    agg, recalls = scoring.BootstrapAggregator(), []
    for t in gt:
        if eval_turn_one_rewrites or t["Turn_no"] > 1:
            if eval_missing_truth or t["Truth_rewrite"] != "":
                s = scorer.score(t["Truth_rewrite"], rewrites.get(_tid(t), ""))
                agg.add_scores(s)
                recalls.append(s["rouge1"].recall)
    np.random.seed(seed)
    return float(np.mean(recalls)), agg.aggregate()["rouge1"].mid.recall, len(recalls)


def test_scai_files_from_the_dev_turns(files):
    d, counts, gt, run = files
    assert (counts.turns, counts.with_gold, counts.with_passages) == (2000, 927, 2000)
    assert set(gt[0]) == {"Conversation_no", "Turn_no", "Truth_rewrite", "Truth_passages",
                          "Truth_answer"}
    assert (gt[1]["Conversation_no"], gt[1]["Turn_no"]) == (1490, 4)
    assert gt[1]["Truth_rewrite"] == "What happened to Stan Musial in 1954?"
    # GPT_rewrite is an OpenAI chat completion on later turns: its message text is the rewrite
    assert run[1]["Model_rewrite"].startswith("What notable events occurred in Stan Musial's")
    assert len(run[1]["Model_passages"]) == 100


@pytest.mark.parametrize("missing", [False, True])
def test_mrr_equals_the_scripts_steps(files, missing):
    d, _, gt, run = files
    ref, n = reference_mrr(gt, run, missing)
    got = scai.scai_mrr(gt, run, missing)
    assert got.mrr == ref and got.turns == n
    assert (round(ref, 6), n) == ((0.348986, 2000) if missing else (0.752937, 927))
    # the same through trecqr eval --protocol, full precision
    args = ["eval", "--protocol", "scai-qrecc21", "--format", "json", d / "gt.json",
            d / "run.json"] + (["--eval-missing-truth"] if missing else [])
    res = run_cli(args)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"]["recip_rank"] == ref
    assert f"protocol scai-qrecc21 ({'--eval-missing-truth' if missing else 'gold turns only'}" \
        in res.stderr


@pytest.mark.parametrize("turn_one", [False, True])
def test_qr_equals_the_scripts_steps(files, turn_one):
    d, _, gt, run = files
    mean, mid, n = reference_qr(gt, run, False, turn_one, seed=7)
    got = scai.scai_qr(gt, scai.rewriting_run(run), False, turn_one, bootstrap_seed=7)
    assert (got.qr_mean, got.qr_bootstrap, got.turns) == (mean, mid, n)
    assert (round(mean, 6), n) == ((0.774181, 2000) if turn_one else (0.723431, 1633))
    # no empty Truth_rewrite among these turns: --eval-missing-truth changes nothing here
    assert scai.scai_qr(gt, scai.rewriting_run(run), True, turn_one).qr_mean == mean
    args = ["gen", "--protocol", "scai-qrecc21", d / "run.json", d / "gt.json",
            "--bootstrap-seed", "7"] + (["--eval-turn-one-rewrites"] if turn_one else [])
    res = run_cli(args)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == f"QR\t{mean:.4f}\tROUGE-1 recall against Truth_rewrite, mean over {n} turns"
    assert lines[1].startswith(f"QR_bootstrap\t{mid:.4f}\t")


def test_empty_model_passages_count_zero_and_trec_runs(tmp_path, files):
    """pytrec_eval scores an empty ranking 0, so the script averages it in; trec_eval would
    drop the turn. A TREC run (no empty rankings) gives the same MRR as the SCAI run."""
    gt = [{"Conversation_no": 1, "Turn_no": 1, "Truth_rewrite": "a", "Truth_passages": ["p"]},
          {"Conversation_no": 1, "Turn_no": 2, "Truth_rewrite": "b", "Truth_passages": ["q"]}]
    run = [{"Conversation_no": 1, "Turn_no": 1, "Model_passages": {"x": 2.0, "p": 1.0}},
           {"Conversation_no": 1, "Turn_no": 2, "Model_passages": {}}]
    ref, n = reference_mrr(gt, run, False)
    got = scai.scai_mrr(gt, run, False)
    assert (ref, n) == (0.25, 2) and (got.mrr, got.turns, got.empty) == (0.25, 2, 1)
    d, _, gt_all, run_all = files
    res = run_cli(["convert", "qrecc", "--scai-run", d / "run.json", "--run-out",
                   tmp_path / "scai.run"])
    assert res.exit_code == 0, res.output
    assert "qrecc: SCAI run: 159672 (turn, passage) pairs for 2000 turns" in res.stderr
    res = run_cli(["eval", "--protocol", "scai-qrecc21", "--format", "json", d / "gt.json",
                   tmp_path / "scai.run"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"]["recip_rank"] == \
        reference_mrr(gt_all, run_all, False)[0]


def test_the_published_sample_files_carry_no_passages_or_rewrites(tmp_path):
    gt, run = data_path("qrecc", "scai-ground-truth.json"), data_path("qrecc", "scai-run.json")
    res = run_cli(["eval", "--protocol", "scai-qrecc21", gt, run])
    assert res.exit_code == 2
    assert "no run turn with Model_passages is a turn of the ground truth" in res.stderr
    res = run_cli(["gen", "--protocol", "scai-qrecc21", run, gt])
    assert res.exit_code == 2 and "no rewrites to score" in res.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"Conversation_no": 1, "Turn_no": 1,
                                "Model_passages": {"": 1.0}}]))
    res = run_cli(["convert", "qrecc", "--scai-run", bad, "--run-out", tmp_path / "x.run"])
    assert res.exit_code == 2 and "turn 1_1: invalid passage id ''" in res.stderr
    assert not (tmp_path / "x.run").exists()


def test_qrecc_json_qrels_serve_as_ground_truth(files):
    """qrels_dev.json ({turn: {passage: 1}}, {"": 1} without gold) gives the same MRR as the
    ground truth written from the 2,000 turns, with and without --eval-missing-truth."""
    d, _, gt, run = files
    for missing in (False, True):
        args = ["eval", "--protocol", "scai-qrecc21", "--format", "json",
                data_path("qrecc", "qrels_dev.json"), d / "run.json"]
        res = run_cli(args + (["--eval-missing-truth"] if missing else []))
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["summary"]["recip_rank"] == reference_mrr(gt, run, missing)[0]
