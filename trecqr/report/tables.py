"""Paper tables of a :class:`~trecqr.report.comparison.Comparison`: Markdown, LaTeX (booktabs)
and the notebook's HTML table.

Both tables are runs x measures of the means (``Comparison.means``), rounded to ``places``,
the measures in the order given, headed by their display labels (:mod:`.labels`: ``MRR``,
``NDCG@3``, or ``--label``'s), the runs by their names (``--name``/``-n``'s):

* each baseline row is marked: its name is followed by `` (baseline)`` (with several
  baselines, `` (baseline †)``: its marker);
* the best value of each measure column is in bold (``**x**`` / ``\\textbf{x}``); "best" is the
  highest value *as printed* (rounded to ``places``), so every run whose printed value equals
  the best is bold (ties: all bold). Measures named in ``lower_better`` take the lowest instead.
  nan means print ``-`` (Markdown) / ``--`` (LaTeX) and are never bold;
* significance markers (:meth:`.Comparison.marks`): after a mean, the marker of each baseline
  it differs from significantly (the adjusted p-value of the chosen test <= alpha, adjusted
  over the whole family; two-sided tests, so the means show the direction). Baseline k's
  marker is :data:`.comparison.MARKERS` [k]: ``†`` / ``$^{\\dagger}$`` for the first,
  ``‡`` / ``$^{\\ddagger}$`` for the second, then ``§``, ``¶``, ``‖``, ``#``. With
  ``--all-pairs`` the baseline is the first run;
* a legend line below the table: the markers, the test, the correction, alpha, the family and
  the topics.

LaTeX: ``\\begin{tabular}{l r...r}`` (one ``r`` per measure) with ``\\toprule``, ``\\midrule``,
``\\bottomrule`` (needs ``\\usepackage{booktabs}``); run and measure names are escaped
(``_`` -> ``\\_`` and the other special characters). ``caption`` and ``label`` are written as
given (a caption may hold LaTeX). With ``float_env`` (default) the tabular and the legend are
wrapped in ``\\begin{table}...\\end{table}``; without it, the bare tabular is followed by the
legend as a ``%`` comment, and caption and label are not written.

With bounds (``compare --bounds``: :func:`.bounds.run_bounds`' rows), each measure has three
columns: the mean as above (the lower value: unjudged documents non-relevant, marked and
bolded as always), its upper value (the run's unjudged retrieved documents counted relevant)
and the unjudged share of the measure's top k (``unjudged@k``; of every retrieved document
for a measure without a cutoff), as compare's text prints them; LaTeX groups the three under
the measure's label with ``\\cmidrule``, and the legend says what upper and unjudged are.
Why columns, not ``0.412 [0.412, 0.655]`` in one cell: a bracketed pair reads as a confidence
interval, and the share of unjudged documents, which says why the two differ, needs a place
of its own.
"""

from __future__ import annotations

import html
import math

from trecqr.report.comparison import MARKERS, Comparison
from trecqr.report.comparison_text import topics_line


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
_MD_SPECIAL = set("\\|*_`")


def latex_escape(text) -> str:
    """Escape LaTeX's special characters in plain text."""
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in str(text))


def markdown_escape(text) -> str:
    """Escape characters that would end a pipe-table cell or start emphasis/code."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text))


def _isnan(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _fmt(v, places: int) -> str | None:
    return None if _isnan(v) else f"{float(v):.{places}f}"


def cell_marks(cmp: Comparison) -> dict:
    """{(run, measure): the indices of the baselines it differs from significantly}."""
    return {key: [k for k, _ in got] for key, got in cmp.marks().items()}


def _run_name(cmp: Comparison, run: str, marker) -> str:
    """The run's row name: `` (baseline)`` after a baseline (and its marker when several)."""
    bases = [b for b, _, _ in cmp.markers()]
    if run not in bases:
        return run
    return f"{run} (baseline{' ' + marker(bases.index(run)) if len(bases) > 1 else ''})"


