"""Comparing systems: ``trecqr compare QRELS RUN... -m MEASURE...`` and :func:`compare` in
Python.

The numbers come from :mod:`.comparison_stats` (plain data, :class:`.Comparison`); the text,
JSON and CSV from :mod:`.comparison_text`, Markdown and LaTeX from :mod:`.tables`. This module
joins them: :func:`compare` returns the comparison with its notebook views, :func:`render`
writes it in a format.
"""

from __future__ import annotations

from trecqr.report.bounds import table_words
from trecqr.report.comparison import Comparison, PairResult  # noqa: F401 (compare's names)
from trecqr.report.comparison_stats import compute
from trecqr.report.comparison_text import render_json, render_pairs_csv, render_text
from trecqr.report.comparison_views import ComparisonViews
from trecqr.report.stats.corrections import adjust, bonferroni, holm  # noqa: F401 (compare's names)
from trecqr.report.stats.paired import randomization_test, t_test  # noqa: F401 (compare's names)
from trecqr.report.tables import render_latex, render_markdown

FORMATS = ("text", "json", "csv", "markdown", "latex")


def compare(qrels, runs, measures, *, baseline=None, baselines=None, all_pairs: bool = False,
            complete: bool = False, test: str = "t", correction: str | None = None,
            alpha: float = 0.05, permutations: int = 10000, bootstrap: int = 10000,
            seed: int = 0, names=None, relevance_level: int = 1, max_docs=None,
            judged_only: bool = False, compat: str = "9.0.8",
            anova: bool = False, labels=None) -> ComparisonViews:
    """Compare runs (paths, dicts, DataFrames or Runs) on trec_eval or ir_measures measures.

    baseline / baselines: the run(s) every other run is tested against, by index or name (file
    name, path, stem or run id; default the first run); each baseline gets its own marker
    (dagger, double dagger, ...). all_pairs compares every pair i < j (run j minus run i).
    test: the test whose adjusted p decides significance, "t", "wilcoxon", "randomization"
    or "tukey-hsd" (Carterette's randomised Tukey HSD: every pair, already adjusted over the
    pairs). correction: "holm" (default; "none" with tukey-hsd), "bonferroni", "bh", "by" or
    "none", over the family of every (pair, measure) test. anova: add the two-way ANOVA
    (systems x topics) of every measure with its effect sizes. names: the runs' names, a list
    (one per run) or {run: name} (a run by path, file name, stem or run id). labels: {measure:
    label} heading the means tables (default :mod:`.labels`': recip_rank is MRR, ndcg_cut_3
    NDCG@3); measures stay in the order given."""
    return ComparisonViews.of(compute(
        qrels, runs, measures, baseline=baseline, baselines=baselines, all_pairs=all_pairs,
        complete=complete, test=test, correction=correction, alpha=alpha,
        permutations=permutations, bootstrap=bootstrap, seed=seed, names=names,
        relevance_level=relevance_level, max_docs=max_docs, judged_only=judged_only,
        compat=compat, anova=anova, labels=labels))


def render(cmp: Comparison, fmt: str = "text", places: int = 4, caption: str | None = None,
           latex_label: str | None = None, bounds=None) -> str:
    """The comparison in one of :data:`FORMATS` (caption and latex_label: LaTeX's). bounds:
    (rows, grade) of :func:`.bounds.run_bounds`, drawn into the Markdown and LaTeX tables as
    an upper and an unjudged column per measure (the other formats add them with
    :func:`.bounds.attach`)."""
    paper = None if bounds is None else (bounds[0], table_words(bounds[1]))
    if fmt == "markdown":
        return render_markdown(cmp, places=places, bounds=paper)
    if fmt == "latex":
        return render_latex(cmp, places=places, caption=caption, label=latex_label,
                            bounds=paper)
    if fmt == "json":
        return render_json(cmp)
    if fmt == "csv":
        return render_pairs_csv(cmp)
    return render_text(cmp, places)
