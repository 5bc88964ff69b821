"""ir_measures names (``nDCG@3``, ``RR@3``, ``P(rel=2)@5``, ``Judged@10``) beside trec_eval's.

A name is parsed with ``ir_measures.parse_measure`` and computed by trecqr exactly as
ir_measures' default pipeline computes it:

* measures its pytrec_eval provider supports become a trec_eval measure plus the options it
  passes (``P(rel=2)@5`` is ``P.5`` at relevance level 2, ``nDCG(judged_only=True)`` is ``ndcg``
  under -J, ``nDCG(gains=...)`` maps the grades first, ``SetF(beta=b)`` is ``set_F.b``), scored
  through :mod:`trecqr.measures.pytrec_values`, the pytrec_eval drop-in's rules;
* ``RR@k`` (msmarco provider) and ``Judged@k`` (judged provider) rank in Python's order
  (float64 score descending, docno ascending): :mod:`._irm_ranked`.

Aggregates are ir_measures': a topic of the qrels missing from the run counts as 0, so means
divide by the number of qrels topics; values are added in the run's topic order; ``Num*``
measures are sums. Per-topic values are given for the topics of the trec_eval evaluation.

Names that are trec_eval measures or nicknames (``Rprec``, ``infAP``, ``map``, ``P.5``...)
keep trec_eval's meaning, which differs from ir_measures' only in the aggregate (mean over the
evaluated topics); for ir_measures' ``Rprec`` and ``infAP`` pass ``Rprec(rel=1)``,
``infAP(rel=1)`` or the ir_measures objects themselves.

Differences from ir_measures, where its result is not well defined: ``NumRet`` and ``nDCG``
without gains are computed without -J and without gain mapping (ir_measures puts them in
whichever pytrec_eval invocation comes first in a set's iteration order).
"""

from __future__ import annotations


import numpy as np
import pyarrow.compute as pc

from ..errors import UsageError
from .base import Measure
from .irm_native import native
from .table import NICKNAMES, TABLE

_TREC_NAMES = frozenset(n for v in TABLE.values() for n in v) | frozenset(
    n for v in NICKNAMES.values() for n in v)


def _parse(name: str):
    try:
        import ir_measures
    except ImportError:  # pragma: no cover - ir_measures is a dependency
        return None
    try:
        return ir_measures.parse_measure(name)
    except (NameError, ValueError, SyntaxError, AssertionError, TypeError):
        return None


def split_measures(measures):
    """Split measure names into (trec_eval ``-m`` arguments, [(name, ir_measures measure)]).

    trec_eval names and nicknames (the text before the first ``.``) stay trec_eval's; other
    strings that ir_measures parses, and ir_measures measure objects, are ir_measures'.
    """
    if measures is None:
        return [], []
    if isinstance(measures, str) or not hasattr(measures, "__iter__"):
        measures = [measures]
    trec, irm = [], []
    for m in measures:
        if not isinstance(m, str):
            irm.append((str(m), m))
            continue
        parsed = None if m.partition(".")[0] in _TREC_NAMES else _parse(m)
        if parsed is None:
            trec.append(m)
        else:
            irm.append((m, parsed))
    return trec, irm


class IrMeasuresColumn(Measure):
    """An output column for an ir_measures name (not registered: never a ``-m`` name)."""

    summary = "mean"

    def __init__(self, name: str, integer: bool, sparse: bool = False):
        self.name = name
        self.integer = integer
        self.sparse = sparse  # NaN: the provider gives this topic no value (leave it out)
        self.explanation = f"ir_measures {name}"


def _cutoff(m, what="cutoff"):
    from ir_measures.providers.base import NOT_PROVIDED

    value = m[what]
    if value is NOT_PROVIDED:
        raise UsageError(f"ir_measures measure {m} needs @{what}")
    return value