def best_cells(cmp: Comparison, places: int = 4, lower_better=()) -> set:
    """{(run, measure)} of the best printed value per measure column (all ties)."""
    lower = set(lower_better or ())
    out = set()
    for m in cmp.measures:
        vals = {}
        for r in cmp.runs:
            s = _fmt(cmp.means[r].get(m), places)
            if s is not None:
                vals[r] = float(s)
        if not vals:
            continue
        best = min(vals.values()) if m in lower else max(vals.values())
        out |= {(r, m) for r, v in vals.items() if v == best}
    return out


CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
               "by": "Benjamini-Yekutieli", "none": "no"}


def legend(cmp: Comparison, marker=lambda k: MARKERS[k][0], bounds: str = "") -> str:
    """The legend sentence (plain text; ``marker(k)``: baseline k's marker as written); bounds:
    the sentence on the bounds' columns, when the table has them (only means are bold)."""
    test = {"t": "paired two-sided t-test",
            "wilcoxon": "paired two-sided Wilcoxon signed-rank test",
            "randomization": (f"paired two-sided randomization test, {cmp.permutations} sign "
                              f"flips, seed {cmp.seed}"),
            "tukey-hsd": (f"randomised Tukey HSD over every pair of runs, {cmp.permutations} "
                          f"permutations, seed {cmp.seed}")}[cmp.test]
    bases = [b for b, _, _ in cmp.markers()]
    which = " / ".join(marker(k) for k in range(len(bases)))
    against = " / ".join(bases)
    topics = topics_line(cmp)
    bold = "best mean per measure in bold" if bounds else "best per column in bold"
    return (f"Means; {bold}. {which}: significantly different from the "
            f"baseline{'s' if len(bases) > 1 else ''} {against} ({test}; "
            f"{CORRECTIONS.get(cmp.correction, cmp.correction)} correction; "
            f"adjusted p <= alpha = {cmp.alpha:g}; family: {cmp.family}). "
            f"{topics[0].upper()}{topics[1:]}." + (f" {bounds}" if bounds else ""))


def _cells(cmp, places, lower_better, fmt_value, bounds=None, missing="-"):
    """Per run, its cells: per measure the mean, and with bounds its upper value and unjudged
    share (``missing`` for a nan)."""
    marks = cell_marks(cmp)
    best = best_cells(cmp, places, lower_better)
    by = {(b.run, b.measure): b for b in (bounds[0] if bounds else ())}
    rows = []
    for r in cmp.runs:
        row = []
        for m in cmp.measures:
            row.append(fmt_value(_fmt(cmp.means[r].get(m), places), (r, m) in best,
                                 marks.get((r, m), [])))
            if bounds:
                row += [_fmt(v, places) or missing for v in (by[(r, m)].upper,
                                                             by[(r, m)].unjudged)]
        rows.append(row)
    return rows


def _cutoffs(bounds) -> dict:
    """{measure: its unjudged share's cutoff k, None without one} of compare --bounds' rows."""
    return {b.measure: b.k for b in bounds[0]}


def _unjudged_head(k) -> str:
    return "unjudged" if k is None else f"unjudged@{k}"


def md_marker(k: int) -> str:
    return MARKERS[k][0]


def tex_marker(k: int) -> str:
    return f"$^{{{MARKERS[k][1]}}}$"


def render_markdown(cmp: Comparison, places: int = 4, lower_better=(), bounds=None) -> str:
    """A GitHub pipe table of the means (numeric columns right-aligned) and a legend below;
    bounds: (compare --bounds' rows, the sentence saying what they are), or None."""
    def value(s, bold, marks):
        if s is None:
            return "-"
        return (f"**{s}**" if bold else s) + "".join(md_marker(k) for k in marks)

    header = ["run"]
    for m in cmp.measures:
        header.append(markdown_escape(cmp.label(m)))
        if bounds:
            header += [markdown_escape(f"{cmp.label(m)} upper"),
                       _unjudged_head(_cutoffs(bounds)[m])]
    names = [markdown_escape(_run_name(cmp, r, md_marker)) for r in cmp.runs]
    body = [[n] + row for n, row in zip(names, _cells(cmp, places, lower_better, value, bounds))]
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join([":---"] + ["---:"] * (len(header) - 1)) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    # the legend is prose, not a table cell: escape emphasis/code characters only
    words = legend(cmp, bounds=bounds[1] if bounds else "")
    lines += ["", "".join("\\" + ch if ch in "\\*_`" else ch for ch in words)]
    return "\n".join(lines) + "\n"


