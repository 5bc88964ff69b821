"""Which turns count: the CQR papers' turn policies, so that a preset can record its own.

Each repository decides in code what happens to a turn whose rewrite is unusable, and the
numbers move with it (read at the commits in :mod:`trecqr.protocols.papers`):

``raw``    the turn keeps its raw question (trecqr's default);
``drop``   the turn leaves the average: ConvSearch-R1 (``src/infer/infer.py``) writes no record
           for a generation whose ``<rewrite>`` it cannot parse, so its QReCC table is over
           8,124 turns, not 8,209;
``human``  the turn takes the dataset's human rewrite (AdaCQR falls back to it when an LLM
           rewrite is missing): the ``human`` topics given, else the record's own human-rewrite
           field (``Truth_rewrite`` in QReCC-derived files);
``empty``  the turn keeps an empty query, so an empty ranking that scores 0 in the average
           (InfoCQR keeps empty rankings for empty queries);
``error``  fail, naming the turns.

A rewrite is unusable when it is missing, null, empty, or cannot be read as text (a
chat-completion object without content, for example). ``min_results`` is RetPO's rule
(``eval/bm25_topiocqa.py``): a turn for which BM25 returns fewer than N passages is left out of
the run, so out of the average.

The policies are applied where rewrites are read, one floor down:
:data:`trecqr.datasets.rewrites.topics.POLICIES` names them and
:func:`trecqr.datasets.rewrites.files.record_human` finds a record's human rewrite. This module
holds what acts on a run: the ``min_results`` cut and the ``empty`` turns that count 0.
"""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats.run import Run


def drop_short_rankings(run, min_results: int):
    """(run without the turns that have fewer than min_results lines, their qids in order)."""
    if min_results is None or min_results <= 0 or len(run) == 0:
        return run, []
    counts = pc.value_counts(run.qid)
    short = [c["values"] for c in counts.to_pylist() if c["counts"] < min_results]
    if not short:
        return run, []
    keep = pc.invert(pc.is_in(run.qid, value_set=pa.array(short, type=run.qid.type)))
    mask = np.asarray(keep.to_numpy(zero_copy_only=False), dtype=bool)

    out = Run(pc.filter(run.qid, keep), pc.filter(run.docno, keep), run.score[mask],
              run.runid, run.source)
    return out, short


def min_results_note(short: list, min_results: int | None) -> str:
    """The coverage line's words for the turns --min-results left out."""
    if not min_results:
        return ""
    shown = f" ({', '.join(short[:3])}{', ...' if len(short) > 3 else ''})" if short else ""
    return (f"--min-results {min_results}: {len(short)} turns with fewer results left out of the "
            f"run{shown}")


def zero_turns(topics, qrels_qids: set, run_qids: set) -> list:
    """Turns kept with an empty query (missing='empty') that have gold and no results: they
    count 0 in the average, as an empty ranking does in pytrec_eval."""
    return [q for q, text in topics if text == "" and q in qrels_qids and q not in run_qids]


def with_zero_turns(results, n_zero: int) -> dict:
    """``results.aggregate()`` with n_zero more turns scoring 0 in every mean: trec_eval's
    left-to-right sum over the evaluated turns (the zeros add nothing) over the larger count,
    which is what ``-c`` gives when those are the only judged turns without results."""
    agg = results.aggregate()
    if not n_zero:
        return agg
    per = results.per_query()
    qids = list(results.evaluation.qids)
    for key in agg:
        values = np.array([per[q].get(key, 0.0) for q in qids], dtype=np.float64)
        total = float(np.cumsum(values)[-1]) if len(values) else 0.0
        agg[key] = total / (len(values) + n_zero)
    return agg
