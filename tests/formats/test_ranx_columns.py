"""A ranx Run or Qrels read as columns by the compiled pass: every topic and document in the
dicts' order, non-ASCII ids byte for byte, scores and grades exact (the CAsT 2021 files read
through ranx against the same files read as TREC text: tests/api/test_oracle_matrix.py).
Read by ranx from TREC files, as the matrix does, with one document id as long as the longest in
the matrix's run and one as long as the longest in its qrels: ranx's readers (numba) are compiled
once per id width, about 10 s each on a fresh venv, so these share the matrix's compilations."""

from __future__ import annotations

import pytest

from oracle_cases import cast2021

ranx = pytest.importorskip("ranx")

from trecqr.formats.objects import ranx_table  # noqa: E402

# as ranx stores them: topics in code point order, each topic's documents by score or grade
RUN = [("q1", "ü", 2.0), ("q1", "d€", 1.5), ("q1", "😀x", 0.1), ("q1", "plain", -1.0),
       ("q3", "only", 7.0), ("é😀", "a", 0.30000000000000004),
       ("é😀", "長い文書", 1e-300)]
QRELS = [("q1", "😀x", 3), ("q1", "d€", 0), ("é😀", "a", 2), ("é😀", "長い文書", -1)]


def _longest_docno(path) -> int:
    with open(path, encoding="utf-8") as lines:
        return max(len(line.split()[2]) for line in lines)


def _with_long_ids():
    """RUN and QRELS, each with one more document whose id is as long as the longest of the
    matrix's file of the same kind (numpy's string width, so ranx's compiled type)."""
    qrels_file, run_file = cast2021()
    long_run = "r" + "ü" * (_longest_docno(run_file) - 1)
    long_qrels = "q" + "€" * (_longest_docno(qrels_file) - 1)
    run = RUN[:5] + [("q3", long_run, 5.0)] + RUN[5:]
    qrels = QRELS[:1] + [("q1", long_qrels, 1)] + QRELS[1:]
    return run, qrels


def test_run_and_qrels_keep_the_dicts_order_ids_and_values(tmp_path):
    run_rows, qrels_rows = _with_long_ids()
    run_file, qrels_file = tmp_path / "r.trec", tmp_path / "q.trec"
    run_file.write_text("".join(f"{q} Q0 {d} {i} {s!r} x\n"
                                for i, (q, d, s) in enumerate(run_rows)), encoding="utf-8")
    qrels_file.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels_rows), encoding="utf-8")
    for typed, value, want in (
            (ranx.Run.from_file(str(run_file), kind="trec").run, "score", run_rows),
            (ranx.Qrels.from_file(str(qrels_file), kind="trec").qrels, "relevance", qrels_rows)):
        table = ranx_table(typed, value)
        got = list(zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", value))))
        assert got == want
        assert str(table.schema.field(value).type) == ("double" if value == "score" else "int64")
