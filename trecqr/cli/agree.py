"""``trecqr agree labels|rankings|repro``: how far two sets of judgments, or a run and its
reproduction, agree (:mod:`trecqr.report.agree` computes, :mod:`trecqr.report.agree_render`
renders)."""

from __future__ import annotations

import click

from trecqr.errors import UsageError
from trecqr.formats.writer import atomic_write_text
from trecqr.report import agree, agree_render
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT, say_written, table_output_options, topic_options
from trecqr.cli.types import CInteger, FiniteFloat


@click.group("agree", context_settings=CONTEXT)
def command():
    """Agreement: two qrels' labels, the system rankings two qrels give, a run and its
    reproduction."""


def _level(f):
    return click.option("-l", "level", type=CInteger(-2**63, 2**63 - 1), default=1,
                        show_default=True, metavar="N",
                        help="Minimum grade counted relevant (the binarisation threshold).")(f)


def _write(result, fmt, places, output):
    atomic_write_text(output, agree_render.render(result, fmt, places))


@command.command("labels", context_settings=CONTEXT)
@click.argument("qrels_a")
@click.argument("qrels_b")
@_level
@table_output_options(agree_render.FORMATS)
def labels_command(qrels_a, qrels_b, level, fmt, places, output):
    """Label agreement of QRELS_A and QRELS_B (say human and LLM judgments) over the
    (topic, document) pairs both judge: Cohen's kappa (plain, linear and quadratic weights),
    Krippendorff's alpha (nominal, ordinal, interval), graded and binarized at -l, and the
    confusion matrices."""
    run_guarded(lambda: _write(agree.agree_labels(qrels_a, qrels_b, relevance_level=level),
                               fmt, places, output))
    say_written(output, "agreement")


@command.command("rankings", context_settings=CONTEXT)
@click.argument("qrels_a")
@click.argument("qrels_b")
@click.argument("runs", nargs=-1, required=True, metavar="RUN RUN RUN [RUN ...]")
@click.option("-m", "measures", multiple=True, required=True, metavar="MEASURE[.PARAMS]",
              help="Measure the runs are ranked by (map, ndcg_cut.10, nDCG@10...); "
                   "repeatable.")
@click.option("--rbo-p", type=FiniteFloat(0, 1), default=0.9, show_default=True, metavar="P",
              help="RBO's persistence.")
@click.option("-M", "max_docs", type=CInteger(), default=None, metavar="N",
              help="Keep the first N documents of each topic.")
@topic_options
@table_output_options(agree_render.FORMATS)
def rankings_command(qrels_a, qrels_b, runs, measures, rbo_p, max_docs, complete, level,
                     compat, fmt, places, output):
    """How far the rankings of RUNs by a measure under QRELS_A and under QRELS_B agree:
    Kendall's tau, tau_AP (QRELS_A's ranking the reference), Spearman's rho, RBO; and each
    run's mean and rank under both."""
    def job():
        if max_docs is not None and max_docs < 0:
            raise UsageError(f"-M must not be negative (got {max_docs})")
        _write(agree.agree_rankings(qrels_a, qrels_b, list(runs), list(measures), rbo_p=rbo_p,
                                    relevance_level=level, complete=complete,
                                    max_docs=max_docs, compat=compat), fmt, places, output)

    run_guarded(job)
    say_written(output, "agreement")


@command.command("repro", context_settings=CONTEXT)
@click.argument("original")
@click.argument("reproduction")
@click.option("--baseline", nargs=2, default=None, metavar="ORIGINAL REPRODUCED",
              help="The baseline run and its reproduction: adds the Effect Ratio and DeltaRI "
                   "of ORIGINAL over the baseline.")
@click.option("--qrels", default=None, metavar="QRELS",
              help="Qrels to score the runs with (RMSE, ER, DeltaRI; with -m).")
@click.option("-m", "measures", multiple=True, metavar="MEASURE[.PARAMS]",
              help="Measure of RMSE, ER and DeltaRI (with --qrels); repeatable.")
@click.option("--depth", type=click.IntRange(1), default=1000, show_default=True, metavar="N",
              help="KTU and RBO compare the first N documents (repro_eval's 1000; at most "
                   "100,000).")
@click.option("--rbo-p", type=FiniteFloat(0, 1), default=0.95, show_default=True, metavar="P",
              help="RBO's persistence (repro_eval's 0.95).")
@click.option("-M", "max_docs", type=CInteger(), default=None, metavar="N",
              help="Score the first N documents of each topic (repro_eval cuts at 1000).")
@topic_options
@table_output_options(agree_render.FORMATS)
def repro_command(original, reproduction, baseline, qrels, measures, depth, rbo_p, max_docs,
                  complete, level, compat, fmt, places, output):
    """repro_eval's measures of a REPRODUCTION of the ORIGINAL run: KTU and RBO of the
    document rankings; with --qrels and -m, the RMSE of the per-topic scores; with --baseline
    too, the Effect Ratio and DeltaRI."""
    def job():
        if qrels is None:
            given = [flag for flag, on in (("-c", complete), ("-l", level != 1),
                                           ("-M", max_docs is not None),
                                           ("--compat", compat != "9.0.8")) if on]
            if given:
                raise UsageError(f"{', '.join(given)} set how the runs are scored, and "
                                 "without --qrels and -m they are not: leave them out")
        if max_docs is not None and max_docs < 0:
            raise UsageError(f"-M must not be negative (got {max_docs})")
        _write(agree.agree_repro(original, reproduction, baseline=baseline, qrels=qrels,
                                 measures=list(measures), depth=depth, rbo_p=rbo_p,
                                 relevance_level=level, complete=complete, max_docs=max_docs,
                                 compat=compat), fmt, places, output)

    run_guarded(job)
    say_written(output, "agreement")
