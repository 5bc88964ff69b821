"""Statistics over evaluation results: how sure a difference is, and how far two sets of
judgments or two runs agree.

One responsibility: computations on numbers that trecqr has already produced (per-topic scores
as numpy arrays, systems x topics matrices, qrels and run columns). Nothing here scores a run,
reads a file, prints or parses options; each function is checked against a reference package
(scipy, statsmodels, scikit-learn, krippendorff, repro_eval) in tests/stats/.

* :mod:`.paired` - two systems over the same topics: t-test, Wilcoxon signed-rank,
  randomization (sign-flip) test;
* :mod:`.corrections` - multiple-testing corrections (Holm, Bonferroni, BH, BY);
* :mod:`.anova` - many systems: two-way ANOVA (systems x topics) with its effect sizes,
  Tukey's HSD (classical, one-way or two-way) and Carterette's randomised Tukey HSD;
* :mod:`.labels` - two qrels' agreement on the judgments they share (kappa, alpha, confusion);
* :mod:`.rankings` - two rankings of the same systems (Kendall's tau, tau_AP, Spearman, RBO);
* :mod:`.reproduction` - a run against its reproduction, repro_eval's measures (KTU, RBO,
  RMSE, ER, DeltaRI).
"""
