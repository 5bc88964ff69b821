"""sim_ret, sim_ret+ and sim_ret++ on a real collection: the TREC Session 2013 result
titles and snippets (one passage per clueweb12 id: title + " " + snippet of its first
occurrence in the XML), indexed with the embedded BM25 (k1=0.9, b=0.4)."""

from __future__ import annotations

import json

import pytest
from conftest import data_path, run_cli

from trecqr.datasets.sessions.logs import read_trec_session, read_trec_session_details
from trecqr.generative.retrieval_sim import (
    MEASURES,
    combsum,
    fuse,
    next_half,
    ranking,
    ranker,
    rrf,
    sim_ret,
    sim_ret_plus,
    sim_ret_plus_plus,
)
from trecqr.generative import rm3 as R
from trecqr.retrieval.bm25 import analyze, build_index, load_index


def rm3_query(index, query: str, *, fb_docs: int = R.FB_DOCS, fb_terms: int = R.FB_TERMS,
              original_weight: float = R.ORIGINAL_WEIGHT, filter_terms: bool = R.FILTER_TERMS,
              texts=None) -> dict:
    """{term: weight} of the RM3-expanded query (see :mod:`.rm3`), heaviest first; weights
    sum to 1, or to original_weight when no feedback term passes the filters (as Anserini).
    texts: {docid: text} of the feedback passages on a bm25s index (default: read
    from the collection file the index was built from)."""
    r = ranker(index)
    if texts is not None:
        r.set_texts(texts)
    return r.expansions([query], fb_docs=fb_docs, fb_terms=fb_terms,
                        original_weight=original_weight, filter_terms=filter_terms)[query]


XML = ("sessions", "sessiontrack2013.xml.gz")
_DIRS = {}


def index_dir_of(index):
    return _DIRS[id(index)]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    details = read_trec_session_details(data_path(*XML))
    n_results = sum(len(it["results"]) for s in details for it in s["interactions"])
    tmp = tmp_path_factory.mktemp("sess13")
    coll = tmp / "passages.jsonl"
    res = run_cli(["convert", "sessions", "trec-session", data_path(*XML), "--results-out", coll])
    assert res.exit_code == 0 and "results: 2739 passages" in res.stderr
    passages = [json.loads(line) for line in coll.read_text(encoding="utf-8").splitlines()]
    assert (n_results, len(passages)) == (4449, 2739)
    assert passages[0]["id"].startswith("clueweb12-") and passages[0]["contents"]
    manifest = build_index(coll, tmp / "idx", show_progress=False)
    # distinct index terms (bm25s adds "" to its vocab)
    assert (manifest["documents"], manifest["terms"]) == (2739, 14558)
    idx = load_index(tmp / "idx")
    _DIRS[id(idx)] = str(tmp / "idx")
    return idx


@pytest.fixture(scope="module")
def scooter():
    s = read_trec_session(data_path(*XML))[1]
    assert s.sid == "2"
    assert s.queries == ["scooter brands", "scooter brands reliable", "scooter", "scooter cheap",
                         "scooter review", "scooter price", "scooter stores",
                         "where to buy scooters"]
    return s.queries


def test_self_is_one(index):
    for m in MEASURES:
        r = sim_ret("US civil war causes", "US civil war causes", index, measure=m)
        assert r["value"] == 1.0
        assert r["generated_hits"] == r["reference_hits"] == 10


def test_unrelated_is_zero(index):
    g, t = "heart attack causes", "scooter brands"
    assert not set(analyze(g)) & set(analyze(t))
    assert ranking(index, g, 1) == [("clueweb12-0913wb-55-19969", pytest.approx(11.019164085))]
    assert ranking(index, t, 1) == [("clueweb12-1614wb-89-18810", pytest.approx(6.589101791))]
    for m in MEASURES:
        assert sim_ret(g, t, index, measure=m)["value"] == 0.0


