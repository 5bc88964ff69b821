"""Bounds for unjudged documents (``--bounds`` on ``eval`` and ``compare``).

A score computed with unjudged documents counted non-relevant (trec_eval's reading, today's
value) is a lower bound of what full judgments could give; the same score with them counted
relevant is the other end, and the gap tells a reader how far the number could move (pools
that leave 90% of a rewrite's top 10 unjudged are common in conversational search).

* **lower**: the measure as ``trecqr eval`` prints it, unchanged (the row named as before);
* **upper** (``<name>_upper``): the measure on the qrels completed for this run: every
  document the run retrieves for a topic the qrels judge (within ``-M``, in trec_eval's order)
  that the qrels do not judge, or judge with a negative grade (trec_eval's "unjudged"), added
  with grade G = the relevance level (``-l``, default 1): counted relevant, at the lowest
  grade that counts so. A binary measure (map, P, recip_rank) reads any grade >= ``-l`` the
  same; a graded one (ndcg) gains G for each such document, no more. Precision-like measures
  at k cannot exceed this value. Measures normalised by what the qrels hold (map and recall
  by the relevant count R, ndcg by the ideal ranking) also see R and the ideal grow, so for
  them it is the value under that completion, not a strict maximum: it can even fall below
  the lower value (ndcg_cut_3 when the top 3 is judged but documents further down are not);
* **unjudged** (``<name>_unjudged``): the share of the measure's top k that is unjudged
  (trec_eval 10.0's ``unj``: unjudged in the first k over k), k the measure's cutoff
  (``ndcg_cut_3``: 3, ``nDCG@10``: 10); for a measure without a cutoff (map) the share of
  every retrieved document. Averaged over the topics the measure averages.

Topics the qrels do not judge get no judgments (the population stays that of the lower value).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import re
import sys
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.api.evaluation import load_qrels, load_run, score_trec
from trecqr.engine.evaluator import Column
from trecqr.engine.names import IrMeasuresColumn
from trecqr.engine.population import populations
from trecqr.formats.arrays import as_numpy
from trecqr.formats.order import qid_codes, trec_order
from trecqr.formats.qrels import Qrels
from trecqr.measures.base import REGISTRY, LongCutoffs
from trecqr.measures.unjudged import Unjudged
from trecqr.rankings.options import Options
from trecqr.report.populations import score_table
from trecqr.report.text_table import aligned_table, fmt_value

UPPER, SHARE = "_upper", "_unjudged"
_AT = re.compile(r"@(\d+)$")


def upper_grade(relevance_level: int) -> int:
    """G: the lowest grade counted relevant (the relevance level, trec_eval's ``-l``; 0 when
    that is negative, since trec_eval reads a negative grade as unjudged)."""
    return max(int(relevance_level), 0)


def _keys(qid, docno) -> pa.Array:
    return pc.binary_join_element_wise(qid.cast(pa.string()), docno.cast(pa.string()), "\x1f")


@dataclass
class Completion:
    """The upper bound's judgments for one run: ``qrels`` (the qrels with the run's unjudged
    retrieved documents added at ``grade``; ``added`` of them), and the run's ranked
    documents the evaluation sees (``qid``, 0-based ``position``, ``unjudged``) for the
    shares."""

    qrels: Qrels
    grade: int
    added: int
    qid: pa.Array
    position: np.ndarray
    unjudged: np.ndarray

    def shares(self, qids, k: int | None) -> np.ndarray:
        """Per topic of ``qids``, the unjudged share of its top k (of every document it
        ranks when k is None; 0 for a topic with none): trec_eval 10.0's ``unj``."""
        found = pc.index_in(self.qid, value_set=pa.array(list(qids), pa.string()))
        where = as_numpy(found.fill_null(-1)).astype(np.int64)
        seen = where >= 0
        if k is not None:
            seen &= self.position < k
        unj = np.bincount(where[seen], weights=self.unjudged[seen].astype(np.float64),
                          minlength=len(qids))
        if k is not None:
            return unj / k
        ranked = np.bincount(where[seen], minlength=len(qids))
        return np.divide(unj, ranked, out=np.zeros(len(qids)), where=ranked > 0)


