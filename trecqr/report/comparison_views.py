"""What a notebook shows of a :class:`~trecqr.report.comparison.Comparison`: a short
``repr``, an HTML table (``_repr_html_``), ``to_dataframe()`` and ``to_latex()``.

The tables are those of ``trecqr compare --format markdown/latex`` (:mod:`.tables`: means,
best in bold, significance marks against the baseline, the legend). :mod:`.tables` imports
:mod:`.comparison`, which holds this mixin, so it is imported when a table is made, not when
this module is.
"""

from __future__ import annotations

import dataclasses
import html


class ComparisonViews:
    """Mixin of Comparison: needs its runs, measures, means, pairs and test fields."""

    def __repr__(self) -> str:
        from trecqr.report.tables import baseline_name

        significant = sum(p.significant for p in self.pairs)
        return (f"<Comparison: {len(self.runs)} runs x {len(self.measures)} measures "
                f"({', '.join(self.measures[:4])}{', ...' if len(self.measures) > 4 else ''}), "
                f"baseline {baseline_name(self)}, {self.test} test, {self.correction} "
                f"correction, alpha {self.alpha}: {significant} of {len(self.pairs)} "
                f"differences significant>")

    def _repr_html_(self) -> str:
        from trecqr.report.tables import BETTER_MD, WORSE_MD, baseline_name, best_cells, cell_marks, legend

        base, best, marks = baseline_name(self), best_cells(self), cell_marks(self)
        head = "".join(f"<th>{html.escape(m)}</th>" for m in self.measures)
        body = []
        for run in self.runs:
            cells = []
            for m in self.measures:
                v = self.means.get(run, {}).get(m, float("nan"))
                text = "-" if v != v else f"{v:.4f}"
                if (run, m) in best:
                    text = f"<b>{text}</b>"
                mark = marks.get((run, m), 0)
                cells.append(f"<td>{text}{BETTER_MD if mark > 0 else WORSE_MD if mark < 0 else ''}"
                             "</td>")
            name = html.escape(run) + (" (baseline)" if run == base else "")
            body.append(f"<tr><th>{name}</th>{''.join(cells)}</tr>")
        return (f"<table><thead><tr><th>run</th>{head}</tr></thead><tbody>{''.join(body)}"
                f"</tbody><caption style='caption-side: bottom'>"
                f"{html.escape(legend(self, BETTER_MD, WORSE_MD))}</caption></table>")

    def to_dataframe(self, pairs: bool = False):
        """The means, one row per run (index ``run``, in the order given), one column per
        measure; pairs=True: one row per pair and measure, every field of the test (baseline,
        run, measure, n, means, diff, confidence interval, effect size, p-values adjusted or
        not, significant)."""
        import pandas as pd

        if pairs:
            return pd.DataFrame([dataclasses.asdict(p) for p in self.pairs])
        frame = pd.DataFrame([[self.means.get(r, {}).get(m, float("nan"))
                               for m in self.measures] for r in self.runs],
                             index=pd.Index(self.runs, name="run"), columns=list(self.measures))
        return frame

    def to_latex(self, places: int = 4, caption: str | None = None, label: str | None = None,
                 lower_better=(), float_env: bool = True) -> str:
        """The booktabs table ``trecqr compare --format latex`` prints (see :mod:`.tables`)."""
        from trecqr.report.tables import render_latex

        return render_latex(self, places, caption, label, lower_better, float_env)

    def to_markdown(self, places: int = 4, lower_better=()) -> str:
        """The pipe table ``trecqr compare --format markdown`` prints."""
        from trecqr.report.tables import render_markdown

        return render_markdown(self, places, lower_better)
