"""A :class:`.Comparison` as text (the console's tables), JSON and CSV.

Text: the topics line, the family and correction, the means table (with one baseline, ``+`` /
``-`` after a mean significantly better / worse than it) and the pairs' tests. JSON: every
field of the comparison (nan as null) with the topics line. CSV: one row per pair and measure,
every digit of every float.
"""

from __future__ import annotations

import json

from trecqr.report.comparison import Comparison
from trecqr.report.text_table import aligned_table, fmt_p, fmt_value, render_csv

CSV_FIELDS = ["baseline", "run", "measure", "n", "mean_baseline", "mean_run", "diff", "ci_low",
              "ci_high", "effect_dz", "t", "p_t", "p_t_adj", "p_rand", "p_rand_adj",
              "significant"]


def topics_line(cmp: Comparison) -> str:
    """The header's sentence saying which topics every mean and test is over."""
    if cmp.topics_note:
        return cmp.topics_note
    n = ", ".join(str(c) for c in sorted({p.n for p in cmp.pairs}))
    if cmp.topics == "complete":
        return f"topics: all {n} qrels topics (-c: a topic missing from a run counts 0)"
    return f"topics: per pair, the qrels topics both runs are evaluated on ({n})"


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


def render_json(cmp: Comparison) -> str:
    d = cmp.to_dict()
    d["topics_note"] = topics_line(cmp)
    d["randomization_p"] = "(count + 1) / (permutations + 1), two-sided, sign flips"
    return json.dumps(d, indent=2, allow_nan=False) + "\n"


def render_pairs_csv(cmp: Comparison) -> str:
    return render_csv(cmp.pairs, CSV_FIELDS)
