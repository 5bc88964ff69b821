"""Command-line options shared by several commands, declared once so that they read and behave
the same everywhere: the help options of every command (:data:`CONTEXT`), the options of the
commands that score several runs (compare, breakdown, plot), and those of gen and suggest."""

from __future__ import annotations

import click

from trecqr.errors import UsageError
from trecqr.cli.types import CInteger, FiniteFloat, OutputFile

CONTEXT = {"help_option_names": ["-h", "--help"]}  # every command answers -h


def topic_options(f):
    """-c, -l and --compat, with trec_eval's meaning."""
    f = click.option("--compat", type=click.Choice(["9.0.8", "10.0"]), default="9.0.8",
                     show_default=True, help="trec_eval version to reproduce.")(f)
    f = click.option("-l", "level", type=CInteger(-2**63, 2**63 - 1), default=1,
                     show_default=True, metavar="N",
                     help="Minimum grade counted relevant (trec_eval's long, as eval's -l).")(f)
    f = click.option("-c", "complete", is_flag=True,
                     help="Use every qrels topic; a topic missing from a run counts 0.")(f)
    return f


def correction_options(f):
    """--correction and --alpha of the multiple-testing correction."""
    f = click.option("--alpha", type=FiniteFloat(0, 1), default=0.05, show_default=True,
                     help="Significance level (on adjusted p-values).")(f)
    f = click.option("--correction", type=click.Choice(["holm", "bonferroni", "bh", "by", "none"]),
                     default=None, help="Multiple-testing correction over the family: Holm "
                     "(default; none with --test tukey-hsd), Bonferroni, Benjamini-Hochberg, "
                     "Benjamini-Yekutieli or none.")(f)
    return f


def qrels_runs_measures(f):
    """QRELS RUN... and the repeatable -m MEASURE (with --quiet, which silences the notes on
    the names: ``MRR@3`` means ir_measures' true cutoff)."""
    f = click.option("--quiet", is_flag=True,
                     help="No notes (id space, measure names) on stderr.")(f)
    f = click.option("-m", "measures", multiple=True, required=True, metavar="MEASURE[.PARAMS]",
                     help="trec_eval measure (map, ndcg_cut.3, recip_rank, ...); repeatable.")(f)
    f = click.argument("runs", nargs=-1, required=True, type=str)(f)
    return click.argument("qrels", type=str)(f)


def comparison_options(f):
    """compare's options from --baseline to --seed: the runs' pairing, the topics and the paired
    tests (compare and report take the same ones, so a page shows compare's numbers)."""
    return _stack(
        click.option("--baseline", multiple=True, metavar="NAME",
                     help="Baseline run (file name, path, stem or run id); default the first "
                          "run. Repeat for several baselines, each with its own marker."),
        click.option("--all-pairs", is_flag=True,
                     help="Compare every pair of runs, not vs a baseline."),
        topic_options,
        click.option("-M", "max_docs", type=CInteger(), default=None, metavar="N",
                     help="Keep the first N documents of each topic."),
        click.option("-J", "judged_only", is_flag=True, help="Score judged documents only."),
        click.option("--test", "test",
                     type=click.Choice(["t", "wilcoxon", "randomization", "tukey-hsd"]),
                     default="t", show_default=True,
                     help="Test whose adjusted p decides significance (tukey-hsd: "
                          "Carterette's randomised Tukey HSD, every pair)."),
        correction_options,
        click.option("--permutations", type=click.IntRange(1, 10_000_000), default=10000,
                     show_default=True,
                     help="Sign flips of the randomization test (permutations of tukey-hsd)."),
        click.option("--bootstrap", type=click.IntRange(1, 10_000_000), default=10000,
                     show_default=True, help="Bootstrap samples of the confidence interval."),
        click.option("--seed", type=click.IntRange(0), default=0, show_default=True,
                     help="Random seed (randomization test and bootstrap)."),
    )(f)