def completion(qrels, run, options: Options) -> Completion:
    """The run's documents each topic's first ``max_docs`` in trec_eval's order (scores as
    floats under 9.0.8, as it reads them), which are unjudged (not in the qrels, or with a
    negative grade), and the qrels completed with those of the qrels' topics (module doc)."""
    q = load_qrels(qrels, comments=options.v10)
    r = load_run(run, comments=options.v10)
    grade = upper_grade(options.relevance_level)
    if len(r):
        qcode, _ = qid_codes(r.qid)
        order, _, _ = trec_order(r, options.float32_scores, qcode)
        order = np.arange(len(r)) if order is None else np.asarray(order)
        codes = qcode[order]
        heads = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
        position = np.arange(len(order)) - np.repeat(heads, np.diff(np.append(heads, len(order))))
        keep = position < options.max_docs
        order, position = order[keep], position[keep]
    else:
        order, position = np.zeros(0, np.int64), np.zeros(0, np.int64)
    idx = pa.array(order, pa.int64())
    qid, docno = r.qid.take(idx).cast(pa.string()), r.docno.take(idx).cast(pa.string())
    grades = np.asarray(q.grade, dtype=np.int64)
    judged = _keys(q.qid, q.docno).filter(pa.array(grades >= 0))
    unjudged = ~as_numpy(pc.is_in(_keys(qid, docno), value_set=judged)).astype(bool)
    in_qrels = as_numpy(pc.is_in(qid, value_set=pc.unique(q.qid.cast(pa.string())))).astype(bool)
    add = pa.table({"qid": qid, "docno": docno}).filter(pa.array(unjudged & in_qrels))
    add = add.group_by(["qid", "docno"]).aggregate([])
    table = pa.table({"qid": q.qid.cast(pa.string()), "docno": q.docno.cast(pa.string()),
                      "grade": pa.array(grades)})
    kept = table.join(add, keys=["qid", "docno"], join_type="left anti")  # negative grades go
    added = pa.table({"qid": add["qid"], "docno": add["docno"],
                      "grade": pa.array(np.full(add.num_rows, grade, dtype=np.int64))})
    both = pa.concat_tables([kept.select(["qid", "docno", "grade"]), added])
    both = both.sort_by([("qid", "ascending"), ("docno", "ascending")])
    source = getattr(q, "source", "<qrels>")
    done = Qrels(both["qid"].combine_chunks(), both["docno"].combine_chunks(),
                 as_numpy(both["grade"]).astype(np.int64), f"{source} (completed)",
                 empty_topics=q.empty_topics)  # averaged over the same topics
    return Completion(done, grade, add.num_rows, qid, np.asarray(position),
                      unjudged)


def cutoff(name: str, measure=None) -> int | None:
    """The rank cutoff k of an output column (``P_5``: 5, ``nDCG@10``: 10), None without one;
    measure: the column's measure, else looked up by the name."""
    hit = _AT.search(name)
    if hit and (measure is None or isinstance(measure, IrMeasuresColumn)):
        return int(hit.group(1))
    base, _, tail = name.rpartition("_")
    m = REGISTRY.get(base) if measure is None else measure
    if m is not None and isinstance(m.params, LongCutoffs) and m.name == base and tail.isdigit():
        return int(tail)
    return None


def _bounded(col) -> bool:
    values = np.asarray(col.values)
    return col.measure.name != "runid" and col.measure.summary != "none" and \
        values.dtype.kind in "fiub"


