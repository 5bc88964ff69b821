"""Backend dispatch, ir_datasets collections, dataset topics for search/cqr, and atomic index
folders, on the real QReCC demo collection and the real QReCC/CAsT dataset files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import trecqr
from conftest import data_path, run_cli
from trecqr.errors import InputError, UsageError
from trecqr.retrieval import backends, bm25
from trecqr.retrieval.collections import iter_collection
from trecqr.retrieval.indexdir import MANIFEST, atomic_index_dir, read_manifest

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
QRECC = ("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl")
C21_TOPICS = ("cast2021", "2021_manual_evaluation_topics_v1.0.json")


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    idx = tmp_path_factory.mktemp("bk") / "idx"
    bm25.build_index(DEMO / "collection.jsonl", idx, 0.82, 0.68, show_progress=False)
    return idx


@pytest.fixture(scope="module")
def demo_tsv(tmp_path_factory):
    """The demo collection as `id<TAB>text` (no header), as ir_datasets' TsvDocs reads it."""
    path = tmp_path_factory.mktemp("tsv") / "collection.tsv"
    with open(path, "w", encoding="utf-8") as out:
        for doc in iter_collection(DEMO / "collection.jsonl"):
            assert "\t" not in doc.text and "\n" not in doc.text
            out.write(f"{doc.docid}\t{doc.text}\n")
    return path


def test_dispatch_by_manifest(demo_index):
    m = read_manifest(demo_index)
    assert m["backend"] == "bm25s" and m["k1"] == 0.82 and m["documents"] == 996
    index = backends.load_index(demo_index)
    assert index.module is bm25
    assert index.describe() == "BM25 k1=0.82 b=0.68 (bm25s, Lucene-style English analysis)"
    topics = {"a": "who wrote the hundred years war", "b": "stan musial 1954"}
    via = backends.search(demo_index, topics, 10, show_progress=False)
    direct = bm25.search(demo_index, topics, 10, show_progress=False)
    assert via.qid.to_pylist() == direct.qid.to_pylist()
    assert via.docno.to_pylist() == direct.docno.to_pylist()
    assert via.score.tolist() == direct.score.tolist()
    assert via.qid.to_pylist().count("a") == 10
    assert via.qid.to_pylist().count("b") == 3  # only 3 passages share a term with it


def test_old_manifest_without_backend_key_is_bm25s(tmp_path):
    (tmp_path / MANIFEST).write_text(json.dumps({"format": "trecqr-bm25s", "k1": 1, "b": 0}))
    assert read_manifest(tmp_path)["backend"] == "bm25s"


def test_bare_lucene_folder_is_recognised(tmp_path):
    (tmp_path / "segments_3").write_bytes(b"")
    assert read_manifest(tmp_path) == {"backend": "lucene", "foreign": True}
    with pytest.raises(InputError, match="not a trecqr index"):
        read_manifest(tmp_path / "nothing")


def test_unknown_backend_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown retrieval backend 'bm26'"):
        backends.backend("bm26")


def test_interrupted_build_leaves_nothing_and_keeps_the_old_index(tmp_path, monkeypatch):
    idx = tmp_path / "idx"
    bm25.build_index(DEMO / "collection.jsonl", idx, show_progress=False)
    before = sorted(os.listdir(idx))

    def boom(*a, **k):
        raise KeyboardInterrupt

    import bm25s

    monkeypatch.setattr(bm25s.BM25, "save", boom)
    with pytest.raises(KeyboardInterrupt):
        bm25.build_index(DEMO / "collection.jsonl", idx, k1=1.5, show_progress=False)
    assert sorted(os.listdir(tmp_path)) == ["idx"]  # no temporary folder left behind
    assert sorted(os.listdir(idx)) == before and read_manifest(idx)["k1"] == 0.9
    with pytest.raises(KeyboardInterrupt):
        bm25.build_index(DEMO / "collection.jsonl", tmp_path / "new", show_progress=False)
    assert not (tmp_path / "new").exists()


def test_atomic_dir_refuses_a_foreign_folder_and_needs_a_manifest(tmp_path):
    (tmp_path / "keep").mkdir()
    (tmp_path / "keep" / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="exists and is not a trecqr index"):
        with atomic_index_dir(tmp_path / "keep"):
            pass
    with pytest.raises(RuntimeError, match="without writing its manifest"):
        with atomic_index_dir(tmp_path / "x") as tmp:
            Path(tmp, "data").write_text("half")
    assert sorted(os.listdir(tmp_path)) == ["keep"]


