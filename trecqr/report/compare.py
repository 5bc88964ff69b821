"""Comparing systems: paired significance tests with multiple-testing correction.

``trecqr compare QRELS RUN... -m MEASURE...`` (and :func:`compare` in Python) scores every run
with trecqr's trec_eval-exact scorer and, for every pair (each run against a baseline, or all
pairs) and every measure, reports:

* the mean difference over the compared topics (run minus baseline);
* a paired two-sided t-test (``scipy.stats.ttest_rel``, whose p-value is returned unchanged);
* a paired randomization test: B random sign flips of the per-topic differences (seeded);
  two-sided, p = (count + 1) / (B + 1), where count is the number of flips whose
  |mean difference| is at least the observed |mean difference| (a run against itself gives 1);
* a bootstrap 95% confidence interval of the mean difference (percentile method, seeded);
* the effect size d_z = mean difference / standard deviation of the differences (ddof=1);
* p-values adjusted over the family of all tests made (every pair x every measure):
  Holm (default), Bonferroni, or none.

Topics: one population for every column (:mod:`.populations`), each run's mean the value
``trecqr eval`` gives for the name: every qrels topic, a topic a run lacks counting 0, with
``complete`` (``-c``) or ir_measures names; else (trec_eval names) each run's qrels topics, a
paired test over those both runs have. The header states which.
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from trecqr.errors import UsageError
from trecqr.report.stats.corrections import adjust, bonferroni, holm  # noqa: F401 (compare's names)
from trecqr.report.stats.paired import randomization_test, t_test
from trecqr.report.comparison import Comparison, PairResult, plural, topics_line
from trecqr.report.populations import score_table
from trecqr.report.tables import render_latex, render_markdown
from trecqr.report.text_table import aligned_table, fmt_p, fmt_value, render_csv

# ---------------------------------------------------------------------------------------------
# statistics kernels


def bootstrap_ci(d, samples: int = 10000, level: float = 0.95, rng=None,
                 chunk: int = 1000) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of mean(d): resample topics with replacement
    ``samples`` times; the (1-level)/2 and (1+level)/2 percentiles of the resampled means."""
    d = np.asarray(d, dtype=np.float64)
    n = len(d)
    if n == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(rng)
    means = np.empty(samples)
    done = 0
    while done < samples:
        k = min(chunk, samples - done)
        idx = rng.integers(0, n, size=(k, n))
        means[done:done + k] = d[idx].mean(axis=1)
        done += k
    lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(lo), float(hi)


def effect_size(d) -> float:
    """Cohen's d_z: mean(d) / sd(d) (ddof=1); 0 when all d are 0, nan when sd is 0 otherwise."""
    d = np.asarray(d, dtype=np.float64)
    if len(d) < 2:
        return math.nan
    sd = float(np.std(d, ddof=1))
    m = float(np.mean(d))
    if sd == 0:
        return 0.0 if m == 0 else math.nan
    return m / sd


# ---------------------------------------------------------------------------------------------
# comparison


def _find_run(name, runs, names, runids):
    for i, n in enumerate(names):
        r = runs[i]
        cands = {n, runids[i]}
        if isinstance(r, (str, os.PathLike)):
            base = os.path.basename(str(r))
            cands |= {str(r), base, os.path.splitext(base)[0]}
        if name in cands:
            return i
    raise UsageError(f"--baseline {name!r} is none of the runs ({', '.join(names)})")


