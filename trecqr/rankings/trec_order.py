"""trec_eval's ranking of run columns: the tie-broken order, duplicates, by the C ranker.

trec_eval sorts each topic's documents by score descending, then docno descending (strcmp), and
refuses a docno retrieved twice for a topic. Columns in any order (a DataFrame's, an Arrow
table's, a file's the C scanner could not read in topic blocks) are ranked in one C pass
(``_columns.c``): numpy's sorts over millions of rows took most of ``evaluate``'s time.
"""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError
from trecqr.formats.textio import repeated_at
from trecqr.rankings._columns import rank_columns, topic_codes
from trecqr.rankings.options import Options


# --------------------------------------------------------------------------- the C ranker
def string_buffers(col) -> tuple:
    """(offsets, data) of an Arrow string column, as the C ranker reads it: the offsets
    (int32, or int64 for a large_string column), one per row plus one, into the bytes of
    data. Other string types (string_view, dictionary) are cast to large_string first."""
    if isinstance(col, pa.ChunkedArray):
        col = col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = pc.cast(col, pa.large_string())
    _, offsets, data = col.buffers()[:3]
    width = np.int64 if pa.types.is_large_string(col.type) else np.int32
    if offsets is None:  # an empty column
        return np.zeros(len(col) + 1, width), b""
    off = np.frombuffer(offsets, dtype=width)[col.offset:col.offset + len(col) + 1]
    return off, b"" if data is None else data


def qid_codes(qid) -> tuple:
    """(each row's topic code, the distinct qids): codes number the qids in first-seen order
    (int32), as the C ranker reads them; one C pass over the column."""
    offsets, data = string_buffers(qid)
    codes = np.empty(len(offsets) - 1, dtype=np.int32)
    return codes, topic_codes(offsets, data, codes)


def ranked_columns(run, topic: np.ndarray, topic_pos: np.ndarray, qrels, q_pos: np.ndarray,
                   options: Options, rel_dtype, n_evaluated: int) -> tuple:
    """trec_eval's rankings of run columns, by the C columns ranker (``_columns.c``): the
    grades in ranked order, evaluated topic after evaluated topic, and each topic's count.

    topic: each run row's topic code; topic_pos: each code's evaluated topic (-1: none, its
    rows only checked for duplicates); q_pos: each judgment's evaluated topic (-1: none).
    Scores descending (as C floats under 9.0.8), ties by docno descending; -M, then -J. A
    docno retrieved twice for a topic is an input error, named at its second line.
    """
    n = len(run)
    rel = np.empty(n, dtype=rel_dtype)
    counts = np.zeros(n_evaluated, dtype=np.int64)
    doc_offsets, doc_data = string_buffers(run.docno)
    q_offsets, q_data = string_buffers(qrels.docno)
    got = rank_columns(np.ascontiguousarray(topic, dtype=np.int32),
                       np.ascontiguousarray(topic_pos, dtype=np.int32),
                       np.ascontiguousarray(run.score, dtype=np.float64),
                       options.float32_scores, doc_offsets, doc_data,
                       np.ascontiguousarray(q_pos, dtype=np.int32), q_offsets, q_data,
                       np.ascontiguousarray(qrels.grade, dtype=np.int64),
                       options.max_docs, options.judged_only, rel, counts)
    if isinstance(got, tuple):
        i = got[1]
        raise_duplicate(run, "document", run.qid[i].as_py(), run.docno[i].as_py())
    # -M or -J may keep few of the rows: do not hold the whole buffer for them
    return (rel[:got] if 2 * got >= n else rel[:got].copy()), counts


def raise_duplicate(obj, what: str, qid: str, docno: str):
    where, lead, first = repeated_at(obj, qid, docno)
    raise InputError(obj.source, where,
                     f"{lead}duplicate {what} for topic {qid!r} and docno {docno!r}{first}")
