"""One input layer (formats.objects): every kind of run and qrels gives exactly the values the
same data gives from TREC files. The data is TREC CAsT 2021's document-level BM25 run and its
official qrels (real files); each test builds the objects the tools users hold (pandas,
pyarrow, ranx, ir_datasets) from them and compares every per-topic value and every summary."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import trecqr
from trecqr.errors import InputError
from trecqr.formats.order import trec_order

from conftest import data_path, run_cli

MEASURES = ["map", "ndcg_cut.3", "recip_rank", "P.10", "recall.100", "num_ret", "nDCG@3",
            "RR@3", "R@100", "Judged@10"]


@pytest.fixture(scope="module")
def files():
    return (data_path("cast2021", "qrels-docs.2021.qrel"),
            data_path("cast2021", "docrun_org_manual_bm25.run"))


@pytest.fixture(scope="module")
def expected(files):
    return _values(trecqr.evaluate(*files, MEASURES))


@pytest.fixture(scope="module")
def cols(files):
    run, qrels = trecqr.load_run(files[1]), trecqr.load_qrels(files[0])
    return (run.qid.to_pylist(), run.docno.to_pylist(), run.score,
            qrels.qid.to_pylist(), qrels.docno.to_pylist(), qrels.grade)


def _values(results):
    return results.aggregate(), results.per_query()


def _same(results, expected):
    agg, per_query = _values(results)
    assert agg == expected[0]
    assert per_query == expected[1]
    assert len(per_query) == 158 and agg["map"] == pytest.approx(0.2160592, abs=1e-7)


def test_pyterrier_frames(cols, expected):
    """PyTerrier's columns: qid, docno, score, rank (+ query) and qid, docno, label."""
    q, d, s, qq, qd, g = cols
    run = pd.DataFrame({"qid": q, "query": "x", "docno": d, "score": s,
                        "rank": np.arange(len(s))})
    qrels = pd.DataFrame({"qid": qq, "docno": qd, "label": g, "iteration": "0"})
    _same(trecqr.evaluate(qrels, run, MEASURES), expected)


def test_ir_measures_frames(cols, expected):
    q, d, s, qq, qd, g = cols
    run = pd.DataFrame({"query_id": q, "doc_id": d, "score": s})
    qrels = pd.DataFrame({"query_id": qq, "doc_id": qd, "relevance": g})
    _same(trecqr.evaluate(qrels, run, MEASURES), expected)


def test_integer_ids_in_frames(tmp_path):
    """Integer topic and document ids are read as their decimal text (trec_eval's own suite:
    numeric topics 301..350)."""
    from conftest import TE

    run, qrels = trecqr.load_run(TE / "results.test"), trecqr.load_qrels(TE / "qrels.test")
    rq = np.array(run.qid.to_pylist(), dtype=np.int64)
    qq = np.array(qrels.qid.to_pylist(), dtype=np.int64)
    docs = {d: i for i, d in enumerate(sorted(set(run.docno.to_pylist())
                                             | set(qrels.docno.to_pylist())))}
    # documents renamed to integers (of one width: text order is numeric order); the same
    # integers written to TREC files are the reference
    width = len(str(len(docs)))
    rd = [int("1" + str(docs[d]).zfill(width)) for d in run.docno.to_pylist()]
    qd = [int("1" + str(docs[d]).zfill(width)) for d in qrels.docno.to_pylist()]
    run_file, qrels_file = tmp_path / "run", tmp_path / "qrels"
    run_file.write_text("".join(f"{a} Q0 {b} 0 {c!r} r\n" for a, b, c in zip(rq, rd, run.score.tolist())))
    qrels_file.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(qq, qd, qrels.grade)))
    expected = _values(trecqr.evaluate(qrels_file, run_file, MEASURES))
    got = trecqr.evaluate(pd.DataFrame({"query_id": qq, "doc_id": qd, "relevance": qrels.grade}),
                          pd.DataFrame({"qid": rq, "docno": rd, "score": run.score}), MEASURES)
    assert _values(got) == expected and len(expected[1]) == 3


def test_pyarrow_table_and_batch(cols, expected):
    q, d, s, qq, qd, g = cols
    run = pa.table({"query_id": q, "doc_id": d, "score": s})
    qrels = pa.table({"qid": pa.array(qq).dictionary_encode(), "docno": qd, "label": g})
    _same(trecqr.evaluate(qrels, run, MEASURES), expected)
    _same(trecqr.evaluate(qrels, run.to_batches()[0] if run.num_rows else run, MEASURES),
          expected)


