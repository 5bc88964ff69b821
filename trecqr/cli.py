"""Command line: thin click commands over the Python API.

``trecqr eval [OPTIONS] QRELS RUN`` takes trec_eval's own options and prints its output byte
for byte. Bad input is one line ``file:line: what is wrong`` on stderr and exit status 2.
"""

from __future__ import annotations

import os
import sys
import click

from .errors import UsageError
from .guard import run_guarded


def _lean_arrow_memory() -> None:
    """Return freed Arrow memory to the OS at once (jemalloc, no decay): a command-line run
    reads a file of millions of lines once, and its peak memory is what users see."""
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(0)
    except (NotImplementedError, AttributeError, pa.ArrowException):
        pass


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when used, so that ``trecqr eval``
    does not pay for the dataset adapters at start-up. ``lazy`` maps a name to "module:object"."""

    def __init__(self, *args, lazy: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            import importlib

            module, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, lazy={"collapse": "trecqr.adapters.collapse:collapse_command",
                                  "diff": "trecqr.report.diff:command",
                                  "compare": "trecqr.report.compare:command",
                                  "breakdown": "trecqr.report.breakdown:command",
                                  "plot": "trecqr.report.plots:command",
                                  "gen": "trecqr.generative.gen:command",
                                  "index": "trecqr.retrieval.commands:index_command",
                                  "search": "trecqr.retrieval.commands:search_command",
                                  "cqr": "trecqr.retrieval.cqr:command",
                                  "suggest": "trecqr.generative.suggest:command",
                                  "validate": "trecqr.adapters.validate:command"},
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trecqr")
def main():
    """trecqr: trec_eval-exact evaluation for conversational search and query suggestion."""
    _lean_arrow_memory()


@main.command("eval", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=str)
@click.argument("runs", nargs=-1, required=True, metavar="RUN [RUN ...]")
@click.option("-q", "query", is_flag=True, help="Print per-topic values as well as the summary.")
@click.option("-c", "complete", is_flag=True,
              help="Average over every qrels topic; topics missing from the run count 0.")
@click.option("-n", "nosummary", is_flag=True, help="No summary ('all') rows.")
@click.option("-J", "judged_only", is_flag=True, help="Score judged documents only.")
@click.option("-M", "max_docs", type=int, default=None, metavar="N",
              help="Keep the first N documents of each topic (after tie-breaking).")
@click.option("-l", "level", type=click.IntRange(-2**63, 2**63 - 1), default=1,
              show_default=True, metavar="N",
              help="Minimum grade counted relevant.")
@click.option("-N", "num_docs", type=click.IntRange(0, 2**62), default=None, metavar="N",
              help="Number of documents in the collection (for utility's 4th coefficient).")
@click.option("-m", "measures", multiple=True, metavar="MEASURE[.PARAMS]",
              help="Measure or nickname (official, all_trec, ...), or an ir_measures name "
                   "(RR@3, nDCG@10, R(rel=2)@100); repeatable.")
@click.option("-R", "rel_format", default="qrels", show_default=True, metavar="FORMAT",
              help="Relevance file format: qrels, prefs, qrels_prefs, qrels_jg, diversity "
                   "(topic subtopic docno grade, for alpha_nDCG@k, ERR_IA@k...).")
@click.option("-Z", "zscores", default=None, metavar="FILE",
              help="Print z-scores using the per-topic mean/stddev in FILE.")
@click.option("--compat", type=click.Choice(["9.0.8", "10.0"]), default="9.0.8",
              show_default=True, help="trec_eval version to reproduce.")
@click.option("--format", "fmt", type=click.Choice(["trec", "json", "jsonl", "csv", "tsv"]),
              default="trec", show_default=True, help="Output format.")
@click.option("--places", type=click.IntRange(0, 17), default=None,
              help="Decimal places of float values (trec: 4; other formats: full precision).")
@click.option("-o", "--output", default="-", metavar="FILE", help="Write here (atomically).")
@click.option("--engine", type=click.Choice(["native", "pytrec_eval"]), default="native",
              show_default=True, help="native, or delegate computation to pytrec_eval.")
@click.option("--quiet", is_flag=True, help="No coverage line on stderr.")
@click.option("-j", "--jobs", type=int, default=None, metavar="N",
              help="Score several runs in N worker processes (default: every core, when the "
                   "runs are large enough to pay for starting them).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Score the runs on a Dask distributed cluster (trecqr[dask]); its workers "
                   "must see the same paths.")
@click.option("--protocol", default=None, metavar="NAME",
              help="An official evaluation protocol (scai-qrecc21, cast2021-nist, cast2022-nist, "
                   "ikat2023, ikat2024, ikat2023-ptkb, convsearch-r1-qrecc, "
                   "convsearch-r1-topiocqa, cast2019, llm4cs-cast2019/2020/2021, "
                   "chatty-goose-cast2019, cqe-cast2019): it fixes -m, -l, -M, -c and "
                   "de-duplication.")
@click.option("--eval-missing-truth", is_flag=True,
              help="scai-qrecc21: also score turns without gold passages, as the paper did.")
@click.option("--collection", default=None, metavar="FILE",
              help="qrecc-official, topiocqa-official: the passages' text (TSV/JSONL).")
def eval_command(qrels, runs, query, complete, nosummary, judged_only, max_docs, level,
                 num_docs, measures, rel_format, zscores, compat, fmt, places, output, engine,
                 quiet, jobs, scheduler, protocol, eval_missing_truth, collection):
    """Evaluate each RUN against QRELS, as trec_eval does (same options, same output).

    Several runs (or a folder, or a glob pattern) are scored in parallel, the qrels read once;
    the trec output is each run's output in turn, the others get a ``run`` column."""
    from .api_many import expand_runs
    from .report.outputs import coverage_line, render
    from .scorer.idspace import ignore_id_space
    from .scorer.options import Options
    from .formats.writer import atomic_write_text

    def job():
        if quiet:  # trecqr/scorer/idspace.py
            ignore_id_space()
        paths, several = expand_runs(runs)
        if collection is not None and protocol not in ("qrecc-official", "topiocqa-official"):
            raise UsageError("--collection goes with --protocol qrecc-official or "
                             "topiocqa-official")
        if protocol is not None or eval_missing_truth:  # trecqr/adapters/presets.py
            return _eval_protocol(protocol, eval_missing_truth, qrels, paths, measures, level,
                                  max_docs, complete, compat, fmt, query, nosummary, places,
                                  output, quiet, collection)
        if qrels == "-" and "-" in paths:
            raise UsageError("QRELS and RUN cannot both be '-' (stdin)")
        if max_docs is not None and max_docs < 0:
            raise UsageError(f"-M must not be negative (got {max_docs})")
        options = Options(relevance_level=level,
                          max_docs=sys.maxsize if max_docs is None else max_docs,
                          judged_only=judged_only, complete=complete, compat=compat,
                          num_docs_in_coll=num_docs or 0)
        spec = (list(measures), options, rel_format, zscores, engine)
        if len(paths) == 1 and not several and scheduler is None:
            ev = _eval_one(qrels, paths[0], *spec)
            atomic_write_text(output, render(ev, fmt, query=query, summary=not nosummary,
                                             places=places))
            if not quiet:
                click.echo(coverage_line(ev), err=True)
            return
        from .api_many import eval_runs

        text, lines = eval_runs(_eval_rendered, qrels, paths, spec,
                                (fmt, query, not nosummary, places), several=several,
                                jobs=jobs, scheduler=scheduler)
        atomic_write_text(output, text)
        if not quiet:
            for line in lines:
                click.echo(line, err=True)

    run_guarded(job)


