"""The axes of tests/api/test_oracle_matrix.py: the data, the input kinds a user holds, the doors
into trecqr, and the oracles, each computed without trecqr.

* Data: compat_cases' seeded dicts, trec_eval's own test files, TREC CAsT 2021's document runs
  and qrels, the TREC Tasks 2016 suggestion runs with their diversity qrels.
* Input kinds: the same rows as pytrec_eval dicts, TREC files, DataFrames (ir_measures' and
  PyTerrier's column names), Arrow tables and batches, ranx objects, ir_datasets' and
  ir_measures' rows, Parquet / Feather / JSONL files, MS MARCO's three-column files.
* Oracles: pytrec_eval, ir_measures' own pipeline (its providers without trecqr's and ranx's:
  see test_oracle_edges.py::test_provider_numret_follows_the_first_invocation and
  differential_refs.own_pipeline), and the trec_eval binaries built from the official source
  (9.0.8 and 10.0), found beside shared/ as te/te908 and te/te10 or named by
  $TRECQR_TREC_EVAL_908 / $TRECQR_TREC_EVAL_10; the tests that need one skip without it.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

import trecqr
from conftest import DATA, TE, data_path
from differential_refs import own_pipeline


def trec_eval_binary(version: str):
    """The path of the trec_eval binary of a version ("9.0.8" or "10.0"), or None."""
    env = {"9.0.8": "TRECQR_TREC_EVAL_908", "10.0": "TRECQR_TREC_EVAL_10"}[version]
    name = {"9.0.8": "te908", "10.0": "te10"}[version]
    path = Path(os.environ.get(env) or DATA.parent.parent / "te" / name)
    return path if path.is_file() and os.access(path, os.X_OK) else None


def needs_trec_eval(version: str):
    binary = trec_eval_binary(version)
    if binary is None:
        pytest.skip(f"no trec_eval {version} binary (te/ beside shared/, or "
                    f"$TRECQR_TREC_EVAL_{version.replace('.', '')[:3]})")
    return binary


def run_trec_eval(binary, args) -> str:
    done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


# ------------------------------------------------------------------------------ data
def dicts_of_files(qrels_path, run_path):
    """pytrec_eval's own parsers on TREC files."""
    import pytrec_eval

    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    return qrels, run


def cast2021(run="docrun_org_manual_bm25.run"):
    return data_path("cast2021", "qrels-docs.2021.qrel"), data_path("cast2021", run)


def te_test():
    return TE / "qrels.test", TE / "results.test"


def renumbered(qrels_path, run_path, subtopics=False):
    """Both sides as ir_measures DataFrames, topic ids renumbered (1, 2, ...) in the run's order:
    gdeval.pl, the provider of ERR and exp-log2 nDCG, takes only numeric ids and adds topics in
    numeric order."""
    import pandas as pd

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    run = list(ir_measures.read_trec_run(str(run_path)))
    ids: dict = {}
    for row in run + qrels:
        ids.setdefault(row.query_id, str(len(ids) + 1))
    qf = pd.DataFrame({"query_id": [ids[q.query_id] for q in qrels],
                       "doc_id": [q.doc_id for q in qrels],
                       "relevance": [q.relevance for q in qrels]})
    if subtopics:
        qf["iteration"] = [q.iteration for q in qrels]
    rf = pd.DataFrame({"query_id": [ids[r.query_id] for r in run],
                       "doc_id": [r.doc_id for r in run], "score": [r.score for r in run]})
    return qf, rf


# ------------------------------------------------------------------------------ input kinds
def columns(qrels_path, run_path):
    """(run qid, docno, score, qrels qid, docno, grade) as trecqr's readers give them."""
    run, qrels = trecqr.load_run(run_path), trecqr.load_qrels(qrels_path)
    return (run.qid.to_pylist(), run.docno.to_pylist(), run.score,
            qrels.qid.to_pylist(), qrels.docno.to_pylist(), qrels.grade)


def _frames(c, names):
    import pandas as pd

    q, d, s, qq, qd, g = c
    extra = {"query": "x", "rank": np.arange(len(s))} if names[0] == "qid" else {}
    run = pd.DataFrame({names[0]: q, names[1]: d, "score": s, **extra})
    qrels = pd.DataFrame({names[0]: qq, names[1]: qd, names[2]: g,
                          **({"iteration": "0"} if extra else {})})
    return qrels, run


