"""BM25 retrieval (bm25s): collections, analysis, index round trip, runs, CLI."""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import trecqr
from trecqr.formats import qrels_from_dict, read_run
from trecqr.retrieval.bm25 import analyze, build_index, load_index, search
from trecqr.retrieval.collections import iter_collection
from trecqr.cli.retrieval import index_command, search_command

from conftest import DATA, ROOT

PASSAGES = [
    ("d1", "The cat sat on the mat.", "Cats [SEP] Habits"),
    ("d2", "Dogs are running in the park every morning.", "Dogs [SEP] Exercise"),
    ("d3", "A dog can run fast and a dog can jump high.", "Dogs"),
    ("d4", "The stock market fell sharply on Monday.", "Finance"),
    ("d5", "Paris is the capital of France.", "France [SEP] Cities"),
    ("d6", "Running shoes help runners run marathons.", "Sport"),
    ("d7", "The the the of of and and is is.", "Stop"),
    ("d8", "Cats and dogs can live together peacefully.", "Pets"),
]


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    d = tmp_path_factory.mktemp("coll")
    tsv = d / "c.tsv"
    tsv.write_text("id\ttext\ttitle\n" + "".join(f"{i}\t{t}\t{ti}\n" for i, t, ti in PASSAGES))
    jl = d / "c.jsonl"
    jl.write_text("".join(json.dumps({"id": i, "contents": f"{ti.replace('[SEP]', ' ')} {t}"})
                          + "\n" for i, t, ti in PASSAGES))
    idx = d / "idx"
    build_index(tsv, idx, k1=0.9, b=0.4, show_progress=False)
    return d, tsv, jl, idx


def bm25(tf, dl, avgdl, df, n, k1=0.9, b=0.4):
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_collection_streams_both_layouts(coll):
    _, tsv, jl, _ = coll
    a = list(iter_collection(tsv))
    b = list(iter_collection(jl))
    assert [d.docid for d in a] == [d.docid for d in b] == [p[0] for p in PASSAGES]
    # "Cats [SEP] Habits" joined as the CQR papers join TopiOCQA titles: one space (issue 23)
    assert a[0].text == "Cats Habits The cat sat on the mat."
    assert a[0].line == 2 and b[0].line == 1
    assert analyze(a[0].text) == analyze(b[0].text) == ["cat", "habit", "cat", "sat", "mat"]


def test_analyzer_stopwords_stemming():
    assert analyze("The Running of the dogs") == ["run", "dog"]
    assert analyze("the and of is") == []
    assert analyze("John's runs") == ["john", "run"]


def test_analyzer_matches_lucene_default_english_analyzer():
    """Expected lists are Anserini 0.22.1's DefaultEnglishAnalyzer (Lucene) output, pinned:
    Porter's C version (no stemming of 1-2 letter words, logi -> log, bli -> ble), Lucene's
    StandardTokenizer classes (No digits such as ½ ² break words, ® © ™ ♭ are tokens, soft
    hyphens and combining marks stay inside words, one token per ideograph, katakana and Thai
    runs, emoji with modifiers) and Java's char-by-char lowercasing (no final sigma)."""
    assert analyze("US technology possibly vs ks ms it's a s") == [
        "us", "technolog", "possibl", "vs", "ks", "ms", "s"]
    assert analyze("Psychology, biotechnologies and assembly: 13\u00be m\u00b2 \u00bd cup") \
        == ["psycholog", "biotechnolog", "assembl", "13", "m", "cup"]
    assert analyze("Coca-Cola\u00ae \u00a92019 Google\u2122 \u266d reign\u2018s co\u00adoperate "
                   "caf\u00e9 cafe\u0301") == [
        "coca", "cola", "\u00ae", "\u00a9", "2019", "googl", "\u2122", "\u266d", "reign\u2018",
        "co\u00adoper", "caf\u00e9", "cafe\u0301"]
    assert analyze("\u6771\u4eac\u30bf\u30ef\u30fc\u3067\u3059 "
                   "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22 \U0001f44d\U0001f3fd ___ _foo bar_ "
                   "u.s.a. 3.14 1,000 don't \u039f\u0394\u039f\u03a3") == [
        "\u6771", "\u4eac", "\u30bf\u30ef\u30fc", "\u3067", "\u3059",
        "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22", "\U0001f44d\U0001f3fd", "_foo", "bar_",
        "u.s.a", "3.14", "1,000", "don't", "\u03bf\u03b4\u03bf\u03c3"]


