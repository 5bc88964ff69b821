"""sim_ret, sim_ret+ and sim_ret++ on a Lucene index, and RM3 against Anserini's own.

The collection is the real one of tests/generative/test_retrieval_sim.py (TREC Session 2013
result titles and snippets, 2,739 passages), indexed by Lucene (Pyserini 0.22.1) with document
vectors, and the queries are the 465 distinct queries of the Session 2013 sessions."""

from __future__ import annotations

import json

import pytest
from conftest import data_path, run_cli

from trecqr.datasets.sessions import logs as S
from trecqr.generative import retrieval_sim as rs
from trecqr.generative import rm3 as R
from trecqr.generative.rankers import Ranker
from trecqr.retrieval import java_runtime, lucene

XML = data_path("sessions", "sessiontrack2013.xml.gz")
RM3 = {"fb_docs": 10, "fb_terms": 10, "original_weight": 0.5, "filter_terms": True}


@pytest.fixture(scope="module")
def sess13(tmp_path_factory):
    """(collection file, Lucene index with document vectors, one without)."""
    tmp = tmp_path_factory.mktemp("sess13-lucene")
    coll = tmp / "passages.jsonl"
    assert S.write_results_collection(XML, coll) == 2739
    manifest = lucene.build_index(coll, tmp / "luc", store_docvectors=True, show_progress=False)
    assert manifest["indexed"] == 2736  # Anserini skips the 3 passages with blank text
    lucene.build_index(coll, tmp / "luc-plain", show_progress=False)
    return coll, tmp / "luc", tmp / "luc-plain"


@pytest.fixture(scope="module")
def queries():
    qs = sorted({q for s in S.read_trec_session(XML) for q in s.queries})
    assert len(qs) == 465
    return qs


def test_rm3_steps_equal_anserini_rm3_reranker(sess13, queries):
    """trecqr's RM3 (trecqr.generative.rm3), given Lucene's analysis, document frequencies and
    first-stage ranking, gives Anserini's Rm3Reranker expansion term for term on every query:
    the same feedback terms, weights equal to float32 precision."""
    coll, luc, _ = sess13
    ranker = Ranker(luc)
    searcher = ranker.index.handle[0]
    autoclass, _ = java_runtime.jvm()
    analyzer_utils = autoclass("io.anserini.analysis.AnalyzerUtils")
    term = autoclass("org.apache.lucene.index.Term")
    reader = searcher.reader

    def analyze(text):
        return list(analyzer_utils.analyze(searcher.analyzer, text).toArray())

    def df(t):
        return reader.docFreq(term("contents", t))

    texts = {r["id"]: r["contents"] for r in map(json.loads, coll.open(encoding="utf-8"))}
    n_docs = reader.numDocs()
    assert n_docs == 2736
    worst, expanded = 0.0, 0
    for q in queries:
        first = ranker.rank(q, R.RERANK_CUTOFF)
        rm1 = R.relevance_model(R.feedback_passages(first, RM3["fb_docs"]), texts, analyze, df,
                                n_docs, fb_terms=RM3["fb_terms"])
        ours = R.interpolate(R.query_model(analyze(q)), rm1, RM3["original_weight"])
        theirs = lucene.feedback_terms(ranker.index.handle, q, **RM3)
        assert set(ours) == set(theirs), q
        worst = max([worst] + [abs(ours[t] - theirs[t]) for t in ours])
        expanded += len(ours) > len(set(analyze(q)))
    assert worst < 1e-6
    assert expanded >= 450  # nearly every query gains feedback terms


