"""The papers' query and dense settings, applied from a preset (``cqr --preset``, ``search
--preset``).

* BM25 query truncation: ConvSearch-R1 (``src/eval/get_metrics_using_bm25.py``) and CHIQ
  (``bm25/bm25_qrecc.py``) keep the first 512 tokens of a rewrite split on a single space,
  ``" ".join(q.split(" ")[:512])``, which matters for long reasoning rewrites;
* dense encoding lengths: passages at ``passage_max_len`` tokens (ANCE 384 in every repository
  read, where trecqr's ANCE default is Pyserini's 256) and queries at ``query_max_len``
  (512 ConvSearch-R1 and AdaCQR, 64 ConvGQR and LLM4CS, 128 RetPO and CHIQ on CAsT).
"""

from __future__ import annotations

from trecqr.datasets.topics import Topics


def cut_query_words(topics, n: int | None):
    """(topics with every query cut to its first n space-separated tokens, turns cut)."""
    if not n:
        return topics, 0

    cut, changed = [], 0
    for q in topics.queries:
        parts = q.split(" ")
        changed += len(parts) > n
        cut.append(" ".join(parts[:n]))
    if not changed:
        return topics, 0
    return Topics(list(topics.qids), cut, dict(topics.metadata), topics.source), changed


def dense_index_params(preset, encoder: str = "sentence-transformers") -> dict:
    """Index build parameters of the dense backend a preset implies: the passage length in
    tokens, and for the ANCE encoder the query length (a sentence-transformers model encodes
    queries at its one max_seq_length)."""
    if preset is None:
        return {}
    out = {}
    if preset.passage_max_len:
        out["max_seq_length"] = preset.passage_max_len
    if preset.query_max_len and encoder == "ance":
        out["query_max_length"] = preset.query_max_len
    return out
