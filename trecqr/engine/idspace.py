"""A run and qrels that do not share a document id space: one warning line, not silent zeros.

Repositories renumber passages: ConvDR-style integer ids for CAR and MS MARCO, ConvGQR's
``os.listdir`` order against ConvSearch-R1's zip order. A run scored against another
repository's qrels then gives 0 for every turn, and trec_eval says nothing. The check here looks
at the topics the run and the qrels share and warns when

* no judged document of those topics appears in the run, or
* fewer than 1% of the run's documents for those topics are judged, where the qrels judge at
  least 10% as many documents as the run retrieves for them (pooled qrels such as TREC's, where
  at least 10% usually are; QReCC's and TopiOCQA's one or two gold passages per turn are not
  held to it).

Judged means judged for any topic (a cheap upper bound of the judged pairs), so a warning is
never a false alarm caused by a docno judged for another topic only. It runs on the parsed
columns (no second read of the files); a streamed large run is not checked.
"""

from __future__ import annotations

import warnings

import numpy as np

from trecqr.runtime.deferred import pc
from trecqr.formats.arrays import as_numpy, string_array
from trecqr.rankings.build import NONPOOL


class IdSpaceWarning(UserWarning):
    """The run's document ids and the qrels' seem to come from different numberings."""


SMALL = 1024  # rows: up to this size Python sets beat Arrow's per-call costs (10 us a call)


def id_space_problem(qrels, run) -> str | None:
    """The warning text for QRELS and RUN (parsed, with ``qid``/``docno`` columns), or None.

    A run file the C scanner read with the qrels' docnos (its ``codes`` know which lines are
    judged) is checked on those codes: its docno column, which a file read in topic blocks
    does not hold, is read again only to quote an id in a warning."""
    if len(run) == 0 or len(qrels) == 0:
        return None
    if len(run) <= SMALL and len(qrels) <= SMALL:
        return _text(_small_counts(qrels, run), run.source, qrels.source)
    codes = getattr(run, "codes", None)
    if codes is not None and codes.hit_row is not None and codes.judged is not None:
        found = _scanned_counts(qrels, codes, len(run))
        if found is None or not _suspicious(*found):
            return None
    return _text(_counts(qrels, run), run.source, qrels.source)


def surely_one_space(rankings, run_rows: int, qrels_rows: int) -> bool:
    """True when the rule of the module docstring surely finds nothing, told from the
    rankings alone (no pass over the run's docnos): their judged documents (judged for their
    own topic: at most the documents judged for any topic) are a lower bound of ``judged``,
    their length a lower bound of the documents retrieved for the shared topics, the run's
    rows an upper bound, the qrels' rows an upper bound of the judgments. False: check in
    full (:func:`id_space_problem`)."""
    rel = rankings.rel
    judged = int(np.count_nonzero(rel != NONPOOL)) if len(rel) else 0
    retrieved_at_least = len(rel) - int(np.count_nonzero(rankings.bogus))
    return judged > 0 and (judged >= 0.01 * run_rows or qrels_rows < 0.1 * retrieved_at_least)


def _text(found, run_source: str, qrels_source: str) -> str | None:
    if found is None:
        return None  # nothing shared: trec_eval refuses these, ir_measures warns on its own
    judged, n, shared, qdocs, sample_run, sample_qrels = found
    if not _suspicious(judged, n, shared, qdocs):
        return None
    return (f"{run_source} and {qrels_source} seem to use different document id spaces: "
            f"{judged} of {n} retrieved documents of the {shared} topics they share are "
            f"judged; run ids look like {sample_run!r}, qrels ids like {sample_qrels!r}")


def _suspicious(judged: int, n: int, shared: int, qdocs: int) -> bool:
    """The rule of the module docstring: no judged document retrieved, or under 1% where the
    qrels judge at least 10% as many as the run retrieves."""
    return not judged or (judged < 0.01 * n and qdocs >= 0.1 * n)


def _scanned_counts(qrels, codes, n_lines: int):
    """(judged, retrieved, shared topics, judgments) of :func:`_counts`, from the scanner's
    codes: each line's topic, and the lines whose docno is among ``codes.judged`` (the qrels'
    docnos) with which one. None when no topic is shared."""
    qrels_topics = set(pc.unique(qrels.qid).to_pylist())
    is_shared = np.fromiter((t in qrels_topics for t in codes.topics), dtype=bool,
                            count=len(codes.topics))
    if not is_shared.any():
        return None
    line_topic = codes.line_codes(n_lines)
    retrieved = int(np.bincount(line_topic, minlength=len(is_shared))[is_shared].sum())
    shared = [t for t, s in zip(codes.topics, is_shared) if s]
    qdoc = pc.filter(qrels.docno, pc.is_in(qrels.qid, value_set=string_array(shared)))
    judged_here = as_numpy(pc.is_in(codes.judged, value_set=pc.unique(qdoc)))
    judged = np.count_nonzero(is_shared[line_topic[codes.hit_row]]
                              & judged_here[codes.hit_index])
    return int(judged), retrieved, len(shared), len(qdoc)


def _counts(qrels, run):
    """(judged, retrieved, shared topics, judgments, a run id, a qrels id) of the shared
    topics, by Arrow; None when no topic is shared."""
    run_topics = pc.unique(run.qid)
    shared = pc.filter(run_topics, pc.is_in(run_topics, value_set=pc.unique(qrels.qid)))
    if len(shared) == 0:
        return None
    rdoc = run.docno if len(shared) == len(run_topics) else \
        pc.filter(run.docno, pc.is_in(run.qid, value_set=shared))
    qmask = pc.is_in(qrels.qid, value_set=shared)
    qdoc = pc.filter(qrels.docno, qmask)
    judged = int(pc.sum(pc.is_in(rdoc, value_set=pc.unique(qdoc))).as_py() or 0)
    return judged, len(rdoc), len(shared), len(qdoc), _first(rdoc), _first(qdoc)


def _small_counts(qrels, run):
    """:func:`_counts` of small columns, by Python sets."""
    rq, qq = run.qid_list(), qrels.qid_list()
    shared = set(rq) & set(qq)
    if not shared:
        return None
    rdoc = [d for t, d in zip(rq, run.docno_list()) if t in shared]
    qdoc = [d for t, d in zip(qq, qrels.docno_list()) if t in shared]
    judged_docs = set(qdoc)
    judged = sum(d in judged_docs for d in rdoc)
    return judged, len(rdoc), len(shared), len(qdoc), _first(rdoc), _first(qdoc)


def _first(col) -> str:
    return str(col[0] if isinstance(col, list) else col[0].as_py()) if len(col) else ""


def warn_id_space(text: str | None) -> None:
    """warnings.warn an id-space problem (:func:`id_space_problem`), if any: an
    IdSpaceWarning, which the command line prints as one ``trecqr: warning:`` line; --quiet
    ignores it."""
    if text is not None:
        warnings.warn(text, IdSpaceWarning, stacklevel=3)


def ignore_id_space() -> None:
    """--quiet: leave the id-space warning out (inside the command's warning capture)."""
    warnings.filterwarnings("ignore", category=IdSpaceWarning)
