"""``trecqr compare``, ``breakdown``, ``diff`` and ``plot``: the report commands
(trecqr/report/ computes and renders the reports)."""

from __future__ import annotations

import sys

import click

from trecqr.errors import UsageError
from trecqr.formats.writer import atomic_write_text
from trecqr.report import breakdown, compare, diff, plots
from trecqr.report.breakdown import DEFAULT_MAX_DEPTH
from trecqr.report.bounds import attach, run_bounds
from trecqr.report.labels import parse_pairs
from trecqr.cli.lifecycle import quiet_notes, run_guarded
from trecqr.cli.options import (CONTEXT, comparison_options, correction_options, label_option,
                                needed_together, qrels_runs_measures, say_written,
                                table_output_options, topic_options)
from trecqr.cli.types import OutputFile


@click.command("compare", context_settings=CONTEXT)
@qrels_runs_measures
@comparison_options
@click.option("-n", "short_names", multiple=True, metavar="LABEL",
              help="The runs' names in the tables, one -n per run, in the runs' order.")
@click.option("--name", "run_names", multiple=True, metavar="RUN=LABEL",
              help="A run's name in the tables (RUN: its file name, path, stem or run id); "
                   "repeatable.")
@label_option
@click.option("--caption", default=None, metavar="TEXT",
              help="--format latex: the table's \\caption (may hold LaTeX).")
@click.option("--latex-label", default=None, metavar="KEY",
              help="--format latex: the table's \\label (e.g. tab:results).")
@click.option("--anova", is_flag=True,
              help="Add the two-way ANOVA (systems x topics) of each measure, with its effect "
                   "sizes.")
@table_output_options(["text", "json", "csv", "markdown", "latex"])
@click.option("--bounds", is_flag=True,
              help="Also each run's means with its unjudged retrieved documents counted "
                   "relevant (at grade -l) and the unjudged share of each measure's top k "
                   "(markdown, latex: two more columns per measure).")
def compare_command(qrels, runs, measures, quiet, baseline, all_pairs, complete, level, max_docs,
                    judged_only, compat, test, correction, alpha, permutations, bootstrap, seed,
                    short_names, run_names, labels, caption, latex_label, anova, fmt, places,
                    output, bounds):
    """Compare RUNs on QRELS: means, paired tests vs a baseline, corrected p-values."""
    def job():
        if quiet:
            quiet_notes()
        if bounds and judged_only:  # trecqr/report/bounds.py
            raise UsageError("--bounds counts unjudged documents relevant, and -J drops them: "
                             "leave one of them out")
        names = _run_names(runs, short_names, run_names)
        cmp = compare.compare(qrels, list(runs), list(measures), baselines=list(baseline),
                              all_pairs=all_pairs, complete=complete, test=test,
                              correction=correction, alpha=alpha, permutations=permutations,
                              bootstrap=bootstrap, seed=seed, relevance_level=level,
                              max_docs=max_docs, judged_only=judged_only, compat=compat,
                              anova=anova, names=names, labels=list(labels))
        rows = grade = None
        if bounds:
            rows, grade = run_bounds(qrels, list(runs), cmp.runs, list(measures), cmp.means,
                                     complete=complete, relevance_level=level,
                                     max_docs=max_docs, compat=compat)
        paper = fmt in ("markdown", "latex")
        text = compare.render(cmp, fmt, places, caption, latex_label,
                              bounds=(rows, grade) if bounds and paper else None)
        if bounds and not paper:
            text = attach(text, fmt, rows, grade, places)
        atomic_write_text(output, text)

    run_guarded(job)
    say_written(output, "comparison")


def _run_names(runs, short_names, run_names):
    """The names -n (a list, one per run) or --name (RUN=LABEL) give, or None."""
    if short_names and run_names:
        raise UsageError("-n and --name exclude each other: give every run's name with -n "
                         "(in order) or some with --name RUN=LABEL")
    if short_names:
        if len(short_names) != len(runs):
            raise UsageError(f"-n gives {len(short_names)} names for {len(runs)} runs: one "
                             "-n LABEL per run, in the runs' order")
        return list(short_names)
    return parse_pairs(run_names, "RUN", "--name") if run_names else None


@click.command("breakdown", context_settings=CONTEXT)
@qrels_runs_measures
@click.option("--by", type=click.Choice(["depth", "type", "labels"]), default="depth",
              show_default=True, help="Group topics by turn depth, turn type or a label file.")
@click.option("--labels", "labels", default=None, metavar="FILE",
              help="--by type: a dev_type.json file; --by labels: a TSV file qid<TAB>label.")
@click.option("--max-depth", type=click.IntRange(0), default=breakdown.DEFAULT_MAX_DEPTH,
              show_default=True, help="Group depths >= N as 'N+' (0: no cap).")
@click.option("--baseline", default=None, metavar="NAME", help="Baseline run (default first).")
@click.option("--groups", default=None, metavar="FILE.json",
              help="Overlapping groups {group: [turn ids]} (e.g. QReCC's "
                   "test_question_types.json) in place of --by, with an 'all' row.")
