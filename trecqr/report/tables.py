"""Paper tables of a :class:`~trecqr.report.comparison.Comparison`: Markdown, LaTeX (booktabs)
and the notebook's HTML table.

Both tables are runs x measures of the means (``Comparison.means``), rounded to ``places``:

* the baseline row is marked: its name is followed by `` (baseline)``;
* the best value of each measure column is in bold (``**x**`` / ``\\textbf{x}``); "best" is the
  highest value *as printed* (rounded to ``places``), so every run whose printed value equals
  the best is bold (ties: all bold). Measures named in ``lower_better`` take the lowest instead.
  nan means print ``-`` (Markdown) / ``--`` (LaTeX) and are never bold;
* significance marks against the baseline, from ``PairResult.significant`` of compare.py (the
  adjusted p-value of the chosen test <= alpha, adjusted over the whole family):

  ==============================  ==========  =============
  meaning                         Markdown    LaTeX
  ==============================  ==========  =============
  significantly better (diff>0)   ``†``       ``$^{\\dagger}$``
  significantly worse  (diff<0)   ``‡``       ``$^{\\ddagger}$``
  ==============================  ==========  =============

  The pairs used are those whose baseline is the baseline of the first pair (with
  ``--all-pairs``, the pairs of the first run with every other one, diff = run - first run);
* a legend line below the table: the marks, the test, the correction, alpha and the family.

LaTeX: ``\\begin{tabular}{l r...r}`` (one ``r`` per measure) with ``\\toprule``, ``\\midrule``,
``\\bottomrule`` (needs ``\\usepackage{booktabs}``); run and measure names are escaped
(``_`` -> ``\\_`` and the other special characters). ``caption`` and ``label`` are written as
given (a caption may hold LaTeX). With ``float_env`` (default) the tabular and the legend are
wrapped in ``\\begin{table}...\\end{table}``; without it, the bare tabular is followed by the
legend as a ``%`` comment, and caption and label are not written.
"""

from __future__ import annotations

import html
import math

from trecqr.report.comparison import Comparison
from trecqr.report.comparison_text import topics_line

BETTER_MD, WORSE_MD = "\u2020", "\u2021"          # dagger, double dagger
BETTER_TEX, WORSE_TEX = r"$^{\dagger}$", r"$^{\ddagger}$"

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


def baseline_name(cmp: Comparison) -> str:
    """The run the significance marks compare against."""
    return cmp.baseline


def cell_marks(cmp: Comparison) -> dict:
    """{(run, measure): +1 significantly better / -1 significantly worse than the baseline}."""
    base = baseline_name(cmp)
    out = {}
    for p in cmp.pairs:
        if p.baseline == base and p.significant and not _isnan(p.diff) and p.diff != 0:
            out[(p.run, p.measure)] = 1 if p.diff > 0 else -1
    return out


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


def legend(cmp: Comparison, better: str, worse: str) -> str:
    """The legend sentence (plain text; marks as given)."""
    test = "paired two-sided t-test" if cmp.test == "t" else (
        f"paired two-sided randomization test, {cmp.permutations} sign flips, seed {cmp.seed}")
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "no"}.get(cmp.correction,
                                                                           cmp.correction)
    return (f"Means; best per column in bold. {better} / {worse}: significantly better / worse "
            f"than the baseline {baseline_name(cmp)} ({test}; {corr} correction; "
            f"adjusted p <= alpha = {cmp.alpha:g}; family: {cmp.family}). "
            f"{topics_line(cmp)[0].upper()}{topics_line(cmp)[1:]}.")


def _cells(cmp, places, lower_better, fmt_value):
    marks = cell_marks(cmp)
    best = best_cells(cmp, places, lower_better)
    rows = []
    for r in cmp.runs:
        rows.append([fmt_value(_fmt(cmp.means[r].get(m), places), (r, m) in best,
                               marks.get((r, m), 0)) for m in cmp.measures])
    return rows