def test_shared_terms_between_and_params(index):
    r = sim_ret("civil war", "US civil war causes", index)
    assert 0 < r["value"] < 1
    # "US" is the term "us" (Lucene's Porter stemmer leaves words of 1-2 letters alone)
    assert r["value"] == pytest.approx(0.8918742565642857, abs=1e-12)
    assert r == {"value": r["value"], "variant": "sim_ret", "measure": "rbo", "k": 10, "p": 0.9,
                 "retriever": "BM25 k1=0.9 b=0.4 (bm25s, Lucene-style English analysis)",
                 "backend": "bm25s", "k1": 0.9, "b": 0.4, "generated_hits": 10,
                 "reference_hits": 10}
    want = {"rbo": 0.49249426969285715, "jaccard": 7 / 13, "overlap": 0.7}
    for m, v in want.items():
        r = sim_ret("scooter brands", "scooter brands reliable", index, measure=m)
        assert r["value"] == pytest.approx(v, abs=1e-12)
        assert ("p" in r) == (m == "rbo")
    # deeper agreement weighs more as p grows? at least p is used and reported
    r5 = sim_ret("scooter brands", "scooter brands reliable", index, p=0.5)
    assert r5["p"] == 0.5 and r5["value"] != pytest.approx(0.49249426969285715)


def test_rm3_expansion(index):
    w = rm3_query(index, "scooter brands reliable")
    assert sum(w.values()) == pytest.approx(1.0)
    assert len(w) == 10  # 3 query terms, all among the 10 feedback terms
    assert list(w)[:3] == ["scooter", "brand", "reliabl"]
    # Anserini's RM3 on a Lucene index of the same collection gives the same ten terms in the
    # same order (scooter 0.32912, brand 0.27749: its BM25 differs a little, SmallFloat norms)
    assert list(w)[3:] == ["store", "review", "classifi", "magazin", "akola", "bike",
                           "trivandrum"]
    assert w["scooter"] == pytest.approx(0.3291535179217098, abs=1e-9)
    assert w["brand"] == pytest.approx(0.2774622860183026, abs=1e-9)
    # original weight 1: the query model alone
    assert rm3_query(index, "scooter brands reliable", original_weight=1.0) == pytest.approx(
        {"scooter": 1 / 3, "brand": 1 / 3, "reliabl": 1 / 3})
    assert len(rm3_query(index, "scooter brands reliable", fb_terms=3)) <= 6


def test_rm3_steps_worked_by_hand():
    """Anserini's RM3 steps (trecqr.generative.rm3) on two feedback passages, by hand.

    N = 20 passages; df: banana 2 (ratio 0.1, kept), "the" 3 (0.15 > 0.1, dropped).
    D1 "apple apple banana cherry the", score 2: kept apple 2, banana 1, cherry 1; pruned to
    fb_terms = 2 by tf, ties by term: apple 2, banana 1; |D1| = 3.
    D2 "banana banana banana date the", score 1: banana 3, date 1; |D2| = 4.
    RM1: apple 2/3*2 = 16/12, banana 1/3*2 + 3/4*1 = 17/12, date 1/4: pruned to banana, apple,
    scaled: banana 17/33, apple 16/33. Query "apple pie": Q = apple 1/2, pie 1/2. RM3 with
    original weight 1/2: apple 1/4 + 8/33, banana 17/66, pie 1/4."""
    from trecqr.generative import rm3 as R

    texts = {"D1": "apple apple banana cherry the", "D2": "banana banana banana date the"}
    df = {"apple": 1, "banana": 2, "cherry": 1, "date": 1, "the": 3}.get
    # first stage: ties by docid ascending (Anserini), cut at fb_docs
    first = [("D3", 0.5), ("D2", 1.0), ("D0", 1.0), ("D1", 2.0)]
    assert R.feedback_passages(first, 3) == [("D1", 2.0), ("D0", 1.0), ("D2", 1.0)]
    rm1 = R.relevance_model([("D1", 2.0), ("D2", 1.0)], texts, str.split, df, 20, fb_terms=2)
    assert rm1 == pytest.approx({"banana": 17 / 33, "apple": 16 / 33}, abs=1e-15)
    rm3 = R.interpolate(R.query_model(["apple", "pie"]), rm1, 0.5)
    assert list(rm3) == ["apple", "banana", "pie"]
    assert rm3 == pytest.approx({"apple": 0.25 + 8 / 33, "banana": 17 / 66, "pie": 0.25},
                                abs=1e-15)
    # fb_terms 3: |D1| = 4 (apple 2, banana 1, cherry 1), |D2| = 4; RM1 banana 1/4*2 + 3/4 =
    # 1.25, apple 2/4*2 = 1, cherry 0.5, date 0.25 -> the top 3 over their sum 2.75
    rm1 = R.relevance_model([("D1", 2.0), ("D2", 1.0)], texts, str.split, df, 20, fb_terms=3)
    assert rm1 == pytest.approx({"banana": 1.25 / 2.75, "apple": 1 / 2.75,
                                 "cherry": 0.5 / 2.75}, abs=1e-15)
    # Anserini's term filter: 2..20 characters, [a-z0-9] only unless filter_terms is off
    assert [R._term_ok(t, True) for t in ("a", "ab", "x" * 20, "x" * 21, "café", "u.s")] == [
        False, True, True, False, False, False]
    assert R._term_ok("café", False)


