"""`trecqr convert irds` through ir_datasets' own loading code on local files (no network),
and the evaluation-protocol presets."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from conftest import IRDS_HOME, data_path

# ir_datasets fixes the TREC CAsT file paths (IR_DATASETS_HOME/trec-cast/...) when it is first
# imported, whichever test imports it first: under the suite's private home (tests/conftest.py),
# so the CAsT files are placed there and nothing is read from or written to ~/.ir_datasets.
import ir_datasets  # noqa: E402,F401
import ir_datasets.datasets.trec_cast  # noqa: E402,F401

_HOME = IRDS_HOME

from trecqr.cli.convert_files import irds_command
import trecqr  # noqa: E402
from trecqr.datasets import irds  # noqa: E402
from trecqr.protocols.presets import preset, preset_names  # noqa: E402
from trecqr.errors import UsageError  # noqa: E402

C21 = "cast2021"
C20 = "cast2020"
BM25_RUN = ("cast2021", "docrun_org_manual_bm25.run")


@pytest.fixture
def home(monkeypatch):
    """IR_DATASETS_HOME = the private home, holding ir_datasets' own file names for CAsT
    2020 and 2021 (copied from ../shared/data; their md5 sums are the ones in ir_datasets'
    downloads.json)."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(_HOME))
    layout = {
        "trec-cast/2020/2020_manual_evaluation_topics_v1.0.json":
            (C20, "2020_manual_evaluation_topics_v1.0.json"),
        "trec-cast/2020/2020qrels.txt": (C20, "2020qrels.txt"),
        "trec-cast/2021/2021_manual_evaluation_topics_v1.0.json":
            (C21, "2021_manual_evaluation_topics_v1.0.json"),
        "trec-cast/2021/trec-cast-qrels-docs.2021.qrel": (C21, "qrels-docs.2021.qrel"),
    }
    for rel, src in layout.items():
        dst = _HOME / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if not dst.exists():
            shutil.copyfile(data_path(*src), dst)
    return _HOME


def _expected_paths(dataset_id):
    ds = irds.load(dataset_id)
    return sorted(p for h in (ds.queries_handler(), ds.qrels_handler())
                  for p, _, _ in irds.required_files(h))


def test_ir_datasets_looks_where_the_files_were_put(home):
    assert _expected_paths("trec-cast/v1/2020") == [
        str(home / "trec-cast/2020/2020_manual_evaluation_topics_v1.0.json"),
        str(home / "trec-cast/2020/2020qrels.txt")]
    assert _expected_paths("trec-cast/v2/2021") == [
        str(home / "trec-cast/2021/2021_manual_evaluation_topics_v1.0.json"),
        str(home / "trec-cast/2021/trec-cast-qrels-docs.2021.qrel")]


