"""The Lucene backend (Pyserini 0.22.1, Java 17): index and search the QReCC demo collection, its
scores and its agreement with bm25s, ties at rank k, Java selection, interrupted builds, foreign
indexes and a missing Pyserini."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import trecqr
from trecqr.errors import InputError, UsageError
from trecqr.retrieval import bm25, java_runtime, lucene
from trecqr.retrieval.indexdir import MANIFEST, read_manifest

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
FIELDS = ("raw", "human", "gpt")
MEASURES = ["recip_rank", "ndcg_cut.3", "recall.10,100"]
K1, B = 0.82, 0.68  # the QReCC preset
EXPECTED = {  # trec_eval's 4-decimal values of the Lucene runs (bm25s's are in test_demo_retrieval)
    "raw": {"recip_rank": 0.3830, "ndcg_cut_3": 0.3674, "recall_10": 0.4917, "recall_100": 0.6640},
    "human": {"recip_rank": 0.8072, "ndcg_cut_3": 0.8090, "recall_10": 0.9033,
              "recall_100": 0.9439},
    "gpt": {"recip_rank": 0.7529, "ndcg_cut_3": 0.7572, "recall_10": 0.8758, "recall_100": 0.9399},
}


def _topics(field):
    return DEMO / f"topics-{field}.tsv"


def _qids(field):
    return [line.split("\t", 1)[0] for line in _topics(field).read_text("utf-8").splitlines()]


def _ranked(run) -> dict:
    out = {}
    for q, d, s in zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()):
        out.setdefault(q, []).append((d, s))
    return out


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """Lucene and bm25s indexes of the demo collection (QReCC k1/b) and their runs."""
    folder = tmp_path_factory.mktemp("lucene-demo")
    lidx, bidx = folder / "lucene", folder / "bm25s"
    manifest = lucene.build_index(DEMO / "collection.jsonl", lidx, k1=K1, b=B,
                                  show_progress=False)
    bm25.build_index(DEMO / "collection.jsonl", bidx, k1=K1, b=B, show_progress=False)
    handle = lucene.load_index(lidx)
    runs = {}
    for field in FIELDS:
        runs["lucene", field] = lucene.search(lidx, _topics(field), 100, n_threads=2,
                                              index=handle, show_progress=False)
        runs["bm25s", field] = bm25.search(bidx, _topics(field), 100, show_progress=False)
    return {"dir": lidx, "manifest": manifest, "handle": handle, "runs": runs}


# ---------------------------------------------------------------- the demo collection

def test_manifest_of_a_demo_build(demo):
    m = demo["manifest"]
    assert m == read_manifest(demo["dir"])
    assert (m["backend"], m["version"], m["documents"], m["indexed"], m["empty"]) == \
        ("lucene", 1, 996, 996, 0)
    assert (m["k1"], m["b"], m["linked"], m["java"], m["pyserini"]) == (K1, B, True, 17, "0.22.1")
    assert m["collection"] == str((DEMO / "collection.jsonl").resolve())
    # the staging folder (a link to the collection) is gone; the index stands alone
    assert not (demo["dir"] / lucene.STAGE).exists()
    assert lucene.describe(m) == "BM25 k1=0.82 b=0.68 (Lucene via Pyserini 0.22.1)"


def test_rewrites_beat_raw_and_the_numbers_of_the_fixed_run(demo):
    scores = {f: trecqr.evaluate(DEMO / "qrels.txt", demo["runs"]["lucene", f], MEASURES)
              .aggregate() for f in FIELDS}
    for measure in EXPECTED["raw"]:
        assert scores["human"][measure] > scores["raw"][measure], measure
        assert scores["gpt"][measure] > scores["raw"][measure], measure
    for field, values in EXPECTED.items():
        for measure, value in values.items():
            assert round(scores[field][measure], 4) == value, (field, measure)
    # bm25s analyses as Lucene does: its run scores the same to trec_eval's 4 decimals
    bm25s_scores = {f: trecqr.evaluate(DEMO / "qrels.txt", demo["runs"]["bm25s", f], MEASURES)
                    .aggregate() for f in FIELDS}
    assert {f: {m: round(v, 4) for m, v in bm25s_scores[f].items()} for f in FIELDS} == EXPECTED


def test_runs_are_in_trec_eval_order_with_float32_scores(demo):
    import numpy as np

    run = demo["runs"]["lucene", "human"]
    assert run.runid == "trecqr-lucene"
    by_topic = _ranked(run)
    assert list(by_topic) == [q for q in _qids("human") if q in by_topic]  # topic order
    for rows in by_topic.values():
        assert len(rows) <= 100
        # score desc, then docid desc (byte order, as trec_eval's strcmp)
        assert rows == sorted(rows, key=lambda r: (r[1], r[0].encode()), reverse=True)
        scores = np.array([s for _, s in rows])
        assert (scores.astype(np.float32).astype(np.float64) == scores).all()


def test_agreement_with_bm25s(demo):
    """Top-1 agreement and top-10 overlap of Lucene and bm25s on the 927 turns of each topic set.

    Measured (pyserini 0.22.1, bm25s 0.3.16, k1=0.82 b=0.68, bm25s analysing as Lucene): identical
    top-1 927/927/926 of 927 (raw/human/gpt), mean Jaccard@10 0.998/0.998/0.998, identical top-10
    lists 95.9%/96.3%/96.1%. The rest is Lucene's one-byte document lengths (SmallFloat) making
    near ties.
    """
    for field in FIELDS:
        a, b = _ranked(demo["runs"]["lucene", field]), _ranked(demo["runs"]["bm25s", field])
        qids = _qids(field)
        top1 = same10 = 0
        jaccard = 0.0
        for q in qids:
            la = [d for d, _ in a.get(q, [])[:10]]
            lb = [d for d, _ in b.get(q, [])[:10]]
            top1 += la[:1] == lb[:1]
            same10 += la == lb
            union = set(la) | set(lb)
            jaccard += len(set(la) & set(lb)) / len(union) if union else 1.0
        n = len(qids)
        assert n == 927
        assert top1 / n >= 0.998, (field, top1)  # the issue asks >= 90%
        assert jaccard / n >= 0.997, (field, jaccard / n)
        assert same10 / n >= 0.95, (field, same10)


@pytest.fixture(scope="module")
def plain_demo(tmp_path_factory):
    """A Lucene index of the demo collection built with the default k1=0.9 b=0.4 (read only)."""
    folder = tmp_path_factory.mktemp("lucene-plain") / "index"
    lucene.build_index(DEMO / "collection.jsonl", folder, show_progress=False)
    return folder


def test_search_time_k1_b_override_the_index_defaults(demo, plain_demo):
    topics = {q: t for q, t in (line.split("\t", 1) for line in
                                _topics("human").read_text("utf-8").splitlines()[:50])}
    default = _ranked(lucene.search(demo["dir"], topics, 20, index=demo["handle"],
                                    show_progress=False))
    other = _ranked(lucene.search(demo["dir"], topics, 20, index=demo["handle"],
                                  show_progress=False, k1=0.9, b=0.4))
    assert default != other
    assert (read_manifest(plain_demo)["k1"], read_manifest(plain_demo)["b"]) == (0.9, 0.4)
    assert _ranked(lucene.search(plain_demo, topics, 20, show_progress=False)) == other
    # and the handle went back to the index's own k1/b
    assert _ranked(lucene.search(demo["dir"], topics, 20, index=demo["handle"],
                                 show_progress=False)) == default


def test_foreign_index_defaults_to_0_9_0_4(demo, tmp_path):
    """A bare Lucene index (as Pyserini's prebuilt ones: no manifest) searches with 0.9/0.4."""
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(demo["dir"], bare)
    (bare / MANIFEST).unlink()
    (bare / "docids.txt").unlink()
    assert read_manifest(bare) == {"backend": "lucene", "foreign": True}
    topics = {"a": "who won the super bowl", "b": "capital of france"}
    got = _ranked(lucene.search(bare, topics, 10, show_progress=False))
    want = _ranked(lucene.search(demo["dir"], topics, 10, show_progress=False, k1=0.9, b=0.4))
    assert got == want and got
    searcher, manifest = lucene.load_index(bare)
    searcher.close()
    assert manifest["documents"] == 996
    assert "foreign" in lucene.describe(manifest)


def test_cqr_preset_sets_k1_b_of_any_lucene_index(demo, tmp_path):
    """Lucene's k1/b are search-time: `cqr --preset qrecc-test` on a bare index (as a Pyserini
    prebuilt one) gives the QReCC-k1/b numbers of the fixed run; without the preset, 0.9/0.4."""
    import shutil

    from conftest import run_cli

    bare = tmp_path / "bare"
    shutil.copytree(demo["dir"], bare)
    (bare / MANIFEST).unlink()
    (bare / "docids.txt").unlink()
    out = {}
    for extra in ([], ["--preset", "qrecc-test"]):
        res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--index", bare, "--topics",
                       _topics("human"), "--format", "json", "--quiet",
                       "--runs-dir", tmp_path / "runs"] + extra)
        assert res.exit_code == 0, res.stderr
        out[bool(extra)] = json.loads(res.stdout)
    preset = out[True]
    assert (preset["k1"], preset["b"]) == (K1, B) and "k1=0.82 b=0.68" in preset["retriever"]
    assert round(preset["rows"][0]["scores"]["MRR"], 4) == EXPECTED["human"]["recip_rank"]
    assert round(preset["rows"][0]["scores"]["NDCG@3"], 4) == EXPECTED["human"]["ndcg_cut_3"]
    plain = out[False]
    assert (plain["k1"], plain["b"]) == (0.9, 0.4)
    assert plain["rows"][0]["scores"]["MRR"] != preset["rows"][0]["scores"]["MRR"]