def test_ranking_and_exact_scores(coll):
    _, _, _, idx = coll
    run = search(idx, {"q1": "dog running", "q2": "the capital of France"}, k=10,
                 show_progress=False)
    rows = list(zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()))
    q1 = [r for r in rows if r[0] == "q1"]
    # d2 and d3 both hold 'dog' and 'run'; d3 has 'dog' twice
    assert [r[1] for r in q1][:2] == ["d3", "d2"]
    assert {r[1] for r in q1} == {"d2", "d3", "d6", "d8"}
    # hand computed: document lengths after analysis
    toks = {i: analyze(f"{ti.replace('[SEP]', ' ')} {t}") for i, t, ti in PASSAGES}
    n, avgdl = len(toks), sum(map(len, toks.values())) / len(toks)
    df = {w: sum(w in v for v in toks.values()) for w in ("dog", "run", "capit", "franc")}
    assert df["dog"] == 3 and df["run"] == 3
    d3 = toks["d3"]
    want = bm25(d3.count("dog"), len(d3), avgdl, df["dog"], n) + \
        bm25(d3.count("run"), len(d3), avgdl, df["run"], n)
    assert q1[0][2] == pytest.approx(want, rel=1e-6)
    q2 = [r for r in rows if r[0] == "q2"]
    assert [r[1] for r in q2] == ["d5"]  # stop words 'the', 'of' match nothing (d7)


def test_roundtrip_deterministic_and_eval(coll, tmp_path):
    d, tsv, jl, idx = coll
    topics = {"q1": "dog running", "q2": "cats", "q3": "running"}
    r1 = search(idx, topics, k=3, show_progress=False)
    loaded = load_index(idx, mmap=False)
    r2 = search(idx, topics, k=3, show_progress=False, index=loaded)
    r3 = search(idx, topics, k=3, show_progress=False, n_threads=2)
    for r in (r2, r3):
        assert r.docno.to_pylist() == r1.docno.to_pylist()
        assert np.array_equal(r.score, r1.score)
    # q2 'cats': d1 (cat x2), then d8; ties broken by docid descending as trec_eval does
    idx_j = d / "idx_j"
    build_index(jl, idx_j, show_progress=False)
    rj = search(idx_j, topics, k=3, show_progress=False)
    assert rj.docno.to_pylist() == r1.docno.to_pylist()
    assert np.array_equal(rj.score, r1.score)
    out = tmp_path / "run.txt"
    res = CliRunner().invoke(search_command, [str(idx), _topics(tmp_path, topics), "-o",
                                              str(out), "-k", "3", "--quiet"])
    assert res.exit_code == 0, res.output
    back = read_run(out)
    assert back.docno.to_pylist() == r1.docno.to_pylist()
    assert np.array_equal(back.score, r1.score)
    lines = out.read_text().splitlines()
    assert lines[0].split()[:4] == ["q1", "Q0", "d3", "1"]
    qrels = qrels_from_dict({"q1": {"d2": 1}, "q2": {"d8": 1}, "q3": {"d5": 1}})
    res = trecqr.evaluate(qrels, back, ["recip_rank"])
    # q1: d3 d2 -> RR 1/2; q2 'cats': d1 d8 -> 1/2; q3 'running': d6 d2 d3 -> 0
    assert res.aggregate()["recip_rank"] == pytest.approx((1 / 2 + 1 / 2 + 0) / 3)


def test_tie_order_matches_trec_eval(tmp_path):
    c = tmp_path / "t.jsonl"
    c.write_text("".join(json.dumps({"id": i, "contents": "apple pie"}) + "\n"
                         for i in ("b", "a", "c", "d10", "d9")) +
                 json.dumps({"id": "z", "contents": "banana"}) + "\n")
    build_index(c, tmp_path / "i", show_progress=False)
    run = search(tmp_path / "i", {"1": "apple"}, k=3, show_progress=False)
    assert run.docno.to_pylist() == ["d9", "d10", "c"]
    assert len(set(run.score.tolist())) == 1


