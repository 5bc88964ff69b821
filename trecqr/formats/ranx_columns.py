"""A ranx ``Run`` or ``Qrels`` (numba typed dicts) as columns, in one compiled pass.

Read from Python, a typed dict costs a numba call per key (boxing, type dispatch) and the
first read in a process compiles its iterators, which numba cannot cache: about 4 s for a
CAsT run. :func:`_flatten` walks the dict inside numba instead and is cached on disk
(``cache=True``), so the first call after an install compiles it once and later processes
load it. It hands Python one joined string per column and each string's UTF-8 length, which
become Arrow string arrays without a Python statement per row.

Imported only for a ranx object: numba is loaded then anyway (ranx needs it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from trecqr.runtime.deferred import pa
from trecqr.formats.arrays import arrow_indices, arrow_numbers, not_utf8_id, utf8_array


@njit(cache=True)
def _utf8_length(text):
    n = 0
    for ch in text:
        code = ord(ch)
        n += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return n


@njit(cache=True)
def _flatten(store):
    """(topics joined, their lengths, documents per topic, docnos joined, their lengths,
    values) of ``{qid: {docno: value}}`` in the dicts' own order. Values as doubles: a Qrels'
    integer grades are exact in them."""
    n = 0
    for qid in store:
        n += len(store[qid])
    topics, docnos = [""] * len(store), [""] * n  # keys may be fixed-width (charseq): str()
    topic_bytes = np.empty(len(store), np.int64)
    sizes = np.empty(len(store), np.int64)
    docno_bytes = np.empty(n, np.int64)
    values = np.empty(n, np.float64)
    t = i = 0
    for qid in store:
        docs = store[qid]
        topics[t] = str(qid)
        topic_bytes[t] = _utf8_length(topics[t])
        sizes[t] = len(docs)
        t += 1
        for docno, value in docs.items():
            docnos[i] = str(docno)
            docno_bytes[i] = _utf8_length(docnos[i])
            values[i] = value
            i += 1
    return "".join(topics), topic_bytes, sizes, "".join(docnos), docno_bytes, values


def _strings(joined: str, lengths: np.ndarray, source: str) -> pa.Array:
    try:
        data = joined.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 text (Arrow strings are UTF-8)
        raise not_utf8_id(source) from None
    return utf8_array(data, lengths)


def ranx_table(store, value: str) -> pa.Table:
    """The ``{qid: {docno: value}}`` of a ranx Run (``value="score"``, floats) or Qrels
    (``"relevance"``, integers) as ``query_id``, ``doc_id`` and ``value`` columns, each
    topic's documents in the dict's order."""
    source = "<ranx Run>" if value == "score" else "<ranx Qrels>"
    topics, topic_bytes, sizes, docnos, docno_bytes, values = _flatten(store)
    qid = _strings(topics, topic_bytes, source).take(
        arrow_indices(np.repeat(np.arange(len(sizes)), sizes)))
    if value == "relevance":
        values = values.astype(np.int64)
    return pa.table({"query_id": qid, "doc_id": _strings(docnos, docno_bytes, source),
                     value: arrow_numbers(values)})