def test_search_preset_sets_lucene_k1_b_and_warns_for_bm25s(plain_demo, tmp_path):
    from conftest import run_cli

    assert read_manifest(plain_demo)["k1"] == 0.9  # built with the defaults, 0.9/0.4
    res = run_cli(["search", plain_demo, _topics("human"), "-o", tmp_path / "p.run",
                   "--preset", "qrecc-test", "--quiet"])
    assert res.exit_code == 0, res.stderr
    got = trecqr.evaluate(DEMO / "qrels.txt", tmp_path / "p.run", ["recip_rank"]).aggregate()
    assert round(got["recip_rank"], 4) == EXPECTED["human"]["recip_rank"]
    bm25.build_index(DEMO / "collection.jsonl", tmp_path / "b", show_progress=False)
    res = run_cli(["search", tmp_path / "b", _topics("human"), "-o", tmp_path / "b.run",
                   "--preset", "qrecc-test", "--quiet"])
    assert res.exit_code == 0
    assert "preset qrecc-test says k1=0.82 b=0.68 (a bm25s index keeps its build's)" in res.stderr


# ---------------------------------------------------------------- ties at rank k

@pytest.fixture(scope="module")
def ties(tmp_path_factory):
    """40 identical passages (one exact tie) among others; JSONL not in Pyserini's layout."""
    folder = tmp_path_factory.mktemp("ties")
    coll = folder / "c.jsonl"
    recs = [{"id": f"t{i:02d}", "text": "apple banana cherry"} for i in range(40)]
    recs += [{"id": f"o{i}", "text": f"orange {w} apple"} for i, w in
             enumerate(["kiwi", "lime", "plum", "fig", "date", "pear", "melon", "grape"])]
    recs += [{"id": "x1", "title": "Fruit", "text": "apple apple apple"},
             {"id": "x2", "text": "   "}]
    coll.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    idx = folder / "idx"
    manifest = lucene.build_index(coll, idx, show_progress=False, threads=2)
    return idx, manifest


