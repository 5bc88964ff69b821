"""Which topics each summary value averages: one rule per kind of name, stated with the value.

A trec_eval name (``recip_rank``, ``ndcg_cut_3``) averages as trec_eval does: over the
topics in both the run and the qrels; with ``-c`` (``complete=True``) over every qrels topic,
a topic without results counting 0. An ir_measures name (``RR@3``, ``nDCG@3``) averages as
ir_measures does: over every qrels topic, a topic without results counting the measure's
default (0); a measure whose provider gives no default (``Accuracy@k``) over the topics it has
a value for. A run dict's empty ranking (``{"q2": {}}``) is a result (pytrec_eval scores it).

Per-topic outputs (``-q``, ``Results.per_query()``, the DataFrames) list, for each measure, the
topics its mean averages, so their mean is the summary; the one exception is trec_eval 9.0.8's
own ``-q`` text under ``-c``, which does not print the topics without results (10.0 does):
those keep trec_eval's bytes, and the population still names them.

Computed on demand from an Evaluation (never on the scoring path), by :func:`populations`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecqr.engine.names import IrMeasuresColumn

IR_MEASURES, TREC_EVAL, COMPLETE = "ir_measures", "trec_eval", "trec_eval -c"
NO_DEFAULT = "ir_measures, no default"  # Accuracy@k: the topics with a value only


@dataclass(frozen=True)
class Population:
    """The topics one summary value averages (sums, for counts).

    rule: ``"ir_measures"`` (every qrels topic, a topic without results counting the
    default), ``"ir_measures, no default"`` (the topics with a value), ``"trec_eval"`` (the
    topics in both run and qrels) or ``"trec_eval -c"`` (every qrels topic, a topic without
    results counting 0). topics: those topics, sorted as
    trec_eval sorts them. without_results: the qrels topics among them that the run has no
    ranking for. left_out: qrels topics without results this value does not count (a
    trec_eval name without -c)."""

    rule: str
    topics: tuple
    without_results: tuple = ()
    left_out: tuple = ()

    @property
    def n(self) -> int:
        return len(self.topics)

    def describe(self, switch: str = "-c") -> str:
        """``34 qrels topics (ir_measures: a topic without results counts 0)``,
        ``25 evaluated (-c counts the 9 as 0)``... switch: how the caller names trec_eval's
        -c (Python: ``complete=True``)."""
        if self.rule == IR_MEASURES:
            return f"{self.n} qrels topics (ir_measures: a topic without results counts 0)"
        if self.rule == COMPLETE:
            return f"{self.n} qrels topics ({switch}: a topic without results counts 0)"
        if self.rule == NO_DEFAULT:
            return f"{self.n} topics with a value (ir_measures: no default)"
        more = f" ({switch} counts the {len(self.left_out)} as 0)" if self.left_out else ""
        return f"{self.n} evaluated{more}"


def populations(ev, prefix: str = "") -> dict:
    """{prefix + measure name: Population} of every summary value of an Evaluation (runid
    and values without a summary left out; prefix: ``"Z"`` for the outputs of -Z).
    ``ev.defaults``: the ir_measures defaults of the qrels topics without results."""
    rk = getattr(ev, "rankings", None)
    qrels_only = tuple(getattr(rk, "qrels_only", ()) or ())
    evaluated = tuple(ev.qids)
    defaults = getattr(ev, "defaults", None) or {}
    complete = bool(getattr(ev.options, "complete", False))
    out, cache = {}, {}
    for c in ev.columns:
        m = c.measure
        if m.name == "runid" or m.summary == "none":
            continue
        name = prefix + c.name
        if isinstance(m, IrMeasuresColumn):
            if m.sparse:
                has = ~np.isnan(np.asarray(c.values, dtype=np.float64))
                out[name] = Population(NO_DEFAULT,
                                       tuple(q for q, h in zip(evaluated, has) if h))
                continue
            missing = tuple(sorted(q for q, v in defaults.items() if c.name in v))
            key = (IR_MEASURES, missing)
            if key not in cache:
                cache[key] = Population(IR_MEASURES, tuple(sorted(evaluated + missing)),
                                        missing)
        elif complete:
            key = (COMPLETE,)
            if key not in cache:
                listed = set(evaluated)
                cache[key] = Population(COMPLETE, tuple(sorted(
                    evaluated + tuple(q for q in qrels_only if q not in listed))), qrels_only)
        else:
            key = (TREC_EVAL,)
            if key not in cache:
                cache[key] = Population(TREC_EVAL, evaluated, left_out=qrels_only)
        out[name] = cache[key]
    return out


def uniform(pops: dict, evaluated) -> bool:
    """Whether every value averages exactly the evaluated topics, no topic counted without
    results: then ``N topics evaluated`` says it all."""
    listed = tuple(evaluated)
    return all(p.topics == listed and not p.without_results for p in pops.values())


def describe_groups(pops: dict, shown: int = 4, switch: str = "-c") -> list:
    """``RR@3, nDCG@3: 34 qrels topics (...)`` per group of values with one population, in
    the order of the values."""
    groups: dict = {}
    for name, p in pops.items():
        groups.setdefault(p, []).append(name)
    out = []
    for p, names in groups.items():
        label = ", ".join(names[:shown])
        if len(names) > shown:
            label += f" and {len(names) - shown} more"
        out.append(f"{label}: {p.describe(switch)}")
    return out
