"""End to end on the QReCC demo collection (fixtures/qrecc-demo, real QReCC dev text): BM25 with
QReCC's k1/b, then trec_eval measures. Human and model rewrites must beat the raw questions on every
measure; the numbers of this fixed run are pinned."""

from __future__ import annotations

from pathlib import Path

import pytest

import trecqr
from conftest import run_cli

DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "qrecc-demo"
MEASURES = ["recip_rank", "ndcg_cut.3", "recall.10,100"]
EXPECTED = {  # trec_eval's 4-decimal values of this run
    "raw": {"recip_rank": 0.3830, "ndcg_cut_3": 0.3674, "recall_10": 0.4917, "recall_100": 0.6640},
    "human": {"recip_rank": 0.8078, "ndcg_cut_3": 0.8100, "recall_10": 0.9033,
              "recall_100": 0.9439},
    "gpt": {"recip_rank": 0.7529, "ndcg_cut_3": 0.7572, "recall_10": 0.8768, "recall_100": 0.9399},
}


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo")
    index = folder / "index"
    result = run_cli(["index", DEMO / "collection.jsonl", "-o", index, "--k1", "0.82", "--b", "0.68",
                      "--quiet"])
    assert result.exit_code == 0, result.stderr
    out = {}
    for field in EXPECTED:
        run = folder / f"run-{field}.txt"
        result = run_cli(["search", index, DEMO / f"topics-{field}.tsv", "-o", run, "-k", "100",
                          "--quiet"])
        assert result.exit_code == 0, result.stderr
        out[field] = trecqr.evaluate(DEMO / "qrels.txt", run, MEASURES).aggregate()
    return out


def test_rewrites_beat_raw_questions_on_every_measure(scores):
    for measure in EXPECTED["raw"]:
        assert scores["human"][measure] > scores["raw"][measure], measure
        assert scores["gpt"][measure] > scores["raw"][measure], measure


def test_numbers_of_the_fixed_run(scores):
    for field, values in EXPECTED.items():
        for measure, value in values.items():
            assert round(scores[field][measure], 4) == value, (field, measure)