def test_a_tie_across_rank_k_is_cut_as_trec_eval_ranks_it(ties):
    idx, manifest = ties
    assert (manifest["linked"], manifest["documents"], manifest["indexed"],
            manifest["empty"]) == (False, 50, 49, 1)
    run = _ranked(lucene.search(idx, {"q": "banana"}, 5, show_progress=False))
    # Lucene alone would keep t00..t04 (docid ascending) of the 40-way tie: k + 10 = 15 hits
    # end inside the tie, so the topic is searched deeper and cut in trec_eval's order
    assert [d for d, _ in run["q"]] == ["t39", "t38", "t37", "t36", "t35"]
    assert len({s for _, s in run["q"]}) == 1
    deep = _ranked(lucene.search(idx, {"q": "apple"}, 12, show_progress=False))["q"]
    assert deep[0][0] == "x1"  # the title counts, tf 3 ("Fruit apple apple apple")
    assert [d for d, _ in deep[1:]] == [f"t{i:02d}" for i in range(39, 28, -1)]


def test_pyserini_scores_are_pyserinis_own(ties):
    """pyserini_scores=True gives what Pyserini's LuceneSearcher returns: the same cut (docid
    ascending in a tie), scores rounded to 4 decimals then lowered by 1e-6 steps."""
    idx, _ = ties
    run = _ranked(lucene.search(idx, {"q": "banana"}, 5, show_progress=False,
                                pyserini_scores=True))["q"]
    assert [d for d, _ in run] == ["t00", "t01", "t02", "t03", "t04"]
    top = run[0][1]
    assert top == pytest.approx(round(top, 4), abs=1e-7)
    assert [round((top - s) * 1e6) for _, s in run] == [0, 1, 2, 3, 4]
    from pyserini.search.lucene import LuceneSearcher  # slow import (torch): only here

    searcher = LuceneSearcher(str(idx))
    searcher.set_bm25(0.9, 0.4)
    for query in ("banana", "apple", "orange kiwi"):
        ours = _ranked(lucene.search(idx, {"q": query}, 7, show_progress=False,
                                     pyserini_scores=True))["q"]
        theirs = [(h.docid, h.score) for h in searcher.search(query, 7)]
        assert ours == theirs, query


