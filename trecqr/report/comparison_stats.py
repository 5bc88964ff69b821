"""The numbers of a system comparison: every run scored once (:mod:`.populations`), then for
every pair (each run against one or more baselines, or all pairs) and every measure the tests
of :mod:`.stats`, adjusted over the whole family, returned as a plain :class:`.Comparison`.

Per pair and measure:

* the mean difference over the compared topics (run minus baseline);
* a paired two-sided t-test (``scipy.stats.ttest_rel``, whose p-value is returned unchanged);
* Wilcoxon's signed-rank test, two-sided (``scipy.stats.wilcoxon``, zeros dropped);
* a paired randomization test: B random sign flips of the per-topic differences (seeded);
  two-sided, p = (count + 1) / (B + 1), where count is the number of flips whose
  |mean difference| is at least the observed |mean difference| (a run against itself gives 1);
* with ``test="tukey-hsd"``: Carterette's randomised Tukey HSD over every run at once, a
  p-value for every pair (already adjusted over the pairs, so the correction defaults to none);
* a bootstrap 95% confidence interval of the mean difference (percentile method, seeded);
* the effect size d_z = mean difference / standard deviation of the differences (ddof=1);
* p-values adjusted over the family of all tests made (every pair x every measure).

Tukey's HSD and the two-way ANOVA (``anova=True``) need every run on every topic: they are
over the topics every run has (all qrels topics with ``-c`` or ir_measures names), and so are
the pairs' numbers under ``tukey-hsd``.

Topics: one population for every column (:mod:`.populations`), each run's mean the value
``trecqr eval`` gives for the name. The header states which.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from trecqr.errors import UsageError
from trecqr.formats.inputs import named_runs
from trecqr.report.labels import measure_labels
from trecqr.report.comparison import MARKERS, TEST_UNITS, TESTS, Comparison, PairResult
from trecqr.report.populations import score_table
from trecqr.report.stats.corrections import adjust
from trecqr.report.stats.paired import (bootstrap_ci, effect_size, randomization_test, t_test,
                                        wilcoxon)
from trecqr.report.text_table import plural


def compute(qrels, runs, measures, *, baseline=None, baselines=None, all_pairs: bool = False,
            complete: bool = False, test: str = "t", correction: str | None = None,
            alpha: float = 0.05, permutations: int = 10000, bootstrap: int = 10000,
            seed: int = 0, names=None, relevance_level: int = 1, max_docs=None,
            judged_only: bool = False, compat: str = "9.0.8", anova: bool = False,
            labels=None) -> Comparison:
    """The comparison of ``runs`` (paths, dicts, DataFrames or Runs) on ``measures``; see
    :func:`trecqr.report.compare.compare` for the options."""
    runs, names = named_runs(runs, names, door="compare")
    if len(runs) < 2:
        raise UsageError("compare needs at least two runs")
    if test not in TESTS:
        raise UsageError(f"unknown test {test!r} ({', '.join(TESTS)})")
    tukey = test == "tukey-hsd"
    correction = correction or ("none" if tukey else "holm")
    adjust([], correction)  # validate early
    if bootstrap < 1:
        raise UsageError("--bootstrap must be at least 1")
    wanted = _baselines(baseline, baselines)
    if wanted and all_pairs:
        raise UsageError("baseline and all_pairs exclude each other",
                         cli="--baseline and --all-pairs exclude each other")
    if len(wanted) > len(MARKERS):
        raise UsageError(f"at most {len(MARKERS)} baselines (one marker each)")
    table = score_table(qrels, runs, measures, complete=complete,
                        names=None if isinstance(names, dict) else names,
                        relevance_level=relevance_level, max_docs=max_docs,
                        judged_only=judged_only, compat=compat)
    if isinstance(names, dict):
        rename(table, names)
    names, cols = table.names, table.measures
    shown = measure_labels(cols, labels)
    base_idx = list(dict.fromkeys(table.run_index(b) for b in wanted)) or [0]
    if tukey or all_pairs:
        pair_idx = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    else:  # each baseline against every other run, a pair of two baselines once
        pair_idx = []
        for b in base_idx:
            pair_idx += [(b, j) for j in range(len(names))
                         if j != b and (j, b) not in pair_idx]
    common = _common_topics(table) if tukey or anova else None
    if common is not None and len(common) < 2:
        raise UsageError(f"{'tukey-hsd' if tukey else 'the ANOVA'} needs at least two topics "
                         "every run has")
    if tukey or anova:  # scipy.stats (the stats extra): only for the tests that need it
        from trecqr.report.stats.anova import randomized_tukey_hsd, two_way_anova
    children = np.random.SeedSequence(seed).spawn(len(pair_idx) * len(cols) * 2 + len(cols))
    hsd = {m: randomized_tukey_hsd(_matrix(table, m, common), permutations,
                                   children[-1 - c]).pvalues
           for c, m in enumerate(cols)} if tukey else {}
    pairs = []
    k = 0
    for i, j in pair_idx:
        topics = common if tukey else table.topics(i, j)
        for m in cols:
            a, bvals = table.vector(j, m, topics), table.vector(i, m, topics)
            d = a - bvals
            t, p_t = t_test(a, bvals)
            w, p_w = wilcoxon(a, bvals)
            p_r = randomization_test(d, permutations, children[k]) if len(d) else math.nan
            lo, hi = bootstrap_ci(d, bootstrap, rng=children[k + 1])
            k += 2
            mean_b, mean_a = table.mean(i, m, topics), table.mean(j, m, topics)
            pairs.append(PairResult(names[i], names[j], m, len(topics), mean_b, mean_a,
                                    mean_a - mean_b if len(d) else math.nan, lo, hi,
                                    effect_size(d), t, p_t, p_r, w=w, p_wilcoxon=p_w,
                                    p_tukey=float(hsd[m][i, j]) if tukey else math.nan))
    _adjust(pairs, test, correction, alpha)
    n_runs = plural(len(names), "run")
    if tukey or all_pairs:
        pair_desc = f"{plural(len(pair_idx), 'pair')} (all pairs of {n_runs})"
    elif len(base_idx) == 1:
        pair_desc = f"{plural(len(pair_idx), 'run')} vs baseline {names[base_idx[0]]}"
    else:
        pair_desc = (f"{plural(len(pair_idx), 'pair')} (every run vs baselines "
                     f"{', '.join(names[b] for b in base_idx)})")
    family = (f"{pair_desc} x {plural(len(cols), 'measure')} = "
              f"{plural(len(pairs), TEST_UNITS[test])}")
    note = table.population_line(sorted({p.n for p in pairs}))
    if common is not None:
        note += (f"; {'tukey-hsd' if tukey else 'ANOVA'}: the {len(common)} topics every run "
                 "has")
    return Comparison(names, cols, {name: dict(table.summaries[i]) for i, name in enumerate(names)},
                      {name: len(table.topics(i)) for i, name in enumerate(names)}, pairs,
                      "complete" if table.complete else "intersection", test, correction,
                      alpha, permutations, bootstrap, seed, family,
                      {"all_pairs": all_pairs, "complete": complete}, note, table.population(),
                      [names[b] for b in base_idx],
                      {m: {"topics": len(common),
                           **dataclasses.asdict(two_way_anova(_matrix(table, m, common)))}
                       for m in cols} if anova else {}, shown)


def rename(table, names: dict) -> None:
    """Give the runs ``names`` names ({run: name}, a run as :meth:`.ScoreTable.run_index`
    finds it: path, file name, stem or run id); the others keep theirs."""
    new = list(table.names)
    for key, name in names.items():
        new[table.run_index(key, "name")] = name
    if len(set(new)) != len(new):
        raise UsageError(f"two runs named alike ({', '.join(map(str, new))}): give each its "
                         "own name")
    table.names = new


def _baselines(baseline, baselines) -> list:
    """The baselines asked for, as one list (``baseline`` a name, an index or a list)."""
    out = []
    for given in (baseline, baselines):
        if given is None:
            continue
        out += list(given) if isinstance(given, (list, tuple)) else [given]
    return out


def _common_topics(table) -> list:
    """The topics every run has (every qrels topic when the population is the qrels')."""
    first = table.topics(0)
    every = set(first).intersection(*(set(table.topics(i)) for i in range(1, len(table.names))))
    return [t for t in first if t in every]


def _matrix(table, measure, topics) -> np.ndarray:
    """Runs x topics: each run's values of ``measure`` on ``topics``."""
    return np.array([table.vector(i, measure, topics) for i in range(len(table.names))])


def _adjust(pairs, test, correction, alpha) -> None:
    """Every test's p-values adjusted over the family; the chosen one's decides `significant`."""
    for raw, adj in (("p_t", "p_t_adj"), ("p_rand", "p_rand_adj"),
                     ("p_wilcoxon", "p_wilcoxon_adj")):
        for p, v in zip(pairs, adjust([getattr(p, raw) for p in pairs], correction)):
            setattr(p, adj, float(v))
    chosen = {"t": "p_t", "randomization": "p_rand", "wilcoxon": "p_wilcoxon",
              "tukey-hsd": "p_tukey"}[test]
    for p, v in zip(pairs, adjust([getattr(p, chosen) for p in pairs], correction)):
        p.p_adj = float(v)
        p.significant = bool(v <= alpha)
