"""Topics straight from a conversational dataset file, a query field and optional rewrites.

``trecqr search`` and ``trecqr cqr`` take these instead of a topics file, so a user can go from
the published dataset files to a run in one command:

=============  ======================================  =====================================
dataset        file                                    query fields
=============  ======================================  =====================================
``qrecc``      QReCC JSON, SCAI turns or InfoCQR JSONL  raw, human, context, rewrite
``topiocqa``   TopiOCQA raw JSON or DPR-style JSON      raw, history, last-k, rewrite
``cast``       TREC CAsT evaluation topics JSON         raw, manual, automatic, rewrite
``irds``       an ir_datasets id (no file)              any field of its queries, or rewrite
=============  ======================================  =====================================

``rewrite`` reads a model's rewrites file matched to the dataset's turns; a turn whose rewrite is
missing or empty follows ``missing`` (``raw``: its raw question; ``drop``; ``error``). Every
topic id is the canonical ``conv_turn`` of :mod:`trecqr.datasets.turn_ids`.
"""

from __future__ import annotations

from trecqr.errors import UsageError
from trecqr.datasets.cast.topics import read_cast_topics
from trecqr.datasets.irds import convert_queries, load
from trecqr.datasets.qrecc.files import qrecc_topics, read_qrecc_turns
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import Topics
from trecqr.datasets.topiocqa import read_topiocqa_turns, rewrite_topics, turns_to_topics

DATASETS = ("qrecc", "topiocqa", "cast", "irds")


def _with_rewrites(raw, rewrites, missing, **options):
    if rewrites is None:
        raise UsageError("query field 'rewrite' needs a rewrites file (--rewrites)")
    return read_rewrites(rewrites, missing=missing, raw=raw, **options).topics


def dataset_topics(dataset: str, source, query_field: str | None = None, *, rewrites=None,
                   missing: str = "raw", k: int = 3, **rewrite_options):
    """Topics of ``dataset`` (one of DATASETS) read from ``source`` (a file, or an ir_datasets
    id for ``irds``) with ``query_field`` (default ``raw``; ``rewrite`` when rewrites are given).
    """
    if dataset not in DATASETS:
        raise UsageError(f"unknown dataset {dataset!r} (one of {', '.join(DATASETS)})")
    if query_field is None:
        query_field = "rewrite" if rewrites is not None else "raw"
    elif rewrites is not None and query_field != "rewrite":
        raise UsageError("a rewrites file goes with query field 'rewrite'")
    if dataset == "qrecc":
        return qrecc_topics(read_qrecc_turns(source), query_field, rewrites=rewrites,
                            missing=missing, source=str(source), **rewrite_options)[0]
    if dataset == "topiocqa":
        turns = read_topiocqa_turns(source)
        if query_field == "rewrite":
            if rewrites is None:
                raise UsageError("query field 'rewrite' needs a rewrites file (--rewrites)")
            return rewrite_topics(rewrites, turns, missing, **rewrite_options)[0]
        return turns_to_topics(turns, query_field, k)
    if dataset == "cast":
        cast = read_cast_topics(source)
        field = "raw" if query_field == "rewrite" else query_field
        pairs = cast.queries(field)
        topics = Topics([q for q, _ in pairs], [t for _, t in pairs], cast.metadata(),
                        str(source))
        if query_field == "rewrite":
            return _with_rewrites(topics, rewrites, missing, **rewrite_options)
        return topics

    ds = load(str(source))
    if query_field == "rewrite":
        raw = convert_queries(ds, str(source))[0]
        return _with_rewrites(raw, rewrites, missing, **rewrite_options)
    return convert_queries(ds, str(source), None if query_field == "raw" else query_field)[0]