def test_topics_that_retrieve_nothing_are_absent_with_one_warning(ties):
    idx, _ = ties
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = lucene.search(idx, {"a": "the of and", "b": "zebra", "c": "", "d": "kiwi"}, 10,
                            show_progress=False)
    assert run.qid.to_pylist() == ["d"] and run.docno.to_pylist() == ["o0"]
    assert [str(w.message) for w in caught] == \
        ["3 of 4 topics retrieved nothing (no query term in the index)"]


# ---------------------------------------------------------------- build: input and errors

def test_tsv_collections_are_converted_and_duplicates_refused(tmp_path):
    tsv = tmp_path / "c.tsv"
    tsv.write_text("id\ttext\ttitle\n1\tThe cat sat on the mat.\tCats [SEP] Habits\n"
                   "2\tDogs run in the park.\tDogs\n", encoding="utf-8")
    m = lucene.build_index(tsv, tmp_path / "i", show_progress=False)
    assert (m["linked"], m["documents"], m["indexed"]) == (False, 2, 2)
    run = _ranked(lucene.search(tmp_path / "i", {"q": "habits"}, 10, show_progress=False))
    assert [d for d, _ in run["q"]] == ["1"]  # the title is indexed
    dup = tmp_path / "dup.tsv"
    dup.write_text("id\ttext\na\tone\nb\ttwo\na\tthree\n", encoding="utf-8")
    with pytest.raises(InputError, match="docid 'a' occurs twice"):
        lucene.build_index(dup, tmp_path / "j", show_progress=False)
    assert not (tmp_path / "j").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "contents": "x"}\n{"id": "b c", "contents": "y"}\n')
    with pytest.raises(InputError) as err:
        lucene.build_index(bad, tmp_path / "k", show_progress=False)
    assert (err.value.line, "bad docid" in err.value.message) == (2, True)
    with pytest.raises(UsageError, match="unknown lucene index option"):
        lucene.build_index(tsv, tmp_path / "l", show_progress=False, k3=1)