def render_markdown(cmp: Comparison, places: int = 4, lower_better=()) -> str:
    """A GitHub pipe table of the means (numeric columns right-aligned) and a legend below."""
    base = baseline_name(cmp)

    def value(s, bold, mark):
        if s is None:
            return "-"
        s = f"**{s}**" if bold else s
        return s + (BETTER_MD if mark > 0 else WORSE_MD if mark < 0 else "")

    header = ["run"] + [markdown_escape(m) for m in cmp.measures]
    names = [markdown_escape(r) + (" (baseline)" if r == base else "") for r in cmp.runs]
    body = [[n] + row for n, row in zip(names, _cells(cmp, places, lower_better, value))]
    lines = ["| " + " | ".join(header) + " |",
             "| " + " | ".join([":---"] + ["---:"] * len(cmp.measures)) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    lines += ["", _md_legend(cmp)]
    return "\n".join(lines) + "\n"


def _md_legend(cmp):
    # the legend is prose, not a table cell: escape emphasis/code characters only
    text = legend(cmp, BETTER_MD, WORSE_MD)
    return "".join("\\" + ch if ch in "\\*_`" else ch for ch in text)


def render_latex(cmp: Comparison, places: int = 4, caption: str | None = None,
                 label: str | None = None, lower_better=(), float_env: bool = True) -> str:
    """A booktabs table of the means with a legend below (see the module docstring)."""
    base = baseline_name(cmp)

    def value(s, bold, mark):
        if s is None:
            return "--"
        s = rf"\textbf{{{s}}}" if bold else s
        return s + (BETTER_TEX if mark > 0 else WORSE_TEX if mark < 0 else "")

    header = ["Run"] + [latex_escape(m) for m in cmp.measures]
    names = [latex_escape(r) + (" (baseline)" if r == base else "") for r in cmp.runs]
    body = [[n] + row for n, row in zip(names, _cells(cmp, places, lower_better, value))]
    leg = latex_escape(legend(cmp, "\x00", "\x01")).replace(
        "\x00", r"$^{\dagger}$").replace("\x01", r"$^{\ddagger}$").replace(
        r"alpha = ", r"$\alpha$ = ").replace(r"\textless{}= ", r"$\leq$ ")
    lines = []
    if float_env:
        lines += [r"\begin{table}[t]", r"\centering"]
        if caption is not None:
            lines.append(rf"\caption{{{caption}}}")
        if label is not None:
            lines.append(rf"\label{{{label}}}")
    lines += [r"\begin{tabular}{l" + "r" * len(cmp.measures) + "}", r"\toprule",
              " & ".join(header) + r" \\", r"\midrule"]
    lines += [" & ".join(row) + r" \\" for row in body]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if float_env:
        lines += [r"\par\smallskip", r"{\footnotesize " + leg + "}", r"\end{table}"]
    else:  # a bare tabular (caption and label need the float): the legend as a comment
        lines.append("% " + leg)
    return "\n".join(lines) + "\n"


def render_html_table(cmp: Comparison, places: int = 4) -> str:
    """The means as an HTML table (a notebook's view): best in bold, the Markdown marks, the
    legend as the caption."""
    base, best, marks = baseline_name(cmp), best_cells(cmp, places), cell_marks(cmp)
    head = "".join(f"<th>{html.escape(m)}</th>" for m in cmp.measures)
    body = []
    for run in cmp.runs:
        cells = []
        for m in cmp.measures:
            text = _fmt(cmp.means.get(run, {}).get(m), places) or "-"
            if (run, m) in best:
                text = f"<b>{text}</b>"
            mark = marks.get((run, m), 0)
            cells.append(f"<td>{text}{BETTER_MD if mark > 0 else WORSE_MD if mark < 0 else ''}"
                         "</td>")
        name = html.escape(run) + (" (baseline)" if run == base else "")
        body.append(f"<tr><th>{name}</th>{''.join(cells)}</tr>")
    return (f"<table><thead><tr><th>run</th>{head}</tr></thead><tbody>{''.join(body)}"
            f"</tbody><caption style='caption-side: bottom'>"
            f"{html.escape(legend(cmp, BETTER_MD, WORSE_MD))}</caption></table>")