def test_cli_index_and_incomplete(coll, tmp_path):
    _, tsv, _, _ = coll
    res = CliRunner().invoke(index_command, [str(tsv), "-o", str(tmp_path / "ix"),
                                             "--k1", "1.2", "--b", "0.75", "--quiet"])
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "ix" / "trecqr-index.json").read_text())
    assert (m["documents"], m["k1"], m["b"]) == (8, 1.2, 0.75)
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".trecqr")]
    (tmp_path / "half").mkdir()
    with pytest.raises(trecqr.errors.InputError):
        load_index(tmp_path / "half")


def _topics(tmp_path, topics):
    p = tmp_path / "topics.tsv"
    p.write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    return str(p)


@pytest.mark.parametrize("k1,b", [(0.9, 0.4), (0.82, 0.68), (1.2, 0.75)])
def test_columnar_matrix_equals_bm25s_own_index(k1, b):
    """The flat-array BM25 matrix is bm25s.BM25.index()'s, array for array, on the real demo
    collection (the stored float32 scores, indices and indptr, bit for bit)."""
    import bm25s
    import numpy as np

    from trecqr.retrieval.bm25 import Analyzer, bm25_matrix
    from trecqr.retrieval.collections import iter_collection

    demo = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo" / "collection.jsonl"
    analyzer, vocab, rows = Analyzer(), {}, []
    for doc in iter_collection(demo):
        rows.append([vocab.setdefault(t, len(vocab)) for t in analyzer(doc.text)])
    ref = bm25s.BM25(k1=k1, b=b, method="lucene")
    ref.index((rows, dict(vocab)), show_progress=False)
    ours = bm25_matrix(np.array([t for r in rows for t in r], dtype=np.int32),
                       np.array([len(r) for r in rows], dtype=np.int64), len(vocab), k1, b)
    assert ours["num_docs"] == ref.scores["num_docs"] == 996
    for key in ("data", "indices", "indptr"):
        assert ours[key].dtype == ref.scores[key].dtype, key
        assert np.array_equal(ours[key], ref.scores[key]), key


@pytest.mark.parametrize("k", [1, 3, 100])
def test_search_equals_brute_force_over_every_passage(k, demo_index_dir):
    """search() == scoring every passage with bm25s and sorting all positive scores by (score
    desc, docid desc), cut at k: the top-k selection loses nothing, ties included (the demo's
    GPT rewrites; k=1 and 3 cut inside many ties)."""
    import numpy as np

    from trecqr.datasets.topics import read_topics
    from trecqr.retrieval.bm25 import Analyzer

    demo = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
    idx = demo_index_dir
    retriever, docids, _ = load_index(idx)
    names = docids.to_pylist()
    topics = read_topics(demo / "topics-gpt.tsv")
    run = search(idx, topics, k, show_progress=False, n_threads=2)
    got = list(zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()))
    analyzer, expected = Analyzer(), []
    for qid, query in zip(topics.qids, topics.queries):
        ids = retriever.get_tokens_ids([t for t in analyzer(query) if t in retriever.vocab_dict])
        if not ids:
            continue
        scores = np.asarray(retriever.get_scores_from_ids(ids), dtype=np.float32)
        hits = sorted(((float(scores[i]), names[i].encode()) for i in np.flatnonzero(scores > 0)),
                      reverse=True)[:k]
        expected += [(qid, d.decode(), s) for s, d in hits]
    assert got == expected
    assert len(got) > 0.9 * k * len(topics) if k < 100 else len(got) > 50_000



@pytest.fixture(scope="module")
def demo_index_dir(tmp_path_factory):
    """The demo collection's bm25s index (k1=0.82 b=0.68)."""
    folder = tmp_path_factory.mktemp("demo-idx") / "idx"
    demo = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
    build_index(demo / "collection.jsonl", folder, 0.82, 0.68, show_progress=False)
    return folder


