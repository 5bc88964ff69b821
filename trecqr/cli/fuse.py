"""``trecqr fuse RUN RUN... -o OUT --method NAME --norm NAME``: fuse runs into one TREC run.

A thin click command over :mod:`trecqr.fusion`: options are checked before any run is read,
the fused run is written atomically in trec_eval's order, and what ``--optimize`` chose is
printed on stderr.
"""

from __future__ import annotations

import click

from trecqr.errors import UsageError
from trecqr.formats.run import write_run
from trecqr.fusion.entry import check_params, fuse, resolve
from trecqr.fusion.optimize import ONLY_TRAINED, grid_search, trials
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT
from trecqr.cli.types import OutputFile, RunTag


def _value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    raise UsageError(f"--params: {text!r} is not a number")


def parse_params(items, weights) -> dict:
    """--params KEY=VALUE[,KEY=VALUE] (repeatable) and --weights W,W,... as a dict."""
    params = {}
    for item in items:
        for pair in filter(None, item.split(",")):
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise UsageError(f"--params: expected KEY=VALUE, got {pair!r}")
            params[key.strip()] = _value(value.strip())
    if weights is not None:
        try:
            params["weights"] = [float(w) for w in weights.split(",")]
        except ValueError:
            raise UsageError(f"--weights: expected numbers separated by commas, got "
                             f"{weights!r}") from None
    return params


def check_options(runs, method, norm, params, train_qrels, train_runs, optimize):
    """The Method and canonical norm, once every option is known to fit (before reading)."""

    m, norm = resolve(method, norm)
    if len(runs) < 2:
        raise UsageError("fuse needs two or more runs")
    if train_runs and len(train_runs) != len(runs):
        raise UsageError(f"{len(train_runs)} --train-run for {len(runs)} runs")
    if train_runs and train_qrels is None:
        raise UsageError("--train-run needs --train-qrels")
    if optimize is not None and train_qrels is None:
        raise UsageError("--optimize needs --train-qrels")
    if m.trained and train_qrels is None:
        raise UsageError(f"{m.name} is trained: give --train-qrels (and --train-run)")
    probe = dict(params)
    if optimize is not None and m.name not in ONLY_TRAINED:
        name, values = trials(m.name, len(runs))  # refuses a method without a grid
        probe[name] = values[0]
    check_params(m, probe, len(runs), bool(m.trained))
    return m, norm


def chosen_line(name, value, measure, score) -> str:
    if name is None:
        return "fuse: --optimize: trained on --train-qrels (no parameter to search)"
    shown = ",".join(f"{w:g}" for w in value) if isinstance(value, list) else f"{value:g}"
    return (f"fuse: --optimize {measure}: {name}={shown} "
            f"({measure} {score:.4f} on the training runs)")


@click.command("fuse", context_settings=CONTEXT)
@click.argument("runs", nargs=-1, required=True, metavar="RUN RUN...")
@click.option("-o", "--output", type=OutputFile(), required=True, metavar="OUT",
              help="Fused run to write (TREC format, trec_eval's order, atomically; '-' for "
                   "stdout).")
@click.option("--method", default="rrf", show_default=True, metavar="NAME",
              help="combmin, combmax, combmed, combsum, combanz, combmnz, combgmnz, isr, "
                   "log_isr, logn_isr, rrf, rbc, bordafuse, wbordafuse, condorcet, wcondorcet, "
                   "wsum, wmnz, mixed, posfuse, probfuse, segfuse, slidefuse, mapfuse, "
                   "bayesfuse; ranx's names (sum, mnz, w_bordafuse...) too.")
@click.option("--norm", default="min-max", show_default=True, metavar="NAME",
              help="Normalisation of each run per topic first: min-max, min-max-inverted "
                   "(lowest score best, e.g. distances), max, sum, zmuv, rank, borda or none; "
                   "ranx's names (min_max...) too.")
@click.option("--params", "params", multiple=True, metavar="KEY=VALUE[,...]",
              help="The method's parameters, ranx's names: k (rrf), gamma (combgmnz), sigma "
                   "(logn_isr), phi (rbc), n_segments (probfuse), w (slidefuse).")
@click.option("--weights", default=None, metavar="W,W,...",
              help="One weight per run (wsum, wmnz, mixed, wbordafuse, wcondorcet).")
@click.option("--train-qrels", default=None, metavar="QRELS",
              help="Judgments to train posfuse, probfuse, segfuse, slidefuse, mapfuse and "
                   "bayesfuse on, or to --optimize on.")
@click.option("--train-run", "train_runs", multiple=True, metavar="RUN",
              help="A training run, one per RUN in the same order (repeat the option; "
                   "default: the RUNs themselves, on the qrels' topics).")
@click.option("--optimize", default=None, metavar="MEASURE",
              help="Choose the weights or parameter by ranx's grid search for the best MEASURE "
                   "(ndcg, map, nDCG@10...) on --train-qrels, and print the choice.")
@click.option("--runid", default=None, type=RunTag(),
              help="Runid of the output (default: method, norm and the inputs' runids).")
def command(runs, output, method, norm, params, weights, train_qrels, train_runs, optimize,
            runid):
    """Fuse two or more runs into one with ranx's algorithms and normalisations."""
    def job():
        given = parse_params(params, weights)
        m, canon = check_options(runs, method, norm, given, train_qrels, train_runs, optimize)
        training = list(train_runs) or list(runs)
        if optimize is not None:
            best, score, name = grid_search(train_qrels, training, m.name, canon, optimize)
            given.update(best)
            click.echo(chosen_line(name, best.get(name), optimize, score), err=True)
        fused = fuse(list(runs), m.name, canon, given, train_qrels=train_qrels,
                     train_runs=training if train_qrels is not None else None, runid=runid)
        write_run(fused, output)
        topics = len(set(fused.qid.to_pylist()))
        click.echo(f"fuse: {m.name} (norm {canon or 'none'}) of {len(runs)} runs: {topics} "
                   f"topics, {len(fused)} documents; wrote {output}", err=True)

    run_guarded(job)
