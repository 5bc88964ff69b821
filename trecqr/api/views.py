"""What a notebook shows of :class:`~trecqr.api.evaluation.Results`: a short ``repr``, an HTML table
(``_repr_html_``, Jupyter's rich display), and DataFrames long or wide.

The repr names the topics and measures and the first summary values, on one line, instead of
the dataclass's dump of numpy arrays; the HTML table holds every summary value. Both are read
from ``aggregate()`` and ``per_query()``, so they show what those return.
"""

from __future__ import annotations

import html

from trecqr.engine.population import describe_groups

_SHOWN = 4  # summary values in the one-line repr
PY_SWITCH = "complete=True"  # trec_eval's -c, as evaluate() names it


class ResultsViews:
    """Mixin of Results: needs ``aggregate()``, ``per_query()`` and ``populations()``."""

    def __repr__(self) -> str:
        agg = self.aggregate()
        values = ", ".join(f"{m}={_short(v)}" for m, v in list(agg.items())[:_SHOWN])
        more = f", ... ({len(agg) - _SHOWN} more)" if len(agg) > _SHOWN else ""
        topics = len(self.per_query())
        return (f"<Results: {topics} topic{'s' if topics != 1 else ''}{self._mixed()}, {len(agg)} "
                f"measure{'s' if len(agg) != 1 else ''}: {values}{more}>")

    def _repr_html_(self) -> str:
        agg = self.aggregate()
        rows = "".join(f"<tr><th>{html.escape(str(m))}</th><td>{_short(v)}</td></tr>"
                       for m, v in agg.items())
        mixed = self._mixed()
        over = html.escape(mixed[2:-1]) if mixed else "mean over topics"
        return (f"<table><caption>trecqr Results: {len(self.per_query())} topics "
                f"({over})</caption><thead><tr><th>measure</th><th>value</th></tr>"
                f"</thead><tbody>{rows}</tbody></table>")

    def to_dataframe(self, wide: bool = False):
        """long (default): one row per (qid, measure), qid ``all`` holding the summary.
        wide: one row per topic (index ``query_id``, in per_query() order), one column per
        measure, without the summary (``aggregate()`` has it; a topic without a value for a
        measure has NaN there: the topic is not among those the measure averages).
        Both carry ``attrs["n"]`` ({measure: topics averaged}) and ``attrs["populations"]``
        ({measure: which topics, by which rule}), :meth:`populations` in words."""
        import pandas as pd

        per_query = self.per_query()
        if wide:
            frame = pd.DataFrame.from_dict(per_query, orient="index")
            frame.index.name = "query_id"
        else:
            rows = [(qid, m, v) for qid, vals in per_query.items() for m, v in vals.items()]
            rows += [("all", m, v) for m, v in self.aggregate().items()]
            frame = pd.DataFrame(rows, columns=["query_id", "measure", "value"])
        pops = self.populations()
        frame.attrs["n"] = {m: p.n for m, p in pops.items()}
        frame.attrs["populations"] = {m: p.describe(PY_SWITCH) for m, p in pops.items()}
        return frame

    def _mixed(self) -> str:
        """`` (RR@3: 34 qrels topics (...); recip_rank: 25 evaluated)`` when the values
        average different topics, or count topics without results; else nothing."""
        pops = self.populations()
        listed = tuple(self.per_query())
        if all(p.topics == listed and not p.without_results for p in pops.values()):
            return ""
        return f" ({'; '.join(describe_groups(pops, switch=PY_SWITCH))})"


def _short(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) else html.escape(str(value))
