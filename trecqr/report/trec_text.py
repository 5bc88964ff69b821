"""trec_eval's text output, byte for byte: ``%-22s\\t%s\\t%6.4f`` rows.

Rows are grouped by topic (with -q, topics in strcmp order), measures in table order; then the
summary rows for ``all``. Counts print as integers (``%ld``) except under -Z, where every
value prints as a float behind a ``Z`` prefix. ``places`` widens the decimals beyond 4.
"""

from __future__ import annotations

import math


def _fmt_float(value: float, places: int) -> str:
    if isinstance(value, float) and math.isnan(value):
        # printf("%6.4f") pads NaN to the field width too: "  -nan"
        return f"{'-nan' if math.copysign(1, value) < 0 else 'nan':>6}"
    return f"{value:6.{places}f}"


def _row(name: str, qid: str, value, integer: bool, zscored: bool, places: int) -> str:
    if isinstance(value, str):
        return f"{name:<22}\t{qid}\t{value}\n"
    if zscored:
        return f"Z{name:<22}\t{qid}\t{_fmt_float(value, places)}\n"
    if integer:
        return f"{name:<22}\t{qid}\t{int(value)}\n"
    return f"{name:<22}\t{qid}\t{_fmt_float(float(value), places)}\n"


def per_topic(ev):
    """(qid, column, value) of the per-topic rows, topics in trec_eval's (sorted) order:
    the evaluated topics, and the qrels topics without results where an ir_measures name
    counts them (its default), so that each measure lists the topics its mean averages (an
    ir_measures name without a default, Accuracy@k, lists the topics it has a value for)."""
    cols = [c for c in ev.columns if c.measure.per_query]
    defaults = getattr(ev, "defaults", None)
    sparse = [c for c in cols if getattr(c.measure, "sparse", False)]
    if not defaults and not sparse:  # trec_eval's rows, as it prints them
        for i, qid in enumerate(ev.qids):
            for c in cols:
                yield qid, c, c.values[i]
        return
    where = {q: i for i, q in enumerate(ev.qids)}
    for qid in sorted(set(where) | set(defaults or ())):
        i = where.get(qid)
        for c in cols:
            if i is not None:
                if not (c in sparse and c.values[i] != c.values[i]):  # NaN: no value
                    yield qid, c, c.values[i]
            elif c.name in defaults[qid]:
                yield qid, c, defaults[qid][c.name]


def format_trec(ev, *, query: bool = False, summary: bool = True, places: int = 4) -> str:
    """The text trec_eval prints for an Evaluation."""
    out = []
    if query:
        for qid, c, value in per_topic(ev):
            if hasattr(c.measure, "format_query_value"):
                value = c.measure.format_query_value(value)
            out.append(_row(c.name, qid, value, c.measure.integer, ev.zscored, places))
    if summary:
        for c in ev.columns:
            if c.measure.name == "runid":
                out.append(f"{'runid':<22}\tall\t{ev.runid}\n")
            elif c.measure.summary != "none":
                out.append(_row(c.name, "all", c.summary, c.measure.integer, ev.zscored, places))
    return "".join(out)
