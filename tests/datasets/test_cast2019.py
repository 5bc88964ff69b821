"""TREC CAsT 2019: topics, manual rewrites, and the papers' four ways of scoring it.

Data: ../shared/data/cast2019/ (daltonj/treccastweb @ 3384661). The passages are not here, so
the run is made from the qrels (:func:`qrels_run`: every judged passage of a turn plus unjudged
ids, 1,000 per turn, in a hash order; every tenth judged turn left out so -c matters). Expected
outputs: tests/expected/cast2019/ (trec_eval 9.0.8 and 10.0 with each paper's flags; README).
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from conftest import data_path, run_cli

import trecqr
from trecqr.protocols.presets import preset, protocol

EXPECTED = Path(__file__).parents[1] / "expected" / "cast2019"
FIX = Path(__file__).resolve().parents[2] / "fixtures" / "cast2021-demo"
QRELS = "2019qrels.txt"


def qrels_run() -> str:
    """The run the expected outputs were computed on (LLM4CS's scores: top_n - rank)."""
    judged: dict = {}
    for line in data_path("cast2019", QRELS).read_text().splitlines():
        q, _, d, _ = line.split()
        judged.setdefault(q, []).append(d)
    out = []
    for i, q in enumerate(sorted(judged)):
        if i % 10 == 9:
            continue
        docs = judged[q] + [f"MARCO_unjudged_{q}_{j}" for j in range(1000 - len(judged[q]))]
        docs.sort(key=lambda d: hashlib.sha1(f"{q} {d}".encode()).hexdigest())
        out += [f"{q} Q0 {d} {r + 1} {1000 - r} made-from-qrels\n" for r, d in enumerate(docs)]
    return "".join(out)


@pytest.fixture(scope="module")
def run19(tmp_path_factory):
    path = tmp_path_factory.mktemp("c19") / "qrels.run"
    path.write_text(qrels_run())
    return path


def test_convert_cast_2019_topics_and_resolved_utterances(tmp_path):
    folder = data_path("cast2019")
    res = run_cli(["convert", "cast", "--topics", folder / "evaluation_topics_v1.0.json",
                   "--query-field", "raw", "--topics-out", tmp_path / "raw.tsv"])
    assert res.exit_code == 0, res.stderr
    assert "479 turns in 50 topics; published: 479 turns in 50 topics" in res.stderr
    raw = (tmp_path / "raw.tsv").read_text().splitlines()
    assert len(raw) == 479 and raw[0] == "31_1\tWhat is throat cancer?"
    resolved = folder / "evaluation_topics_annotated_resolved_v1.0.tsv"
    res = run_cli(["convert", "cast", "--topics", folder / "evaluation_topics_v1.0.json",
                   "--resolved", resolved, "--query-field", "manual",
                   "--topics-out", tmp_path / "manual.tsv"])
    assert res.exit_code == 0, res.stderr
    assert "cast: 479 manual rewrites read from" in res.stderr
    manual = (tmp_path / "manual.tsv").read_text().splitlines()
    assert manual == resolved.read_text(encoding="utf-8").splitlines()  # the file's CRLF dropped
    assert manual != raw and [m.split("\t")[0] for m in manual] == [r.split("\t")[0] for r in raw]
    # without --resolved the 2019 file has no manual field: one line, exit 2
    res = run_cli(["convert", "cast", "--topics", folder / "evaluation_topics_v1.0.json",
                   "--query-field", "manual", "--topics-out", tmp_path / "m2.tsv"])
    assert res.exit_code == 2 and "turn 31_1 has no manual_rewritten_utterance" in res.stderr
    bad = tmp_path / "bad.tsv"
    bad.write_text("31_1\tx\n99_1\ty\n")
    res = run_cli(["convert", "cast", "--topics", folder / "evaluation_topics_v1.0.json",
                   "--resolved", bad, "--query-field", "manual", "--topics-out", tmp_path / "b"])
    assert res.exit_code == 2
    assert "1 resolved utterances are not turns of" in res.stderr and "'99_1'" in res.stderr
    assert not (tmp_path / "b").exists()


PAPER_CALLS = {  # protocol: the trec_eval calls the expected file holds (README)
    "cast2019": "-q -M100 -m map -m recip_rank -m recall.5,20,100 -m ndcg_cut.3",
    "llm4cs-cast2019": "-q -m map -m recip_rank -m recall.5,10,20,100 -m ndcg_cut.3",
    "chatty-goose-cast2019": "-q -c -mndcg_cut.3,1 -mrecall.1000 -mmap",
    "cqe-cast2019": "-q -c -mndcg_cut.3,1000 ; -q -c -l 2 -mrecall.100,1000",
}


def _expected(name, tag="908") -> str:
    return gzip.decompress((EXPECTED / f"{name}.{tag}.txt.gz").read_bytes()).decode()


@pytest.mark.parametrize("name", list(PAPER_CALLS))
def test_each_cast2019_protocol_equals_trec_eval_with_the_papers_flags(name, run19):
    qrels = data_path("cast2019", QRELS)
    res = run_cli(["eval", "--protocol", name, "-q", qrels, run19])
    assert res.exit_code == 0, res.stderr
    expected = _expected(name)
    if name == "cqe-cast2019":  # CQE's two calls, concatenated: the same lines, another order
        assert sorted(res.stdout.splitlines()) == sorted(expected.splitlines())
        assert "cqe-cast2019 (-c -M1000 -l2 -m ndcg_cut.3,1000 -m recall.100,1000)" in res.stderr
    else:
        assert res.stdout == expected
    p = protocol(name)
    assert p.depth == (100 if name == "cast2019" else 1000)
    assert p.complete == ("-c" in PAPER_CALLS[name])
    if name == "chatty-goose-cast2019":
        res = run_cli(["eval", "--protocol", name, "--compat", "10.0", "-q", "--quiet",
                       qrels, run19])
        assert res.stdout == _expected(name, "10")


def test_protocols_differ_where_the_papers_do(run19):
    """Depth 100 vs 1000 moves map; -c moves every mean; -l 2 moves recall."""
    qrels = data_path("cast2019", QRELS)
    agg = {n: trecqr.evaluate(qrels, run19, list(protocol(n).measures),
                              **_kw(protocol(n))).aggregate() for n in PAPER_CALLS}
    assert round(agg["cast2019"]["map"], 4) == 0.0093
    assert round(agg["llm4cs-cast2019"]["map"], 4) == 0.0527
    assert round(agg["chatty-goose-cast2019"]["map"], 4) == 0.0475  # -c: 17 turns count 0
    assert round(agg["cqe-cast2019"]["recall_1000"], 4) == 0.8902
    assert round(agg["chatty-goose-cast2019"]["recall_1000"], 4) == 0.9017


def _kw(p):
    return dict(relevance_level=p.rel_threshold, max_docs=p.depth, complete=p.complete)


def _print_trec_res(run_path, qrels_path, rel_threshold, top_n):
    """ConvGQR's src/test_cast19.py print_trec_res and LLM4CS's evaluation/trec_eval.py: the
    qrels binarised at rel_threshold for map/recip_rank/recall, the graded ones for nDCG@3,
    pytrec_eval, np.average over the evaluated turns; the run cut at top_n."""
    runs: dict = {}
    for line in Path(run_path).read_text().splitlines():
        q, _, d, rank, score, _ = line.split()
        if int(rank) <= top_n:
            runs.setdefault(q, {})[d] = float(score)
    qrels, graded = {}, {}
    for line in Path(qrels_path).read_text().splitlines():
        q, _, d, rel = line.split()
        graded.setdefault(q, {})[d] = int(rel)
        qrels.setdefault(q, {})[d] = 1 if int(rel) >= rel_threshold else 0
    res = pytrec_eval.RelevanceEvaluator(
        qrels, {"map", "recip_rank", "recall.5", "recall.10", "recall.20", "recall.100"}
    ).evaluate(runs)
    out = {m: np.average([v[m] for v in res.values()])
           for m in ("map", "recip_rank", "recall_5", "recall_10", "recall_20", "recall_100")}
    res = pytrec_eval.RelevanceEvaluator(graded, {"ndcg_cut.3"}).evaluate(runs)
    out["ndcg_cut_3"] = np.average([v["ndcg_cut_3"] for v in res.values()])
    return out


@pytest.mark.parametrize("name,top_n", [("cast2019", 100), ("llm4cs-cast2019", 1000)])
def test_the_papers_pytrec_eval_scripts_give_the_protocols_numbers(name, top_n, run19):
    qrels = data_path("cast2019", QRELS)
    want = _print_trec_res(run19, qrels, 1, top_n)
    p = protocol(name)
    got = trecqr.evaluate(qrels, run19, list(p.measures), **_kw(p)).aggregate()
    for m, v in got.items():
        assert v == pytest.approx(want[m], abs=1e-12), m


def test_presets_carry_the_retrieval_settings(tmp_path):
    c19, cg, cqe = preset("cast2019"), preset("chatty-goose-cast2019"), preset("cqe-cast2019")
    assert (c19.depth, c19.rel_threshold, c19.complete, c19.protocol) == (100, 1, False,
                                                                           "cast2019")
    assert (cg.bm25_k1, cg.bm25_b, cg.depth, cg.complete) == (0.82, 0.68, 1000, True)
    assert (cqe.rel_threshold, cqe.depth, cqe.complete) == (2, 1000, True)
    assert (preset("llm4cs-cast2021").rel_threshold, preset("cast2021").rel_threshold) == (1, 2)
    assert preset("llm4cs-cast2020").rel_threshold == 2
    for name in ("cast2019", "llm4cs-cast2019", "chatty-goose-cast2019", "cqe-cast2019"):
        p, proto = preset(name), protocol(preset(name).protocol)
        assert (p.depth, p.rel_threshold, p.complete) == (proto.depth, proto.rel_threshold,
                                                          proto.complete)
        assert (p.evaluated_turns, p.total_turns, p.qrels_pairs) == (173, 479, 29350)
    qrels = data_path("cast2019", QRELS)
    assert len(qrels.read_text().splitlines()) == 29350
    # cqr --preset: the preset's depth, k1/b and threshold reach the runs and the scores
    from trecqr.workflows.cqr import cqr

    for name, depth, k1 in (("cast2019", 100, 0.9), ("chatty-goose-cast2019", 1000, 0.82)):
        rep = cqr(FIX / "qrels.txt", FIX / "topics-manual.tsv", collection=FIX / "collection.jsonl",
                  preset=name, runs_dir=tmp_path / name)
        assert (rep.depth, rep.k1, rep.rel_threshold) == (depth, k1, 1)
