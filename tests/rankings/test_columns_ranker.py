"""The C columns ranker (rankings/_columns.c) gives trec_eval's rankings of run columns exactly:
the same grades in the same order as numpy's trec_order on the CAsT 2021 runs (shuffled, so that
every row must be placed), and as a plain Python sort on adversarial ties (docnos that are
prefixes of one another, bytes above 0x7f, -0.0 against 0.0, scores equal only as C floats),
under -M and -J, for every Arrow string layout; a repeated docno is named; and build_rankings
ranks columns with it, whatever their order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import trecqr
from conftest import data_path
from trecqr.errors import InputError
from trecqr.formats.order import trec_order
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run
from trecqr.rankings import trec_order as trec_order_module
from trecqr.rankings.build import NONPOOL, UNJUDGED, build_rankings
from trecqr.rankings.options import Options

CAST = data_path("cast2021")
RUNS = ["docrun_org_manual_bm25.run", "docrun_org_convdr.run", "org_manual_ance.trec",
        "org_convdr_bert.trec"]
OPTIONS = [Options(), Options(compat="10.0"), Options(max_docs=10),
           Options(judged_only=True), Options(max_docs=7, judged_only=True, compat="10.0"),
           Options(max_docs=0)]


def read_columns(path):
    """(qid, docno, score) of a run or qrels file's lines, read by Python alone."""
    rows = [line.split() for line in open(path, encoding="utf-8") if line.strip()]
    return rows


def make_run(qids, docnos, scores, docno_type=pa.string()) -> Run:
    return Run(qid=pa.array(qids, pa.string()), docno=pa.array(docnos, docno_type),
               score=np.asarray(scores, dtype=np.float64))


def make_qrels(rows) -> Qrels:
    return Qrels(qid=pa.array([r[0] for r in rows], pa.string()),
                 docno=pa.array([r[1] for r in rows], pa.string()),
                 grade=np.array([r[2] for r in rows], dtype=np.int64))


def by_topic(rk) -> dict:
    return {q: rk.rel[rk.offsets[i]:rk.offsets[i + 1]].tolist() for i, q in enumerate(rk.qids)}


def grade(judged: dict, docno: str) -> int:
    """A ranked document's grade: NONPOOL when not judged, UNJUDGED when judged negative."""
    g = judged.get(docno)
    return NONPOOL if g is None else UNJUDGED if g < 0 else g


def expected_numpy(run: Run, judged: dict, options: Options) -> dict:
    """Each evaluated topic's grades in numpy's trec_order (formats/order.py), then -M, -J."""
    order, _, starts = trec_order(run, options.float32_scores)
    qids, docnos = run.qid.to_pylist(), run.docno.to_pylist()
    ends = list(starts[1:]) + [len(order)]
    out = {}
    for s, e in zip(starts, ends):
        rows = order[s:e]
        q = qids[rows[0]]
        if q not in judged:
            continue
        grades = [grade(judged[q], docnos[r]) for r in rows[:options.max_docs]]
        out[q] = [g for g in grades if g >= 0] if options.judged_only else grades
    return dict(sorted(out.items()))


def expected_python(qids, docnos, scores, judged: dict, options: Options) -> dict:
    """The same by a plain Python sort: docno descending by bytes, then (stable) score
    descending, scores rounded to a C float under 9.0.8."""
    with np.errstate(over="ignore"):  # 1e300 is inf as a C float, as in trec_eval 9.0.8
        to32 = np.float32 if options.float32_scores else np.float64
        rounded = [float(to32(s)) for s in scores]
    out = {}
    for q in sorted(set(qids) & set(judged)):
        rows = [(s, d) for t, d, s in zip(qids, docnos, rounded) if t == q]
        rows.sort(key=lambda r: r[1].encode("utf-8"), reverse=True)
        rows.sort(key=lambda r: r[0], reverse=True)
        grades = [grade(judged[q], d) for _, d in rows[:options.max_docs]]
        out[q] = [g for g in grades if g >= 0] if options.judged_only else grades
    return out


