"""What a notebook shows of a comparison: :class:`ComparisonViews` is the plain
:class:`~trecqr.report.comparison.Comparison` (same fields, ``isinstance`` holds) with a short
``repr``, an HTML table (``_repr_html_``), ``to_dataframe()``, ``to_latex()``,
``to_markdown()`` and ``to_html()``.

Why a subclass: the data does not know its renderers (they import it); this class sits above
both and joins them for :func:`trecqr.compare`'s users.
"""

from __future__ import annotations

import dataclasses

from trecqr.report.comparison import Comparison
from trecqr.report.tables import render_html_table, render_latex, render_markdown


@dataclasses.dataclass(repr=False)
class ComparisonViews(Comparison):
    @classmethod
    def of(cls, cmp: Comparison) -> ComparisonViews:
        """The same comparison, with the views."""
        return cls(**{f.name: getattr(cmp, f.name) for f in dataclasses.fields(Comparison)})

    def _repr_html_(self) -> str:
        return render_html_table(self)

    def to_dataframe(self, pairs: bool = False):
        """The means, one row per run (index ``run``, in the order given), one column per
        measure; pairs=True: one row per pair and measure, every field of the test (baseline,
        run, measure, n, means, diff, confidence interval, effect size, p-values adjusted or
        not, significant)."""
        import pandas as pd

        if pairs:
            return pd.DataFrame([dataclasses.asdict(p) for p in self.pairs])
        return pd.DataFrame([[self.means.get(r, {}).get(m, float("nan"))
                              for m in self.measures] for r in self.runs],
                            index=pd.Index(self.runs, name="run"), columns=list(self.measures))

    def to_latex(self, places: int = 4, caption: str | None = None, label: str | None = None,
                 lower_better=(), float_env: bool = True) -> str:
        """The booktabs table ``trecqr compare --format latex`` prints (see :mod:`.tables`)."""
        return render_latex(self, places, caption, label, lower_better, float_env)

    def to_markdown(self, places: int = 4, lower_better=()) -> str:
        """The pipe table ``trecqr compare --format markdown`` prints."""
        return render_markdown(self, places, lower_better)

    def to_html(self, qrels, runs, measures, **options) -> str:
        """The HTML report of this comparison (:func:`.html.comparison_page`): the runs and
        measures as given to compare, options those it was made with plus the turn view's."""
        from trecqr.report.html import comparison_page  # the page's readers load with it

        return comparison_page(self, qrels, runs, measures, **options)