def label_option(f):
    """--label MEASURE=LABEL, repeatable: compare's tables and report's page name a measure so
    (trecqr/report/labels.py checks each against the measures)."""
    return click.option("--label", "labels", multiple=True, metavar="MEASURE=LABEL",
                        help="A measure's label in the tables and plots (e.g. "
                             "ndcg_cut.3=nDCG@3; default MRR, NDCG@3, ...); repeatable.")(f)


def alternatives(names) -> str:
    """``a, b or c``: the values an option takes, as a message says them."""
    *rest, last = names
    return f"{', '.join(rest)} or {last}" if rest else last


def needed_together(first: tuple, second: tuple, error=UsageError) -> None:
    """Two options that mean something only together, each ``(option, value, what it takes)``:
    the one given alone is named with the one it needs and what that one takes
    (``--topics-out needs --query-field (raw, resolved or context)``), so the line says what
    to add. ``error``: the exception, click's where a command refuses before its job starts."""
    (name_a, value_a, takes_a), (name_b, value_b, takes_b) = first, second
    if (value_a is None) == (value_b is None):
        return
    if value_b is None:
        raise error(f"{name_a} needs {name_b} {takes_b}")
    raise error(f"{name_b} needs {name_a} {takes_a}")


def say_written(output, what: str = "report") -> None:
    """The success line of a command that wrote its output to a file (-o FILE; not for stdout)."""
    if output is not None and output != "-":
        click.echo(f"trecqr: {what} written to {output}", err=True)


def table_output_options(formats):
    """--format (one of formats, default text), --places and -o/--output (atomic)."""
    def apply(f):
        f = click.option("-o", "--output", type=OutputFile(), default="-", metavar="FILE",
                         help="Write here (atomically).")(f)
        f = click.option("--places", type=click.IntRange(0, 17), default=4, show_default=True,
                         help="Decimal places in the text table.")(f)
        return click.option("--format", "fmt", type=click.Choice(list(formats)),
                            default="text", show_default=True, help="Output format.")(f)
    return apply


def _stack(*options):
    def apply(f):
        for option in reversed(options):
            f = option(f)
        return f
    return apply


text_options = _stack(
    click.option("--tokenizer", type=click.Choice(("alnum", "whitespace")), default="alnum",
                 show_default=True, help="tokens for PER and sim_emb"),
    click.option("--case-sensitive", is_flag=True, help="do not lowercase before tokenising"),
    click.option("--embeddings", default=None,
                 help="word2vec (text, or binary .bin) or GloVe file for sim_emb (default: "
                      "packaged GloVe 6B 50d)"),
)

ranking_overlap_options = _stack(
    click.option("--index", "index_dir", default=None, type=click.Path(file_okay=False),
                 help="trecqr index (bm25s, lucene or dense) for the retrieval-based "
                      "similarities (sim_ret+ needs bm25s, or lucene built with "
                      "--store-docvectors)"),
    click.option("--depth", type=int, default=10, show_default=True, help="sim_ret cut-off k"),
    click.option("--rbo-p", type=float, default=0.9, show_default=True, help="RBO persistence"),
    click.option("--overlap", type=click.Choice(("rbo", "jaccard", "overlap")), default="rbo",
                 show_default=True, help="sim_ret ranking-overlap measure"),
    click.option("--rm3-fb-docs", type=int, default=10, show_default=True,
                 help="sim_ret+: RM3 feedback passages (Anserini's first stage is 50 deep)"),
    click.option("--rm3-fb-terms", type=int, default=10, show_default=True,
                 help="sim_ret+: RM3 feedback terms"),
    click.option("--rm3-original-weight", type=float, default=0.5, show_default=True,
                 help="sim_ret+: weight of the original query in RM3"),
    click.option("--rm3-no-filter", is_flag=True,
                 help="sim_ret+: keep feedback terms that are not [a-z0-9]+ (Anserini's "
                      "filterTerms off)"),
)