def _table_files(c, kind, folder):
    q, d, s, qq, qd, g = c
    paths = []
    for name, table in (("qrels", pa.table({"query_id": qq, "doc_id": qd, "relevance": g})),
                        ("run", pa.table({"qid": q, "docno": d, "score": s}))):
        path = folder / f"{name}.{kind}"
        if kind == "parquet":
            pq.write_table(table, path)
        elif kind == "feather":
            feather.write_feather(table, path)
        else:
            text = "".join(json.dumps(r) + "\n" for r in table.to_pylist()).encode()
            path.write_bytes(gzip.compress(text) if kind.endswith(".gz") else text)
        paths.append(path)
    return tuple(paths)


def _irds(files, lists):
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    qrels = TrecQrels(LocalDownload(str(files[0])), {}).qrels_iter()
    run = TrecScoredDocs(LocalDownload(str(files[1]))).scoreddocs_iter()
    return (list(qrels), list(run)) if lists else (qrels, run)


def _ranx(files, frames):
    ranx = pytest.importorskip("ranx")
    qrels = ranx.Qrels.from_file(str(files[0]), kind="trec")
    run = ranx.Run.from_file(str(files[1]), kind="trec")
    return (qrels.to_dataframe(), run.to_dataframe()) if frames else (qrels, run)


def _irm_rows(c):
    q, d, s, qq, qd, g = c
    return ((ir_measures.Qrel(a, b, int(x)) for a, b, x in zip(qq, qd, g)),
            [ir_measures.ScoredDoc(*t) for t in zip(q, d, s.tolist())])


def _arrow(c, batch):
    q, d, s, qq, qd, g = c
    run = pa.table({"query_id": q, "doc_id": d, "score": s})
    qrels = pa.table({"qid": pa.array(qq).dictionary_encode(), "docno": qd, "label": g})
    return qrels, (run.to_batches()[0] if batch else run)


def _arrow_views(c):
    """Text in Arrow's view types, as polars' ``to_arrow`` and DuckDB give it: string_view
    ids in chunks, a dictionary of string_view topics, binary_view docnos, text grades."""
    q, d, s, qq, qd, g = c
    view, half = pa.string_view(), len(d) // 2
    run = pa.table({"qid": pa.array(q).cast(view),
                    "docno": pa.chunked_array([pa.array(d[:half]).cast(view),
                                               pa.array(d[half:]).cast(view)]),
                    "score": s})
    qrels = pa.table({"qid": pa.array(qq).cast(view).dictionary_encode(),
                      "docno": pa.array(qd).cast(pa.binary_view()),
                      "label": pa.array(g).cast(pa.string()).cast(view)})
    return qrels, run


def _polars(c):
    """polars frames (an Arrow PyCapsule exporter): categorical topics in the qrels, float32
    scores in the run, as a polars pipeline may leave them."""
    import polars as pl

    q, d, s, qq, qd, g = c
    run = pl.DataFrame({"query_id": q, "doc_id": d, "score": s})
    qrels = pl.DataFrame({"query_id": qq, "doc_id": qd, "relevance": g}).with_columns(
        pl.col("query_id").cast(pl.Categorical))
    return qrels, run


def _hf_datasets(c):
    """Hugging Face Datasets: the qrels in BEIR's and MTEB's columns (query-id, corpus-id,
    score); the run's rows stored shuffled and put back in the file's order by ``sort``, an
    indices mapping over the stored table (read without it, the order would change the last
    bits of ir_measures' means, which follow the rows' order)."""
    import datasets

    q, d, s, qq, qd, g = c
    qrels = datasets.Dataset.from_dict({"query-id": qq, "corpus-id": qd, "score": g})
    stored = np.random.default_rng(0).permutation(len(s))
    run = datasets.Dataset.from_dict({"row": stored, "query_id": [q[i] for i in stored],
                                      "doc_id": [d[i] for i in stored], "score": s[stored]})
    return qrels, run.sort("row")


def _duckdb(c):
    """DuckDB relations (Arrow PyCapsule exporters, read again on each call): SQL over the rows
    that renames the columns, in the file's order (ORDER BY: without it a relation's order is
    its scan's, and ir_measures' means follow the rows' order in their last bits)."""
    import duckdb

    q, d, s, qq, qd, g = c
    con = duckdb.connect()
    con.register("run_rows", pa.table({"n": np.arange(len(s)), "q": q, "d": d, "s": s}))
    con.register("qrels_rows", pa.table({"n": np.arange(len(g)), "q": qq, "d": qd, "g": g}))
    return (con.sql("SELECT q AS query_id, d AS doc_id, g AS relevance FROM qrels_rows "
                    "ORDER BY n"),
            con.sql("SELECT q AS qid, d AS docno, s AS score FROM run_rows ORDER BY n"))


