"""pytrec_eval's semantics over trecqr's engine: measure strings, keys, topics, dict inputs.

Both front-ends need this: the pytrec_eval drop-in (:mod:`trecqr.compat.pytrec`) and the
ir_measures names (:mod:`trecqr.measures.names`), whose pytrec_eval provider it reproduces.

* measure strings go through pytrec_eval's own normalisation (nicknames expanded; ``P_5``,
  ``P.5`` and ``P.5,10`` merged into one ``P.10,5`` argument per measure; anything else is
  ``ValueError: unsupported measure``);
* topics are those of the run that have non-empty qrels, in the run's order; a topic whose
  ranking is empty is scored on an empty ranking (``iprec_at_recall_0.00`` is then NaN, as
  trec_eval's 0/0);
* keys: cutoff measures (``P``, ``recall``, ``ndcg_cut``...) give one key per value (``P_5``);
  every other measure gives one key, its name (``gm_map`` holds the per-topic
  ``log(max(AP, 1e-5))``, ``num_q`` 1.0, ``runid`` and ``relstring`` 0.0);
* scores are ranked as trec_eval 9.0.8 ranks them (C ``float``: near-ties below float32
  precision tie, broken by docno descending).
"""

from __future__ import annotations

import collections
import re
import sys
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..formats import Qrels, Run
from ..scorer.evaluator import EvalContext, evaluate_rankings
from ..scorer.options import Options
from ..scorer.rankings import Rankings, build_rankings, levels_fit
from ..scorer.ragged import IDX
from .selection import select
from .table import NICKNAMES

COMPAT = "9.0.8"  # the trec_eval pytrec_eval embeds

supported_measures = set(NICKNAMES[COMPAT]["all_trec"])
supported_nicknames = {name: set(members) for name, members in NICKNAMES[COMPAT].items()}

# measures trec_eval prints with te_print_single_meas_a_cut: one value per parameter
CUTOFF_MEASURES = frozenset({"P", "Rprec_mult", "iprec_at_recall", "map_cut", "ndcg_cut",
                             "recall", "relative_P", "success", "P_avgjg", "Rprec_mult_avgjg"})
# measures whose per-topic value pytrec_eval never fills (their output is a string or nothing)
ZERO_VALUED = frozenset({"runid", "relstring"})

_PLACEHOLDER = "\x00trecqr-empty-ranking"
_RUNID = "my_little_test_run"  # what pytrec_eval names every run


# --------------------------------------------------------------------------- measure names
def expand_nicknames(measures) -> set:
    result = set()
    for measure in measures:
        if measure in supported_nicknames:
            result.update(supported_nicknames[measure])
        else:
            result.add(measure)
    return result


_PARAMS = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def combine_measures(measures) -> set:
    """pytrec_eval's ``_combine_measures``: one ``name[.p1,p2]`` string per measure.

    The parameter regex is matched at the start only (``P_5x`` is ``P.5``), parameters are
    merged over all spellings, deduplicated and sorted as strings; a bare name given after a
    parameterised one adds nothing (``{"P.5", "P"}`` is ``P.5``).
    """
    param_meas: dict = collections.defaultdict(set)
    for measure in measures:
        if measure not in supported_measures and measure not in supported_nicknames:
            match = None
            for base in supported_measures:  # set order, as pytrec_eval
                m = re.match(_PARAMS.format(re.escape(base)), measure)
                if m is not None:
                    match = (base, m.group(1))
                    break
            if match is None:
                raise ValueError(f"unsupported measure {measure}")
            param_meas[match[0]].update(match[1].split(","))
        elif measure not in param_meas:
            param_meas[measure] = set()
    return {f"{m}.{','.join(sorted(args))}" if args else m for m, args in param_meas.items()}


def normalize_measures(measures) -> set:
    """What RelevanceEvaluator hands to trec_eval for these measure strings."""
    return combine_measures(expand_nicknames(measures))


def select_measures(normalized: set):
    """trecqr measures (with parameters) for normalised measure strings, in table order. An
    empty set selects nothing (trec_eval's default, ``official``, applies to its CLI only)."""
    if not normalized:
        return []
    return select(sorted(normalized), COMPAT)


def c_int(value) -> int:
    """A Python int read with PyArg format ``i`` into the low half of a C long: pytrec_eval's
    extension reads ``relevance_level`` so, hence a negative level becomes ``level + 2**32``
    and 0 is rejected. We reproduce that rather than "fix" it."""
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise TypeError("Expected object_relevance_per_qid dictionary and measures set.")
    value = value.__index__()
    if not -2 ** 31 <= value < 2 ** 31:
        raise TypeError("Expected object_relevance_per_qid dictionary and measures set.")
    return value % 2 ** 32


