"""``trecqr report QRELS RUN RUN... -o PAGE.html``: the HTML report of a comparison.

A thin click command over :func:`trecqr.report.html.report_page`: the inputs and options of
``compare`` (its decorators, so they read and behave the same), plus what the turn view shows
(each run's rewrites, the raw and manual topics, a collection or index for passage text,
``--groups``). The page is written atomically, inside the command's output transaction.
"""

from __future__ import annotations

import click

from trecqr.errors import UsageError
from trecqr.formats.writer import atomic_write_text
from trecqr.report.html import report_page
from trecqr.cli.lifecycle import quiet_notes, run_guarded
from trecqr.cli.options import (CONTEXT, comparison_options, label_option, qrels_runs_measures,
                               say_written)
from trecqr.cli.types import OutputFile


@click.command("report", context_settings=CONTEXT)
@qrels_runs_measures
@click.option("-o", "--output", type=OutputFile(), required=True, metavar="PAGE.html",
              help="The page to write (atomically).")
@comparison_options
@click.option("--rewrites", multiple=True, metavar="FILE",
              help="Each run's queries (TSV/TREC/JSONL topics, or JSONL rewrites), one per "
                   "run in the order of the runs; '-' for a run without.")
@click.option("--raw", default=None, metavar="FILE",
              help="Raw utterances (topics): the conversation shown with each turn.")
@click.option("--manual", default=None, metavar="FILE", help="Manual rewrites (topics).")
@click.option("--collection", default=None, metavar="FILE",
              help="TSV/JSONL collection or irds:<id>: passage text of the top k.")
@click.option("--index", "index_dir", default=None, metavar="DIR",
              help="Or an index folder: the passage text of the collection it was built from.")
@click.option("--groups", default=None, metavar="FILE.json",
              help="Turn groups to filter by: {group: [turn ids]} or {turn id: group}.")
@click.option("-k", "k", type=click.IntRange(1, 100), default=10, show_default=True,
              help="Documents shown per run and turn (and the unjudged cutoff).")
@click.option("--upper-bound", "upper_bounds", multiple=True, metavar="RUN",
              help="A run that is an upper bound (an oracle's choice made with the qrels), by "
                   "name or path: labelled so on the page and left out of the tests; repeat "
                   "for several.")
@label_option
@click.option("--title", default=None, help="Page title (default: the run names).")
@click.option("--places", type=click.IntRange(0, 17), default=4, show_default=True,
              help="Decimal places shown.")
def command(qrels, runs, measures, quiet, output, baseline, all_pairs, complete, level, compat,
            max_docs, judged_only, test, correction, alpha, permutations, bootstrap, seed,
            rewrites, raw, manual, collection, index_dir, groups, k, upper_bounds, labels, title,
            places):
    """Write one self-contained HTML page comparing RUNs on QRELS: compare's summary, plots,
    a sortable per-turn table and, per turn, the conversation, rewrites and top k."""

    def job():
        if quiet:
            quiet_notes()
        if baseline and all_pairs:
            raise UsageError("--baseline and --all-pairs exclude each other")
        if collection is not None and index_dir is not None:
            raise UsageError("give the passage text as --collection or --index, not both")
        page = report_page(qrels, list(runs), list(measures),
                           rewrites=[None if r == "-" else r for r in rewrites], raw=raw,
                           manual=manual, collection=collection, index=index_dir,
                           groups=groups, k=k, title=title, places=places, baseline=baseline,
                           upper_bounds=upper_bounds,
                           all_pairs=all_pairs, complete=complete, relevance_level=level,
                           compat=compat, max_docs=max_docs, judged_only=judged_only,
                           test=test, correction=correction, alpha=alpha,
                           permutations=permutations, bootstrap=bootstrap, seed=seed,
                           labels=list(labels))
        atomic_write_text(output, page)

    run_guarded(job)
    say_written(output, "report")
