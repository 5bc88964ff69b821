"""What a notebook shows of :class:`~trecqr.api.evaluation.Results`: a short ``repr``, an HTML table
(``_repr_html_``, Jupyter's rich display), and DataFrames: long or wide per-topic values, and
the means apart (``means=True``), topics in natural order (:func:`natural_key`).

The repr names the topics and measures and the first summary values, on one line, instead of
the dataclass's dump of numpy arrays; the HTML table holds every summary value. Both are read
from ``aggregate()`` and ``per_query()``, so they show what those return.
"""

from __future__ import annotations

import re

from trecqr.engine.population import describe_groups
from trecqr.errors import UsageError
from trecqr.runtime.extras import extra_error

_SHOWN = 4  # summary values in the one-line repr
PY_SWITCH = "complete=True"  # trec_eval's -c, as evaluate() names it


class ResultsViews:
    """Mixin of Results: needs ``aggregate()``, ``per_query()`` and ``populations()``."""

    def __repr__(self) -> str:
        agg = self.aggregate()
        values = ", ".join(f"{m}={_short(v, m)}" for m, v in list(agg.items())[:_SHOWN])
        more = f", ... ({len(agg) - _SHOWN} more)" if len(agg) > _SHOWN else ""
        topics = len(self.per_query())
        return (f"<Results: {topics} topic{'s' if topics != 1 else ''}{self._mixed()}, {len(agg)} "
                f"measure{'s' if len(agg) != 1 else ''}: {values}{more}>")

    def _repr_html_(self) -> str:
        import html  # here, as in _short: html.entities is 6 ms of the command line's start-up

        agg = self.aggregate()
        rows = "".join(f"<tr><th>{html.escape(str(m))}</th><td>{_short(v, m)}</td></tr>"
                       for m, v in agg.items())
        mixed = self._mixed()
        over = html.escape(mixed[2:-1]) if mixed else "mean over topics"
        return (f"<table><caption>trecqr Results: {len(self.per_query())} topics "
                f"({over})</caption><thead><tr><th>measure</th><th>value</th></tr>"
                f"</thead><tbody>{rows}</tbody></table>")

    def to_dataframe(self, wide: bool = False, means: bool = False):
        """The values as a pandas DataFrame, topics in natural order (106_2 before 106_10).

        long (default): one row per (query_id, measure) with its value, per-topic rows only
        (ir_measures' ``iter_calc`` rows, PyTerrier's ``perquery=True`` frame), so that a
        ``groupby`` or a mean over the frame never counts a summary as a topic.
        wide: one row per topic (index ``query_id``), one column per measure; a topic without
        a value for a measure has NaN there (the measure does not average it).
        means: the summary values, one row per measure (``measure``, ``value``, and ``n``, the
        topics it averages): ``aggregate()`` as a frame, trec_eval's ``all`` rows.
        Each carries ``attrs["n"]`` ({measure: topics averaged}) and ``attrs["populations"]``
        ({measure: which topics, by which rule}), :meth:`populations` in words."""
        if wide and means:
            raise UsageError("to_dataframe: give wide=True or means=True, not both")
        try:
            import pandas as pd
        except ModuleNotFoundError as exc:
            raise extra_error(exc, "to_dataframe()") from None
        pops = self.populations()
        if means:
            frame = pd.DataFrame([(m, v, pops[m].n) for m, v in self.aggregate().items()],
                                 columns=["measure", "value", "n"])
        else:
            per_query = self.per_query()
            order = sorted(per_query, key=natural_key)
            if wide:
                frame = pd.DataFrame.from_dict({q: per_query[q] for q in order}, orient="index")
                frame.index.name = "query_id"
            else:
                rows = [(q, m, v) for q in order for m, v in per_query[q].items()]
                frame = pd.DataFrame(rows, columns=["query_id", "measure", "value"])
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


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(topic) -> tuple:
    """Sort key of a topic id in natural order: runs of digits by their number (106_2 before
    106_10, 9 before 10), other text as text, digits before text at the same place; ids that
    differ only in leading zeros keep their text order, so the order is total and stable."""
    parts = _DIGITS.split(str(topic))
    return tuple((0, int(p), p) if k % 2 else (1, 0, p) for k, p in enumerate(parts) if p)


def _short(value, measure: str = "") -> str:
    """4 places, as trec_eval prints; a count (trec_eval's num_ret, ir_measures' NumRet...) as
    the whole number trec_eval prints for it."""
    if isinstance(value, float):
        count = str(measure).startswith(("num_", "Num")) and value.is_integer()
        return f"{value:.0f}" if count else f"{value:.4f}"
    import html

    return html.escape(str(value))