def render_latex(cmp: Comparison, places: int = 4, caption: str | None = None,
                 label: str | None = None, lower_better=(), float_env: bool = True,
                 bounds=None) -> str:
    """A booktabs table of the means with a legend below (see the module docstring); bounds:
    (compare --bounds' rows, the sentence saying what they are), or None."""
    def value(s, bold, marks):
        if s is None:
            return "--"
        s = rf"\textbf{{{s}}}" if bold else s
        return s + (f"$^{{{''.join(MARKERS[k][1] for k in marks)}}}$" if marks else "")

    per = 3 if bounds else 1  # columns per measure
    if bounds:
        k = _cutoffs(bounds)
        header = ["Run"] + [h for m in cmp.measures for h in
                            ("mean", "upper", latex_escape(_unjudged_head(k[m])))]
        groups = [" & ".join([""] + [rf"\multicolumn{{3}}{{c}}{{{latex_escape(cmp.label(m))}}}"
                                     for m in cmp.measures]) + r" \\",
                  " ".join(rf"\cmidrule(lr){{{2 + 3 * i}-{4 + 3 * i}}}"
                           for i in range(len(cmp.measures)))]
    else:
        header, groups = ["Run"] + [latex_escape(cmp.label(m)) for m in cmp.measures], []
    names = [_tex_markers(latex_escape(_run_name(cmp, r, lambda k: f"\x00{k}\x01")))
             for r in cmp.runs]
    body = [[n] + row for n, row in zip(names, _cells(cmp, places, lower_better, value, bounds,
                                                      "--"))]
    words = legend(cmp, lambda k: f"\x00{k}\x01", bounds[1] if bounds else "")
    leg = _tex_markers(latex_escape(words)).replace(
        r"alpha = ", r"$\alpha$ = ").replace(r"\textless{}= ", r"$\leq$ ")
    lines = []
    if float_env:
        lines += [r"\begin{table}[t]", r"\centering"]
        if caption is not None:
            lines.append(rf"\caption{{{caption}}}")
        if label is not None:
            lines.append(rf"\label{{{label}}}")
    lines += [r"\begin{tabular}{l" + "r" * per * len(cmp.measures) + "}", r"\toprule",
              *groups, " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if float_env:
        lines += [r"\par\smallskip", r"{\footnotesize " + leg + "}", r"\end{table}"]
    else:  # a bare tabular (caption and label need the float): the legend as a comment
        lines.append("% " + leg)
    return "\n".join(lines) + "\n"


def _tex_markers(text: str) -> str:
    """Escaped text with each \\x00k\\x01 placeholder replaced by baseline k's LaTeX marker."""
    for k in range(len(MARKERS)):
        text = text.replace(f"\x00{k}\x01", tex_marker(k))
    return text


def render_html_table(cmp: Comparison, places: int = 4) -> str:
    """The means as an HTML table (a notebook's view): best in bold, the Markdown markers, the
    legend as the caption."""
    best, marks = best_cells(cmp, places), cell_marks(cmp)
    head = "".join(f"<th>{html.escape(cmp.label(m))}</th>" for m in cmp.measures)
    body = []
    for run in cmp.runs:
        cells = []
        for m in cmp.measures:
            text = _fmt(cmp.means.get(run, {}).get(m), places) or "-"
            if (run, m) in best:
                text = f"<b>{text}</b>"
            cells.append(f"<td>{text}{''.join(md_marker(k) for k in marks.get((run, m), []))}"
                         "</td>")
        body.append(f"<tr><th>{html.escape(_run_name(cmp, run, md_marker))}</th>"
                    f"{''.join(cells)}</tr>")
    return (f"<table><thead><tr><th>run</th>{head}</tr></thead><tbody>{''.join(body)}"
            f"</tbody><caption style='caption-side: bottom'>"
            f"{html.escape(legend(cmp))}</caption></table>")