def pytrec_options(relevance_level: int, judged_only: bool) -> Options:
    return Options(relevance_level=relevance_level, max_docs=sys.maxsize,
                   judged_only=bool(judged_only), compat=COMPAT)


# --------------------------------------------------------------------------- values
@dataclass
class TopicValues:
    """Per-topic values keyed as pytrec_eval keys them; arrays aligned with ``qids``."""

    qids: list
    values: dict


def keyed_values(ev, topic_order) -> TopicValues:
    """An Evaluation's columns under pytrec_eval's keys, for the topics of ``topic_order``."""
    values = {}
    seen = set()
    for col in ev.columns:
        name = col.measure.name
        if name in CUTOFF_MEASURES:
            key = col.name
        elif name in seen:
            continue  # pytrec_eval reports the first value of other measures only
        else:
            key = name
        seen.add(name)
        if name in ZERO_VALUED:
            values[key] = np.zeros(len(col.values))
        else:
            values[key] = np.asarray(col.values, dtype=np.float64)
    if list(ev.qids) == list(topic_order):
        return TopicValues(list(ev.qids), values)
    index = {q: i for i, q in enumerate(ev.qids)}
    wanted = [q for q in dict.fromkeys(topic_order) if q in index]
    take = np.array([index[q] for q in wanted], dtype=np.int64)
    return TopicValues(wanted, {k: v[take] for k, v in values.items()})


def pytrec_values(qrels: Qrels, run: Run, selection, *, relevance_level: int = 1,
                  judged_only: bool = False, topic_order=None) -> TopicValues:
    """Score a columnar ``run`` as pytrec_eval would, with trecqr's engine.

    ``topic_order``: the run's topics in the order results are wanted (pytrec_eval: the run
    dict's order; default: first appearance in ``run``). Topics listed there with no row in
    ``run`` are scored on an empty ranking, as pytrec_eval scores ``{qid: {}}``.
    """
    options = pytrec_options(relevance_level, judged_only)
    run_topics = pc.unique(run.qid).to_pylist()
    if topic_order is None:
        topic_order = run_topics
    qrels_topics = set(pc.unique(qrels.qid).to_pylist())
    with_rows = set(run_topics)
    empty = [q for q in dict.fromkeys(topic_order) if q in qrels_topics and q not in with_rows]
    scored = run
    if empty:  # one unjudged placeholder per empty topic, removed again after ranking
        scored = Run(pa.concat_arrays([run.qid, pa.array(empty, pa.string())]),
                     pa.concat_arrays([run.docno,
                                       pa.array([_PLACEHOLDER] * len(empty), pa.string())]),
                     np.concatenate([run.score, np.zeros(len(empty))]), run.runid, run.source)
    rankings = build_rankings(scored, qrels, options)
    if empty:
        rankings = _drop_placeholders(rankings, set(empty))
    ev = evaluate_rankings(EvalContext(rankings, options, run, qrels), selection)
    return keyed_values(ev, topic_order)


def _drop_placeholders(rk, empty: set):
    """Remove the placeholder document of topics that had an empty ranking."""
    counts = np.diff(rk.offsets)
    is_empty = np.array([q in empty for q in rk.qids], dtype=bool)
    drop = is_empty & (counts == 1)  # under -J the placeholder is already gone
    rel = np.delete(rk.rel, rk.offsets[:-1][drop])
    counts = np.where(drop, 0, counts)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return replace(rk, offsets=offsets, rel=rel,
                   run_only=[q for q in rk.run_only if q not in empty])