@topic_options
@correction_options
@table_output_options(["text", "json", "csv"])
def breakdown_command(qrels, runs, measures, quiet, by, labels, max_depth, baseline, groups,
                      complete, level, compat, correction, alpha, fmt, places, output):
    """Per-group (turn depth, turn type, label) means, counts and t-tests vs a baseline."""
    def job():
        if quiet:
            quiet_notes()
        if by != "depth" and labels is None and groups is None:
            raise UsageError(f"--by {by} needs --labels FILE")
        bd = breakdown.breakdown(qrels, list(runs), list(measures), by=by, labels=labels,
                       max_depth=max_depth or None, baseline=baseline, complete=complete,
                       correction=correction, alpha=alpha, relevance_level=level,
                       compat=compat, groups=groups)
        atomic_write_text(output, breakdown.render(bd, fmt, places))

    run_guarded(job)
    say_written(output, "breakdown")


@click.command("diff", context_settings=CONTEXT)
@click.argument("a", type=str)
@click.argument("b", type=str, required=False)
@click.option("--tol", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Largest absolute difference of two numbers still counted equal "
                   "(0: the printed values must be equal as text or as numbers).")
@click.option("--ignore", "ignore", multiple=True, metavar="MEASURE",
              help="Leave this measure out (e.g. runid); repeatable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="Report format.")
@click.option("-o", "--output", type=OutputFile(), default="-", metavar="FILE",
              help="Write the report here.")
@click.option("--qrels", default=None, metavar="QRELS",
              help="With --run: B is trecqr's evaluation of RUN against QRELS (no B file).")
@click.option("--run", "run", default=None, metavar="RUN",
              help="The run to evaluate (with --qrels).")
@click.option("--eval-args", default="", metavar="'ARGS'",
              help="trecqr eval options for that evaluation, as one string, "
                   "e.g. '-q -c -m all_trec'.")
def diff_command(a, b, tol, ignore, fmt, output, qrels, run, eval_args):
    """Compare two trec_eval-format outputs A and B (e.g. trec_eval's and trecqr's), or a
    trec_eval output A with trecqr's evaluation of a run (--qrels QRELS --run RUN --eval-args).

    Lists every (measure, qid) whose values differ beyond --tol and every one present on one
    side only, then a summary. Exit status 0 when they agree, 1 when they differ, 2 on bad
    input.
    """
    def job():
        needed_together(("--qrels", qrels, "QRELS (to evaluate --run against)"),
                        ("--run", run, "RUN (the run to evaluate, compared with A)"))
        if qrels is not None:
            if b is not None:
                raise UsageError("give either B or --qrels/--run, not both")
            theirs = diff.read_trec_output(a)
            ours = diff.parse_trec_output(diff.evaluation_text(qrels, run, eval_args),
                                     f"trecqr eval {run}")
            res = diff.diff_outputs(theirs, ours, tol, ignore)
        elif b is None:
            raise UsageError("missing B (or --qrels QRELS --run RUN)")
        else:
            res = diff.diff_files(a, b, tol, ignore)
        text = diff.render_json(res) if fmt == "json" else diff.render_text(res)
        atomic_write_text(output, text)
        return res

    res = run_guarded(job)
    say_written(output, "diff")
    sys.exit(0 if res.agree else 1)



def _plot_options(f):
    f = click.option("-o", "--output", type=OutputFile(), required=True, metavar="FILE",
                     help="Plot file: .png, .svg or .pdf.")(f)
    f = click.option("--title", default=None, help="Plot title (default: a descriptive one).")(f)
    f = topic_options(f)
    f = click.option("-m", "measure", required=True, metavar="MEASURE[.PARAMS]",
                     help="trec_eval measure (one).")(f)
    return f


def _plot_and_say(fn, output):
    """Draw the plot on the error path, then say where it went."""
    run_guarded(fn)
    click.echo(f"trecqr: plot written to {output}", err=True)


@click.group("plot", context_settings=CONTEXT)
def plot_command():
    """Plots (PNG, SVG or PDF, from -o's extension): measure by turn depth, per-topic
    differences, distributions."""


@plot_command.command("depth", context_settings=CONTEXT)
@click.argument("qrels")
@click.argument("runs", nargs=-1, required=True)
@_plot_options
@click.option("--max-depth", type=click.IntRange(0), default=DEFAULT_MAX_DEPTH,
              show_default=True, help="Pool depths >= N as 'N+' (0: no cap).")
def depth_cmd(qrels, runs, measure, complete, level, compat, title, output, max_depth):
    """Mean measure per turn depth, one line per run, 95% t confidence bands."""
    _plot_and_say(lambda: plots.plot_depth(qrels, list(runs), measure, output=output,
                                           max_depth=max_depth, title=title, complete=complete,
                                           relevance_level=level, compat=compat), output)


@plot_command.command("diff", context_settings=CONTEXT)
@click.argument("qrels")
@click.argument("run_a")
@click.argument("run_b")
@_plot_options
def diff_cmd(qrels, run_a, run_b, measure, complete, level, compat, title, output):
    """Per-topic difference RUN_B - RUN_A, sorted."""
    _plot_and_say(lambda: plots.plot_diff(qrels, run_a, run_b, measure, output=output, title=title,
                          complete=complete, relevance_level=level, compat=compat), output)


@plot_command.command("dist", context_settings=CONTEXT)
@click.argument("qrels")
@click.argument("runs", nargs=-1, required=True)
@_plot_options
@click.option("--violin", is_flag=True, help="Violin plots instead of box plots.")
def dist_cmd(qrels, runs, measure, complete, level, compat, title, output, violin):
    """Distribution of the per-topic measure per run."""
    _plot_and_say(lambda: plots.plot_dist(qrels, list(runs), measure, output=output, title=title,
                          violin=violin, complete=complete, relevance_level=level,
                          compat=compat), output)
