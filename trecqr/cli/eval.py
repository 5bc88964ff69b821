"""``trecqr eval``: trec_eval's options and output, over :mod:`trecqr.cli.engine_choice` (one
run) and :mod:`trecqr.cli.eval_runs` (several runs in parallel)."""

from __future__ import annotations

import sys

import click

from trecqr.cli.engine_choice import bounds_rendered, evaluate_one, evaluate_rendered
from trecqr.api.many import expand_runs
from trecqr.cli.eval_runs import eval_runs
from trecqr.errors import UsageError
from trecqr.formats.writer import atomic_write_text
from trecqr.report import outputs
from trecqr.rankings.options import Options
from trecqr.cli.lifecycle import quiet_notes, run_guarded
from trecqr.cli.measures import measures_help
from trecqr.cli.options import CONTEXT
from trecqr.cli.types import CInteger, OutputFile


@click.command("eval", context_settings=CONTEXT)
@click.argument("qrels", type=str)
@click.argument("runs", nargs=-1, required=True, metavar="RUN [RUN ...]")
@click.option("-q", "query", is_flag=True, help="Print per-topic values as well as the summary.")
@click.option("-c", "complete", is_flag=True,
              help="Average over every qrels topic; topics missing from the run count 0.")
@click.option("-n", "nosummary", is_flag=True, help="No summary ('all') rows.")
@click.option("-J", "judged_only", is_flag=True, help="Score judged documents only.")
@click.option("-M", "max_docs", type=CInteger(), default=None, metavar="N",
              help="Keep the first N documents of each topic (after tie-breaking).")
@click.option("-l", "level", type=CInteger(-2**63, 2**63 - 1), default=1,
              show_default=True, metavar="N",
              help="Minimum grade counted relevant.")
@click.option("-N", "num_docs", type=CInteger(0, 2**62), default=None, metavar="N",
              help="Number of documents in the collection (for utility's 4th coefficient).")
@click.option("-m", "measures", multiple=True, metavar="MEASURE[.PARAMS]",
              callback=measures_help, is_eager=True,
              help="Measure or nickname (official, all_trec, ...), or an ir_measures name "
                   "(RR@3, nDCG@10, R(rel=2)@100); repeatable. -m help lists them.")
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
@click.option("-o", "--output", type=OutputFile(), default="-", metavar="FILE",
              help="Write here (atomically).")
@click.option("--quiet", is_flag=True,
              help="No coverage line or notes (id space, measure names) on stderr.")
@click.option("-j", "--jobs", type=int, default=None, metavar="N",
              help="Score several runs in N worker processes (default: every usable core, "
                   "within the cgroup's CPU quota and memory limit, when the runs are large "
                   "enough to pay for starting them).")
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
@click.option("--bounds", is_flag=True,
              help="Also each measure with the unjudged retrieved documents counted relevant "
                   "(NAME_upper, at the qrels' highest grade) and the unjudged share of its "
                   "top k (NAME_unjudged).")
def eval_command(qrels, runs, query, complete, nosummary, judged_only, max_docs, level,
                 num_docs, measures, rel_format, zscores, compat, fmt, places, output,
                 quiet, jobs, scheduler, protocol, eval_missing_truth, collection, bounds):
    """Evaluate each RUN against QRELS, as trec_eval does (same options, same output).

    Several runs (or a folder, or a glob pattern) are scored in parallel, the qrels read once;
    the trec output is each run's output in turn, the others get a ``run`` column."""
    def job():
        if quiet:
            quiet_notes()
        if nosummary and not query:  # trec_eval prints nothing then, and exits 0
            raise UsageError("-n leaves out the summary rows, and without -q there is nothing "
                             "else to print: add -q for the per-topic rows, or leave -n out")
        paths, several = expand_runs(runs)
        if collection is not None and protocol not in ("qrecc-official", "topiocqa-official"):
            raise UsageError("--collection goes with --protocol qrecc-official or "
                             "topiocqa-official")
        if bounds:  # trecqr/report/bounds.py
            check_bounds(judged_only, rel_format, zscores, protocol)
        if protocol is not None or eval_missing_truth:  # trecqr/protocols/presets.py
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
        spec = (list(measures), options, rel_format, zscores)
        if len(paths) == 1 and not several and scheduler is None and not bounds:
            ev = evaluate_one(qrels, paths[0], *spec)
            atomic_write_text(output, outputs.render(ev, fmt, query=query, summary=not nosummary,
                                             places=places))
            if not quiet:
                click.echo(outputs.coverage_line(ev), err=True)
            return
        render = bounds_rendered if bounds else evaluate_rendered
        text, lines = eval_runs(render, qrels, paths, spec,
                                (fmt, query, not nosummary, places), several=several,
                                jobs=jobs, scheduler=scheduler)
        atomic_write_text(output, text)
        if not quiet:
            for line in lines:
                click.echo(line, err=True)

    run_guarded(job)


def _eval_protocol(name, eval_missing_truth, qrels, paths, measures, level, max_docs, complete,
                   compat, fmt, query, nosummary, places, output, quiet, collection=None):
    """trecqr eval --protocol NAME: the protocol fixes the measures and trec_eval's options."""
    from trecqr.protocols.presets import protocol_evaluation  # lazy: tests/test_imports.py

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
    atomic_write_text(output, outputs.render(ev, fmt, query=query, summary=not nosummary,
                                             places=places))
    if not quiet:
        click.echo(outputs.coverage_line(ev) + note, err=True)


def check_bounds(judged_only, rel_format, zscores, protocol) -> None:
    """--bounds counts unjudged documents relevant in qrels judgments: refuse what leaves none."""
    for given, why in ((judged_only, "-J drops the unjudged documents"),
                       (rel_format != "qrels", f"-R {rel_format} is not graded qrels"),
                       (zscores is not None, "-Z's z-scores are of the lower values only"),
                       (protocol is not None, "--protocol fixes the evaluation")):
        if given:
            raise UsageError(f"--bounds counts unjudged documents relevant, and {why}: leave "
                             "one of them out")