def test_sim_ret_plus_real_session(index, scooter):
    want = {"rbo": 0.6283479785142857, "jaccard": 7 / 13, "overlap": 0.7}
    for m, v in want.items():
        r = sim_ret_plus(scooter[0], scooter[1], index, measure=m)
        assert 0 <= r["value"] <= 1
        assert r["value"] == pytest.approx(v, abs=1e-9)
        assert (r["variant"], r["fb_docs"], r["fb_terms"], r["original_weight"],
                r["expansion"]) == ("sim_ret+", 10, 10, 0.5, "rm3 (Anserini's)")
    assert sim_ret_plus("civil war", "US civil war causes", index)["value"] == pytest.approx(
        0.9278072601785714, abs=1e-9)


def test_sim_ret_plus_plus_real_session(index, scooter):
    refs = next_half(scooter, 1)
    assert refs == ["scooter brands reliable", "scooter", "scooter cheap", "scooter review"]
    want = {"rbo": 0.22737998687142852, "jaccard": 1 / 9, "overlap": 0.2}
    for m, v in want.items():
        r = sim_ret_plus_plus(scooter[0], refs, index, measure=m)
        assert 0 <= r["value"] <= 1
        assert r["value"] == pytest.approx(v, abs=1e-9)
        assert (r["fusion"], r["rrf_k"], r["depth"], r["reference_queries"]) == (
            "rrf", 60, 100, refs)
    r = sim_ret_plus_plus(scooter[0], refs, index, fusion="combsum")
    assert r["value"] == pytest.approx(0.17028424343571427, abs=1e-9) and "rrf_k" not in r
    # one reference query, the target: sim_ret++ is sim_ret
    assert sim_ret_plus_plus(scooter[0], [scooter[1]], index)["value"] == pytest.approx(
        sim_ret(scooter[0], scooter[1], index)["value"])


def test_next_half():
    q = list("abcdefgh")
    assert next_half(q, 1) == list("bcde")  # ceil(7/2) = 4
    assert next_half(q, 6) == list("g")
    assert next_half(q, 7) == list("h")
    assert next_half(q, 0) == list("abcd")
    with pytest.raises(ValueError):
        next_half(q, 8)


def test_rrf_hand_checked():
    s = rrf([["a", "b", "c"], ["b", "c", "d"]])
    assert s == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63 + 1 / 62,
                               "d": 1 / 63})
    assert [d for d, _ in fuse([["a", "b", "c"], ["b", "c", "d"]])] == ["b", "c", "a", "d"]
    assert [d for d, _ in fuse([["a", "b", "c"], ["b", "c", "d"]], k=2)] == ["b", "c"]
    # equal fused scores: docid descending (trec_eval's order)
    assert [d for d, _ in fuse([["x"], ["y"]])] == ["y", "x"]
    assert rrf([["a"]], k_rrf=1) == {"a": 0.5}


def test_combsum_hand_checked():
    runs = [[("a", 4.0), ("b", 2.0), ("c", 0.0)], [("c", 5.0), ("a", 0.0)]]
    assert combsum(runs) == pytest.approx({"a": 1.0, "b": 0.5, "c": 1.0})
    assert fuse(runs, "combsum") == [("c", 1.0), ("a", 1.0), ("b", 0.5)]
    assert combsum([[("a", 3.0), ("b", 3.0)]]) == {"a": 1.0, "b": 1.0}
    with pytest.raises(ValueError):
        fuse(runs, "combmnz")


