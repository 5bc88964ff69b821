"""sim_ret, sim_ret+ and sim_ret++ on a real collection: the TREC Session 2013 result
titles and snippets (one passage per clueweb12 id: title + " " + snippet of its first
occurrence in the XML), indexed with the embedded BM25 (k1=0.9, b=0.4)."""

from __future__ import annotations

import json

import pytest
from conftest import data_path, run_cli

from trecqr.adapters.sessions import read_trec_session, read_trec_session_details
from trecqr.generative.retrieval_sim import (
    MEASURES,
    combsum,
    fuse,
    next_half,
    ranking,
    rm3_query,
    rrf,
    sim_ret,
    sim_ret_plus,
    sim_ret_plus_plus,
)
from trecqr.retrieval.bm25 import analyze, build_index, load_index

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
    assert (manifest["documents"], manifest["terms"]) == (2739, 14559)  # distinct index terms (bm25s adds "" to its vocab)
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
    assert ranking(index, g, 1) == [("clueweb12-0913wb-55-19969", pytest.approx(11.018366813))]
    assert ranking(index, t, 1) == [("clueweb12-1614wb-89-18810", pytest.approx(6.587801933))]
    for m in MEASURES:
        assert sim_ret(g, t, index, measure=m)["value"] == 0.0


def test_shared_terms_between_and_params(index):
    r = sim_ret("civil war", "US civil war causes", index)
    assert 0 < r["value"] < 1
    assert r["value"] == pytest.approx(0.9200694510999998, abs=1e-12)
    assert r == {"value": r["value"], "variant": "sim_ret", "measure": "rbo", "k": 10, "p": 0.9,
                 "retriever": "bm25", "k1": 0.9, "b": 0.4, "generated_hits": 10,
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
    assert w["scooter"] == pytest.approx(0.33049752035435676, abs=1e-9)
    assert w["brand"] == pytest.approx(0.2748062232430062, abs=1e-9)
    # original weight 1: the query model alone
    assert rm3_query(index, "scooter brands reliable", original_weight=1.0) == pytest.approx(
        {"scooter": 1 / 3, "brand": 1 / 3, "reliabl": 1 / 3})
    assert len(rm3_query(index, "scooter brands reliable", fb_terms=3)) <= 6


def test_sim_ret_plus_real_session(index, scooter):
    want = {"rbo": 0.6352120274142856, "jaccard": 2 / 3, "overlap": 0.8}
    for m, v in want.items():
        r = sim_ret_plus(scooter[0], scooter[1], index, measure=m)
        assert 0 <= r["value"] <= 1
        assert r["value"] == pytest.approx(v, abs=1e-9)
        assert (r["variant"], r["fb_docs"], r["fb_terms"], r["original_weight"],
                r["expansion"]) == ("sim_ret+", 10, 10, 0.5, "rm3")
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

    from trecqr.generative.gen import command, score_pairs

    inst, _agg, params = score_pairs(["civil war", "scooter brands"],
                                    ["US civil war causes", "scooter brands reliable"],
                                    ["per"], index=index, sim_ret=True)
    assert inst["sim_ret"] == pytest.approx([0.9200694510999998, 0.49249426969285715])
    assert inst["sim_ret+"] == pytest.approx([0.9278072601785714, 0.6352120274142856])
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
    assert out["metrics"]["sim_ret+"] == pytest.approx((civil_plus + 0.8) / 2)
    assert out["direction"]["sim_ret"] == "higher"