def _eval_one(qrels, run, measures, options, rel_format, zscores, engine):
    """The Evaluation ``trecqr eval`` prints for one run (qrels: a path or a parsed file)."""
    from .api_trec_eval import check_rel_format, read_z, run_trec_eval

    trec_args, irm = list(measures), []
    if any(("@" in m or "(" in m) for m in measures):  # ir_measures names: RR@3, R(rel=2)
        from .measures.names import split_measures

        trec_args, irm = split_measures(list(measures))
    if irm and rel_format != "diversity":  # ir_measures names (RR@3, nDCG@10): API path
        if rel_format != "qrels" or engine != "native":
            raise UsageError(f"ir_measures names ({irm[0][0]}) need -R qrels and the native "
                             "engine")
        from .api import split_and_score

        ev = split_and_score(qrels, run, trec_args, irm, options, zscores).evaluation
        if not trec_args:  # the API scores "runid" as a placeholder: not asked for here
            ev.columns = [c for c in ev.columns if c.name != "runid"]
        return ev
    if engine == "pytrec_eval":  # the cross-check: pytrec_eval computes the values
        check_rel_format(rel_format)
        if rel_format != "qrels":
            raise UsageError(f"--engine pytrec_eval reads only -R qrels, not {rel_format}")
        from .compat.pytrec_engine import score_with_pytrec_eval

        return score_with_pytrec_eval(qrels, run, list(measures), options,
                                      zscores=read_z(zscores))
    return run_trec_eval(qrels, run, list(measures), options, rel_format=rel_format,
                         zscores=zscores)