def test_gen_command_sim_ret(index, tmp_path):
    from click.testing import CliRunner

    from trecqr.cli.generative import gen_command as command
    from trecqr.generative.gen import score_pairs

    inst, _agg, params = score_pairs(["civil war", "scooter brands"],
                                    ["US civil war causes", "scooter brands reliable"],
                                    ["per"], index=index, sim_ret=True)
    assert inst["sim_ret"] == pytest.approx([0.8918742565642857, 0.49249426969285715])
    assert inst["sim_ret+"] == pytest.approx([0.9278072601785714, 0.6283479785142857])
    assert (params["sim_ret_depth"], params["sim_ret_overlap"], params["sim_ret_rbo_p"]) == (
        10, "rbo", 0.9)
    pred, ref = tmp_path / "p.tsv", tmp_path / "r.tsv"
    pred.write_text("1\tcivil war\n2\tscooter brands\n")
    ref.write_text("1\tUS civil war causes\n2\tscooter brands reliable\n")
    res = CliRunner().invoke(command, [str(pred), str(ref), "--metric", "per", "--sim-ret",
                                       "--index", index_dir_of(index), "--overlap", "overlap",
                                       "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    civil = sim_ret("civil war", "US civil war causes", index, measure="overlap")["value"]
    civil_plus = sim_ret_plus("civil war", "US civil war causes", index,
                              measure="overlap")["value"]
    assert civil == pytest.approx(0.9)
    assert out["metrics"]["sim_ret"] == pytest.approx((civil + 0.7) / 2)
    assert out["metrics"]["sim_ret+"] == pytest.approx((civil_plus + 0.7) / 2)
    assert out["direction"]["sim_ret"] == "higher"


def test_expansions_read_only_the_feedback_passages(index, scooter, tmp_path):
    """Ranker.expansions: the RM3 of many targets at once reads, in one pass over the collection
    file, the texts of their feedback passages only, and equals the one-by-one expansion."""
    import shutil

    from pathlib import Path

    from trecqr.errors import InputError, UsageError
    from trecqr.generative.rankers import Ranker

    r = Ranker(index_dir_of(index))
    got = r.expansions(scooter)
    assert list(got) == scooter and got["scooter brands reliable"] == rm3_query(
        index, "scooter brands reliable")
    from trecqr.generative.rm3 import feedback_passages

    feedback = {d for q in scooter for d, _ in feedback_passages(ranking(index, q, 50), 10)}
    assert set(r._texts) == feedback and len(feedback) < 2739  # not the whole collection
    for q in scooter[:3]:
        assert Ranker(index_dir_of(index)).expansions([q])[q] == got[q]
    # the collection file is gone: RM3 cannot read the feedback passages
    moved = tmp_path / "idx"
    shutil.copytree(index_dir_of(index), moved)
    manifest = json.loads((moved / "trecqr-index.json").read_text())
    manifest_collection = manifest["collection"]
    manifest["collection"] = str(tmp_path / "gone.jsonl")
    (moved / "trecqr-index.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match="gone.jsonl: no such file$"):
        Ranker(moved).expansions(["scooter cheap"])
    # a collection file that lost a retrieved passage
    lost = tmp_path / "lost.jsonl"
    lost.write_text("".join(line + "\n" for line in Path(manifest_collection).read_text(
        encoding="utf-8").splitlines() if "clueweb12-1614wb-89-18810" not in line))
    manifest["collection"] = str(lost)
    (moved / "trecqr-index.json").write_text(json.dumps(manifest))
    with pytest.raises(UsageError, match="1 retrieved passages are not in its collection"):
        Ranker(moved).expansions(["scooter brands"])


def test_a_folder_is_loaded_once_and_the_ranking_cache_is_bounded(index, monkeypatch):
    from trecqr.generative import rankers
    from trecqr.generative import retrieval_sim as rs

    folder = index_dir_of(index)
    first = rs.ranker(folder)
    assert rs.ranker(folder) is first  # loops of sim_ret(g, t, folder) load the index once
    assert rs.ranker(rankers.Ranker(folder)) is not first
    monkeypatch.setattr(rankers, "CACHE_LIMIT", 3)
    r = rankers.Ranker(folder)
    r.prefetch(["scooter", "scooter brands"], 10)
    assert len(r._cache) == 2
    r.prefetch(["civil war", "heart attack"], 10)  # 4 > 3: the older two are forgotten
    assert sorted(r._cache) == ["civil war", "heart attack"]
    assert r.rank("scooter", 5) == rs.ranking(index, "scooter", 5)  # searched again