def test_irds_collection_indexes_like_the_file(tmp_path, demo_tsv, demo_index):
    """An ir_datasets dataset (TsvDocs over a local file, read by ir_datasets' own parser)
    gives the same index as the file itself, hence the same runs."""
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TsvDocs
    from ir_datasets.util.download import LocalDownload

    name = "trecqr-test/qrecc-demo"
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, Dataset(TsvDocs(LocalDownload(demo_tsv))))
    docs = list(iter_collection(f"irds:{name}"))
    assert len(docs) == 996 and docs[0].line == 1
    first = next(iter_collection(DEMO / "collection.jsonl"))
    assert (docs[0].docid, docs[0].text) == (first.docid, first.text)
    res = run_cli(["index", f"irds:{name}", "-o", tmp_path / "ix", "--k1", "0.82", "--b", "0.68",
                   "--quiet"])
    assert res.exit_code == 0, res.stderr
    assert read_manifest(tmp_path / "ix")["collection"] == f"irds:{name}"
    topics = DEMO / "topics-gpt.tsv"
    a = bm25.search(tmp_path / "ix", topics, 20, show_progress=False)
    b = bm25.search(demo_index, topics, 20, show_progress=False)
    assert a.docno.to_pylist() == b.docno.to_pylist() and a.score.tolist() == b.score.tolist()


def test_irds_collection_never_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path))
    with pytest.raises(UsageError) as err:
        next(iter_collection("irds:antique"))
    text = str(err.value)
    assert "trecqr never downloads" in text and "antique/collection.tsv" in text
    res = run_cli(["index", "irds:antique", "-o", tmp_path / "ix", "--quiet"])
    assert res.exit_code == 2 and "trecqr never downloads" in res.stderr
    assert not (tmp_path / "ix").exists()
    res = run_cli(["index", "irds:no-such-dataset", "-o", tmp_path / "ix", "--quiet"])
    assert res.exit_code == 2 and "no dataset 'no-such-dataset'" in res.stderr


def test_search_from_dataset_file_equals_search_from_topics_file(tmp_path, demo_index):
    """`search --dataset qrecc --query-field human` on the sampled dev file gives the run of
    the demo's human topics file on every turn the topics file holds."""
    res = run_cli(["search", demo_index, "-o", tmp_path / "ds.run", "--dataset", "qrecc",
                   "--dataset-file", data_path(*QRECC), "--query-field", "human", "--quiet"])
    assert res.exit_code == 0, res.stderr
    res = run_cli(["search", demo_index, DEMO / "topics-human.tsv", "-o", tmp_path / "t.run",
                   "--quiet"])
    assert res.exit_code == 0, res.stderr
    ds = trecqr.load_run(tmp_path / "ds.run")
    t = trecqr.load_run(tmp_path / "t.run")
    keep = set(t.qid.to_pylist())
    rows = [(q, d, s) for q, d, s in zip(ds.qid.to_pylist(), ds.docno.to_pylist(),
                                         ds.score.tolist()) if q in keep]
    assert sorted(rows) == sorted(zip(t.qid.to_pylist(), t.docno.to_pylist(), t.score.tolist()))
    assert len(rows) == len(t) == 59308
    assert len(set(ds.qid.to_pylist())) == 1999  # 2,000 turns, one without an indexed term
    human = trecqr.evaluate(DEMO / "qrels.txt", tmp_path / "ds.run", ["recip_rank"]).aggregate()
    assert round(human["recip_rank"], 4) == 0.8072


def test_search_with_rewrites_matched_to_dataset_turns(tmp_path, demo_index):
    """GPT rewrites given as a rewrites file against the dataset's turns = the gpt topics."""
    rw = tmp_path / "gpt.tsv"
    rw.write_text((DEMO / "topics-gpt.tsv").read_text(encoding="utf-8"), encoding="utf-8")
    res = run_cli(["search", demo_index, "-o", tmp_path / "rw.run", "--dataset", "qrecc",
                   "--dataset-file", data_path(*QRECC), "--rewrites", rw, "--quiet"])
    assert res.exit_code == 0, res.stderr
    gpt = trecqr.evaluate(DEMO / "qrels.txt", tmp_path / "rw.run", ["ndcg_cut.3"]).aggregate()
    assert round(gpt["ndcg_cut_3"], 4) == 0.7572


def test_search_cast_dataset_fields(tmp_path, demo_index):
    res = run_cli(["search", demo_index, "-o", tmp_path / "c.run", "--dataset", "cast",
                   "--dataset-file", data_path(*C21_TOPICS), "--query-field", "manual", "-k", "5",
                   "--quiet"])
    assert res.exit_code == 0, res.stderr
    qids = trecqr.load_run(tmp_path / "c.run").qid.to_pylist()
    assert qids[0] == "106_1" and len(set(qids)) == 239