# every kind a user may hand in: (qrels, run) made from the TREC files' rows
KINDS = {
    "trec files": lambda files, c, tmp: files,
    "dicts": lambda files, c, tmp: dicts_of_files(*files),
    "ir_measures DataFrame": lambda files, c, tmp: _frames(c, ("query_id", "doc_id",
                                                                "relevance")),
    "PyTerrier DataFrame": lambda files, c, tmp: _frames(c, ("qid", "docno", "label")),
    "Arrow table": lambda files, c, tmp: _arrow(c, batch=False),
    "Arrow record batch": lambda files, c, tmp: _arrow(c, batch=True),
    "Arrow views": lambda files, c, tmp: _arrow_views(c),
    "polars DataFrames": lambda files, c, tmp: _polars(c),
    "Hugging Face Datasets": lambda files, c, tmp: _hf_datasets(c),
    "DuckDB relations": lambda files, c, tmp: _duckdb(c),
    "trecqr Qrels and Run": lambda files, c, tmp: (trecqr.load_qrels(files[0]),
                                                   trecqr.load_run(files[1])),
    "ranx objects": lambda files, c, tmp: _ranx(files, frames=False),
    "ranx DataFrames": lambda files, c, tmp: _ranx(files, frames=True),
    "ir_datasets iterators": lambda files, c, tmp: _irds(files, lists=False),
    "ir_datasets lists": lambda files, c, tmp: _irds(files, lists=True),
    "ir_measures rows": lambda files, c, tmp: _irm_rows(c),
    "Parquet files": lambda files, c, tmp: _table_files(c, "parquet", tmp),
    "Feather files": lambda files, c, tmp: _table_files(c, "feather", tmp),
    "JSONL files": lambda files, c, tmp: _table_files(c, "jsonl", tmp),
    "JSONL.gz files": lambda files, c, tmp: _table_files(c, "jsonl.gz", tmp),
}


def three_column_files(files, folder):
    """The run as MS MARCO writes it (qid, docid, rank in trec_eval's order), the same run
    converted as Pyserini converts it (score = 1/rank), and 3-column TSV qrels."""
    from trecqr.formats.order import trec_order

    run, qrels = trecqr.load_run(files[1]), trecqr.load_qrels(files[0])
    order, rank, _ = trec_order(run, float32=False)
    q, d = np.array(run.qid.to_pylist())[order], np.array(run.docno.to_pylist())[order]
    msmarco, converted = folder / "run.tsv", folder / "run.trec"
    msmarco.write_text("".join(f"{a}\t{b}\t{r}\n" for a, b, r in zip(q, d, rank)))
    converted.write_text("".join(f"{a} Q0 {b} {r} {1 / r} pyserini\n"
                                 for a, b, r in zip(q, d, rank)))
    tsv = folder / "qrels.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{a}\t{b}\t{c}\n" for a, b, c in zip(qrels.qid.to_pylist(), qrels.docno.to_pylist(),
                                             qrels.grade)))
    return msmarco, converted, tsv


# ------------------------------------------------------------------------------ oracles
def irm_oracle(names, qrels, run, one_call_each=False):
    """ir_measures' own values of names: ({name: mean}, {(name, qid): value}). Its own
    pipeline, not ir_measures.DefaultPipeline, which a test may have given trecqr's provider."""
    measures = [ir_measures.parse_measure(n) for n in names]
    calc = own_pipeline().calc
    name_of = dict(zip(measures, names))
    if one_call_each:  # some providers mix up a batch of parameter sets
        results = [calc([m], qrels, run) for m in measures]
    else:
        results = [calc(measures, qrels, run)]
    means, per_topic = {}, {}
    for result in results:
        means.update({name_of[m]: v for m, v in result.aggregated.items()})
        per_topic.update({(name_of[m.measure], m.query_id): m.value for m in result.per_query})
    return means, per_topic


def no_runid(text: str) -> list:
    return [line for line in text.splitlines() if not line.startswith("runid")]
