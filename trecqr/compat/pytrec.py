"""A drop-in for pytrec_eval (pytrec-eval-terrier 0.5.x), computed by trecqr's own engine.

``RelevanceEvaluator(qrels, measures, relevance_level, judged_docs_only_flag).evaluate(run)``
returns what pytrec_eval returns, key for key and bit for bit:

* measure strings go through pytrec_eval's own normalisation (nicknames expanded; ``P_5``,
  ``P.5`` and ``P.5,10`` merged into one ``P.10,5`` argument per measure; anything else is
  ``ValueError: unsupported measure``);
* topics are those of the run that have non-empty qrels, in the run's dict order; a topic
  whose run dict is empty is scored on an empty ranking (``iprec_at_recall_0.00`` is then NaN,
  as trec_eval's 0/0);
* keys: cutoff measures (``P``, ``recall``, ``ndcg_cut``...) give one key per value
  (``P_5``); every other measure gives one key, its name (``gm_map`` holds the per-topic
  ``log(max(AP, 1e-5))``, ``num_q`` 1.0, ``runid`` and ``relstring`` 0.0);
* scores are ranked as trec_eval 9.0.8 ranks them (C ``float``: near-ties below float32
  precision tie, broken by docno descending).

The C extension reads ``relevance_level`` and ``judged_docs_only_flag`` with format ``i``
into a C ``long``: only the low 32 bits are written, so a negative level becomes
``level + 2**32`` and 0 is rejected. We reproduce that rather than "fix" it.

Known differences, all where pytrec_eval has no usable answer: a NaN score raises ValueError
(pytrec_eval's sort is then undefined); parameters trec_eval rejects (``P.0``, duplicate
cutoffs, malformed ``ndcg`` gains) raise ValueError at construction, where pytrec_eval aborts
the process or prints to stderr and returns zeros.
"""

from __future__ import annotations

import collections
import re
import sys
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import UsageError
from ..formats import Qrels, Run
from ..measures.table import NICKNAMES

COMPAT = "9.0.8"  # the trec_eval pytrec_eval embeds

supported_measures = set(NICKNAMES[COMPAT]["all_trec"])
supported_nicknames = {name: set(members) for name, members in NICKNAMES[COMPAT].items()}

# measures trec_eval prints with te_print_single_meas_a_cut: one value per parameter
CUTOFF_MEASURES = frozenset({"P", "Rprec_mult", "iprec_at_recall", "map_cut", "ndcg_cut",
                             "recall", "relative_P", "success", "P_avgjg", "Rprec_mult_avgjg"})
# measures whose per-topic value pytrec_eval never fills (their output is a string or nothing)
ZERO_VALUED = frozenset({"runid", "relstring"})

_PLACEHOLDER = "\x00trecqr-empty-ranking"


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


def _c_int(value) -> int:
    """A Python int read with PyArg format ``i`` into the low half of a C long (see module doc)."""
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise TypeError("Expected object_relevance_per_qid dictionary and measures set.")
    value = value.__index__()
    if not -2 ** 31 <= value < 2 ** 31:
        raise TypeError("Expected object_relevance_per_qid dictionary and measures set.")
    return value % 2 ** 32


# --------------------------------------------------------------------------- columnar core
@dataclass
class TopicValues:
    """Per-topic values keyed as pytrec_eval keys them; arrays aligned with ``qids``."""

    qids: list
    values: dict


def select_measures(normalized: set):
    """trecqr measures (with parameters) for normalised measure strings, in table order."""
    from ..measures.selection import select

    return select(sorted(normalized), COMPAT)


def pytrec_values(qrels: Qrels, run: Run, selection, *, relevance_level: int = 1,
                  judged_only: bool = False, topic_order=None) -> TopicValues:
    """Score ``run`` as pytrec_eval would, with trecqr's engine.

    ``topic_order``: the run's topics in the order results are wanted (pytrec_eval: the run
    dict's order; default: first appearance in ``run``). Topics listed there with no row in
    ``run`` are scored on an empty ranking, as pytrec_eval scores ``{qid: {}}``.
    """
    from ..scorer.evaluator import EvalContext, evaluate_rankings
    from ..scorer.options import Options
    from ..scorer.rankings import build_rankings

    options = Options(relevance_level=relevance_level, max_docs=sys.maxsize,
                      judged_only=bool(judged_only), compat=COMPAT)
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

    index = {q: i for i, q in enumerate(ev.qids)}
    wanted = [q for q in dict.fromkeys(topic_order) if q in index]
    take = np.array([index[q] for q in wanted], dtype=np.int64)
    return TopicValues(wanted, {k: v[take] for k, v in values.items()})


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
def _qrels_columns(query_relevance) -> Qrels:
    qids, docnos, grades = [], [], []
    for qid, docs in query_relevance.items():
        if not isinstance(qid, str):
            raise TypeError("Expected string as key.")
        if not isinstance(docs, dict):
            raise TypeError("Expected dictionary as value.")
        for doc, grade in docs.items():
            if not isinstance(doc, str):
                raise TypeError("Expected mapping of document id to query relevance or "
                                "matching score.")
            if not isinstance(grade, int):
                raise TypeError("Expected relevance to be integer.")
            qids.append(qid)
            docnos.append(doc)
            grades.append(int(grade))
    return Qrels(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
                 np.array(grades, dtype=np.int64), "<qrels dict>")


