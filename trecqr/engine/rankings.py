"""Where the core gets trec_eval's rankings: built once per call, from columns or from dicts.

:func:`rank` is the one place :func:`~trecqr.rankings.build.build_rankings` (or its dict
twin, the C module ``rankings/_dicts.c``) is called for a plan, and the one place that chooses
the C pass which ranks run dicts and computes pytrec_eval's common measures at once.
:func:`variant` derives the rankings of another pytrec_eval invocation (relevance level, -J,
nDCG gains) from them without ranking again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from trecqr.runtime.deferred import pc
from trecqr.formats import Run, read_run, run_from_dict
from trecqr.formats.arrays import distinct, grouped_dicts, key_ids
from trecqr.formats.textio import SAMPLE
from trecqr.engine.idspace import id_space_problem, surely_one_space, warn_id_space
from trecqr.rankings.build import Rankings, build_rankings
from trecqr.rankings.ragged import IDX, padded_ranges
from trecqr.engine.names import map_gains, mapped_grades
from trecqr.engine.pytrec_values import RUNID, DictQrels

from trecqr.rankings._dicts import dict_values, rank_run


# columns up to this many rows take the C pass over dicts made from them (below it, numpy's
# per-call costs outweigh making the dicts; the columns ranker wins from about 1,500 rows,
# measured with benchmarks/bench_doors.py's data on this project's 2-core machine)
C_PASS_ROWS = 1536


@dataclass(slots=True)  # made once per call, the drop-in's small calls included
class Ranked:
    """The rankings of one call, and the inputs behind them (columns made on demand)."""

    rankings: Rankings | None  # trec_eval's rankings (None: a pytrec_eval result from C)
    run_order: list        # the evaluated topics in the run's order
    source: str            # the run's name in messages
    num_run_topics: int
    given_run: object      # the Run the caller passed (measures may read it), else None
    run: object            # Run columns, or the run dict they are made from
    qrels: object          # Qrels or DictQrels
    # rankings/_dicts.c's values of the plan's c_specs, {qid: {key: value}}: then the
    # rankings hold the topics only (the C pass ranked each topic once, for every value)
    c_values: dict | None = None
    judged_topics: list | None = None  # the qrels' topics with judgments, when known

    def run_columns(self) -> Run:
        if isinstance(self.run, dict):
            self.run = run_from_dict(self.run)
        return self.run

    def qrels_columns(self):
        return self.qrels.columns() if isinstance(self.qrels, DictQrels) else self.qrels

    def qrels_grades(self) -> np.ndarray:
        return self.qrels.grade


def qrels_topics(qrels) -> list:
    """The topics with judgments."""
    if isinstance(qrels, DictQrels):
        return qrels.topics
    return pc.unique(qrels.qid).to_pylist()


def strict_dict_qrels(qrels: dict):
    """(DictQrels, topics without judgments) for a qrels dict of str -> {str: int}, or None
    when some key or grade needs the general reader's conversions or messages
    (:func:`~trecqr.formats.qrels_from_dict`)."""
    judged, empty = {}, []
    for qid, docs in qrels.items():
        if type(qid) is not str or not isinstance(docs, dict):
            return None
        if docs:
            judged[qid] = docs
        else:
            empty.append(qid)
    try:
        return DictQrels(judged, strict=True), empty
    except TypeError:
        return None


def rank(plan, qrels, run) -> Ranked:
    """trec_eval's rankings of ``run`` against ``qrels`` under the plan's options, once.

    A pytrec_eval plan (``keyed``) ranks the run dict's topics that have judgments, in its
    order, an empty dict as an empty ranking; any other plan ranks trec_eval's topics."""
    options = plan.options
    if run.kind == "dict" and isinstance(qrels, DictQrels) \
            and not (options.complete and options.v10):
        try:
            return _from_dicts(plan, qrels, run.obj)
        except (TypeError, ValueError):
            if plan.keyed:  # pytrec_eval's errors
                raise
            # the general reader names what is wrong
    q = qrels.columns() if isinstance(qrels, DictQrels) else qrels
    given = run.obj if run.kind == "columns" else None
    if run.kind == "dict":
        r = run_from_dict(run.obj)
    elif given is not None:
        r = given
    else:
        # the scanner matches lines against the qrels' docnos for the columns ranker; a file
        # the C pass over dicts takes (fewer lines than C_PASS_ROWS, in the sniffed head) is
        # read without that work
        judged = None if _c_pass_takes_lines(plan, run.raw) else distinct(q.docno)
        r = read_run(run.obj, comments=options.v10, judged=judged,
                     float32=options.float32_scores, raw=run.raw)
    small = _small_columns(plan, qrels, q, r, given)
    if small is not None:
        return small
    rk = build_rankings(r, q, options)
    # pytrec_eval's drop-in stays silent, as pytrec_eval is; the rankings' judged documents
    # clear most runs of the id-space check without its pass over the run's docnos
    if not plan.keyed and not surely_one_space(rk, len(r), len(q)):
        warn_id_space(id_space_problem(q, r))
    order, n_run = [], 0
    if plan.keyed:  # the dict's topics, or the columns' in first-seen order
        topics = run.obj if run.kind == "dict" else rk.run_topics
        rk = _in_dict_order(rk, qrels, [t for t in topics if t in qrels.index])
        order = rk.qids
    elif plan.irm:
        run_topics = _run_topics(run, r, rk)
        evaluated = set(rk.qids)
        order, n_run = [t for t in run_topics if t in evaluated], len(run_topics)
    keep = plan.needs_run_columns or run.kind != "trec"
    return Ranked(rk, order, r.source, n_run, given, r if keep else None, qrels)


