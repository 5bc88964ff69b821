"""A :class:`.Comparison` as text (the console's tables), JSON and CSV.

Text: the topics line, the family and correction, the means table (with one baseline, ``+`` /
``-`` after a mean significantly better / worse than it; with several, the marker of each
baseline it differs from significantly), the pairs' tests and, when asked, the ANOVA. JSON: every
field of the comparison (nan as null) with the topics line. CSV: one row per pair and measure,
every digit of every float.
"""

from __future__ import annotations

import json

from trecqr.report.comparison import TESTS, Comparison
from trecqr.report.text_table import aligned_table, fmt_p, fmt_value, render_csv

CSV_FIELDS = ["baseline", "run", "measure", "n", "mean_baseline", "mean_run", "diff", "ci_low",
              "ci_high", "effect_dz", "t", "p_t", "p_t_adj", "p_rand", "p_rand_adj",
              "significant", "w", "p_wilcoxon", "p_wilcoxon_adj", "p_tukey", "p_adj"]


def topics_line(cmp: Comparison) -> str:
    """The header's sentence saying which topics every mean and test is over."""
    if cmp.topics_note:
        return cmp.topics_note
    n = ", ".join(str(c) for c in sorted({p.n for p in cmp.pairs}))
    if cmp.topics == "complete":
        return f"topics: all {n} qrels topics (-c: a topic missing from a run counts 0)"
    return f"topics: per pair, the qrels topics both runs are evaluated on ({n})"


SHORT = {"t": "t", "randomization": "rand", "wilcoxon": "wsr", "tukey-hsd": "tukey"}


def render_text(cmp: Comparison, places: int = 4) -> str:
    test = TESTS[cmp.test]
    draws = (f"randomization: {cmp.permutations} sign flips, p = (count + 1) / "
             f"({cmp.permutations} + 1)")
    if cmp.test == "tukey-hsd":
        draws = (f"randomised Tukey HSD: {cmp.permutations} permutations of every topic's "
                 f"scores among the runs, p = (count + 1) / ({cmp.permutations} + 1); " + draws)
    out = [topics_line(cmp),
           f"family: {cmp.family}; correction: {cmp.correction}; alpha = {cmp.alpha:g}",
           f"{draws}; bootstrap: {cmp.bootstrap} samples, 95% percentile CI; seed {cmp.seed}"]
    labels = cmp.labels_line()
    out += ([labels] if labels else []) + [""]
    markers = cmp.markers()
    marked = bool(cmp.pairs) and not cmp.extra.get("all_pairs")
    marks = cmp.marks()

    def mark(run, m):
        got = marks.get((run, m), [])
        if len(markers) == 1:  # one baseline: the direction, + or -
            return ("+" if got[0][1] > 0 else "-") if got else " "
        return "".join(markers[k][1] for k, _ in got)

    rows = [[r] + [fmt_value(cmp.means[r][m], places) + (mark(r, m) if marked else "")
                   for m in cmp.measures] for r in cmp.runs]
    if not marked:
        out.append("means")
    elif len(markers) == 1:
        out.append(f"means ({cmp.baseline} is the baseline; +/- significantly better/worse, "
                   f"{test}, {cmp.adjusted()} p <= {cmp.alpha:g})")
    else:
        keys = ", ".join(f"{text} {b}" for b, text, _ in markers)
        out.append(f"means (marked: significantly different from the baseline {keys}; "
                   f"{test}, {cmp.adjusted()} p <= {cmp.alpha:g})")
    out += aligned_table(rows, ["run"] + [cmp.label(m) for m in cmp.measures])
    out.append("")
    extra = {"wilcoxon": "p_wilcoxon", "tukey-hsd": "p_tukey"}.get(cmp.test)
    header = ["baseline", "run", "measure", "n", "diff", "95% CI", "d_z", "p(t)", "p(rand)"]
    header += [f"p({SHORT[cmp.test]})"] if extra else []
    header += [f"adj p({SHORT[cmp.test]})", "sig"]
    rows = []
    for p in cmp.pairs:
        rows.append([p.baseline, p.run, cmp.label(p.measure), str(p.n), fmt_value(p.diff, places),
                     f"[{fmt_value(p.ci_low, places)}, {fmt_value(p.ci_high, places)}]",
                     fmt_value(p.effect_dz, 2), fmt_p(p.p_t, places), fmt_p(p.p_rand, places)]
                    + ([fmt_p(getattr(p, extra), places)] if extra else [])
                    + [fmt_p(p.p_adj, places), "*" if p.significant else ""])
    out.append(f"comparisons (diff = run - baseline; sig: * when the {cmp.adjusted()} "
               f"{test} p <= {cmp.alpha:g})")
    out += aligned_table(rows, header, left=3)
    if cmp.anova:
        out += ["", anova_title(cmp)]
        out += aligned_table([[cmp.label(m), fmt_value(a["f_system"], places),
                               f"{a['df_system']}, {a['df_error']}", fmt_p(a["p_system"], places),
                               fmt_value(a["eta2"], places), fmt_value(a["partial_eta2"], places),
                               fmt_value(a["omega2"], places),
                               fmt_value(a["partial_omega2"], places)]
                              for m, a in cmp.anova.items()],
                             ["measure", "F", "df", "p", "eta^2", "partial eta^2", "omega^2",
                              "partial omega^2"])
    return "\n".join(out) + "\n"


def anova_title(cmp: Comparison) -> str:
    """The ANOVA table's heading: the model and the topics it is over."""
    n = next(iter(cmp.anova.values()))["topics"]
    return (f"two-way ANOVA without replication (systems x topics, the {n} topics every run "
            "has): the system effect, its F test and effect sizes")


def render_json(cmp: Comparison) -> str:
    d = cmp.to_dict()
    d["topics_note"] = topics_line(cmp)
    d["randomization_p"] = "(count + 1) / (permutations + 1), two-sided, sign flips"
    return json.dumps(d, indent=2, allow_nan=False) + "\n"


def render_pairs_csv(cmp: Comparison) -> str:
    return render_csv(cmp.pairs, CSV_FIELDS)
