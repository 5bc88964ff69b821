"""One trec_eval invocation: read inputs in the chosen relevance format, score, z-score.

The ``trecqr eval`` pipeline on top of the API: it reads the measure names once into a plan,
reads qrels, prefs and judgment groups files, and runs the plan
(:func:`trecqr.api.evaluation.run_plan`)."""

from __future__ import annotations

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.api.evaluation import load_run, run_plan, score_diversity
from trecqr.errors import UsageError
from trecqr.formats.diversity import read_diversity_qrels
from trecqr.formats.inputs import Input
from trecqr.formats.prefs import Prefs, read_prefs, read_qrels_prefs
from trecqr.formats.qrels import Qrels
from trecqr.formats.qrels_jg import QrelsJG, read_qrels_jg
from trecqr.engine.execute import execute
from trecqr.engine.plan import Plan, make_plan
from trecqr.rankings.options import Options
from trecqr.engine.zscores import read_zscores

REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg", "diversity")
# measures that read no relevance information (every other one needs its own -R format)
_ANY_FORMAT = ("runid", "num_q")


def check_rel_format(rel_format: str) -> None:
    if rel_format not in REL_FORMATS:
        raise UsageError(f"unknown relevance format {rel_format!r} for -R "
                         f"(one of {', '.join(REL_FORMATS)})")


def read_z(zscores):
    """The -Z file, read (None when not given)."""
    if zscores is None:
        return None
    return read_zscores(zscores)


def run_trec_eval(qrels, run, measures, options: Options, *, rel_format: str = "qrels",
                  zscores=None):
    """Return the Evaluation that ``trec_eval [options] -m ... QRELS RUN`` would print
    (ir_measures names too): the names are read once, into one plan, for every -R format."""
    check_rel_format(rel_format)
    z = read_z(zscores)
    if rel_format == "diversity":
        if z is not None:
            raise UsageError("-Z applies to trec_eval measures, not to -R diversity")
        return score_diversity(qrels, run, measures, options)
    plan = make_plan(list(measures or []), options)
    if plan.irm:
        if rel_format != "qrels":
            raise UsageError(f"ir_measures names ({plan.irm[0].caller}) need -R qrels")
        ev = run_plan(plan, qrels, run, zscores=z).evaluation
        if not plan.trec:  # the plan scores "runid" as a placeholder: not asked for here
            ev.columns = [c for c in ev.columns if c.name != "runid"]
        return ev
    check_formats(plan.trec, rel_format)
    if rel_format == "qrels":
        return run_plan(plan, qrels, run, zscores=z).evaluation
    return score_rel_info(qrels, run, plan, rel_format, zscores=z)


def check_formats(selection, rel_format: str) -> None:
    """trec_eval fails ("Can't calculate measure") on a measure of another -R format."""
    for measure, _ in selection:
        if measure.name in _ANY_FORMAT:
            continue
        needs = getattr(measure, "rel_formats", ("qrels",))
        if rel_format not in needs:
            raise UsageError(f"measure {measure.name!r} cannot be computed from -R {rel_format} "
                             f"relevance information (it needs -R {' or -R '.join(needs)})")


def read_rel_info(path, rel_format: str, options: Options):
    """The relevance file in a non-qrels format (prefs, qrels_prefs, qrels_jg, diversity)."""
    comments = options.v10
    if rel_format == "prefs":
        return read_prefs(path, comments=comments)
    if rel_format == "qrels_prefs":
        return read_qrels_prefs(path, comments=comments)
    if rel_format == "diversity":
        return read_diversity_qrels(path)
    return read_qrels_jg(path, comments=comments)


def topic_qrels(rel_info):
    """Qrels with one row per judged (topic, docno): enough to decide which topics trec_eval
    evaluates (and -c's num_q); the grades are never read by the measures of these formats."""
    table = pa.table({"q": rel_info.qid, "d": rel_info.docno})
    pairs = table.group_by(["q", "d"]).aggregate([])
    return Qrels(pairs.column("q").combine_chunks(), pairs.column("d").combine_chunks(),
                 np.zeros(pairs.num_rows, np.int64), rel_info.source)


def score_rel_info(rel_path, run, plan: Plan, rel_format: str, *, zscores=None):
    """Score a run against ``-R prefs``, ``-R qrels_prefs`` or ``-R qrels_jg`` judgments
    (the plan's measures checked against the format by :func:`check_formats`)."""
    options = plan.options
    rel_info = rel_path if isinstance(rel_path, rel_info_type(rel_format)) else \
        read_rel_info(rel_path, rel_format, options)
    r = load_run(run, comments=options.v10)  # a Run: its measures read it (ctx.run)
    return execute(plan, topic_qrels(rel_info), Input("columns", r), zscores=zscores,
                   rel_info=rel_info).evaluation


def rel_info_type(rel_format: str):
    return QrelsJG if rel_format == "qrels_jg" else Prefs