def test_cast2021_cli_manual_rewrites_and_qrels_score_the_same(home, tmp_path):
    topics, qrels = tmp_path / "t.tsv", tmp_path / "q.qrel"
    res = CliRunner().invoke(irds_command, [
        "trec-cast/v2/2021", "--topics-out", str(topics), "--qrels-out", str(qrels),
        "--query-field", "manual_rewritten_utterance"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "239 queries" in res.stderr and "19334 qrels for 158 queries" in res.stderr
    lines = topics.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 239
    assert lines[0] == ("106_1\tI just had a breast biopsy for cancer. "
                        "What are the most common types of breast cancer?")
    assert lines[-1] == "131_10\tHow is an AC system different from a heat pump?"
    # ir_datasets reproduces the official qrels row for row
    original = data_path(C21, "qrels-docs.2021.qrel")
    assert qrels.read_text().splitlines() == original.read_text().splitlines()
    run = data_path(*BM25_RUN)
    for measures, kw in ((["recip_rank", "ndcg_cut.3", "recall.10,100"], {"relevance_level": 2}),
                         (preset("cast2021").measures("paper"), {}),
                         (preset("cast2021").measures("true"), {})):
        conv = trecqr.evaluate(str(qrels), str(run), measures, **kw).aggregate()
        orig = trecqr.evaluate(str(original), str(run), measures, **kw).aggregate()
        assert conv == orig
    paper = trecqr.evaluate(str(qrels), str(run), preset("cast2021").measures()).aggregate()
    assert paper["RR(rel=2)"] == pytest.approx(0.5824777780248691, abs=1e-12)
    assert paper["nDCG@3"] == pytest.approx(0.39742750992799736, abs=1e-12)
    assert paper["R(rel=2)@100"] == pytest.approx(0.46057557283273776, abs=1e-12)
    true = trecqr.evaluate(str(qrels), str(run), preset("cast2021").measures("true")).aggregate()
    assert true["RR(rel=2)@3"] == pytest.approx(0.5474683544303798, abs=1e-12)


def test_cast2020_registered_id_default_text_and_qid_style(home, tmp_path):
    ds = irds.load("trec-cast/v1/2020")  # registered in ir_datasets itself
    r = irds.convert("trec-cast/v1/2020", topics_out=tmp_path / "t.jsonl",
                     qrels_out=tmp_path / "q.qrel", qid_style="dash", dataset=ds)
    assert len(r.topics) == 216 and r.queries_missing_text == []
    assert r.topics.qids[0] == "81-1"
    # default: ir_datasets' default_text() of a CAsT query, the raw utterance
    assert r.topics.queries[0] == "How do you know when your garage door opener is going bad?"
    assert len(r.qrels) == 40451 and r.qrels_topics == 208
    first = (tmp_path / "q.qrel").read_text().split("\n", 1)[0]
    assert first == "81-1 0 CAR_3add84966af079ed84e8b2fc412ad1dc27800127 1"
    judged, _ = irds.convert_queries(irds.load("trec-cast/v1/2020/judged"),
                                     query_field="automatic_rewritten_utterance")
    assert len(judged) == 208


def test_missing_files_fail_without_network(home, tmp_path):
    # 2019 evaluation files were not placed: ir_datasets would download them
    res = CliRunner().invoke(irds_command, ["trec-cast/v1/2019", "--qrels-out",
                                            str(tmp_path / "q")])
    assert res.exit_code == 2
    assert str(home / "trec-cast/2019/2019qrels.txt") in res.stderr
    assert "https://trec.nist.gov/data/cast/2019qrels.txt" in res.stderr
    assert not (tmp_path / "q").exists()
    # a fetch that gets past the check is refused, never sent
    from ir_datasets.util.download import RequestsDownload
    with irds.offline():
        with pytest.raises(irds.OfflineDownload, match="example.invalid"):
            with RequestsDownload("https://example.invalid/x").stream():
                pass
    assert "stream" in RequestsDownload.__dict__  # restored


def test_bad_field_and_dataset(home, tmp_path):
    with pytest.raises(UsageError, match="no field 'text'.*manual_rewritten_utterance"):
        irds.convert("trec-cast/v2/2021", topics_out=tmp_path / "t.tsv", query_field="text")
    with pytest.raises(UsageError, match="no dataset 'no-such/dataset'"):
        irds.convert("no-such/dataset", topics_out=tmp_path / "t.tsv")
    with pytest.raises(UsageError, match="--topics-out and/or --qrels-out"):
        irds.convert("trec-cast/v2/2021")
    assert not (tmp_path / "t.tsv").exists()


def test_presets():
    assert preset_names()[:4] == ["topiocqa-dev", "qrecc-test", "cast2020", "cast2021"]
    t, q = preset("topiocqa-dev"), preset("qrecc-test")
    assert (t.bm25_k1, t.bm25_b, q.bm25_k1, q.bm25_b) == (0.9, 0.4, 0.82, 0.68)
    assert (t.evaluated_turns, t.total_turns, t.qid_style) == (2514, 2514, "dash")
    assert (q.evaluated_turns, q.total_turns, q.qrels_pairs) == (8209, 16451, 10507)
    c20, c21 = preset("cast2020"), preset("cast2021")
    assert (c20.rel_threshold, c20.evaluated_turns, c20.total_turns) == (2, 208, 216)
    assert (c21.evaluated_turns, c21.total_turns, c21.qrels_pairs) == (158, 239, 19334)
    assert all(preset(n).depth == 100 for n in preset_names()[:4])
    assert (t.rel_threshold, q.rel_threshold) == (1, 1)
    assert t.measures("paper") == ["recip_rank", "nDCG@3", "R@10", "R@100"]
    assert t.measures("true") == ["RR@3", "nDCG@3", "R@10", "R@100"]
    assert (t.mrr_paper, t.mrr_true) == ("recip_rank", "RR@3")
    assert c21.measures() == ["RR(rel=2)", "nDCG@3", "R(rel=2)@10", "R(rel=2)@100"]
    assert t.labels() == {"recip_rank": "MRR", "nDCG@3": "NDCG@3", "R@10": "R@10",
                          "R@100": "R@100"}
    with pytest.raises(UsageError, match="unknown preset"):
        preset("cast2018")
    with pytest.raises(ValueError, match="MRR reading"):
        t.mrr("mrr@3")


def test_presets_mrr_readings_differ_on_real_data():
    """The two MRR readings are different numbers on a real run (CAsT 2021 BM25, grade >= 1)."""
    qrels = data_path(C21, "qrels-docs.2021.qrel")
    run = data_path(*BM25_RUN)
    t = preset("topiocqa-dev")  # threshold 1, as TopiOCQA/QReCC
    full = trecqr.evaluate(str(qrels), str(run), [t.mrr("paper")]).aggregate()["recip_rank"]
    at3 = trecqr.evaluate(str(qrels), str(run), [t.mrr("true")]).aggregate()["RR@3"]
    assert full == pytest.approx(0.708519057151621, abs=1e-12)
    assert at3 == pytest.approx(0.6835443037974682, abs=1e-12)