@pytest.fixture(scope="module")
def cast_qrels():
    rows = [(r[0], r[2], int(r[3])) for r in read_columns(CAST / "qrels-docs.2021.qrel")]
    judged: dict = {}
    for q, d, g in rows:
        judged.setdefault(q, {})[d] = g
    return make_qrels(rows), judged


@pytest.mark.parametrize("name", RUNS)
def test_cast_runs_shuffled_rank_as_numpy_does(name, cast_qrels):
    """Every row of a real run placed by the C ranker where numpy's sort places it."""
    qrels, judged = cast_qrels
    rows = read_columns(CAST / name)
    perm = np.random.default_rng(7).permutation(len(rows))
    rows = [rows[i] for i in perm]
    run = make_run([r[0] for r in rows], [r[2] for r in rows], [float(r[4]) for r in rows])
    for options in OPTIONS:
        got = by_topic(build_rankings(run, qrels, options))
        assert got == expected_numpy(run, judged, options), options


def test_cast_run_with_float32_ties_ranks_as_numpy_does(cast_qrels):
    """Scores coarsened so that a third of each topic ties: the docno rule decides."""
    qrels, judged = cast_qrels
    rows = read_columns(CAST / "docrun_org_manual_bm25.run")
    scores = np.round(np.array([float(r[4]) for r in rows]), 0)
    run = make_run([r[0] for r in rows], [r[2] for r in rows], scores[::-1].copy())
    for options in OPTIONS:
        assert by_topic(build_rankings(run, qrels, options)) == \
            expected_numpy(run, judged, options), options


TIE_DOCS = ["a", "ab", "b", "a\x7f", "é", "e", "ea", "Z", "", "ba", "\u00ff", "a b"]


def adversarial(seed: int, topics: int = 5):
    """Topics interleaved, most scores tied (or tied only as C floats, or -0.0 and 0.0), docnos
    that are prefixes of one another and non-ASCII."""
    rng = np.random.default_rng(seed)
    base = [1.0, 1.0 + 1e-9, 0.0, -0.0, -1.0, 2.5, float(np.float32(2.5)) + 1e-12, 1e300]
    qids, docnos, scores, judged = [], [], [], {}
    for t in range(topics):
        # 32 documents (sorted by insertion) or 92 (by radix, then the ties)
        docs = TIE_DOCS + [f"d{x}" for x in rng.choice(1000, 20 + 60 * (t % 2), replace=False)]
        for d in docs:
            qids.append(f"t{t}")
            docnos.append(d)
            scores.append(base[rng.integers(len(base))])
        if t < topics - 1:  # the last topic is not judged
            judged[f"t{t}"] = {d: int(rng.integers(-1, 3)) for d in rng.choice(docs, 12)}
    perm = rng.permutation(len(qids))
    qids, docnos, scores = ([v[i] for i in perm] for v in (qids, docnos, scores))
    judged["t9"] = {"a": 1}  # judged, not retrieved
    return qids, docnos, scores, judged


@pytest.mark.parametrize("seed", range(6))
def test_adversarial_ties_rank_as_a_python_sort_does(seed):
    qids, docnos, scores, judged = adversarial(seed)
    qrels = make_qrels([(q, d, g) for q, docs in judged.items() for d, g in docs.items()])
    for docno_type in (pa.string(), pa.large_string()):
        run = make_run(qids, docnos, scores, docno_type)
        for options in OPTIONS:
            want = expected_python(qids, docnos, scores, judged, options)
            assert by_topic(build_rankings(run, qrels, options)) == want, (docno_type, options)