def test_interrupted_builds_leave_nothing_that_loads(demo, tmp_path, monkeypatch):
    real = lucene._run_indexer
    out = tmp_path / "idx"

    def after_indexing(*args, **kw):  # Lucene's files are complete; the manifest is not there
        real(*args, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(lucene, "_run_indexer", after_indexing)
    with pytest.raises(KeyboardInterrupt):
        lucene.build_index(DEMO / "collection.jsonl", out, show_progress=False)
    assert os.listdir(tmp_path) == []  # no index, no temporary folder
    with pytest.raises(InputError):
        lucene.load_index(out)

    # Ctrl-C while Java is indexing: the child is killed, an older index is kept as it was
    monkeypatch.setattr(lucene, "_run_indexer", real)
    lucene.build_index(DEMO / "collection.jsonl", out, show_progress=False)
    before = sorted(os.listdir(out))
    children = []
    popen = subprocess.Popen

    class Spy(popen):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            children.append(self)

    class Interrupt:
        def search(self, line):
            raise KeyboardInterrupt

    monkeypatch.setattr(lucene.subprocess, "Popen", Spy)
    monkeypatch.setattr(lucene, "_COUNTER", Interrupt())
    with pytest.raises(KeyboardInterrupt):
        lucene.build_index(DEMO / "collection.jsonl", out, show_progress=False, k1=2.0)
    assert len(children) == 1 and children[0].poll() is not None  # Java is gone
    assert sorted(os.listdir(tmp_path)) == ["idx"] and sorted(os.listdir(out)) == before
    assert read_manifest(out)["k1"] == 0.9
    monkeypatch.undo()
    run = lucene.search(out, {"q": "who won"}, 5, show_progress=False)
    assert len(run) == 5


# ---------------------------------------------------------------- Java and Pyserini

def _fake_jdk(root, name, version):
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    (home / "lib" / "server").mkdir(parents=True)
    (home / "lib" / "server" / "libjvm.so").write_text("")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return home


def test_java_17_is_picked_and_a_users_java_home_wins(tmp_path):
    root = tmp_path / "jvm"
    _fake_jdk(root, "temurin-25-jdk-amd64", "25.0.3")
    _fake_jdk(root, "java-8-openjdk-amd64", "1.8.0_412")
    _fake_jdk(root, "java-21-openjdk-amd64", "21.0.4")
    assert java_runtime.pick_java_home(root) == str(root / "java-21-openjdk-amd64")
    home17 = _fake_jdk(root, "java-17-openjdk-amd64", "17.0.15")
    os.symlink(home17, root / "java-1.17.0-openjdk-amd64")
    _fake_jdk(root, "java-11-openjdk-amd64", "11.0.2")
    (root / "openjdk-17").mkdir()  # Debian's src.zip folder: not a runtime
    assert java_runtime.pick_java_home(root) == str(home17)
    assert java_runtime.java_version(root / "java-8-openjdk-amd64") == 8
    env = {}
    assert java_runtime.ensure_java_home(env, root) == str(home17) == env["JAVA_HOME"]
    env = {"JAVA_HOME": str(root / "temurin-25-jdk-amd64")}
    assert java_runtime.ensure_java_home(env, root) == str(root / "temurin-25-jdk-amd64")
    with pytest.raises(UsageError, match="Java 8"):
        java_runtime.ensure_java_home({"JAVA_HOME": str(root / "java-8-openjdk-amd64")}, root)
    with pytest.raises(UsageError, match="no Java runtime"):
        java_runtime.ensure_java_home({"JAVA_HOME": str(tmp_path / "nowhere")}, root)
    only25 = tmp_path / "only25"
    _fake_jdk(only25, "temurin-25-jdk-amd64", "25.0.3")
    assert java_runtime.pick_java_home(only25).endswith("temurin-25-jdk-amd64")
    assert java_runtime.pick_java_home(tmp_path / "none") is None


def test_this_machine_starts_pyserini_on_java_17_without_java_home(demo):
    """With JAVA_HOME unset, Debian's openjdk-17 is chosen over the Temurin 25 beside it, and
    the JVM pyjnius starts is that one."""
    assert os.path.realpath(java_runtime.pick_java_home()) == "/usr/lib/jvm/java-17-openjdk-amd64"
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    code = ("import os, sys; from trecqr.retrieval import lucene; "
            f"s, m = lucene.load_index({str(demo['dir'])!r}); "
            "from jnius import autoclass; "
            "print(os.environ['JAVA_HOME'], autoclass('java.lang.System')"
            ".getProperty('java.version'), s.get_total_num_docs())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    home, version, docs = out.stdout.split()
    assert os.path.realpath(home) == "/usr/lib/jvm/java-17-openjdk-amd64"
    assert version.startswith("17.") and docs == "996"


def test_missing_pyserini_is_a_usage_error(monkeypatch, tmp_path, demo):
    monkeypatch.setitem(sys.modules, "pyserini", None)  # import pyserini -> ImportError
    with pytest.raises(UsageError, match=r"pip install 'trecqr\[lucene\]'"):
        lucene.build_index(DEMO / "collection.jsonl", tmp_path / "i", show_progress=False)
    with pytest.raises(UsageError, match=r"trecqr\[lucene\]"):
        lucene.search(demo["dir"], {"q": "x"}, 5, show_progress=False)
    assert os.listdir(tmp_path) == []


def test_importing_the_backend_is_cheap():
    code = ("import sys, trecqr.retrieval.lucene as l; "
            "print(l.BACKEND, sorted(m for m in ('pyserini', 'jnius', 'torch') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["lucene", "[]"]
    assert set(lucene.PARAMS) >= {"k1", "b", "threads", "store_docvectors", "pyserini_scores"}