def _pytrec_plan(m, setf_count: int):
    """(options key, pytrec_eval measure string, result key) as ir_measures' provider builds
    them (providers/pytrec_eval_provider.py)."""
    from ir_measures.providers.base import NOT_PROVIDED

    name = m.NAME
    rel = m["rel"] if "rel" in m.SUPPORTED_PARAMS else 1
    jo = bool(m["judged_only"]) if "judged_only" in m.SUPPORTED_PARAMS else False
    key, match = (rel, 0, None, jo), None
    if name == "P":
        arg = f"P_{_cutoff(m)}"
    elif name == "RR":
        arg = "recip_rank"
    elif name == "Rprec":
        arg = "Rprec"
    elif name == "AP":
        arg = "map" if m["cutoff"] is NOT_PROVIDED else f"map_cut_{m['cutoff']}"
    elif name in ("infAP", "Bpref", "SetR", "NumRel"):
        key = (rel, 0, None, False)
        arg = {"infAP": "infAP", "Bpref": "bpref", "SetR": "set_recall", "NumRel": "num_rel"}[name]
    elif name == "nDCG":
        gains = None if m["gains"] is NOT_PROVIDED else tuple(sorted(m["gains"].items()))
        key = (1, 0, gains, jo)
        arg = "ndcg" if m["cutoff"] is NOT_PROVIDED else f"ndcg_cut_{m['cutoff']}"
    elif name == "R":
        arg = f"recall_{_cutoff(m)}"
    elif name == "NumRet":
        if m["rel"] is NOT_PROVIDED:
            key, arg = (1, 0, None, False), "num_ret"
        else:
            key, arg = (m["rel"], 0, None, False), "num_rel_ret"
    elif name == "NumQ":
        key, arg = (1, 0, None, False), "num_q"
    elif name == "SetAP":
        arg = "set_map"
    elif name == "SetF":
        key = (rel, setf_count, None, jo)  # trec_eval keeps the first set_F parameter only
        setf_count += 1
        arg = "set_F" if m["beta"] == 1.0 else f"set_F_{m['beta']}"
        match = "set_F"
    elif name == "SetP":
        arg = "set_relative_P" if m["relative"] else "set_P"
    elif name == "Success":
        arg = f"success_{_cutoff(m)}"
    elif name == "IPrec":
        arg = f"iprec_at_recall_{_cutoff(m, 'recall'):.2f}"
    else:  # pragma: no cover - guarded by the provider's supports()
        raise UsageError(f"ir_measures measure {m} is not supported")
    return key, arg, match or arg, setf_count


def _map_gains(qrels, gains):
    """Grades mapped by nDCG's gains (``gains.get(grade, grade)``); pytrec_eval needs ints."""
    from ..formats import Qrels

    mapping = dict(gains)
    uniq, inverse = np.unique(qrels.grade, return_inverse=True)
    mapped = [mapping.get(int(g), int(g)) for g in uniq]
    if not all(isinstance(v, int) for v in mapped):
        raise UsageError(f"nDCG gains must be integers for pytrec_eval (got {mapping})")
    return Qrels(qrels.qid, qrels.docno, np.array(mapped, np.int64)[inverse], qrels.source)


def _check_options(options) -> None:
    from ..scorer.options import Options

    default = Options()
    changed = [flag for flag, attr in (("relevance_level", "relevance_level"),
                                       ("max_docs", "max_docs"), ("judged_only", "judged_only"),
                                       ("complete", "complete"), ("compat", "compat"))
               if getattr(options, attr) != getattr(default, attr)]
    if changed:
        raise UsageError("ir_measures names carry their own parameters (rel=, judged_only=, "
                         f"@cutoff); {', '.join(changed)} apply to trec_eval names only")


def _aggregate(m, values: np.ndarray, n_qrels_topics: int):
    """ir_measures' MeanAgg / SumAgg over the values in run order (missing topics add 0)."""
    from ir_measures.measures.base import MeanAgg, SumAgg

    agg = m.aggregator()
    total = float(np.cumsum(values)[-1]) if len(values) else 0.0
    if isinstance(agg, SumAgg):
        return total, True
    if isinstance(agg, MeanAgg):
        return (total / n_qrels_topics if n_qrels_topics else float("nan")), False
    raise UsageError(f"ir_measures measure {m}: aggregator {type(agg).__name__} not supported")