def test_index_from_an_earlier_analyzer_is_refused(coll, tmp_path):
    """An index whose manifest names the first analyzer (PyStemmer's Porter: "US" -> "u") would
    be searched with different query terms: refused with a one-line error, exit 2."""
    import shutil

    from trecqr.errors import UsageError
    from trecqr.retrieval.analysis import ANALYZER_ID

    _, _, _, idx = coll
    assert json.loads((idx / "trecqr-index.json").read_text())["analyzer"] == ANALYZER_ID
    old = tmp_path / "old"
    shutil.copytree(idx, old)
    manifest = json.loads((old / "trecqr-index.json").read_text())
    manifest["analyzer"] = "lucene-english-porter"
    (old / "trecqr-index.json").write_text(json.dumps(manifest))
    with pytest.raises(UsageError, match="earlier trecqr analyzer .* rebuild it"):
        load_index(old)
    res = CliRunner().invoke(search_command, [str(old), "-", "--topics-format", "tsv", "-o",
                                              str(tmp_path / "r.txt")],
                             input="q1\tdogs\n")
    assert res.exit_code == 2 and "rebuild it with `trecqr index`" in res.output
    assert "Traceback" not in res.output and not (tmp_path / "r.txt").exists()


def test_truncated_gzip_collection_is_a_one_line_error(coll, tmp_path):
    """A .gz collection cut short fails while streamed: exit 2, the file named, no index left."""
    import gzip

    _, _, jl, _ = coll
    body = gzip.compress(jl.read_bytes() * 200)
    cut = tmp_path / "c.jsonl.gz"
    cut.write_bytes(body[:len(body) // 2])
    res = CliRunner().invoke(index_command, [str(cut), "-o", str(tmp_path / "idx")])
    assert res.exit_code == 2
    assert f"{cut}: corrupt gzip data" in res.output and "Aborted" not in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl.gz"]


def test_rm3_reads_a_collection_whose_format_was_given(coll, tmp_path):
    """The manifest keeps the collection's format, so RM3 can read back the feedback passages of
    a TSV collection named .txt (its format cannot be told from the name)."""
    from trecqr.generative.rankers import Ranker

    _, tsv, _, _ = coll
    txt = tmp_path / "c.txt"
    txt.write_bytes(tsv.read_bytes())
    manifest = build_index(txt, tmp_path / "idx", format="tsv", show_progress=False)
    assert manifest["collection_format"] == "tsv"
    r = Ranker(tmp_path / "idx")
    w = r.expansions(["dogs running"])["dogs running"]
    # 8 passages: every term is in more than 10% of them, so Anserini's df filter leaves no
    # feedback term and the expansion is the query model at original_weight 0.5 (as Anserini)
    assert w == {"dog": 0.25, "run": 0.25}
    assert set(r._texts) <= {"d2", "d3", "d6", "d8"}  # the passages holding dog or run
    assert r.expansions(["   "])["   "] == {}


def test_bm25s_index_built_in_worker_processes_is_bit_for_bit_the_same(tmp_path, monkeypatch):
    """Tokenising in 2 worker processes (batches of 100 passages, merged in order) gives the
    same files as one process: same term ids, same score matrix."""
    from pathlib import Path

    from trecqr.retrieval import bm25

    collection = Path(__file__).parents[2] / "fixtures" / "qrecc-demo" / "collection.jsonl"
    monkeypatch.setattr(bm25, "BATCH", 100)
    one = bm25.build_index(collection, tmp_path / "one", 0.82, 0.68, show_progress=False,
                           threads=1)
    two = bm25.build_index(collection, tmp_path / "two", 0.82, 0.68, show_progress=False,
                           threads=2)
    assert one == two and one["documents"] > 500
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "two").iterdir())
    for name in names:
        assert ((tmp_path / "one" / name).read_bytes()
                == (tmp_path / "two" / name).read_bytes()), name


def _one_passage_at_a_time(texts):
    """tokenise_batch's result the plain way: Analyzer() on each passage, ids on first sight."""
    from trecqr.retrieval.analysis import Analyzer

    analyzer, local, ids, lens = Analyzer(), {}, [], []
    for text in texts:
        terms = analyzer(text)
        lens.append(len(terms))
        ids.extend(local.setdefault(t, len(local)) for t in terms)
    return list(local), np.array(ids, np.int32).tobytes(), np.array(lens, np.int32).tobytes()