def _small_columns(plan, qrels, q, run: Run, given) -> Ranked | None:
    """Small columns (a DataFrame's, an Arrow table's, a small file's) ranked by the C pass
    over dicts, as a run dict is, when it computes every value of the plan: numpy's per-call
    costs would be most of such a call's time. The C pass gives the numpy kernels' values bit
    for bit (tests/measures/test_one_kernel.py). None: rank the columns (too many rows, a
    repeated docno, which the columns' reader names, or values the dicts cannot hold).
    qrels: as given (Qrels, or a qrels dict's DictQrels); q: its columns."""
    if not _c_pass_plan(plan) or len(run) > C_PASS_ROWS:
        return None
    if isinstance(qrels, DictQrels):  # a qrels dict: its dicts as given
        dq = qrels
    elif len(q) > C_PASS_ROWS:
        return None
    else:
        qd = grouped_dicts(q.qid_list(), q.docno_list(), q.grade)
        dq = None if qd is None else DictQrels.from_grouped(qd, q)
    rd = grouped_dicts(run.qid_list(), run.docno_list(), run.score)
    if dq is None or rd is None:
        return None
    for topic in run.empty_topics:  # a run dict's empty rankings, read back from its columns
        rd.setdefault(topic, {})
    try:
        ranked = _from_dicts(plan, dq, rd, run.runid)
    except (TypeError, ValueError):
        return None
    warn_id_space(id_space_problem(q, run))
    ranked.source, ranked.run, ranked.given_run = run.source, run, given
    return ranked


def _c_pass_plan(plan) -> bool:
    """Whether the C pass over dicts computes every value of ``plan`` from small columns."""
    return plan.c_specs is not None and not plan.keyed \
        and not (plan.options.complete and plan.options.v10)


def _c_pass_takes_lines(plan, raw: bytes | None) -> bool:
    """Whether a TREC file whose sniffed head is ``raw`` (None: not sniffed) surely has few
    enough lines for the C pass (:func:`_small_columns`) under ``plan``: the head is the
    whole file, and its line breaks, one per line but maybe the last, are fewer than
    C_PASS_ROWS."""
    return raw is not None and len(raw) < SAMPLE and raw.count(b"\n") < C_PASS_ROWS \
        and _c_pass_plan(plan)


def _run_topics(given, run: Run, rk: Rankings) -> list:
    """The run's topics in its order (build_rankings' first-seen order), empty rankings of a
    dict (``{"q2": {}}``) included; a dict's keys named as its reader names them."""
    if given.kind == "dict":
        return key_ids(given.obj, run.source, "query id")
    topics = list(rk.run_topics)
    if run.empty_topics:
        listed = set(topics)
        topics += [q for q in run.empty_topics if q not in listed]
    return topics


def _dict_rankings(qrels: DictQrels, topics, offsets, rel, options, runid, **coverage):
    rows = np.array([qrels.index[q] for q in topics], dtype=np.int64)
    level_counts = qrels.level_counts[rows]
    num_rel = level_counts[:, qrels.levels >= options.relevance_level].sum(axis=1)
    return Rankings(qids=list(topics), offsets=offsets, rel=rel, num_rel=num_rel,
                    levels=qrels.levels, level_counts=level_counts,
                    bogus=np.zeros(len(topics), dtype=bool), options=options, runid=runid,
                    num_qrels_topics=len(qrels.topics), num_rel_all=qrels.num_rel_all,
                    **coverage)


