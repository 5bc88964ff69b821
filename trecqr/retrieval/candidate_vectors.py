"""LLM4CS's dense aggregations of several candidate rewrites per turn: Mean and SC.

LLM4CS (Mao et al., 2023) samples several rewrites per turn and turns them into one query
vector per turn. The definitions here are those of its evaluation script,
``evaluation/eval_dense_retrieval.py`` of kyriemao/LLM4CS @ a292fb88e5b9898af3e5b000ca9a2c3d2c2ea99e
(``get_embeddings`` and ``batch_closest_candidate``):

``first``  (LLM4CS's MaxProb) the first, most probable candidate's embedding.
``mean``   the mean of the candidates' embeddings (``np.mean`` over the candidates). Nothing is
           normalised after averaging: LLM4CS encodes with ANCE and uses raw inner products.
``sc``     self-consistency: the candidate whose embedding has the largest sum of inner products
           with all the turn's candidate embeddings (itself included), i.e. the largest inner
           product with their mean; the first such candidate on a tie (``np.argmax``; sums
           equal to float32 rounding are ties, see :func:`closest_candidate`: with two
           unit-length candidates, SC is always the first). It is searched with its own
           embedding.

With responses (LLM4CS's ``--include_response``: the RTR/RAR prompts generate a response with
each rewrite), a response is a separate embedding, never concatenated text:

``first``  ``(rewrite_0 + response_0) / 2``;
``mean``   the mean of the 2n embeddings, the n rewrites' and the n responses' together
           (``np.concatenate([query, response], axis=1).mean(axis=1)``);
``sc``     the candidate is chosen on the rewrites' embeddings alone, as above, and searched with
           ``(rewrite_c + response_c) / 2``.

A turn with one candidate and one response gets ``(rewrite + response) / 2`` whatever ``how``.

Rewrites are encoded as :func:`~.dense.search` encodes queries (the index's model, query length
and normalisation); responses as passages are (ANCE: truncated at 512 tokens, LLM4CS's response
length, instead of the passages' 256). On a cosine index (``normalize=True``, MiniLM) every
candidate embedding is unit length and the mean is not rescaled, so a passage's score under
``mean`` is the mean of its cosines with the candidates (the ranking is the same as the
rescaled mean's). LLM4CS assumes every turn has the same number of candidates; here the number
may differ per turn, but a turn needs at least one candidate (a UsageError names it otherwise:
fill or drop it first). A blank candidate is encoded as given, as LLM4CS would.

All rewrites of all turns are encoded in one pass, as :func:`~.dense.search` encodes topics
(one encoder call per chunk of batch_size x 16 texts), the responses in another; only the
per-turn arithmetic is a Python loop over numpy arrays. The embeddings (:class:`Encoded`) serve
every aggregation: ``cqr --candidates mean,sc`` encodes an input's candidates once.

The tie rule is the one departure from LLM4CS's code: its ``np.argmax`` on float32 sums would
decide two-candidate turns on a cosine index by rounding alone (on the 927 QReCC demo turns
with GPT_rewrite and Editor_rewrite, it would pick the editor's on 217).
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from trecqr.datasets.topics import Topics
from trecqr.errors import UsageError
from trecqr.retrieval import dense

HOWS = ("first", "mean", "sc")
TIE_TOLERANCE = 1e-5  # relative; float32 embeddings carry ~1e-7 each
RESPONSE_MAX_LENGTH = 512  # LLM4CS encodes responses with ANCE at 512 tokens (passages: 256)


def dense_handle(index):
    """(faiss index, docids, encoder, manifest) of a dense index: a loaded Index (as
    :func:`~.backends.load_index` returns it), dense.load_index's tuple, or an index folder."""
    if isinstance(index, (str, os.PathLike)):
        return dense.load_index(index)
    handle = getattr(index, "handle", index)
    if not isinstance(handle, tuple) or len(handle) != 4 or not isinstance(handle[-1], dict):
        raise UsageError(f"not a loaded dense index: {type(index).__name__}")
    backend = handle[-1].get("backend")
    if backend != dense.BACKEND:
        raise UsageError(f"the candidate aggregations mean and sc need a dense index, "
                         f"not a {backend} one")
    return handle


def _check(candidates, responses, qids):
    """Per-turn candidate counts, after checking every turn has some and responses match."""
    name = (lambda i: repr(qids[i])) if qids is not None else (lambda i: f"#{i + 1}")
    counts = [len(c) for c in candidates]
    for i, n in enumerate(counts):
        if n == 0:
            raise UsageError(f"turn {name(i)} has no candidate rewrite (fill or drop it first)")
    if responses is not None:
        if len(responses) != len(candidates):
            raise UsageError(f"{len(responses)} turns of responses for {len(candidates)} "
                             "turns of candidates")
        for i, (n, r) in enumerate(zip(counts, responses)):
            if len(r) != n:
                raise UsageError(f"turn {name(i)}: {n} candidates but {len(r)} responses")
    return counts


def _encode_responses(handle, texts, batch_size):
    encoder, normalize = handle[2], bool(handle[-1]["normalize"])
    if isinstance(encoder, dense.AnceModel):
        emb = encoder.encode(texts, batch_size=batch_size, normalize_embeddings=normalize,
                             max_length=RESPONSE_MAX_LENGTH)
        return np.ascontiguousarray(emb, dtype=np.float32)
    return dense.encode_texts(handle, texts, batch_size, queries=False)