def test_search_argument_errors(tmp_path, demo_index):
    res = run_cli(["search", demo_index, "-o", tmp_path / "x.run"])
    assert res.exit_code == 2 and "give a TOPICS file or --dataset" in res.stderr
    res = run_cli(["search", demo_index, "-o", tmp_path / "x.run", "--dataset", "qrecc"])
    assert res.exit_code == 2 and "--dataset needs --dataset-file" in res.stderr
    res = run_cli(["search", demo_index, DEMO / "topics-raw.tsv", "-o", tmp_path / "x.run",
                   "--k1", "1.2"])
    assert res.exit_code == 2 and "for Lucene indexes" in res.stderr
    res = run_cli(["search", demo_index, "-o", tmp_path / "x.run", "--dataset", "qrecc",
                   "--dataset-file", data_path(*QRECC), "--query-field", "nope"])
    assert res.exit_code == 2 and "unknown query field 'nope'" in res.stderr
    assert not (tmp_path / "x.run").exists()


def test_cqr_rows_from_dataset_query_fields(tmp_path, demo_index):
    """One cqr call: two dataset query fields and a rewrites file, one row each; numbers equal
    to search + eval of the same topics (tests/retrieval/test_demo_retrieval.py pins those)."""
    rw = tmp_path / "gpt.tsv"
    rw.write_text((DEMO / "topics-gpt.tsv").read_text(encoding="utf-8"), encoding="utf-8")
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--index", demo_index, "--dataset",
                   "qrecc", "--dataset-file", data_path(*QRECC), "--query-field", "raw",
                   "--query-field", "human", "--rewrites", rw, "--format", "json",
                   "--runs-dir", tmp_path / "runs", "--quiet"])
    assert res.exit_code == 0, res.stderr
    rep = json.loads(res.stdout)
    rows = {r["name"]: r for r in rep["rows"]}
    assert list(rows) == ["raw", "human", "gpt"]
    assert rep["backend"] == "bm25s" and rep["k1"] == 0.82
    assert round(rows["raw"]["scores"]["MRR"], 4) == 0.3830
    assert round(rows["human"]["scores"]["MRR"], 4) == 0.8072
    assert round(rows["gpt"]["scores"]["NDCG@3"], 4) == 0.7572
    assert rows["raw"]["coverage"]["evaluated"] == 927
    assert rows["raw"]["coverage"]["topics_without_gold"] == 1073
    assert rows["gpt"]["coverage"]["without_rewrite"] == 1073  # the demo's gpt file: gold turns
    for r in rows.values():
        assert r["scores"]["RR@3"] <= r["scores"]["MRR"]


def test_index_and_search_bad_input_is_one_line(tmp_path, demo_index):
    """Missing files and folders: one `name: what is wrong` line, exit 2, nothing written."""
    cases = [
        (["index", tmp_path / "nope.jsonl", "-o", tmp_path / "ix"],
         f"{tmp_path / 'nope.jsonl'}: no such collection file"),
        (["search", tmp_path / "nodir", DEMO / "topics-raw.tsv", "-o", tmp_path / "x.run"],
         f"{tmp_path / 'nodir'}: not a trecqr index"),
        (["search", demo_index, tmp_path / "none.tsv", "-o", tmp_path / "x.run"],
         f"{tmp_path / 'none.tsv'}: no such file"),
        (["search", demo_index, "-", "-o", tmp_path / "x.run"],
         "cannot tell the topics format of '-'"),
    ]
    (tmp_path / "afile").write_text("mine")
    cases.append((["index", DEMO / "collection.jsonl", "-o", tmp_path / "afile", "--quiet"],
                  "exists and is not a trecqr index; not overwriting it"))
    for args, message in cases:
        res = run_cli(args)
        assert res.exit_code == 2, args
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and message in lines[0], (args, res.stderr)
        assert "Traceback" not in res.stderr
    assert not (tmp_path / "x.run").exists() and not (tmp_path / "ix").exists()
    assert (tmp_path / "afile").read_text() == "mine"


def test_search_reads_topics_from_stdin(tmp_path, demo_index):
    text = (DEMO / "topics-raw.tsv").read_text(encoding="utf-8")
    res = run_cli(["search", demo_index, "-", "--topics-format", "tsv", "-o", tmp_path / "in.run",
                   "--quiet"], input=text)
    assert res.exit_code == 0, res.stderr
    res = run_cli(["search", demo_index, DEMO / "topics-raw.tsv", "-o", tmp_path / "f.run",
                   "--quiet"])
    assert (tmp_path / "in.run").read_bytes() == (tmp_path / "f.run").read_bytes()
    assert len((tmp_path / "f.run").read_text().splitlines()) == 58501


