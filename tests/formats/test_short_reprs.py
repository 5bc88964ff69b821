"""The public objects show one short line in a notebook or a print(), not their Arrow columns
or every field: Run, Qrels (however they were read), a fused Run, and cqr's report and rows.
(Results and Comparison: tests/api/test_notebook_views.py.)"""

from __future__ import annotations

import pandas as pd
import pytest

import trecqr
from conftest import ROOT, data_path
from trecqr.workflows.cqr import CqrReport, CqrRow

QRELS, RUN = "fixtures/cast2021/qrels.txt", "fixtures/cast2021/manual_bm25.run"


@pytest.fixture(autouse=True)
def in_the_repository(monkeypatch):
    monkeypatch.chdir(ROOT)  # the fixtures' paths, as the reprs show them, are relative


def test_run_repr_counts_rows_and_topics():
    expected = "Run(3,354 rows, 43 topics, runid='org_manual_bm25.run')"
    assert repr(trecqr.load_run(RUN)) == expected  # the C scanner's run
    assert str(trecqr.load_run(RUN)) == expected
    with open(RUN, "rb") as stream:  # a file object: not the scanner's
        assert repr(trecqr.read_run(stream)) == expected
    big = trecqr.read_run(str(data_path("cast2021", "docrun_org_manual_bm25.run")))
    assert repr(big) == "Run(18,570 rows, 239 topics, runid='org_manual_bm25.run')"


def test_run_repr_of_dicts_frames_and_fusion():
    """A topic with an empty ranking counts (pytrec_eval ranks it); one row, one topic."""
    assert repr(trecqr.load_run({"a": {"x": 1.0}, "b": {}})) == \
        "Run(1 row, 2 topics, runid='trecqr')"
    frame = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"],
                          "score": [1.0, 2.0, 3.0]})
    assert repr(trecqr.load_run(frame)) == "Run(3 rows, 2 topics, runid='trecqr')"
    fused = trecqr.fuse([RUN, "fixtures/cast2021/convdr.run"])
    assert repr(fused) == \
        "Run(5,723 rows, 43 topics, runid='rrf-min-max-org_manual_bm25.run+org_convdr.run')"


def test_qrels_repr_counts_judgments_and_topics():
    assert repr(trecqr.load_qrels(QRELS)) == \
        "Qrels(4,316 judgments, 34 topics, source='fixtures/cast2021/qrels.txt')"
    assert repr(trecqr.load_qrels({"q": {"d": 1}})) == \
        "Qrels(1 judgment, 1 topic, source='<qrels dict>')"


def test_cqr_report_and_rows_are_one_line():
    scores = {"MRR": 0.48125, "NDCG@3": 0.47131}
    rows = [CqrRow(f"rewrite-{i}", f"r{i}.tsv", "rewrites", None, dict(scores), {})
            for i in range(6)]
    report = CqrReport(rows, "cast.index", False, 0.9, 0.4, 1000, None, QRELS,
                       measures={"NDCG@3": "ndcg_cut.3", "MRR": "recip_rank"})
    assert repr(rows[0]) == "<CqrRow rewrite-0 (rewrites): MRR=0.4813, NDCG@3=0.4713>"
    assert repr(report) == ("<CqrReport: 6 rows (rewrite-0, rewrite-1, rewrite-2, rewrite-3, "
                            "... (2 more)) x 2 measures (MRR, NDCG@3), bm25s index cast.index>")


def test_results_repr_shows_counts_as_whole_numbers():
    """num_ret is 2631 as trec_eval prints it (was 2631.0000); a mean of 1 keeps 4 places."""
    res = trecqr.evaluate(QRELS, RUN, ["official"])
    assert repr(res) == ("<Results: 34 topics, 29 measures: num_q=34, num_ret=2631, "
                         "num_rel=1253, num_rel_ret=485, ... (25 more)>")
    one = trecqr.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["map", "P.5"])
    assert repr(one) == "<Results: 1 topic, 2 measures: map=1.0000, P_5=0.2000>"