def compare(qrels, runs, measures, *, baseline=None, all_pairs: bool = False,
            complete: bool = False, test: str = "t", correction: str = "holm",
            alpha: float = 0.05, permutations: int = 10000, bootstrap: int = 10000,
            seed: int = 0, names=None, relevance_level: int = 1, max_docs=None,
            judged_only: bool = False, compat: str = "9.0.8") -> Comparison:
    """Compare runs (paths, dicts, DataFrames or Runs) on trec_eval measures.

    baseline: index or name of the baseline run (default the first); all_pairs compares every
    pair i < j (run j minus run i). The family corrected is every (pair, measure) test."""
    runs = list(runs)
    if len(runs) < 2:
        raise UsageError("compare needs at least two runs")
    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures or [])
    if not measures:
        raise UsageError("give at least one measure (-m)")
    if test not in ("t", "randomization"):
        raise UsageError(f"unknown test {test!r} (t, randomization)")
    adjust([], correction)  # validate early
    if bootstrap < 1:
        raise UsageError("--bootstrap must be at least 1")
    table = score_table(qrels, runs, measures, complete=complete, names=names,
                        relevance_level=relevance_level, max_docs=max_docs,
                        judged_only=judged_only, compat=compat)
    names, cols = table.names, table.measures
    means = {name: dict(table.summaries[i]) for i, name in enumerate(names)}
    num_topics = {name: len(table.topics(i)) for i, name in enumerate(names)}

    if all_pairs:
        pair_idx = [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    else:
        b = 0
        if baseline is not None:
            b = baseline if isinstance(baseline, int) else _find_run(baseline, runs, names, table.runids)
        pair_idx = [(b, j) for j in range(len(runs)) if j != b]

    ss = np.random.SeedSequence(seed)
    children = ss.spawn(len(pair_idx) * len(cols) * 2)
    pairs = []
    k = 0
    for i, j in pair_idx:
        topics = table.topics(i, j)
        for m in cols:
            a, bvals = table.vector(j, m, topics), table.vector(i, m, topics)
            d = a - bvals
            t, p_t = t_test(a, bvals)
            p_r = randomization_test(d, permutations, children[k]) if len(d) else math.nan
            lo, hi = bootstrap_ci(d, bootstrap, rng=children[k + 1])
            k += 2
            mean_b, mean_a = table.mean(i, m, topics), table.mean(j, m, topics)
            pairs.append(PairResult(names[i], names[j], m, len(topics), mean_b, mean_a,
                                    mean_a - mean_b if len(d) else math.nan, lo, hi,
                                    effect_size(d), t, p_t, p_r))
    adj_t = adjust([p.p_t for p in pairs], correction)
    adj_r = adjust([p.p_rand for p in pairs], correction)
    for p, at, ar in zip(pairs, adj_t, adj_r):
        p.p_t_adj, p.p_rand_adj = float(at), float(ar)
        use = at if test == "t" else ar
        p.significant = bool(use <= alpha)

    test_name = "t-test" if test == "t" else "randomization test"
    pair_desc = (f"{plural(len(pair_idx), 'pair')} (all pairs of {plural(len(runs), 'run')})"
                 if all_pairs else
                 f"{plural(len(pair_idx), 'run')} vs baseline {names[pair_idx[0][0]]}")
    family = (f"{pair_desc} x {plural(len(cols), 'measure')} = "
              f"{plural(len(pairs), test_name)}")
    return Comparison(names, cols, means, num_topics, pairs,
                      "complete" if table.complete else "intersection", test, correction,
                      alpha, permutations, bootstrap, seed, family,
                      {"all_pairs": all_pairs, "complete": complete},
                      table.population_line(sorted({p.n for p in pairs})), table.population())


# ---------------------------------------------------------------------------------------------
# output


def render_text(cmp: Comparison, places: int = 4) -> str:
    test = "t-test" if cmp.test == "t" else "randomization test"
    out = [topics_line(cmp),
           f"family: {cmp.family}; correction: {cmp.correction}; alpha = {cmp.alpha:g}",
           (f"randomization: {cmp.permutations} sign flips, p = (count + 1) / "
            f"({cmp.permutations} + 1); bootstrap: {cmp.bootstrap} samples, 95% percentile CI;"
            f" seed {cmp.seed}"), ""]
    baseline_mode = len({p.baseline for p in cmp.pairs}) == 1 and not cmp.extra.get("all_pairs")
    sig = {}
    for p in cmp.pairs:
        if p.significant:
            sig[(p.run, p.measure)] = "+" if p.diff > 0 else "-"
    header = ["run"] + cmp.measures
    rows = []
    for r in cmp.runs:
        row = [r]
        for m in cmp.measures:
            mark = sig.get((r, m), " ") if baseline_mode else ""
            row.append(fmt_value(cmp.means[r][m], places) + mark)
        rows.append(row)
    out += ["means" + (f" ({cmp.pairs[0].baseline} is the baseline; +/- significantly better/"
                       f"worse, {test}, {cmp.correction}-adjusted p <= {cmp.alpha:g})"
                       if baseline_mode else "")]
    out += aligned_table(rows, header)
    out.append("")
    header = ["baseline", "run", "measure", "n", "diff", "95% CI", "d_z",
              "p(t)", "p(rand)", f"adj p({'t' if cmp.test == 't' else 'rand'})", "sig"]
    rows = []
    for p in cmp.pairs:
        adj = p.p_t_adj if cmp.test == "t" else p.p_rand_adj
        rows.append([p.baseline, p.run, p.measure, str(p.n), fmt_value(p.diff, places),
                     f"[{fmt_value(p.ci_low, places)}, {fmt_value(p.ci_high, places)}]",
                     fmt_value(p.effect_dz, 2), fmt_p(p.p_t, places), fmt_p(p.p_rand, places),
                     fmt_p(adj, places), "*" if p.significant else ""])
    out.append(f"comparisons (diff = run - baseline; sig: * when the {cmp.correction}-adjusted "
               f"{test} p <= {cmp.alpha:g})")
    out += aligned_table(rows, header, left=3)
    return "\n".join(out) + "\n"


CSV_FIELDS = ["baseline", "run", "measure", "n", "mean_baseline", "mean_run", "diff", "ci_low",
              "ci_high", "effect_dz", "t", "p_t", "p_t_adj", "p_rand", "p_rand_adj",
              "significant"]


def render_json(cmp: Comparison) -> str:
    d = cmp.to_dict()
    d["topics_note"] = topics_line(cmp)
    d["randomization_p"] = "(count + 1) / (permutations + 1), two-sided, sign flips"
    return json.dumps(d, indent=2, allow_nan=False) + "\n"


def render(cmp: Comparison, fmt: str = "text", places: int = 4) -> str:
    if fmt in ("markdown", "latex"):
        return (render_markdown if fmt == "markdown" else render_latex)(cmp, places=places)
    if fmt == "json":
        return render_json(cmp)
    if fmt == "csv":
        return render_csv(cmp.pairs, CSV_FIELDS)
    return render_text(cmp, places)
