"""The numbers of a system comparison: every run scored once (:mod:`.populations`), then for
every pair (each run against a baseline, or all pairs) and every measure the paired tests of
:mod:`.stats`, adjusted over the whole family, returned as a plain :class:`.Comparison`.

Per pair and measure:

* the mean difference over the compared topics (run minus baseline);
* a paired two-sided t-test (``scipy.stats.ttest_rel``, whose p-value is returned unchanged);
* a paired randomization test: B random sign flips of the per-topic differences (seeded);
  two-sided, p = (count + 1) / (B + 1), where count is the number of flips whose
  |mean difference| is at least the observed |mean difference| (a run against itself gives 1);
* a bootstrap 95% confidence interval of the mean difference (percentile method, seeded);
* the effect size d_z = mean difference / standard deviation of the differences (ddof=1);
* p-values adjusted over the family of all tests made (every pair x every measure).

Topics: one population for every column (:mod:`.populations`), each run's mean the value
``trecqr eval`` gives for the name. The header states which.
"""

from __future__ import annotations

import math

import numpy as np

from trecqr.errors import UsageError
from trecqr.report.comparison import Comparison, PairResult
from trecqr.report.populations import score_table
from trecqr.report.stats.corrections import adjust
from trecqr.report.stats.paired import bootstrap_ci, effect_size, randomization_test, t_test
from trecqr.report.text_table import plural

TESTS = ("t", "randomization")


def compute(qrels, runs, measures, *, baseline=None, all_pairs: bool = False,
            complete: bool = False, test: str = "t", correction: str = "holm",
            alpha: float = 0.05, permutations: int = 10000, bootstrap: int = 10000,
            seed: int = 0, names=None, relevance_level: int = 1, max_docs=None,
            judged_only: bool = False, compat: str = "9.0.8") -> Comparison:
    """The comparison of ``runs`` (paths, dicts, DataFrames or Runs) on ``measures``; see
    :func:`trecqr.report.compare.compare` for the options."""
    runs = list(runs)
    if len(runs) < 2:
        raise UsageError("compare needs at least two runs")
    if test not in TESTS:
        raise UsageError(f"unknown test {test!r} ({', '.join(TESTS)})")
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
        pair_idx = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    else:
        b = 0 if baseline is None else table.run_index(baseline)
        pair_idx = [(b, j) for j in range(len(names)) if j != b]

    children = np.random.SeedSequence(seed).spawn(len(pair_idx) * len(cols) * 2)
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
    pair_desc = (f"{plural(len(pair_idx), 'pair')} (all pairs of {plural(len(names), 'run')})"
                 if all_pairs else
                 f"{plural(len(pair_idx), 'run')} vs baseline {names[pair_idx[0][0]]}")
    family = (f"{pair_desc} x {plural(len(cols), 'measure')} = "
              f"{plural(len(pairs), test_name)}")
    return Comparison(names, cols, means, num_topics, pairs,
                      "complete" if table.complete else "intersection", test, correction,
                      alpha, permutations, bootstrap, seed, family,
                      {"all_pairs": all_pairs, "complete": complete},
                      table.population_line(sorted({p.n for p in pairs})), table.population())
