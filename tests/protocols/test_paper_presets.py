"""Paper presets: each records its turn policy, dense and query settings and its source.

Settings read from the papers' repositories at the commits named (trecqr/datasets/
paper_protocols.py); data: fixtures/qrecc-demo for the BM25 query cut.
"""

from __future__ import annotations

from conftest import ROOT

from trecqr.protocols.presets import preset, preset_names, protocol, protocol_names
from trecqr.protocols.query_settings import cut_query_words, dense_index_params
from trecqr.datasets.topics import Topics
from trecqr.retrieval.collections import _join

PAPERS = {  # name: (missing, min_results, query_max_len, passage_max_len, bm25_query_tokens)
    "convsearch-r1-qrecc": ("drop", None, 512, 384, 512),
    "convsearch-r1-topiocqa": ("drop", None, 512, 384, 512),
    "convgqr-qrecc": ("raw", None, 64, 384, None),
    "convgqr-topiocqa": ("raw", None, 64, 384, None),
    "retpo-qrecc": ("raw", None, 128, 384, None),
    "retpo-topiocqa": ("raw", 100, 128, 384, None),
    "chiq-qrecc": ("raw", None, 32, 384, 512),
    "infocqr-qrecc": ("empty", None, 384, 384, None),
    "adacqr-qrecc": ("human", None, 512, 384, None),
    "llm4cs-cast2019": ("raw", None, 64, None, None),
    "cast2019": ("raw", None, 64, 384, None),
}


def test_each_paper_preset_records_its_settings_and_source():
    for name, (missing, min_results, qlen, plen, cut) in PAPERS.items():
        p = preset(name)
        assert (p.missing, p.min_results, p.query_max_len, p.passage_max_len,
                p.bm25_query_tokens) == (missing, min_results, qlen, plen, cut), name
        assert " @ " in p.source and p.protocol in protocol_names(), name
        assert protocol(p.protocol).depth in (p.depth, None)
    assert set(PAPERS) <= set(preset_names())
    q, t = preset("convsearch-r1-qrecc"), preset("convsearch-r1-topiocqa")
    assert (q.bm25_k1, q.bm25_b, t.bm25_k1, t.bm25_b) == (0.82, 0.68, 0.9, 0.4)
    assert (q.evaluated_turns, t.evaluated_turns) == (8209, 2514)


def test_bm25_query_cut_is_the_papers_split_on_one_space():
    long = " ".join(f"w{i}" for i in range(600))
    topics = Topics(["a", "b", "c"], [long, "short query", "two  spaces " + long])
    cut, n = cut_query_words(topics, 512)
    assert n == 2
    assert cut.queries[0] == " ".join(long.split(" ")[:512]) and len(cut.queries[0].split()) == 512
    assert cut.queries[1] == "short query"
    # "two  spaces": the empty string between the two spaces is a token, as in the papers
    assert cut.queries[2] == " ".join(("two  spaces " + long).split(" ")[:512])
    assert len(cut.queries[2].split()) == 511
    assert cut_query_words(topics, None) == (topics, 0)


def test_dense_lengths_and_the_topiocqa_title_join():
    assert dense_index_params(preset("convsearch-r1-qrecc")) == {"max_seq_length": 384}
    assert dense_index_params(preset("convgqr-qrecc"), "ance") == {"max_seq_length": 384,
                                                                   "query_max_length": 64}
    assert dense_index_params(preset("qrecc-test")) == {}
    # "Title [SEP] Section" is indexed as the papers join it: one space each side
    assert _join("Ana Ivanovic [SEP] Early life", "Ivanovic was born") == \
        "Ana Ivanovic Early life Ivanovic was born"
    assert _join("Title", "text") == "Title text" and _join("", "text") == "text"


def test_cqr_preset_applies_the_query_cut(tmp_path):
    from trecqr.workflows.cqr import cqr

    demo = ROOT / "fixtures" / "qrecc-demo"
    lines = (demo / "topics-gpt.tsv").read_text().splitlines()[:20]
    padded = tmp_path / "long.tsv"  # a long "reasoning" tail after each rewrite
    padded.write_text("".join(f"{ln} {' '.join(['filler'] * 600)}\n" for ln in lines))
    qrels = tmp_path / "q.txt"
    keep = {ln.split("\t")[0] for ln in lines}
    qrels.write_text("".join(ln + "\n" for ln in (demo / "qrels.txt").read_text().splitlines()
                             if ln.split()[0] in keep))
    rep = cqr(qrels, padded, collection=demo / "collection.jsonl", preset="chiq-qrecc")
    assert rep.rows[0].notes == ["BM25 queries cut at 512 tokens (preset chiq-qrecc): 20 cut"]
    assert (rep.k1, rep.b, rep.depth) == (0.82, 0.68, 100)