def test_ranx_objects_and_their_frames(files, expected):
    ranx = pytest.importorskip("ranx")
    run = ranx.Run.from_file(str(files[1]), kind="trec")
    qrels = ranx.Qrels.from_file(str(files[0]), kind="trec")
    _same(trecqr.evaluate(qrels, run, MEASURES), expected)
    _same(trecqr.evaluate(qrels.to_dataframe(), run.to_dataframe(), MEASURES), expected)


def test_ir_datasets_rows(files, expected):
    """ir_datasets' own TREC parsers on the same files: qrels_iter() and scoreddocs_iter(),
    as iterators (read once) and as lists."""
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    qrels = TrecQrels(LocalDownload(str(files[0])), {})
    run = TrecScoredDocs(LocalDownload(str(files[1])))
    _same(trecqr.evaluate(qrels.qrels_iter(), run.scoreddocs_iter(), MEASURES), expected)
    _same(trecqr.evaluate(list(qrels.qrels_iter()), list(run.scoreddocs_iter()), MEASURES),
          expected)


def test_ir_measures_rows(cols, expected):
    import ir_measures

    q, d, s, qq, qd, g = cols
    run = [ir_measures.ScoredDoc(*t) for t in zip(q, d, s.tolist())]
    qrels = (ir_measures.Qrel(a, b, int(c)) for a, b, c in zip(qq, qd, g))
    _same(trecqr.evaluate(qrels, run, MEASURES), expected)


@pytest.mark.parametrize("kind", ["parquet", "feather", "jsonl", "jsonl.gz"])
def test_table_files(kind, cols, expected, tmp_path):
    q, d, s, qq, qd, g = cols
    run = pa.table({"qid": q, "docno": d, "score": s})
    qrels = pa.table({"query_id": qq, "doc_id": qd, "relevance": g})
    paths = []
    for name, table in (("qrels", qrels), ("run", run)):
        path = tmp_path / f"{name}.{kind}"
        if kind == "parquet":
            pq.write_table(table, path)
        elif kind == "feather":
            feather.write_feather(table, path)
        else:
            text = "".join(json.dumps(r) + "\n" for r in table.to_pylist()).encode()
            path.write_bytes(gzip.compress(text) if kind.endswith(".gz") else text)
        paths.append(path)
    _same(trecqr.evaluate(*paths, MEASURES), expected)
    cli = run_cli(["eval", "-q", "-m", "map", "-m", "P.10", *map(str, paths)])
    ref = run_cli(["eval", "-q", "-m", "map", "-m", "P.10",
                   str(data_path("cast2021", "qrels-docs.2021.qrel")),
                   str(data_path("cast2021", "docrun_org_manual_bm25.run"))])
    assert cli.exit_code == 0, cli.stderr
    assert _no_runid(cli.stdout) == _no_runid(ref.stdout) and len(cli.stdout.splitlines()) > 300


def _no_runid(text):
    return [line for line in text.splitlines() if not line.startswith("runid")]


def _three_column_files(files, tmp_path):
    """The run as MS MARCO writes it (qid, docid, rank in trec_eval's order), the same run
    converted as Pyserini converts it (score = 1/rank), and 3-column qrels."""
    run, qrels = trecqr.load_run(files[1]), trecqr.load_qrels(files[0])
    order, rank, _ = trec_order(run, float32=False)
    q, d = np.array(run.qid.to_pylist())[order], np.array(run.docno.to_pylist())[order]
    msmarco, converted = tmp_path / "run.tsv", tmp_path / "run.trec"
    msmarco.write_text("".join(f"{a}\t{b}\t{r}\n" for a, b, r in zip(q, d, rank)))
    converted.write_text("".join(f"{a} Q0 {b} {r} {1 / r} pyserini\n"
                                 for a, b, r in zip(q, d, rank)))
    tsv = tmp_path / "qrels.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{a}\t{b}\t{c}\n" for a, b, c in zip(qrels.qid.to_pylist(), qrels.docno.to_pylist(),
                                             qrels.grade)))
    return msmarco, converted, tsv


