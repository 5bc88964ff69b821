"""Which topics the means of a table trecqr composes (compare, breakdown, report, plots) are
over: one population for every column, stated in the table's header.

A name means one thing at every door, so each mean is the value ``trecqr eval`` gives for that
name with the same options. ``eval`` averages

* an ir_measures name (``RR@3``, ``nDCG@3``) over every qrels topic, a qrels topic the run lacks
  counting 0 (ir_measures' rule);
* a trec_eval name (``recip_rank``, ``ndcg_cut_3``) over the qrels topics the run has
  (trec_eval's rule), or with ``-c`` over every qrels topic, a missing one counting 0.

A table therefore uses one of two populations for all its columns:

* ``qrels``: every qrels topic, a topic a run lacks counting 0: with ``-c``, when every name is
  an ir_measures name, or when every run has every qrels topic (both rules then agree). Every
  run and every paired test is over the same topics.
* ``run``: trec_eval names without ``-c``: each run's mean is over the qrels topics it has, and
  a paired test over the topics both runs have.

ir_measures names next to trec_eval names, without ``-c``, while some run lacks a qrels topic,
would need both in one table: refused, naming ``-c``. A measure whose summary is not the mean of
its per-topic values (``num_ret`` is summed, ``gm_map`` is a geometric mean) cannot be a column
of means: refused too.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pc
from trecqr.api.evaluation import load_qrels
from trecqr.api.many import score_trec_many
from trecqr.errors import UsageError
from trecqr.engine.names import IrMeasuresColumn, aggregator, split_measures
from trecqr.rankings.options import Options
from trecqr.report.text_table import plural

QRELS, RUN = "qrels", "run"


def trec_mean(values) -> float:
    """Left-to-right sum divided by the count, as trec_eval's summary (bit-identical)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return float("nan")
    return float(np.cumsum(values)[-1] / len(values))


@dataclass
class ScoreTable:
    names: list          # run names
    measures: list       # output measure names (ndcg_cut_3, RR@3, ...)
    values: list         # per run: {measure: {qid: value}}
    qids: list           # per run: the qrels topics it has, in evaluation order
    qrels_topics: list   # sorted qrels topics
    complete: bool       # the population is every qrels topic (QRELS), else RUN
    summaries: list = dataclasses.field(default_factory=list)  # per run: {measure: eval's value}
    why: str = ""        # why the population is what it is (the header's words)
    irm: tuple = ()      # the ir_measures names among the measures
    runids: list = dataclasses.field(default_factory=list)  # per run: its run tag
    left_out: list = dataclasses.field(default_factory=list)  # a set's measures that are not means
    sources: list = dataclasses.field(default_factory=list)  # per run: its path as given, or None

    def run_index(self, name, option: str = "baseline") -> int:
        """The index of the run called ``name``: its index itself, its name in the table, run
        tag, path as given, file name or file name without its extension; else a one-line
        refusal naming the runs."""
        if isinstance(name, int) and not isinstance(name, bool):
            if 0 <= name < len(self.names):
                return name
        else:
            for i, n in enumerate(self.names):
                cands = {n, os.path.splitext(n)[0]}
                if i < len(self.runids):
                    cands.add(self.runids[i])
                src = self.sources[i] if i < len(self.sources) else None
                if src is not None:
                    base = os.path.basename(src)
                    cands |= {src, base, os.path.splitext(base)[0]}
                if name in cands:
                    return i
        runs = ", ".join(self.names)
        raise UsageError(f"{option} {name!r} is none of the runs ({runs})",
                         cli=f"--{option} {name!r} is none of the runs ({runs})")

    @property
    def rule(self) -> str:
        return QRELS if self.complete else RUN

    def topics(self, i, j=None) -> list:
        """The topics run i's means (or the pair i, j's tests) are over: QRELS, every qrels
        topic (the run's own first, in its evaluation order); RUN, those it (both) has."""
        if self.complete:
            own = list(self.qids[i])
            seen = set(own)
            return own + [q for q in self.qrels_topics if q not in seen]
        ok = set(self.qids[i]) if j is None else set(self.qids[i]) & set(self.qids[j])
        return [t for t in self.qids[i] if t in ok]

    def vector(self, i, measure, topics) -> np.ndarray:
        """Run i's values on these topics; a topic it lacks counts 0 (QRELS only has them)."""
        vals = self.values[i][measure]
        return np.array([vals.get(t, 0.0) for t in topics], dtype=np.float64)

    def mean(self, i, measure, topics) -> float:
        """Run i's mean over these topics: over its whole population, the value ``trecqr eval``
        prints for the name (its own summation, so bit for bit); else trec_eval's sum."""
        if self.summaries and len(topics) == len(self.topics(i)) \
                and set(topics) == set(self.topics(i)):
            return self.summaries[i][measure]
        return trec_mean(self.vector(i, measure, topics))

    def population_line(self, tested=None) -> str:
        """The header's topics line (and the measures left out). tested: the topic counts of
        the paired tests, if any."""
        line = self._topics_line(tested)
        if self.left_out:
            line += (f"; left out, their summaries not being means: {', '.join(self.left_out)}")
        return line

    def _topics_line(self, tested) -> str:
        n_qrels = len(self.qrels_topics)
        if self.complete:
            return (f"topics: all {n_qrels} qrels topics ({self.why}), for every run, "
                    "measure and test")
        counts = [len(q) for q in self.qids]
        if len(set(counts)) == 1 and len({frozenset(q) for q in self.qids}) == 1:
            return (f"topics: the {counts[0]} qrels topics every run has (trec_eval's rule), "
                    "for every run, measure and test")
        per_run = ", ".join(f"{n} {c}" for n, c in zip(self.names, counts))
        pairs = f"; per pair, those both runs have ({', '.join(map(str, tested))})" \
            if tested else ""
        return (f"topics: per run, the qrels topics it has (trec_eval's rule: {per_run})"
                f"{pairs}; -c: all {n_qrels}, a topic a run lacks counting 0")

    def population(self) -> dict:
        """The JSON outputs' statement of the population."""
        return {"rule": self.rule, "why": self.why, "qrels_topics": len(self.qrels_topics),
                "topics": {n: len(self.topics(i)) for i, n in enumerate(self.names)}}