def _from_dicts(plan, qrels: DictQrels, run: dict, runid: str = "trecqr") -> Ranked:
    """The C ranker's rankings of a run dict (one pass over the dicts, no columns); when the
    C module computes every value of the plan, those values and the topics only. runid: the
    run's (a dict has none: trecqr's)."""
    options = plan.options
    if plan.c_specs is not None:  # every value of the plan in the C pass
        values = dict_values(run, qrels.dicts, options.float32_scores, plan.c_specs,
                             not plan.keyed)  # evaluate refuses infinite scores
        in_run = list(values)  # an empty ranking is scored, as pytrec_eval scores it
        if plan.keyed:  # pytrec_eval's result itself
            return Ranked(None, in_run, "<run dict>", len(run), None, run, qrels, values)
        with_docs = [q for q, d in run.items() if d]
        topics, listed = sorted(in_run), set(in_run)
        rk = _dict_rankings(qrels, topics, np.zeros(len(topics) + 1, np.int64),
                            np.zeros(0, np.int64), options, runid,
                            qrels_only=sorted(q for q in qrels.topics if q not in listed),
                            run_only=sorted(q for q in with_docs if q not in qrels.index))
        return Ranked(rk, in_run, "<run dict>", len(with_docs), None, run, qrels, values,
                      qrels.topics)
    topics, offsets, rel = rank_run(run, qrels.dicts, options.float32_scores,
                                    options.judged_only, min(options.max_docs, 2 ** 62),
                                    qrels.wide, not plan.keyed)
    offsets = np.frombuffer(offsets, dtype=np.int64)
    rel = np.frombuffer(rel, dtype=np.int64 if qrels.wide else IDX)
    if plan.keyed:  # pytrec_eval: run order, empty rankings too
        ranked = set(topics)
        rk = _dict_rankings(qrels, topics, offsets, rel, options, RUNID,
                            qrels_only=[q for q in qrels.topics if q not in ranked],
                            run_only=[q for q in run if q not in qrels.index])
        return Ranked(rk, rk.qids, "<run dict>", len(run), None, run, qrels)
    # trec_eval's topics, in strcmp (code point) order; an empty ranking ({"q2": {}}) is
    # scored, as pytrec_eval scores it
    kept = list(range(len(topics)))
    order = sorted(kept, key=topics.__getitem__)
    if order != list(range(len(topics))):
        starts, lengths = offsets[:-1][order], np.diff(offsets)[order]
        rel = rel[padded_ranges(starts, lengths)]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    in_run = [topics[i] for i in kept]
    with_docs = [q for q, d in run.items() if d]
    rk = _dict_rankings(qrels, [topics[i] for i in order], offsets, rel, options, runid,
                        qrels_only=sorted(set(qrels.topics) - set(in_run)),
                        run_only=sorted(q for q in with_docs if q not in qrels.index))
    return Ranked(rk, in_run, "<run dict>", len(with_docs), None, run, qrels)


def _in_dict_order(rk: Rankings, qrels: DictQrels, topics: list) -> Rankings:
    """Columnar rankings put in the run dict's topic order, topics of the dict without rows
    (``{qid: {}}``) as empty rankings: what the C ranker gives."""
    where = {q: i for i, q in enumerate(rk.qids)}
    idx = np.array([where.get(q, -1) for q in topics], dtype=np.int64)
    lengths = np.where(idx >= 0, np.diff(rk.offsets)[np.maximum(idx, 0)], 0) if len(idx) \
        else np.zeros(0, np.int64)
    starts = rk.offsets[:-1][np.maximum(idx, 0)] if len(idx) else np.zeros(0, np.int64)
    rel = rk.rel[padded_ranges(starts, lengths)]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    listed = set(topics)
    return _dict_rankings(qrels, topics, offsets, rel, rk.options, rk.runid,
                          qrels_only=[q for q in qrels.topics if q not in listed],
                          run_only=rk.run_only)


def variant(rk: Rankings, group, qrels, ranked: Ranked) -> Rankings:
    """The rankings a pytrec_eval invocation of ``group`` (relevance level, -J, nDCG gains)
    would build, from ``rk`` (built at level 1, without -J, gains unmapped): -J drops the
    unjudged documents, gains map the judged grades and merge the grade counts."""
    opts = replace(rk.options, relevance_level=group.level, judged_only=group.judged_only)
    if group.gains is None and opts == rk.options:
        return rk
    rel, offsets = rk.rel, rk.offsets
    if group.judged_only and not rk.options.judged_only:
        judged = rel >= 0
        cum = np.concatenate([[0], np.cumsum(judged)])
        offsets, rel = cum[offsets], rel[judged]
    levels, level_counts, num_rel_all = rk.levels, rk.level_counts, rk.num_rel_all
    if group.gains is not None:
        new_of_level = mapped_grades(levels, group.gains)
        if any(k < 0 or v < 0 for k, v in group.gains) or \
                (len(new_of_level) and new_of_level.max() >= np.iinfo(rel.dtype).max):
            # grades that change sides of 0, or outgrow the ranking's integers: rank again
            mapped = map_gains(ranked.qrels_columns(), group.gains)
            return build_rankings(ranked.run_columns(), mapped, opts)
        judged = rel >= 0
        rel = rel.copy()
        rel[judged] = new_of_level[np.searchsorted(levels, rel[judged])]
        levels, inverse = np.unique(new_of_level, return_inverse=True)
        merge = np.zeros((len(new_of_level), len(levels)), np.int64)
        merge[np.arange(len(new_of_level)), inverse] = 1
        level_counts = rk.level_counts @ merge
        num_rel_all = int(np.count_nonzero(mapped_grades(ranked.qrels_grades(), group.gains)
                                           > 0))
    num_rel = level_counts[:, levels >= group.level].sum(axis=1)
    return replace(rk, offsets=offsets, rel=rel, num_rel=num_rel, levels=levels,
                   level_counts=level_counts, options=opts, num_rel_all=num_rel_all)