def test_chunked_sliced_and_dictionary_docnos_rank_alike():
    """A docno column in several chunks, a slice of a larger array, or dictionary-encoded."""
    qids, docnos, scores, judged = adversarial(11)
    qrels = make_qrels([(q, d, g) for q, docs in judged.items() for d, g in docs.items()])
    want = expected_python(qids, docnos, scores, judged, Options())
    h = len(docnos) // 2
    arr = pa.array(["pad"] + docnos + ["pad"], pa.string()).slice(1, len(docnos))
    for docno in (pa.chunked_array([docnos[:h], docnos[h:]], pa.string()), arr,
                  pa.array(docnos).dictionary_encode()):
        run = Run(qid=pa.array(qids), docno=docno, score=np.asarray(scores))
        assert by_topic(build_rankings(run, qrels, Options())) == want


def test_a_repeated_docno_is_named_even_in_an_unjudged_topic():
    qrels = make_qrels([("q1", "a", 1)])
    for qid in ("q1", "q2"):  # q2 is not judged: its rows are still checked
        run = make_run(["q1", qid, "q1", qid], ["a", "b", "c", "b"], [1.0, 0.5, 0.2, 0.9])
        with pytest.raises(InputError, match=f"duplicate document for topic '{qid}' and "
                                             f"docno 'b'"):
            build_rankings(run, qrels, Options())


def test_a_repeated_docno_with_another_score_in_a_dataframe():
    """A frame has no lines: the error names the two rows, the frame's own (by position)."""
    qrels = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d0"], "relevance": [1]})
    for n in (20_000, 8):  # past the small-input path (the columns are ranked), and within it
        run = pd.DataFrame({"query_id": ["q1"] * n, "doc_id": [f"d{i}" for i in range(n)],
                            "score": np.linspace(1, 0, n)}, index=np.arange(n) + 100)
        run.iloc[n - 1, 1] = "d5"
        for frame in (run, pa.Table.from_pandas(run)):
            with pytest.raises(InputError) as caught:
                trecqr.evaluate(qrels, frame, ["RR"])
            assert caught.value.line is None
            assert caught.value.message == (f"row {n - 1}: duplicate document for topic 'q1' "
                                            f"and docno 'd5' (first at row 5)")
    twice = pd.DataFrame({"query_id": ["q1", "q2", "q1"], "doc_id": ["d0", "d0", "d0"],
                          "relevance": [1, 1, 0]})
    with pytest.raises(InputError, match=r"^<qrels DataFrame>: row 2: duplicate judgment for "
                                         r"topic 'q1' and docno 'd0' \(first at row 0\)$"):
        trecqr.evaluate(twice, run, ["RR"])


def test_build_rankings_ranks_columns_with_the_c_ranker(monkeypatch):
    """The ranking layer chooses the C ranker itself: a DataFrame's columns, in any order, go
    through it."""
    calls = []
    real = trec_order_module.rank_columns
    monkeypatch.setattr(trec_order_module, "rank_columns",
                        lambda *a: calls.append(len(a[2])) or real(*a))
    qids, docnos, scores, judged = adversarial(3)
    qrels = make_qrels([(q, d, g) for q, docs in judged.items() for d, g in docs.items()])
    build_rankings(make_run(qids, docnos, scores), qrels, Options())
    assert calls == [len(qids)]


def test_max_docs_past_a_c_long_is_no_cut():
    """max_docs above the largest C long (trec_eval's atol saturates at LONG_MAX) is no cut on
    the columns ranker's path too, where it overflowed the kernel's argument."""
    assert Options(max_docs=10 ** 20) == Options()
    run = pd.read_csv(data_path("cast2021", "docrun_org_convdr.run"), sep=" ", header=None,
                      names=["query_id", "q0", "doc_id", "rank", "score", "tag"],
                      dtype={"query_id": str, "doc_id": str})
    qrels = str(CAST / "qrels-docs.2021.qrel")
    got = trecqr.evaluate(qrels, run, ["map", "P.10"], max_docs=10 ** 20).aggregate()
    assert got == trecqr.evaluate(qrels, run, ["map", "P.10"]).aggregate()