# --------------------------------------------------------------------------- dict inputs
class DictQrels:
    """Validated pytrec_eval qrels (``{qid: {docno: int}}``, topics with judgments only) with
    what rankings need per topic: grade counts per level, judged totals."""

    def __init__(self, query_relevance: dict):
        qids, docnos, grades, topic_sizes = [], [], [], []
        for qid, docs in query_relevance.items():
            if not isinstance(qid, str):
                raise TypeError("Expected string as key.")
            if not isinstance(docs, dict):
                raise TypeError("Expected dictionary as value.")
            keys = list(docs)
            values = list(docs.values())
            if not all(isinstance(d, str) for d in keys):
                raise TypeError("Expected mapping of document id to query relevance or "
                                "matching score.")
            if not all(isinstance(g, int) for g in values):
                raise TypeError("Expected relevance to be integer.")
            qids.append(qid)
            docnos.extend(keys)
            grades.extend(values)
            topic_sizes.append(len(keys))
        # the C ranker reads plain dicts (a dict subclass, e.g. defaultdict, is copied)
        self.dicts = {q: d if type(d) is dict else dict(d) for q, d in query_relevance.items()}
        self.topics = qids
        self.index = {q: i for i, q in enumerate(qids)}
        self.grade = np.array(grades, dtype=np.int64)
        sizes = np.array(topic_sizes, dtype=np.int64)
        topic_of = np.repeat(np.arange(len(qids)), sizes)
        judged = self.grade >= 0
        self.levels = np.unique(self.grade[judged])
        lev = np.searchsorted(self.levels, self.grade[judged])
        self.level_counts = np.bincount(
            topic_of[judged] * len(self.levels) + lev,
            minlength=len(qids) * len(self.levels)).reshape(len(qids), len(self.levels))
        self.wide = not levels_fit(self.grade)
        self.num_rel_all = int(np.count_nonzero(self.grade > 0))
        self._docnos = docnos
        self._sizes = sizes
        self._columns = None

    def columns(self) -> Qrels:
        """The same judgments as trecqr columns (for the columnar path)."""
        if self._columns is None:
            qid = pa.array(np.repeat(np.array(self.topics, dtype=object), self._sizes)
                           if len(self.topics) else [], pa.string())
            self._columns = Qrels(qid, pa.array(self._docnos, pa.string()), self.grade,
                                  "<qrels dict>")
        return self._columns


def dict_run_columns(scores: dict) -> Run:
    """A pytrec_eval run dict as columns, validated as pytrec_eval validates it."""
    bad = TypeError("Unable to extract query/object scores.")
    qids, docnos, values = [], [], []
    for qid, docs in scores.items():
        if not isinstance(qid, str) or not isinstance(docs, dict):
            raise bad
        qids.extend([qid] * len(docs))
        docnos.extend(docs.keys())
        values.extend(docs.values())
    if not all(isinstance(d, str) for d in docnos):
        raise bad
    try:
        score = np.array([v if isinstance(v, (float, int)) else _number(v) for v in values],
                         dtype=np.float64)
    except (TypeError, ValueError):
        raise bad from None
    if np.isnan(score).any():
        i = int(np.flatnonzero(np.isnan(score))[0])
        raise ValueError(f"query {qids[i]!r} doc {docnos[i]!r}: score is NaN "
                         "(pytrec_eval's ranking of NaN scores is undefined)")
    return Run(pa.array(qids, pa.string()), pa.array(docnos, pa.string()), score, _RUNID,
               "<run dict>")


def _number(v):
    if isinstance(v, (str, bytes)) or not hasattr(type(v), "__float__"):
        raise TypeError(v)
    return float(v)


def _rank_dicts():
    try:
        from ..formats._dicts import rank_run
    except ImportError:  # the optional C module was not built: the columnar path
        return None
    return rank_run


def dict_values(qrels: DictQrels, scores: dict, selection, *, relevance_level: int = 1,
                judged_only: bool = False) -> TopicValues:
    """Score a run dict as pytrec_eval would: topics in the run dict's order, those with
    judgments only. Ranked in one pass over the dicts by the C module when it is built."""
    options = pytrec_options(relevance_level, judged_only)
    rank_run = _rank_dicts()
    if rank_run is None:
        return pytrec_values(qrels.columns(), dict_run_columns(scores), selection,
                             relevance_level=relevance_level, judged_only=judged_only,
                             topic_order=list(scores))
    topics, offsets, rel = rank_run(scores, qrels.dicts, options.float32_scores,
                                    options.judged_only, min(options.max_docs, 2 ** 62),
                                    qrels.wide)
    offsets = np.frombuffer(offsets, dtype=np.int64)
    rel = np.frombuffer(rel, dtype=np.int64 if qrels.wide else IDX)
    rows = np.array([qrels.index[q] for q in topics], dtype=np.int64)
    level_counts = qrels.level_counts[rows]
    num_rel = level_counts[:, qrels.levels >= options.relevance_level].sum(axis=1)
    judged_topics = set(topics)
    rankings = Rankings(
        qids=list(topics), offsets=offsets, rel=rel, num_rel=num_rel, levels=qrels.levels,
        level_counts=level_counts, bogus=np.zeros(len(topics), dtype=bool), options=options,
        runid=_RUNID, num_qrels_topics=len(qrels.topics), num_rel_all=qrels.num_rel_all,
        qrels_only=[q for q in qrels.topics if q not in judged_topics],
        run_only=[q for q in scores if q not in qrels.index])
    ev = evaluate_rankings(EvalContext(rankings, options, None, None), selection)
    return keyed_values(ev, topics)