def combine(lower, upper, done: Completion):
    """The lower Evaluation with, after each numeric column, its ``_upper`` column (from
    ``upper``, scored on the completed qrels) and its ``_unjudged`` share column."""
    if list(lower.qids) != list(upper.qids) or [c.name for c in lower.columns] != \
            [c.name for c in upper.columns]:
        raise AssertionError("the upper bound was scored on other topics or measures")
    pops = populations(lower)
    columns, defaults = [], {q: dict(v) for q, v in (lower.defaults or {}).items()}
    for lo, up in zip(lower.columns, upper.columns):
        columns.append(lo)
        if not _bounded(lo):
            continue
        columns.append(Column(lo.name + UPPER, lo.measure, up.values, up.summary))
        if lo.measure.integer:
            continue  # a count (num_rel, num_ret): its upper bound says it all
        shares = done.shares(lower.qids, cutoff(lo.name, lo.measure))
        n = pops[lo.name].n if lo.name in pops else len(shares)
        summary = float(np.sum(shares) / n) if n else float("nan")
        measure = IrMeasuresColumn(lo.name + SHARE, False) \
            if isinstance(lo.measure, IrMeasuresColumn) else Unjudged()
        columns.append(Column(lo.name + SHARE, measure, shares, summary))
        for q, values in defaults.items():
            if lo.name in values:
                values[lo.name + UPPER] = upper.defaults[q][lo.name]
                values[lo.name + SHARE] = 0.0
    return dataclasses.replace(lower, columns=columns, defaults=defaults)


def bounds_evaluation(score, qrels, run, options: Options):
    """(the combined Evaluation, G, documents added). score(qrels, run) -> Evaluation is the
    scorer of the lower value (``trecqr eval``'s engine choice), run twice: on the qrels and
    on the completed qrels."""
    q = load_qrels(qrels, comments=options.v10)
    run = load_run(run, comments=options.v10)  # read once: stdin ("-") can be read only once
    lower = score(q, run)
    done = completion(q, run, options)
    return combine(lower, score(done.qrels, run), done), done.grade, done.added


@dataclass
class Bounds:
    """A run's bounds (Python's ``trecqr.bounds``): summary {measure: {"lower", "upper",
    "unjudged", "k"}} over the topics each value averages, per_query {qid: {measure: {...}}};
    grade: G; added: the unjudged retrieved documents counted relevant."""

    grade: int
    added: int
    summary: dict
    per_query: dict

    def __repr__(self) -> str:
        return (f"Bounds(grade={self.grade}, added={self.added}, measures={list(self.summary)}, "
                f"topics={len(self.per_query)})")


def bounds(qrels, run, measures, *, relevance_level: int = 1, max_docs=None,
           complete: bool = False, compat: str = "9.0.8") -> Bounds:
    """Each measure with the run's unjudged documents counted non-relevant (``lower``, what
    :func:`trecqr.evaluate` gives), counted relevant at grade ``relevance_level`` (``upper``),
    and the unjudged share of its top k (``unjudged``); the module docstring says how."""
    if isinstance(measures, str):
        measures = [measures]
    options = Options(relevance_level=relevance_level,
                      max_docs=sys.maxsize if max_docs is None else max_docs,
                      complete=complete, compat=compat)
    ev, grade, added = bounds_evaluation(
        lambda q, r: score_trec(q, r, list(measures), options), qrels, run, options)
    cols = {c.name: c for c in ev.columns}
    names = [n for n in cols if n + UPPER in cols]
    summary = {n: {"lower": float(cols[n].summary), "upper": float(cols[n + UPPER].summary),
                   "unjudged": float(cols[n + SHARE].summary) if n + SHARE in cols else None,
                   "k": cutoff(n, cols[n].measure)} for n in names}
    per_query = {q: {n: {"lower": float(cols[n].values[i]),
                         "upper": float(cols[n + UPPER].values[i]),
                         "unjudged": float(cols[n + SHARE].values[i]) if n + SHARE in cols
                         else None} for n in names} for i, q in enumerate(ev.qids)}
    return Bounds(grade, added, summary, per_query)


def note(grade: int, added: int) -> str:
    """What the coverage line adds under --bounds."""
    return (f"; bounds: {added} unjudged retrieved documents counted relevant at grade "
            f"{grade} for the upper values")


# ---------------------------------------------------------------------------------------------
# compare --bounds: each run's mean, its upper bound and unjudged share beside the comparison