def closest_candidate(embeddings: np.ndarray) -> int:
    """LLM4CS's ``batch_closest_candidate`` for one turn: the row with the largest sum of inner
    products with all rows, the first of those tied (``np.argmax``). Sums within
    :data:`TIE_TOLERANCE` of the largest (relative) are ties: float32 rounding is all that
    separates them, e.g. two unit-length candidates, whose sums are both 1 + their cosine."""
    sums = np.dot(embeddings.astype(np.float64), embeddings.T.astype(np.float64)).sum(axis=1)
    top = sums.max()
    return int(np.flatnonzero(sums >= top - TIE_TOLERANCE * max(abs(top), 1e-30))[0])


class Encoded(NamedTuple):
    """The embeddings every aggregation of the same candidates reads (rows: the turns'
    candidates in order), so ``mean`` and ``sc`` of one input encode its candidates once."""

    rewrites: np.ndarray
    responses: np.ndarray | None  # a row per candidate's response, or None
    counts: list  # candidates per turn


def _known(how: str) -> None:
    if how not in HOWS:
        raise UsageError(f"unknown candidate aggregation {how!r} (one of {', '.join(HOWS)})")


def encode_candidates(index, candidates, *, responses=None, qids=None,
                      batch_size: int = dense.DEFAULT_BATCH_SIZE, n_threads: int | None = None,
                      show_progress: bool = False) -> Encoded:
    """The candidates' embeddings (all turns in one pass, as queries are encoded) and the
    responses' (as passages are); responses: None or per turn a list of the same length (a
    response per candidate); qids only name turns in errors; n_threads: torch's for the call
    (None: as it is)."""
    if batch_size < 1:
        raise UsageError("batch_size must be at least 1")
    handle = dense_handle(index)
    candidates = [list(c) for c in candidates]
    counts = _check(candidates, responses, qids)
    flat = [text for turn in candidates for text in turn]
    with dense.thread_limit(n_threads):
        rewrites = dense.encode_texts(handle, flat, batch_size, show_progress)
        answers = None
        if responses is not None:
            answers = _encode_responses(handle, [t for turn in responses for t in turn],
                                        batch_size)
    return Encoded(rewrites, answers, counts)


def aggregate(encoded: Encoded, how: str):
    """(vectors, chosen) of encoded candidates by LLM4CS's aggregation ``how``: one float32
    query vector per turn, and per turn the 0-based index of the candidate searched
    (``first``: 0; ``sc``: the self-consistent one), or None for ``mean``."""
    _known(how)
    rewrites, answers, counts = encoded
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    vectors = np.empty((len(counts), rewrites.shape[1]), np.float32)
    chosen = None if how == "mean" else []
    for i, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        q = rewrites[a:b]
        r = answers[a:b] if answers is not None else None
        if how == "mean":
            vectors[i] = (q if r is None else np.concatenate([q, r])).mean(axis=0)
            continue
        c = 0 if how == "first" else closest_candidate(q)
        chosen.append(c)
        vectors[i] = q[c] if r is None else (q[c] + r[c]) / 2
    return vectors, chosen


def candidate_query_vectors(index, candidates, *, how: str, responses=None, qids=None,
                            batch_size: int = dense.DEFAULT_BATCH_SIZE,
                            show_progress: bool = False):
    """(vectors, chosen) of :func:`aggregate`: the candidates encoded
    (:func:`encode_candidates`) and aggregated by ``how``."""
    _known(how)
    return aggregate(encode_candidates(index, candidates, responses=responses, qids=qids,
                                       batch_size=batch_size, show_progress=show_progress), how)


def search_candidates(index, qids, candidates, *, how: str, responses=None, k: int,
                      run_id: str, batch_size: int = dense.DEFAULT_BATCH_SIZE,
                      n_threads: int | None = 1, show_progress: bool = False,
                      encoded: Encoded | None = None):
    """(Run, chosen): the dense run of one aggregated query vector per turn
    (:func:`candidate_query_vectors`), as :func:`~.dense.search` makes runs (min(k, passages)
    rows per turn, trec_eval order, float32 inner products), and the candidates chosen.
    encoded: these candidates' (and responses') :func:`encode_candidates`, when another
    aggregation of them has encoded them already."""
    qids = [str(q) for q in qids]
    candidates = [list(c) for c in candidates]
    _known(how)
    if k < 1:
        raise UsageError("k must be at least 1")
    if len(qids) != len(candidates):
        raise UsageError(f"{len(qids)} turns but {len(candidates)} lists of candidates")
    if encoded is not None and (encoded.counts != [len(c) for c in candidates]
                                or (encoded.responses is None) != (responses is None)):
        raise UsageError("encoded= holds the embeddings of other candidates or responses")
    handle = dense_handle(index)
    with dense.thread_limit(n_threads):
        if encoded is None:
            encoded = encode_candidates(handle, candidates, responses=responses, qids=qids,
                                        batch_size=batch_size, show_progress=show_progress)
        vectors, chosen = aggregate(encoded, how)
        shown = [c[0] for c in candidates] if chosen is None else \
            [c[j] for c, j in zip(candidates, chosen)]
        topics = Topics(qids, shown, source=f"<{how} of candidates>")
        run = dense.search_vectors(handle, topics, vectors, k, runid=run_id,
                                   source=f"<dense {how} of candidates>")
    return run, chosen