def run_names(runs, names):
    if names is not None:
        names = list(names)
        if len(names) != len(runs):
            raise UsageError("names must match the runs one for one")
        if len(set(names)) != len(names):
            raise UsageError(f"two runs named alike ({', '.join(map(str, names))}): give each "
                             "its own name")
        return names
    out = []
    for r in runs:
        out.append(os.path.basename(str(r)) if isinstance(r, (str, os.PathLike)) else None)
    for i, n in enumerate(out):
        if n is None:
            out[i] = f"run{i + 1}"
    if len(set(out)) != len(out):  # same basename in two folders: use the paths as given
        out = [str(r) if isinstance(r, (str, os.PathLike)) else f"run{i + 1}"
               for i, r in enumerate(runs)]
    if len(set(out)) != len(out):
        raise UsageError("the same run is given twice")
    return out


def _options(relevance_level, max_docs, judged_only, complete, compat) -> Options:
    return Options(relevance_level=relevance_level,
                   max_docs=sys.maxsize if max_docs is None else max_docs,
                   judged_only=judged_only, complete=complete, compat=compat)


def score_table(qrels, runs, measures, *, complete=False, names=None, relevance_level=1,
                max_docs=None, judged_only=False, compat="9.0.8",
                command: str = "compare") -> ScoreTable:
    """Score every run (in parallel when the runs are large); per-topic values of every
    numeric measure, each run's ``eval`` values, and the table's population (module doc)."""
    runs = list(runs)
    if not runs:
        raise UsageError("give at least one run")
    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures or [])
    if not measures:
        raise UsageError("give at least one measure (-m)")
    names = run_names(runs, names)
    options = _options(relevance_level, max_docs, judged_only, complete, compat)
    q = load_qrels(qrels, comments=options.v10)
    trec_args, irm = split_measures(measures)
    if complete and irm:  # -c is trec_eval's switch: ir_measures names count the topics 0 already
        plain = dataclasses.replace(options, complete=False)
        evals = score_trec_many(q, runs, [n for n, _ in irm], plain)
        if trec_args:
            trec = score_trec_many(q, runs, trec_args, options)
            for t, e in zip(trec, evals):
                t.columns.extend(e.columns)
            evals = trec
    else:
        evals = score_trec_many(q, runs, measures, options)
    cols = [c for c in evals[0].columns
            if c.measure.summary != "none" and np.asarray(c.values).dtype.kind in "fiub"]
    if not cols:
        raise UsageError("no numeric per-topic measure selected")
    cols, left_out = _means_only(cols, trec_args, dict(irm), command)
    cols = given_order(cols, measures)
    irm_cols = tuple(c.name for c in cols if isinstance(c.measure, IrMeasuresColumn))
    values, summaries = [], []
    for ev in evals:
        keep = {c.name: c for c in ev.columns}
        values.append({c.name: dict(zip(ev.qids, np.asarray(keep[c.name].values, np.float64)))
                       for c in cols})
        summaries.append({c.name: float(keep[c.name].summary) for c in cols})
    # a qrels dict's topics without judgments ({"b": {}}) are qrels topics for ir_measures'
    # names (evaluate's rule), not for trec_eval's, which never sees them
    empty = set(q.empty_topics) if irm_cols else set()
    qrels_topics = sorted(set(pc.unique(q.qid).to_pylist()) | empty)
    qids = [list(ev.qids) for ev in evals]
    whole, why = _population(names, qids, qrels_topics, complete, irm_cols,
                             [c.name for c in cols if c.name not in irm_cols], command, empty)
    return ScoreTable(names, [c.name for c in cols], values, qids, qrels_topics, whole,
                      summaries, why, irm_cols, [ev.runid for ev in evals], left_out,
                      [os.fspath(r) if isinstance(r, (str, os.PathLike)) else None for r in runs])