@dataclass
class RunBound:
    """One run's bounds under one measure, over the topics its mean averages."""

    run: str
    measure: str
    topics: int
    lower: float
    upper: float
    unjudged: float
    k: int | None


def run_bounds(qrels, runs, names, measures, lower: dict, *, complete=False,
               relevance_level=1, max_docs=None, compat="9.0.8") -> tuple:
    """([RunBound] per run and measure, G). lower: {name: {measure: mean}}, the comparison's
    means (the lower values); each upper mean is the run's mean on its completed qrels, with
    the comparison's own scoring (:func:`trecqr.report.populations.score_table`)."""
    options = Options(relevance_level=relevance_level,
                      max_docs=sys.maxsize if max_docs is None else max_docs,
                      complete=complete, compat=compat)
    q = load_qrels(qrels, comments=options.v10)
    rows, grade = [], upper_grade(relevance_level)
    for run, name in zip(runs, names):
        done = completion(q, run, options)
        table = score_table(done.qrels, [run], measures, complete=complete, names=[name],
                            relevance_level=relevance_level, max_docs=max_docs, compat=compat)
        topics = table.topics(0)
        for m in table.measures:
            k = cutoff(m)
            shares = done.shares(topics, k)
            rows.append(RunBound(name, m, len(topics), float(lower[name][m]),
                                 table.summaries[0][m],
                                 float(np.sum(shares) / len(topics)) if topics else math.nan,
                                 k))
    return rows, grade


def bounds_words(grade: int) -> str:
    return (f"bounds: lower = unjudged documents non-relevant (the means above), upper = the "
            f"run's unjudged retrieved documents counted relevant at grade {grade}; unjudged: "
            "share of the measure's top k (of every retrieved document without a cutoff)")


def table_words(grade: int) -> str:
    """What a paper table's (Markdown, LaTeX) upper and unjudged columns are, for its legend."""
    return (f"Upper: the mean with the run's unjudged retrieved documents counted relevant at "
            f"grade {grade} (the means count them non-relevant: the lower values); unjudged: "
            "the share of the measure's top k that is unjudged (of every retrieved document "
            "without a cutoff), over the same topics.")


def attach(text: str, fmt: str, rows: list, grade: int, places: int = 4) -> str:
    """compare's output with the bounds: a table after the text, a ``bounds`` object in JSON,
    four columns in CSV (each pair's baseline and run, upper and unjudged). Markdown and LaTeX
    take theirs as they are drawn (:func:`trecqr.report.compare.render`'s ``bounds``)."""
    if fmt == "json":
        doc = json.loads(text)
        doc["bounds"] = {"grade": grade, "note": bounds_words(grade),
                         "rows": [{k: (None if isinstance(v, float) and math.isnan(v) else v)
                                   for k, v in dataclasses.asdict(r).items()} for r in rows]}
        return json.dumps(doc, indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        by = {(r.run, r.measure): r for r in rows}
        table = list(csv.reader(io.StringIO(text)))
        head = table[0]
        at = {f: head.index(f) for f in ("baseline", "run", "measure")}
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(head + ["upper_baseline", "upper_run", "unjudged_baseline", "unjudged_run"])
        for row in table[1:]:
            b, r = by[(row[at["baseline"]], row[at["measure"]])], by[(row[at["run"]],
                                                                     row[at["measure"]])]
            w.writerow(row + [_cell(b.upper), _cell(r.upper), _cell(b.unjudged),
                              _cell(r.unjudged)])
        return out.getvalue()
    lines = ["", bounds_words(grade)]
    lines += aligned_table([[r.run, r.measure, str(r.topics), fmt_value(r.lower, places),
                             fmt_value(r.upper, places), fmt_value(r.unjudged, places),
                             "all" if r.k is None else str(r.k)] for r in rows],
                           ["run", "measure", "topics", "lower", "upper", "unjudged", "k"],
                           left=2)
    return text + "\n".join(lines) + "\n"


def _cell(v: float) -> str:
    return "" if math.isnan(v) else repr(v)