def test_msmarco_three_column_run_and_tsv_qrels(files, expected, tmp_path):
    msmarco, converted, tsv = _three_column_files(files, tmp_path)
    assert _values(trecqr.evaluate(files[0], converted, MEASURES)) == expected
    _same(trecqr.evaluate(files[0], msmarco, MEASURES), expected)
    _same(trecqr.evaluate(tsv, msmarco, MEASURES), expected)
    cli = run_cli(["eval", "-q", "-m", "all_trec", str(tsv), str(msmarco)])
    ref = run_cli(["eval", "-q", "-m", "all_trec", str(files[0]), str(converted)])
    assert cli.exit_code == 0, cli.stderr
    assert _no_runid(cli.stdout) == _no_runid(ref.stdout)


def test_bad_rows_name_the_object_and_the_row(tmp_path):
    run = pd.DataFrame({"qid": ["1"] * 20, "docno": [f"d{i}" for i in range(20)],
                        "score": [1.0] * 17 + ["abc", 1.0, 1.0]})
    qrels = {"1": {"d1": 1}}
    with pytest.raises(InputError, match=r"^<run DataFrame>: row 17: score 'abc' is not a "
                                         r"number$"):
        trecqr.evaluate(qrels, run, ["map"])
    with pytest.raises(InputError, match=r"^<qrels DataFrame>: no relevance column"):
        trecqr.evaluate(pd.DataFrame({"qid": ["1"], "docno": ["d"]}), run, ["map"])
    bad = tmp_path / "run.jsonl"
    bad.write_text('{"qid": "1", "docno": "a", "score": 1}\n\n'
                   '{"qid": "1", "docno": "b", "score": "x"}\n')
    with pytest.raises(InputError, match=r"run.jsonl:3: score 'x' is text, but a number on "
                                         r"line 1$"):
        trecqr.evaluate(qrels, bad, ["map"])
    tsv = tmp_path / "run.tsv"
    tsv.write_text("1\ta\t1\n1\tb\ttwo\n")
    with pytest.raises(InputError, match=r"run.tsv:2: rank 'two' is not a positive integer$"):
        trecqr.evaluate(qrels, tsv, ["map"])
    rows = [("1", "a", 1.0)]
    with pytest.raises(InputError, match=r"<run rows>: expected rows of namedtuples"):
        trecqr.evaluate(qrels, rows, ["map"])
    result = run_cli(["eval", str(tmp_path / "run.tsv"), str(tsv)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


def test_relevance_evaluator_takes_frames_tables_and_rows(files, cols):
    """pytrec_eval's drop-in: a DataFrame (PyTerrier's columns), an Arrow table, ranx objects
    and ir_datasets rows give what the dicts give (it raised "Expected dictionary as value")."""
    ranx = pytest.importorskip("ranx")
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    q, d, s, qq, qd, g = cols
    qrels_dict = ranx.Qrels.from_file(str(files[0]), kind="trec").to_dict()
    run_dict = ranx.Run.from_file(str(files[1]), kind="trec").to_dict()
    measures = {"map", "ndcg_cut_3", "recip_rank", "P_10"}
    expected = trecqr.RelevanceEvaluator(qrels_dict, measures).evaluate(run_dict)
    assert len(expected) == 158
    frame_qrels = pd.DataFrame({"qid": qq, "docno": qd, "label": g})
    for qrels in (frame_qrels, ranx.Qrels.from_file(str(files[0]), kind="trec"),
                  TrecQrels(LocalDownload(str(files[0])), {}).qrels_iter()):
        ev = trecqr.RelevanceEvaluator(qrels, measures)
        for run in (pd.DataFrame({"qid": q, "docno": d, "score": s}),
                    pa.table({"query_id": q, "doc_id": d, "score": s}),
                    ranx.Run.from_file(str(files[1]), kind="trec")):
            assert ev.evaluate(run) == expected
    assert trecqr.RelevanceEvaluator(frame_qrels, measures).evaluate([]) == {}


def test_relevance_evaluator_reads_tables_as_columns(files, cols, monkeypatch):
    """RelevanceEvaluator on a DataFrame, an Arrow table, ranx objects and ir_datasets rows
    reads columns: no pytrec_eval dict is made of them (each dict maker raises here: they
    used to be turned into {qid: {docno: value}} one Python row at a time), and the values
    are the dicts' ones, key for key."""
    ranx = pytest.importorskip("ranx")
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import LocalDownload

    from trecqr.formats import objects
    from trecqr.engine import rankings as core_rankings
    from trecqr.engine import pytrec_values

    q, d, s, qq, qd, g = cols
    measures = {"map", "ndcg_cut_3", "recip_rank", "P_10", "recall_100", "bpref"}
    qrels_dict = ranx.Qrels.from_file(str(files[0]), kind="trec").to_dict()
    run_dict = ranx.Run.from_file(str(files[1]), kind="trec").to_dict()
    expected = trecqr.RelevanceEvaluator(qrels_dict, measures).evaluate(run_dict)
    assert len(expected) == 158
    assert expected["106_1"]["recip_rank"] == 0.5
    qrels_kinds = [pd.DataFrame({"qid": qq, "docno": qd, "label": g}),
                   pa.table({"query_id": qq, "doc_id": qd, "relevance": g}),
                   ranx.Qrels.from_file(str(files[0]), kind="trec"),
                   TrecQrels(LocalDownload(str(files[0])), {}).qrels_iter()]
    run_kinds = [pd.DataFrame({"qid": q, "docno": d, "score": s}),
                 pa.table({"query_id": q, "doc_id": d, "score": s}),
                 ranx.Run.from_file(str(files[1]), kind="trec")]

    def refuse(*args, **kwargs):
        raise AssertionError("a table input was turned into dicts")

    for cls in (ranx.Run, ranx.Qrels):
        monkeypatch.setattr(cls, "to_dict", refuse)
    monkeypatch.setattr(pytrec_values.DictQrels, "__init__", refuse)
    for module, name in ((objects, "run_from_dict"), (objects, "qrels_from_dict"),
                         (pytrec_values, "grouped_dicts"),
                         (core_rankings, "dict_values"),
                         (core_rankings, "rank_run")):
        monkeypatch.setattr(module, name, refuse)
    for qrels in qrels_kinds:
        ev = trecqr.RelevanceEvaluator(qrels, measures)
        for run in run_kinds:
            assert ev.evaluate(run) == expected


def test_evaluate_many_takes_every_kind(files, cols, expected):
    ranx = pytest.importorskip("ranx")
    q, d, s, qq, qd, g = cols
    runs = [pd.DataFrame({"qid": q, "docno": d, "score": s}),
            pa.table({"query_id": q, "doc_id": d, "score": s}),
            ranx.Run.from_file(str(files[1]), kind="trec"), files[1]]
    qrels = pd.DataFrame({"query_id": qq, "doc_id": qd, "relevance": g})
    for res in trecqr.evaluate_many(qrels, runs, MEASURES):
        _same(res, expected)


@pytest.fixture
def irds_entry(files, tmp_path):
    """A dataset in ir_datasets' registry whose qrels and scored documents are the CAsT 2021
    files, read by ir_datasets' own TREC parsers (local files: nothing can be downloaded)."""
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    names = {"trecqr-test/cast2021": (files[0], files[1]),
             "trecqr-test/missing": (tmp_path / "no-qrels", tmp_path / "no-run")}
    for name, (qrels, run) in names.items():
        ir_datasets.registry.register(name, Dataset(TrecQrels(LocalDownload(str(qrels)), {}),
                                                    TrecScoredDocs(LocalDownload(str(run)))))
    yield
    for name in names:
        del ir_datasets.registry._registered[name]


BARE = "msmarco-passage"  # in ir_datasets' registry: documents and queries only at this id


def test_irds_qrels_and_scoreddocs(irds_entry, files, expected):
    """irds:<id> for qrels and runs, as index, search and cqr take it (it was "no such
    file"); the same values as the files, from the API and the command line."""
    _same(trecqr.evaluate("irds:trecqr-test/cast2021", "irds:trecqr-test/cast2021", MEASURES),
          expected)
    _same(trecqr.evaluate("irds:trecqr-test/cast2021", files[1], MEASURES), expected)
    cli = run_cli(["eval", "-q", "-m", "map", "irds:trecqr-test/cast2021", str(files[1])])
    ref = run_cli(["eval", "-q", "-m", "map", str(files[0]), str(files[1])])
    assert cli.exit_code == 0 and cli.stdout == ref.stdout
    with pytest.raises(InputError, match=r"^irds:trecqr-test/missing: cannot read the qrels"):
        trecqr.evaluate("irds:trecqr-test/missing", files[1], ["map"])
    bad = run_cli(["eval", "irds:no-such/dataset", str(files[1])])
    assert bad.exit_code == 2 and "has no dataset 'no-such/dataset'" in bad.stderr
    # a dataset with neither qrels nor their handler (fuzz seed 79: was an internal
    # AttributeError): one line, as for one without qrels
    for args, what in (([f"irds:{BARE}", str(files[1])], "qrels"),
                       ([str(files[0]), f"irds:{BARE}"], "scoreddocs")):
        res = run_cli(["eval", "-m", "map", *args])
        assert res.exit_code == 2 and res.stderr == f"trecqr: ir_datasets '{BARE}' has no {what}\n"


def test_small_frames_are_read_as_lists_with_the_arrow_readers_values(files, tmp_path,
                                                                      monkeypatch):
    """A DataFrame of up to 8,192 rows with text ids and float64 scores / int64 grades is read
    straight into Python lists (the C pass's dicts are made from them; before: into Arrow and
    back, most of a small call's time); its Arrow columns, made when read, and its values are
    the Arrow reader's, on 40 real CAsT 2021 topics, in both conventions and both pandas text
    dtypes. Anything else still goes through the Arrow reader and its messages."""
    from trecqr.formats import tables
    from trecqr.formats.qrels import ListedQrels
    from trecqr.formats.run import ListedRun

    run, qrels = trecqr.load_run(files[1]), trecqr.load_qrels(files[0])
    topics = sorted(set(run.qid.to_pylist()) & set(qrels.qid.to_pylist()))[:40]
    keep_r = np.isin(np.array(run.qid.to_pylist()), topics)
    keep_q = np.isin(np.array(qrels.qid.to_pylist()), topics)
    r_cols = (np.array(run.qid.to_pylist())[keep_r].tolist(),
              np.array(run.docno.to_pylist())[keep_r].tolist(), run.score[keep_r])
    q_cols = (np.array(qrels.qid.to_pylist())[keep_q].tolist(),
              np.array(qrels.docno.to_pylist())[keep_q].tolist(), qrels.grade[keep_q])
    assert 2000 < len(r_cols[2]) <= tables.SMALL_ROWS
    rpath, qpath = tmp_path / "run", tmp_path / "qrels"
    rpath.write_text("".join(f"{q} Q0 {d} 0 {s!r} x\n"
                             for q, d, s in zip(*r_cols[:2], r_cols[2].tolist())))
    qpath.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in zip(*q_cols)))
    from_files = _values(trecqr.evaluate(qpath, rpath, MEASURES))
    for names, dtype in ((("qid", "docno", "score", "label"), None),
                         (("query_id", "doc_id", "score", "relevance"), object)):
        rf = pd.DataFrame(dict(zip(names[:3], r_cols)))
        qf = pd.DataFrame(dict(zip((*names[:2], names[3]), q_cols)))
        if dtype is not None:
            rf = rf.astype({names[0]: dtype, names[1]: dtype})
            qf = qf.astype({names[0]: dtype, names[1]: dtype})
        fast_r, fast_q = trecqr.load_run(rf), trecqr.load_qrels(qf)
        assert isinstance(fast_r, ListedRun) and isinstance(fast_q, ListedQrels)
        assert _values(trecqr.evaluate(qf, rf, MEASURES)) == from_files
        with monkeypatch.context() as m:
            m.setattr(tables, "SMALL_ROWS", 0)  # the Arrow reader
            slow_r, slow_q = trecqr.load_run(rf), trecqr.load_qrels(qf)
            assert not isinstance(slow_r, ListedRun)
            assert _values(trecqr.evaluate(qf, rf, MEASURES)) == from_files
        assert fast_r.qid.equals(slow_r.qid) and fast_r.docno.equals(slow_r.docno)
        assert fast_q.qid.equals(slow_q.qid) and fast_q.docno.equals(slow_q.docno)
        assert np.array_equal(fast_r.score, slow_r.score) and fast_r.source == slow_r.source
        assert np.array_equal(fast_q.grade, slow_q.grade) and fast_q.grade.dtype == np.int64
        rf.loc[0, "score"] = -1.0  # the frame changes after it was read: the run does not
        assert fast_r.score[0] == r_cols[2][0]
    # not plain: the Arrow reader converts or refuses, as before
    small = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "score": [1.0, 2.0]})
    assert not isinstance(trecqr.load_run(small), ListedRun)
    assert trecqr.load_run(small).qid.to_pylist() == ["1", "1"]  # decimal text
    for bad, message in (
            (pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "score": [1.0, 2.0]}),
             "row 1: query id is missing"),
            (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, np.nan]}),
             "row 1: score is missing")):
        with pytest.raises(InputError, match=f"^<run DataFrame>: {message}$"):
            trecqr.load_run(bad)
    f32 = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": np.float32([0.1])})
    assert trecqr.load_run(f32).score.tolist() == [float(np.float32(0.1))]