def given_order(cols, measures) -> list:
    """The columns in the order their names were given (``-m map -m ndcg_cut.3 -m recip_rank``
    stays so, not trec_eval's map, recip_rank, ndcg_cut_3): a column goes where the first name
    that asks for it exactly (``ndcg_cut.3`` for ``ndcg_cut_3``, ``RR@3``), else its measure
    (``P.5,10`` for ``P_5`` and ``P_10``), else a set (``official``) is; columns one name
    brings keep trec_eval's order among themselves."""
    def rank(c):
        for k, name in enumerate(measures):
            base, _, params = name.partition(".")
            if c.name in (name, f"{base}_{params}"):
                return k
        for k, name in enumerate(measures):
            if name.partition(".")[0] == c.measure.name:
                return k
        return len(measures)
    return sorted(cols, key=rank)  # stable: trec_eval's order within a rank


def _means_only(cols, trec_args, irm: dict, command: str) -> tuple:
    """(the columns whose summary is the mean of their per-topic values, the others' names).
    One named on its own is refused; one a set brings (``official``, ``all_trec``) is left
    out, and the header says so."""
    named = {a.partition(".")[0] for a in trec_args}
    kept, left_out = [], []
    for c in cols:
        kind = aggregator(irm[c.name]) if c.name in irm else c.measure.summary
        if kind == "mean":
            kept.append(c)
        elif c.name in irm or c.measure.name in named:
            what = {"sum": "summed over the topics", "gm": "a geometric mean",
                    "count": "a count of topics"}.get(kind, f"a {kind}")
            raise UsageError(f"{c.name}'s summary is {what}, not a mean of per-topic values, "
                             f"which {command} shows: choose other measures (-m)")
        else:
            left_out.append(c.name)
    if not kept:
        raise UsageError(f"no measure whose summary is a mean of per-topic values ({command} "
                         f"shows means): {', '.join(left_out)} are not")
    return kept, left_out


def _population(names, qids, qrels_topics, complete, irm, trec, command, empty=()) -> tuple:
    """(whether the population is every qrels topic, the words saying why). empty: the qrels
    dict's topics without judgments, qrels topics for the ir_measures names only."""
    if complete and irm and trec and empty:
        raise UsageError(
            f"{', '.join(irm)} (ir_measures names) count the qrels' "
            f"{plural(len(empty), 'topic')} without judgments ({', '.join(sorted(empty)[:3])}"
            f"{', ...' if len(empty) > 3 else ''}) and -c's {', '.join(trec)} (trec_eval "
            f"names) do not: give each kind to its own {command}, or leave those topics out "
            "of the qrels")
    if complete:
        return True, "-c: a topic a run lacks counts 0"
    if not trec:
        return True, "ir_measures' rule: a topic a run lacks counts 0"
    if not irm:
        return False, "trec_eval's rule"
    every = set(qrels_topics)
    lacking = [(n, len(every - set(q))) for n, q in zip(names, qids) if every - set(q)]
    if not lacking:
        return True, "every run has each of them, so ir_measures' and trec_eval's rules agree"
    name, n = lacking[0]
    with_c = "" if empty else (f"add -c to average every measure over all {len(every)} (a "
                               "missing topic counts 0), or ")  # -c never counts empty ones
    raise UsageError(
        f"{', '.join(irm)} (ir_measures names) average over all {len(every)} qrels topics and "
        f"{', '.join(trec)} (trec_eval names) over the topics each run has; {name} lacks "
        f"{plural(n, 'of them', 'of them')}: {with_c}give each kind to its own {command}")