def _run_columns(scores) -> Run:
    bad = TypeError("Unable to extract query/object scores.")
    qids, docnos, values = [], [], []
    for qid, docs in scores.items():
        if not isinstance(qid, str) or not isinstance(docs, dict):
            raise bad
        qids.extend([qid] * len(docs))
        docnos.extend(docs.keys())
        values.extend(docs.values())
    if not {type(d) for d in docnos} <= {str} and not all(isinstance(d, str) for d in docnos):
        raise bad
    if not {type(v) for v in values} <= {float, int} and not all(
            isinstance(v, (float, int)) for v in values):
        raise bad
    score = np.array(values, dtype=np.float64)
    if np.isnan(score).any():
        i = int(np.flatnonzero(np.isnan(score))[0])
        raise ValueError(f"query {qids[i]!r} doc {docnos[i]!r}: score is NaN "
                         "(pytrec_eval's ranking of NaN scores is undefined)")
    return Run(pa.array(qids, pa.string()), pa.array(docnos, pa.string()), score,
               "my_little_test_run", "<run dict>")


class RelevanceEvaluator:
    """pytrec_eval.RelevanceEvaluator, computed by trecqr (see the module docstring)."""

    def __init__(self, query_relevance, measures, relevance_level: int = 1,
                 judged_docs_only_flag: bool = False):
        normalized = normalize_measures(measures)
        query_relevance = {qid: docs for qid, docs in query_relevance.items() if len(docs) > 0}
        level = _c_int(relevance_level)
        judged = _c_int(judged_docs_only_flag)
        if level < 1:
            raise TypeError("Argument relevance_level should be positive.")
        try:
            self._selection = select_measures(normalized)
        except UsageError as exc:
            raise ValueError(f"unsupported measure parameters: {exc}") from None
        self._qrels = _qrels_columns(query_relevance)
        self._level = level
        self._judged = judged != 0
        self.measures = normalized

    def evaluate(self, scores) -> dict:
        """{qid: {measure: value}} for run topics that have judgments, in the run's order."""
        if not scores:
            return {}
        if not isinstance(scores, dict):
            raise TypeError("Argument object scores should be of type dictionary.")
        run = _run_columns(scores)
        tv = pytrec_values(self._qrels, run, self._selection, relevance_level=self._level,
                           judged_only=self._judged, topic_order=list(scores))
        columns = [(k, v.tolist()) for k, v in tv.values.items()]
        return {q: {k: v[i] for k, v in columns} for i, q in enumerate(tv.qids)}


# --------------------------------------------------------------------------- helpers
def parse_run(f_run):
    """pytrec_eval.parse_run: ``{qid: {docno: float(score)}}`` from lines of a run file."""
    run = collections.defaultdict(dict)
    for line in f_run:
        query_id, _, object_id, ranking, score, _ = line.strip().split()
        assert object_id not in run[query_id]
        run[query_id][object_id] = float(score)
    return run


def parse_qrel(f_qrel):
    """pytrec_eval.parse_qrel: ``{qid: {docno: int(grade)}}`` from lines of a qrels file."""
    qrel = collections.defaultdict(dict)
    for line in f_qrel:
        query_id, _, object_id, relevance = line.strip().split()
        assert object_id not in qrel[query_id]
        qrel[query_id][object_id] = int(relevance)
    return qrel


def compute_aggregated_measure(measure: str, values) -> float:
    """pytrec_eval's aggregate: numpy's (pairwise) sum for ``num_*``, ``exp(sum/n)`` for
    ``gm_*``, numpy's mean otherwise; numpy is used so that the last bit agrees too."""
    if measure.startswith("num_"):
        return float(np.sum(values))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(values) / len(values)))
    return float(np.mean(values))


__all__ = ["RelevanceEvaluator", "parse_run", "parse_qrel", "supported_measures",
           "supported_nicknames", "compute_aggregated_measure"]
