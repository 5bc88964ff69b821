"""Command-line options shared by the commands that score several runs (compare, breakdown,
plot), declared once so that they read and behave the same everywhere."""

from __future__ import annotations

import click

from ..clicktypes import FiniteFloat


def topic_options(f):
    """-c, -l and --compat, with trec_eval's meaning."""
    f = click.option("--compat", type=click.Choice(["9.0.8", "10.0"]), default="9.0.8",
                     show_default=True, help="trec_eval version to reproduce.")(f)
    f = click.option("-l", "level", type=int, default=1, show_default=True, metavar="N",
                     help="Minimum grade counted relevant.")(f)
    f = click.option("-c", "complete", is_flag=True,
                     help="Use every qrels topic; a topic missing from a run counts 0.")(f)
    return f


def correction_options(f):
    """--correction and --alpha of the multiple-testing correction."""
    f = click.option("--alpha", type=FiniteFloat(0, 1), default=0.05, show_default=True,
                     help="Significance level (on adjusted p-values).")(f)
    f = click.option("--correction", type=click.Choice(["holm", "bonferroni", "none"]),
                     default="holm", show_default=True, help="Multiple-testing correction.")(f)
    return f


def qrels_runs_measures(f):
    """QRELS RUN... and the repeatable -m MEASURE."""
    f = click.option("-m", "measures", multiple=True, required=True, metavar="MEASURE[.PARAMS]",
                     help="trec_eval measure (map, ndcg_cut.3, recip_rank, ...); repeatable.")(f)
    f = click.argument("runs", nargs=-1, required=True, type=str)(f)
    return click.argument("qrels", type=str)(f)


def say_written(output, what: str = "report") -> None:
    """The success line of a command that wrote its output to a file (-o FILE; not for stdout)."""
    if output is not None and output != "-":
        click.echo(f"trecqr: {what} written to {output}", err=True)


def table_output_options(formats):
    """--format (one of formats, default text), --places and -o/--output (atomic)."""
    def apply(f):
        f = click.option("-o", "--output", default="-", metavar="FILE",
                         help="Write here (atomically).")(f)
        f = click.option("--places", type=click.IntRange(0, 17), default=4, show_default=True,
                         help="Decimal places in the text table.")(f)
        return click.option("--format", "fmt", type=click.Choice(list(formats)),
                            default="text", show_default=True, help="Output format.")(f)
    return apply