ODD_TEXTS = ["ΣΑΣ ΟΔΟΣ", "İstanbul İİ", "don't U.S. 3.14 1,000 _x __ a_b",
             "日本語のテキスト カタカナ",
             "emoji 👍🏽 👨\u200d👩\u200d👧 🇫🇷", "soft\u00adhyphen e\u0301",
             "x\u200by", "The Cat's cats' café", "", "   ", "a\x1cb\x1fc",
             "ℹ️ ©®™ ½ ²", "ﬁne ß straße",
             "3.14.15 1,000,000 a.b.c", "a\x00b", "\x00", " \x00 x \x00", "ab\x00\x00cd Σ\x00σ"]


def test_tokenise_batch_equals_the_analyzer_passage_by_passage():
    """The batch tokeniser (chunks factorised at once, NUL chunks between passages) gives the
    terms, ids and lengths of Analyzer() run on each passage: on the QReCC demo passages, the
    TREC Session 2013 texts, odd Unicode, NULs, and each odd text alone."""
    import gzip
    import json
    import re

    from trecqr.retrieval import bm25

    demo = [json.loads(line)["contents"] for line in
            open(ROOT / "fixtures" / "qrecc-demo" / "collection.jsonl", encoding="utf-8")]
    xml = gzip.open(DATA / "sessions" / "sessiontrack2013.xml.gz", "rt", encoding="utf-8").read()
    session = [p for p in re.split(r"<[^>]+>", xml) if p.strip()]
    assert len(demo) > 900 and len(session) > 18000
    for texts in (demo, session, ODD_TEXTS, *([t] for t in ODD_TEXTS)):
        got = bm25.tokenise_batch(texts)
        assert got == _one_passage_at_a_time(texts)
    terms, ids, lens = bm25.tokenise_batch(["Dogs' running, don't RUN", "\x00 dog"])
    assert (terms, np.frombuffer(ids, np.int32).tolist(), np.frombuffer(lens, np.int32).tolist()) \
        == (["dog", "run", "don't"], [0, 1, 2, 1, 0], [4, 1])


@pytest.mark.parametrize("threads,processes", [("1", 1), ("3", 3), ("0", "cpus"), (None, "cpus")])
def test_index_threads_sets_the_bm25s_tokenising_processes(tmp_path, monkeypatch, threads,
                                                           processes):
    """`trecqr index --threads N` bounds bm25s's tokenising processes (it applied to lucene
    and dense only, and bm25s took every core): 1 tokenises here, without a worker pool; N > 1
    starts N workers; 0, -1 or no option, one per CPU. The index is the same whatever N."""
    from contextlib import contextmanager
    from pathlib import Path

    from trecqr.runtime import workers
    from trecqr.runtime.workers import usable_cpus
    from trecqr.retrieval import bm25
    from conftest import run_cli

    started = []
    real_pool = workers.worker_pool

    @contextmanager
    def counting_pool(workers, *args, **kw):
        started.append(workers)
        with real_pool(min(workers, 2), *args, **kw) as pool:
            yield pool

    monkeypatch.setattr(bm25, "worker_pool", counting_pool)
    monkeypatch.setattr(bm25, "BATCH", 300)  # 4 tasks of the 996 passages
    demo = Path(__file__).parents[2] / "fixtures" / "qrecc-demo" / "collection.jsonl"
    res = run_cli(["index", demo, "-o", tmp_path / "ix", "--quiet"]
                  + ([] if threads is None else ["--threads", threads]))
    assert res.exit_code == 0, res.output
    want = [] if processes == 1 else [usable_cpus() if processes == "cpus" else processes]
    if want == [1]:  # a one-CPU machine tokenises here too
        want = []
    assert started == want
    ref = bm25.build_index(demo, tmp_path / "ref", show_progress=False, threads=1)
    for name in sorted(p.name for p in (tmp_path / "ref").iterdir()):
        assert (tmp_path / "ix" / name).read_bytes() == (tmp_path / "ref" / name).read_bytes()
    assert ref["documents"] == 996
