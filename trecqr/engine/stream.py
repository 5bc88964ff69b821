"""Scoring a run of any length in bounded memory: piece by piece, whole topics at a time.

Memory is O(qrels + one piece (about ``PIECE_BYTES`` of run text, and at least the largest
topic) + per-topic values), not O(run). Each piece (formats/runstream.py) is ranked and
measured as trec_eval would rank and measure those topics; the per-topic values of all pieces
are then put in trec_eval's topic order and summarised once (finish_evaluation), so every
measure, -q, -c, -M, -J, -Z and both trec_eval versions give the output of the whole-file path,
byte for byte. A run whose topics are interleaved is spilled to temporary files by topic first
(one extra pass). A piece the fast scanner cannot read, or any input error, sends the run to
the whole-file readers, which name the file and line.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError
from trecqr.runtime.memory import stream_plan
from trecqr.formats import run as run_format, runstream
from trecqr.formats.run import Run
from trecqr.formats.arrays import arrow_indices, as_numpy
from trecqr.formats.order import qid_codes
from trecqr.formats.textio import SAMPLE
from trecqr.engine.evaluator import EvalContext, compute_values, finish_evaluation
from trecqr.rankings.options import Options
from trecqr.rankings.build import Rankings, build_rankings, judgment_keys

# plain files from this size on are streamed (below it, the whole-file path is as lean)
STREAM_BYTES = 2 * runstream.PIECE_BYTES
# compressed files from this size on (all but gzip: only this path reads them)
STREAM_COMPRESSED_BYTES = runstream.PIECE_BYTES // 8


class Fallback(Exception):
    """The whole-file path must score this run."""


def wants_stream(run, options: Options) -> bool:
    """Stream a TREC text run (an Input of kind ``trec``): when it is large, or compressed
    with a codec the whole-file readers lack (bzip2, xz, zstd). A file whose sniffed head is
    all of it (``run.raw``) is told from those bytes, without opening it again."""
    path, raw = run.obj, run.raw
    if run_format.scanner() is None or not isinstance(path, (str, os.PathLike)) \
            or os.fspath(path) == "-":
        return False
    name = os.fspath(path)
    if raw is not None and len(raw) < SAMPLE:
        size, kind = len(raw), runstream.compression_of(raw)
    else:
        try:
            if not os.path.isfile(name):
                return False
            size = os.path.getsize(name)
            kind = runstream.compression(name)
        except OSError:
            return False
    if kind is None:
        stream, _ = stream_plan(size, runstream.PIECE_BYTES)  # under a memory cap: if it must
        return size >= STREAM_BYTES if stream is None else stream
    return kind != "gzip" or size >= STREAM_COMPRESSED_BYTES


def score_stream(qrels, path, selection, options: Options, zscores=None, *,
                 piece_bytes: int | None = None):
    """The Evaluation of the run at path, read piece by piece. Raises Fallback when the
    whole-file path must score it (input errors are reported from there)."""
    piece_bytes = piece_bytes or stream_plan(os.path.getsize(path), runstream.PIECE_BYTES)[1]
    judged = pc.unique(qrels.docno)
    kw = dict(comments=options.v10, judged=judged, float32=options.float32_scores,
              piece_bytes=piece_bytes)
    try:
        try:
            pieces = runstream.read_ahead(runstream.topic_pieces(path, **kw))
            parts, runid = _score_pieces(pieces, qrels, selection, options, check_grouped=True)
        except runstream.Interleaved:
            pieces = runstream.read_ahead(runstream.partitioned_pieces(path, **kw))
            parts, runid = _score_pieces(pieces, qrels, selection, options)
    except (runstream.NeedsWholeFile, runstream.Interleaved, InputError):
        raise Fallback(path) from None
    return _join(parts, runid, qrels, selection, options, zscores, os.fspath(path))


def _score_pieces(pieces, qrels, selection, options: Options, check_grouped: bool = False):
    """[(evaluated topics, run topics, [values per measure])] of every piece, and the runid of
    the last one. Raises runstream.Interleaved when a topic is in two pieces (or, with
    check_grouped, when a piece's topics are interleaved: the file's are, then)."""
    piece_options = dataclasses.replace(options, complete=False)  # -c: joined at the end
    by_topic = _QrelsByTopic(qrels)
    seen: set = set()
    parts, runid = [], None
    for run in pieces:
        topics = run.codes.topics
        if not seen.isdisjoint(topics) or (check_grouped and not run.codes.grouped):
            pieces.close()
            raise runstream.Interleaved()
        seen.update(topics)
        piece_qrels = by_topic.of(topics)
        rk = build_rankings(run, piece_qrels, piece_options)
        rk.options = options  # what the measures read (the evaluated set is the piece's)
        ctx = EvalContext(rk, options, None, piece_qrels)
        values = [compute_values(m, p, ctx) for m, p in selection]
        parts.append((list(rk.qids), topics, values))
        runid = run.runid
        del run, rk, ctx
    return parts, runid


class _QrelsByTopic:
    """The qrels grouped by topic once, so that a piece is joined with its own topics'
    judgments only: joining each piece with the whole qrels cost O(qrels) per piece (on the
    98M-line run, 41 pieces against 2.5M judgments of 98k topics: most of the main thread's
    time went to sorting and mapping the qrels' topics again and again)."""

    def __init__(self, qrels):
        self.qrels = qrels
        codes, topics = qid_codes(qrels.qid)
        codes = codes.astype(np.int64)
        self._code = {t: i for i, t in enumerate(topics)}
        self._rows = np.argsort(codes, kind="stable")  # by topic, file order within one
        self._bounds = np.zeros(len(topics) + 1, np.int64)
        np.cumsum(np.bincount(codes, minlength=len(topics)), out=self._bounds[1:])
        # the whole-file path refuses a qrels file with a repeated (topic, docno), whichever
        # topic it is in: so does this one, with the same check, even when the repeat is in a
        # topic no piece holds (a piece checks its own topics only)
        docs = pc.dictionary_encode(qrels.docno)
        judgment_keys(qrels, codes, as_numpy(docs.indices), max(len(docs.dictionary), 1))

    def of(self, topics):
        """The qrels rows of these topics, in their file order."""
        codes = np.array([c for c in map(self._code.get, topics) if c is not None], np.int64)
        if len(codes) == len(self._code):
            return self.qrels
        starts, stops = self._bounds[codes], self._bounds[codes + 1]
        lengths = stops - starts
        total = int(lengths.sum())
        # positions starts[i] .. stops[i]-1 of every topic, without a Python loop per topic
        shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        rows = np.sort(self._rows[np.arange(total, dtype=np.int64) + shift])
        take = arrow_indices(rows)
        return dataclasses.replace(self.qrels, qid=self.qrels.qid.take(take),
                                   docno=self.qrels.docno.take(take),
                                   grade=self.qrels.grade[rows])


def _bogus_values(qrels, topics, selection, options: Options):
    """trec_eval 10.0 -c: the judged topics without results, scored on its one-document
    bogus ranking (build_rankings makes it: a run with no judged topic)."""
    fake = Run(pa.array(["\x00none"], pa.string()), pa.array(["\x00none"], pa.string()),
               np.zeros(1), "bogus")
    rk = build_rankings(fake, qrels, options)
    keep = np.array([q in topics for q in rk.qids], dtype=bool)
    ctx = EvalContext(rk, options, None, qrels)
    values = [compute_values(m, p, ctx)[keep] for m, p in selection]
    return [q for q, k in zip(rk.qids, keep) if k], values


def _join(parts, runid, qrels, selection, options: Options, zscores, source: str):
    q_topics = set(pc.unique(qrels.qid).to_pylist())
    r_topics: set = set()
    for _, topics, _ in parts:
        r_topics.update(topics)
    qids = [q for part in parts for q in part[0]]
    columns = [[part[2][j] for part in parts] for j in range(len(selection))]
    bogus_topics = sorted(q_topics - r_topics) if options.complete and options.v10 else []
    if bogus_topics:
        bq, bvalues = _bogus_values(qrels, set(bogus_topics), selection, options)
        qids += bq
        for j, v in enumerate(bvalues):
            columns[j].append(v)
    order = sorted(range(len(qids)), key=qids.__getitem__)
    per_measure = []
    for (measure, params), arrays in zip(selection, columns):
        arrays = [a for a in arrays if a is not None]
        k = len(measure.value_names(params))
        values = np.concatenate(arrays) if arrays else np.zeros((0, k))
        per_measure.append((measure, params, values[order] if len(order) else values))
    qids = [qids[i] for i in order]
    bogus_set = set(bogus_topics)
    empty = np.zeros(0, np.int64)
    rk = Rankings(qids=qids, offsets=np.zeros(len(qids) + 1, np.int64), rel=empty,
                  num_rel=empty, levels=empty, level_counts=np.zeros((0, 0), np.int64),
                  bogus=np.array([q in bogus_set for q in qids], dtype=bool), options=options,
                  runid=runid or "trecqr", num_qrels_topics=len(q_topics),
                  num_rel_all=int(np.count_nonzero(qrels.grade > 0)),
                  qrels_only=sorted(q_topics - r_topics), run_only=sorted(r_topics - q_topics))
    rk.check_coverage(source, qrels.source)
    return finish_evaluation(rk, options, per_measure, zscores)