def test_cqr_missing_files_fail_before_indexing(tmp_path):
    base = ["cqr", "--collection", DEMO / "collection.jsonl", "--index", tmp_path / "ix"]
    for extra, bad in ((["--qrels", tmp_path / "q.txt", "--topics", DEMO / "topics-raw.tsv"],
                        tmp_path / "q.txt"),
                       (["--qrels", DEMO / "qrels.txt", "--topics", tmp_path / "t.tsv"],
                        tmp_path / "t.tsv"),
                       (["--qrels", DEMO / "qrels.txt", "--rewrites", tmp_path / "r.jsonl"],
                        tmp_path / "r.jsonl")):
        res = run_cli(base + extra)
        assert res.exit_code == 2 and res.stderr.strip() == f"{bad}: no such file"
        assert not (tmp_path / "ix").exists()
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--collection", tmp_path / "c.jsonl",
                   "--topics", DEMO / "topics-raw.tsv"])
    assert res.exit_code == 2 and res.stderr.strip() == (
        f"{tmp_path / 'c.jsonl'}: no such collection file (or give irds:<dataset id>)")


@pytest.mark.parametrize("backend", ["bm25s", "lucene", "dense"])
def test_collections_with_bom_and_crlf(tmp_path, backend):
    """A UTF-8 BOM and CRLF line ends (files saved on Windows) are read, by every backend; the
    Lucene backend converts such a JSONL file rather than handing Anserini the BOM."""
    jl = tmp_path / "c.jsonl"
    jl.write_bytes(b'\xef\xbb\xbf{"id": "a", "contents": "apple pie recipe"}\r\n'
                   b'{"id": "b", "contents": "banana bread"}\r\n')
    ts = tmp_path / "c.tsv"
    ts.write_bytes(b"\xef\xbb\xbfid\ttext\ttitle\r\nc\tcherry tart\tFruit [SEP] Tarts\r\n")
    for coll, want in ((jl, ["a"]), (ts, ["c"])):
        idx = tmp_path / f"ix-{coll.suffix}"
        res = run_cli(["index", coll, "-o", idx, "--backend", backend, "--quiet"])
        assert res.exit_code == 0, res.stderr
        assert read_manifest(idx)["documents"] == (2 if coll == jl else 1)
        query = "apple recipe" if coll == jl else "cherry tarts"
        run = backends.search(idx, {"q": query}, 1, show_progress=False)
        assert run.docno.to_pylist() == want


def test_search_says_which_candidate_it_takes(tmp_path, demo_index):
    """A rewrites file with several candidates per turn (here GPT's, then the human rewrite,
    as a list): search says so on stderr and searches candidate 1, the GPT topics' run."""
    import json

    gpt = dict(line.split("\t", 1) for line in
               (DEMO / "topics-gpt.tsv").read_text(encoding="utf-8").splitlines())
    human = dict(line.split("\t", 1) for line in
                 (DEMO / "topics-human.tsv").read_text(encoding="utf-8").splitlines())
    rw = tmp_path / "two.jsonl"
    rw.write_text("".join(json.dumps({"id": q, "rewrite": [t, human[q]]}) + "\n"
                          for q, t in gpt.items()), encoding="utf-8")
    res = run_cli(["search", demo_index, "-o", tmp_path / "rw.run", "--dataset", "qrecc",
                   "--dataset-file", data_path(*QRECC), "--rewrites", rw, "--quiet"])
    assert res.exit_code == 0, res.stderr
    same = sum(gpt[q] == human[q] for q in gpt)
    note = [ln for ln in res.stderr.splitlines() if "candidate 1 searched" in ln]
    assert note == [f"trecqr: {rw}: {len(gpt)} turns x 2 candidates (rewrite); {2 * len(gpt)} "
                    "candidates, "
                    f"{2 * len(gpt) - same} distinct within their turn "
                    f"({(2 * len(gpt) - same) / len(gpt):.2f} per turn); {same} turns with all "
                    f"candidates identical, {len(gpt) - same} with several distinct (distinct "
                    f"per turn: {same} with 1, {len(gpt) - same} with 2); written as "
                    f"{2 * len(gpt)} strings; candidate 1 searched "
                    "for every turn (trecqr cqr --candidates each, fuse, mean, sc or oracle uses "
                    "the others)"]
    got = trecqr.evaluate(DEMO / "qrels.txt", tmp_path / "rw.run", ["ndcg_cut.3"]).aggregate()
    assert round(got["ndcg_cut_3"], 4) == 0.7572
