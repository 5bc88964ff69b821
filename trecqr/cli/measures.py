"""``trecqr measures`` and ``trecqr eval -m help``: every measure name with its family and a
one-line description (:mod:`trecqr.measures.catalog`), as trec_eval's ``-h`` lists its own.

The command is registered in the command line's lazy
table, and ``-m help`` is an eager callback of eval's ``-m`` option, so it works without the
QRELS and RUN arguments.
"""

from __future__ import annotations

import click

from trecqr.measures.catalog import format_catalog, measure_catalog
from trecqr.cli.options import CONTEXT


def catalog_text(compat: str = "10.0", kind: str | None = None) -> str:
    rows = [r for r in measure_catalog(compat) if kind is None or r.kind == kind]
    return format_catalog(rows, width=100)  # fixed: the same text in a terminal and a pipe


@click.command("measures", context_settings=CONTEXT)
@click.option("--compat", type=click.Choice(["9.0.8", "10.0"]), default="10.0",
              show_default=True, help="trec_eval version whose measure table is listed.")
@click.option("--kind", type=click.Choice(["trec_eval", "nickname", "ir_measures"]),
              default=None, help="List only these names.")
def command(compat, kind):
    """List every measure name -m takes: trec_eval's measures and nicknames, and ir_measures'
    names, each with its family and a one-line description."""
    click.echo(catalog_text(compat, kind), nl=False)


def measures_help(ctx, param, value):
    """eval's ``-m`` callback: ``-m help`` prints the list and exits (before QRELS and RUN
    are required); any other value is returned as it is."""
    if value and "help" in value:
        click.echo(catalog_text(), nl=False)
        ctx.exit(0)
    return value