def _eval_rendered(qrels, run, spec, out):
    """One of several runs, in a worker: (its output text, its coverage line)."""
    from .report.outputs import coverage_line, render

    fmt, query, summary, places = out
    ev = _eval_one(qrels, run, *spec)
    return render(ev, fmt, query=query, summary=summary, places=places), coverage_line(ev)


def _eval_protocol(name, eval_missing_truth, qrels, paths, measures, level, max_docs, complete,
                   compat, fmt, query, nosummary, places, output, quiet, collection=None):
    """trecqr eval --protocol NAME: the protocol fixes the measures and trec_eval's options."""
    from .adapters.presets import protocol_evaluation
    from .formats.writer import atomic_write_text
    from .report.outputs import coverage_line, render

    if name is None:
        raise UsageError("--eval-missing-truth goes with --protocol scai-qrecc21")
    fixed = [flag for flag, given in (("-m", measures), ("-l", level != 1),
                                      ("-M", max_docs is not None), ("-c", complete)) if given]
    if fixed:
        raise UsageError(f"--protocol {name} fixes {', '.join(fixed)}: leave them out")
    if len(paths) != 1:
        raise UsageError("--protocol scores one run at a time")
    ev, note = protocol_evaluation(name, qrels, paths[0], eval_missing_truth=eval_missing_truth,
                                   compat=compat, collection=collection)
    atomic_write_text(output, render(ev, fmt, query=query, summary=not nosummary, places=places))
    if not quiet:
        click.echo(coverage_line(ev) + note, err=True)


@main.group("convert", cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, lazy={
    "qrecc": "trecqr.adapters.qrecc:command",
    "topiocqa": "trecqr.adapters.topiocqa:command",
    "cast": "trecqr.adapters.cast:cast_command",
    "topics": "trecqr.adapters.topics:topics_command",
    "rewrites": "trecqr.adapters.rewrites:rewrites_command",
    "irds": "trecqr.adapters.irds:command",
    "sessions": "trecqr.adapters.sessions:sessions_command",
    "ikat": "trecqr.adapters.ikat:command",
})
def convert():
    """Dataset files to TREC topics and qrels (canonical turn ids, counts on stderr)."""


if __name__ == "__main__":  # pragma: no cover
    main()


def entry() -> None:
    """Console script ``trecqr``: run the command, flush, and leave without tearing down the
    interpreter, which would free hundreds of MB of arrays one by one for nothing. Signals,
    closed standard streams and errors outside a command's work end on the one error path."""
    from .guard import (Interrupted, echo_line, failure_line, fix_std_streams,
                        install_signal_handlers, read_fifos_once, refuse_endless_devices,
                        remove_all_temps)

    fix_std_streams()
    install_signal_handlers()
    read_fifos_once()
    code = 0
    try:
        refuse_endless_devices(sys.argv[1:])
        main()
    except SystemExit as exc:
        if isinstance(exc.code, int):
            code = exc.code
        elif exc.code is not None:
            echo_line(str(exc.code))
            code = 1
    except BaseException as exc:  # noqa: BLE001 - outside a command's work (start-up, options)
        remove_all_temps()
        line, code = failure_line(exc)
        if os.environ.get("TRECQR_DEBUG", "") not in ("", "0") and not isinstance(
                exc, (Interrupted, KeyboardInterrupt)):
            import traceback

            traceback.print_exc()
        if line:
            echo_line(line)
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OSError, ValueError) as exc:
        if code == 0:
            if not isinstance(exc, BrokenPipeError):
                echo_line(f"trecqr: <stdout>: cannot write: {getattr(exc, 'strerror', None) or exc}")
            code = 1
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 1
    mp_util = sys.modules.get("multiprocessing.util")
    if mp_util is not None:  # what the interpreter's exit would do for worker pools: unlink
        try:                 # their semaphores (else the resource tracker reports them leaked)
            mp_util._run_finalizers(0)
        except Exception:  # noqa: BLE001 - leaving anyway
            pass
    os._exit(code)