def test_lucene_rm3_run_is_pyseriniss(sess13):
    """search(rm3=..., pyserini_scores=True) is what Pyserini's LuceneSearcher with set_rm3
    returns; the default run has the same passages with Lucene's own scores."""
    from pyserini.search.lucene import LuceneSearcher  # slow import (torch): only here

    _, luc, _ = sess13
    topics = {"1": "scooter brands reliable", "2": "US civil war causes",
              "3": "JP Morgan Chase data centres vs google"}
    searcher = LuceneSearcher(str(luc))
    searcher.set_bm25(0.9, 0.4)
    searcher.set_rm3(10, 10, 0.5)
    ours = lucene.search(luc, topics, 10, rm3=RM3, pyserini_scores=True, show_progress=False)
    exact = lucene.search(luc, topics, 10, rm3=RM3, show_progress=False)
    rows = list(zip(ours.qid.to_pylist(), ours.docno.to_pylist(), ours.score.tolist()))
    for qid, q in topics.items():
        want = [(h.docid, h.score) for h in searcher.search(q, 10)]
        got = [(d, s) for x, d, s in rows if x == qid]
        assert [d for d, _ in got] == [d for d, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
        mine = [d for x, d in zip(exact.qid.to_pylist(), exact.docno.to_pylist()) if x == qid]
        assert len(mine) == 10 and len(set(mine) & {d for d, _ in want}) >= 9
    # an expanded run differs from the plain BM25 run
    plain = lucene.search(luc, topics, 10, show_progress=False)
    assert plain.docno.to_pylist() != exact.docno.to_pylist()


def test_sim_ret_family_on_a_lucene_index(sess13):
    """The three similarities on a Lucene index are the overlaps of Lucene's own runs."""
    _, luc, _ = sess13
    ranker = Ranker(luc)
    gen, target = "scooter brands", "scooter brands reliable"

    def top(q, k=10, **kw):
        run = lucene.search(luc, {"q": q}, k, show_progress=False, **kw)
        return run.docno.to_pylist()

    r = rs.sim_ret(gen, target, ranker)
    assert r["value"] == rs.compare(top(gen), top(target))
    assert (r["backend"], r["k1"], r["b"]) == ("lucene", 0.9, 0.4)
    assert r["retriever"].startswith("BM25 k1=0.9 b=0.4 (Lucene")
    plus = rs.sim_ret_plus(gen, target, ranker)
    assert plus["value"] == rs.compare(top(gen), top(target, rm3=RM3))
    assert plus["expanded_query"] == lucene.feedback_terms(ranker.index.handle, target, **RM3)
    assert 0 < plus["value"] < 1 and plus["value"] != r["value"]
    refs = ["scooter brands reliable", "scooter", "scooter cheap", "scooter review"]
    pp = rs.sim_ret_plus_plus(gen, refs, ranker)
    fused = rs.fuse([[(d, 0.0) for d in top(q, 100)] for q in refs], "rrf", 10)
    assert pp["value"] == rs.compare(top(gen), [d for d, _ in fused])


def test_gen_and_suggest_cli_on_lucene(sess13, tmp_path):
    _, luc, plain = sess13
    pred, ref = tmp_path / "pred.tsv", tmp_path / "ref.tsv"
    pred.write_text("a\tscooter brands\nb\tcivil war\n", encoding="utf-8")
    ref.write_text("a\tscooter brands reliable\nb\tUS civil war causes\n", encoding="utf-8")
    res = run_cli(["gen", pred, ref, "--metric", "per", "--sim-ret", "--index", luc,
                   "--format", "json", "--rm3-fb-terms", "5"])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    ranker = Ranker(luc)
    want = [rs.sim_ret_plus(g, t, ranker, fb_terms=5)["value"]
            for g, t in (("scooter brands", "scooter brands reliable"),
                         ("civil war", "US civil war causes"))]
    assert out["metrics"]["sim_ret+"] == pytest.approx(sum(want) / 2, abs=1e-12)
    p = out["parameters"]
    assert (p["sim_ret_backend"], p["rm3_fb_terms"], p["rm3_fb_docs"]) == ("lucene", 5, 10)
    assert p["rm3"] == "Anserini's Rm3Reranker (run by Anserini)"
    # without document vectors RM3 cannot run: one line, exit 2
    res = run_cli(["gen", pred, ref, "--metric", "per", "--sim-ret", "--index", plain])
    assert res.exit_code == 2
    assert "needs stored document vectors" in res.stderr and "--store-docvectors" in res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    # sim_ret alone needs no document vectors
    assert rs.sim_ret("civil war", "US civil war causes", plain)["value"] > 0


def test_bm25s_analyzer_is_lucenes_on_real_texts(sess13):
    """trecqr's Analyzer (trecqr.retrieval.analysis) gives Anserini's DefaultEnglishAnalyzer's
    terms, token for token, on every Session 2013 passage, every QReCC demo passage and every
    question and rewrite of QReCC's sampled dev turns."""
    from pathlib import Path

    from trecqr.datasets.rewrites.files import _rewrite_value
    from trecqr.retrieval.analysis import Analyzer

    coll, luc, _ = sess13
    searcher = lucene.load_index(luc)[0]
    autoclass, _ = java_runtime.jvm()
    analyzer_utils = autoclass("io.anserini.analysis.AnalyzerUtils")
    demo = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo" / "collection.jsonl"
    texts = [r["contents"] for f in (coll, demo)
             for r in map(json.loads, f.open(encoding="utf-8"))]
    qrecc = data_path("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl")
    turns = [json.loads(line) for line in open(qrecc, encoding="utf-8")]
    texts += [_rewrite_value(t[f], f, 0) for t in turns
              for f in ("Question", "Truth_rewrite", "GPT_rewrite")]
    assert len(texts) == 2739 + 996 + 3 * 2000 and all(isinstance(t, str) for t in texts)
    ours = Analyzer()
    differ = [t for t in texts
              if ours(t) != list(analyzer_utils.analyze(searcher.analyzer, t).toArray())]
    assert differ == []
    searcher.close()


def test_suggest_on_a_lucene_index_equals_direct_calls(sess13, tmp_path):
    """trecqr suggest --sim-ret on a Lucene index: each instance's sim_ret, sim_ret+ (RM3 with
    --rm3-fb-docs 5) and sim_ret++ (RRF of the session's next half) is what retrieval_sim gives
    on the same index."""
    _, luc, _ = sess13
    gen = {"2_2": "scooter brands", "2_5": "cheap scooter reviews", "1_2": "civil war"}
    path = tmp_path / "gen.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in gen.items()))
    per = tmp_path / "per.jsonl"
    res = run_cli(["suggest", "trec-session", XML, "--generated", path, "--metric", "per",
                   "--sim-ret", "--index", luc, "--rm3-fb-docs", "5", "--per-instance", per,
                   "--format", "json"])
    assert res.exit_code == 0, res.stderr
    rows = {r["id"]: r for r in map(json.loads, per.read_text().splitlines())}
    sessions = {s.sid: s.queries for s in S.read_trec_session(XML)}
    ranker = Ranker(luc)
    for iid, g in gen.items():
        sid, pos = iid.split("_")
        queries, t = sessions[sid], int(pos) - 1
        assert rows[iid]["sim_ret"] == rs.sim_ret(g, queries[t], ranker)["value"]
        assert rows[iid]["sim_ret+"] == rs.sim_ret_plus(g, queries[t], ranker, fb_docs=5)["value"]
        assert rows[iid]["sim_ret++"] == rs.sim_ret_plus_plus(
            g, rs.next_half(queries, t), ranker)["value"]
    assert rows["2_2"]["sim_ret++"] != rows["2_2"]["sim_ret"]
    p = json.loads(res.stdout)["parameters"]
    assert (p["sim_ret_backend"], p["rm3_fb_docs"], p["sim_ret++_fusion"]) == ("lucene", 5, "rrf")


def test_bm25s_rm3_agrees_with_anserini_on_its_own_index(sess13, queries, tmp_path):
    """The whole sim_ret+ expansion on a bm25s index of the same collection (its own analysis,
    BM25 and first stage) against Anserini's on the Lucene index: measured 442 of 465 queries
    with the same feedback terms (the rest: near-tied first-stage passages ordered apart by
    Lucene's one-byte document lengths), median largest weight difference 5e-5."""
    import statistics

    from trecqr.retrieval.bm25 import build_index

    coll, luc, _ = sess13
    build_index(coll, tmp_path / "bm25", show_progress=False)
    ours = Ranker(tmp_path / "bm25").expansions(queries)
    theirs = Ranker(luc).expansions(queries)
    same = [q for q in queries if set(ours[q]) == set(theirs[q])]
    assert len(same) >= 0.94 * len(queries)
    gaps = [max(abs(ours[q][t] - theirs[q][t]) for t in ours[q]) for q in same if ours[q]]
    assert statistics.median(gaps) < 1e-4
    scooter = "scooter brands reliable"
    assert list(ours[scooter]) == list(theirs[scooter]) == [
        "scooter", "brand", "reliabl", "store", "review", "classifi", "magazin", "akola", "bike",
        "trivandrum"]