def score_ir_measures(qrels, run, names, options, evaluation, out_names,
                      empty_topics=()) -> dict:
    """Add one column per ir_measures name to ``evaluation``; ``out_names`` maps column name
    to the name as the caller wrote it.

    ir_measures' semantics: a qrels topic absent from the run, or with no judgments at all
    (``empty_topics``: ``{"b": {}}`` in a qrels dict), gets the measure's DEFAULT and counts in
    the mean. Returns those values, ``{qid: {name: DEFAULT}}``, for the per-topic results.
    """
    import warnings

    import ir_measures

    from .pytrec_values import c_int, normalize_measures, pytrec_values, select_measures
    from ..scorer.evaluator import Column
    from ._irm_ranked import judged_at_cutoff, rr_at_cutoff

    _check_options(options)
    qrels_topics = set(pc.unique(qrels.qid).to_pylist())
    topics = [q for q in pc.unique(run.qid).to_pylist() if q in qrels_topics]  # run order
    all_topics = qrels_topics | set(empty_topics)
    if not topics:
        warnings.warn(f"no topic in common: none of the {len(pc.unique(run.qid))} topics of "
                      f"the run has judgments among the {len(all_topics)} qrels topics; "
                      "ir_measures names score every qrels topic with their default (0)")

    per_name = {}  # caller name -> (measure, values aligned with topics)
    no_default = set()  # names whose provider yields no DEFAULT for topics it leaves out
    groups: dict = {}
    setf_count = 0
    for caller, m in names:
        if caller in per_name or any(caller == c for items in groups.values()
                                     for c, *_ in items):
            continue
        try:
            m.validate_params()
            via_pytrec = ir_measures.pytrec_eval.supports(m)
            via_judged = not via_pytrec and ir_measures.judged.supports(m)
            via_msmarco = not (via_pytrec or via_judged) and ir_measures.msmarco.supports(m)
        except AssertionError as exc:
            raise UsageError(f"ir_measures measure {caller!r}: {exc}") from None
        if via_pytrec:
            key, arg, match, setf_count = _pytrec_plan(m, setf_count)
            groups.setdefault(key, []).append((caller, m, arg, match))
        elif via_judged:
            cutoff = None if m["cutoff"] is ir_measures.providers.base.NOT_PROVIDED \
                else m["cutoff"]
            if cutoff is not None and cutoff < 1:
                raise UsageError(f"{caller!r}: the cutoff must be at least 1")
            per_name[caller] = (m, judged_at_cutoff(run, qrels, topics, cutoff))
        elif via_msmarco:
            cutoff = _cutoff(m)
            if cutoff < 1:
                raise UsageError(f"{caller!r}: the cutoff must be at least 1")
            per_name[caller] = (m, rr_at_cutoff(run, qrels, topics, m["rel"], cutoff))
        elif (row := native(m)) is not None:
            values = np.asarray(row.function()(run, qrels, topics, m), dtype=np.float64)
            if not row.defaults:  # only the topics the provider yields (NaN: none)
                no_default.add(caller)
            per_name[caller] = (m, values)
        else:
            raise UsageError(f"ir_measures measure {caller!r} is not supported by trecqr")

    for (rel, _, gains, judged_only), items in groups.items():
        try:
            level = c_int(rel)
        except TypeError:  # pytrec_eval reads rel as a C int
            raise UsageError(f"{items[0][0]!r}: rel must be an integer of -2**31..2**31-1 "
                             "(pytrec_eval's C int)") from None
        if level < 1:
            raise UsageError(f"{items[0][0]!r}: pytrec_eval needs rel >= 1 for this measure")
        q = qrels if gains is None else _map_gains(qrels, gains)
        selection = select_measures(normalize_measures([arg for _, _, arg, _ in items]))
        tv = pytrec_values(q, run, selection, relevance_level=level, judged_only=judged_only,
                           topic_order=topics)
        for caller, m, _, match in items:
            per_name[caller] = (m, tv.values[match])

    position = {q: i for i, q in enumerate(topics)}
    take = np.array([position.get(q, -1) for q in evaluation.qids], dtype=np.int64)
    missing = sorted(all_topics - set(topics))
    defaults: dict = {q: {} for q in missing}
    for caller, _ in names:
        if caller not in per_name or caller in out_names:
            continue
        m, values = per_name[caller]
        if caller in no_default:
            has = ~np.isnan(values)
            summary, integer = _aggregate(m, values[has], int(has.sum()))
        else:
            for q in missing:
                defaults[q][caller] = float(m.DEFAULT)
            summary, integer = _aggregate(m, values, len(all_topics))
        aligned = np.where(take >= 0, values[np.maximum(take, 0)] if len(values) else 0.0, 0.0)
        evaluation.columns.append(Column(caller, IrMeasuresColumn(caller, integer,
                                                                  caller in no_default),
                                         aligned, summary))
        out_names[caller] = caller
    return {q: values for q, values in defaults.items() if values}
