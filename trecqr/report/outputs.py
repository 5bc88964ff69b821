"""Render an Evaluation: trec_eval text, or JSON/JSONL/CSV/TSV for pipelines.

Every format holds the same rows in trec_eval's print order (per topic with -q, then ``all``).
Measure names are trec_eval's (``P_5``; ``Zmap`` under -Z). Decimal places: trec text uses
``places`` (4 when None, as trec_eval's ``%6.4f``); the other formats keep full float precision
(Python's shortest round-trip repr) unless ``places`` is given, so a pipeline reading JSON gets
exactly the values the Python API returns. NaN (gm of an empty set, ...) is JSON ``null``.
"""

from __future__ import annotations

import csv
import io
import json
import math

from trecqr.engine.population import describe_groups, populations, uniform
from trecqr.report.trec_text import format_trec, per_topic

FORMATS = ("trec", "json", "jsonl", "csv", "tsv")


def rows(ev, *, query: bool, summary: bool):
    """(measure, qid, value) in trec_eval's print order; values int, float or str. Per
    topic, each measure's topics (:func:`per_topic`)."""
    prefix = "Z" if ev.zscored else ""
    if query:
        for qid, c, v in per_topic(ev):
            yield prefix + c.name, qid, _value(ev, c, v)
    if summary:
        for c in ev.columns:
            if c.measure.name == "runid":
                yield "runid", "all", ev.runid
            elif c.measure.summary != "none":
                yield prefix + c.name, "all", _value(ev, c, c.summary)


def _value(ev, col, v):
    if isinstance(v, (str, bytes)):
        return v if isinstance(v, str) else v.decode("utf-8", "replace")
    if col.measure.integer and not ev.zscored:
        return int(v)
    return float(v)


def _rounded(v, places: int | None):
    """A float cut to places decimals (as %.Nf prints it), NaN as None; others unchanged."""
    if not isinstance(v, float):
        return v
    if math.isnan(v) or math.isinf(v):
        return None
    return v if places is None else float(f"{v:.{places}f}")


def _cell(v, places: int | None) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return repr(v) if places is None else f"{v:.{places}f}"
    return str(v)


def render(ev, fmt: str, *, query: bool = False, summary: bool = True,
           places: int | None = None) -> str:
    """The text of one evaluation in fmt (one of FORMATS)."""
    if fmt == "trec":
        return format_trec(ev, query=query, summary=summary,
                           places=4 if places is None else places)
    data = list(rows(ev, query=query, summary=summary))
    if fmt == "jsonl":  # a summary row says how many topics it averages, by which rule
        pops = populations(ev, "Z" if ev.zscored else "") if summary else {}
        return "".join(json.dumps({"measure": m, "qid": q, "value": _rounded(v, places),
                                   **({"n": pops[m].n, "rule": pops[m].rule}
                                      if q == "all" and m in pops else {})},
                                  allow_nan=False) + "\n" for m, q, v in data)
    if fmt == "json":
        return json.dumps(_document(ev, data, query, places), indent=2, allow_nan=False) + "\n"
    if fmt not in ("csv", "tsv"):
        raise ValueError(f"unknown output format {fmt!r}; expected one of {', '.join(FORMATS)}")
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    writer.writerow(["measure", "qid", "value"])
    writer.writerows((m, q, _cell(v, places)) for m, q, v in data)
    return buf.getvalue()


def _document(ev, data, query: bool, places):
    doc = {"runid": ev.runid, "compat": ev.options.compat}
    cover = coverage(ev)
    if cover is not None:
        doc["topics"] = cover
    # which topics each summary value averages (measures.population)
    pops = populations(ev, "Z" if ev.zscored else "")
    doc["averaged_over"] = {m: {"n": p.n, "rule": p.rule,
                                "without_results": len(p.without_results)}
                            for m, p in pops.items()}
    doc["summary"] = {}
    if query:
        doc["per_query"] = {}
    for m, q, v in data:
        if q == "all":
            doc["summary"][m] = _rounded(v, places)
        else:
            doc["per_query"].setdefault(q, {})[m] = _rounded(v, places)
    return doc


def coverage(ev) -> dict | None:
    """Topics evaluated, and topics found only in the qrels or only in the run."""
    rk = getattr(ev, "rankings", None)
    if rk is None:
        return None
    return {"evaluated": len(ev.qids), "qrels_only": list(rk.qrels_only),
            "run_only": list(rk.run_only)}


def coverage_line(ev) -> str:
    """``trecqr: 49 topics evaluated; 1 only in qrels (302); 0 only in run`` (for stderr)
    when every value averages the evaluated topics. Otherwise each population is named:
    ``trecqr: RR@3: 50 qrels topics (ir_measures: a topic without results counts 0); map: 49
    evaluated (-c counts the 1 as 0); 1 only in qrels (302); 0 only in run``, or with one
    population, ``trecqr: 50 qrels topics (-c: ...), 49 with results; ...``."""
    cover = coverage(ev)
    pops = populations(ev, "Z" if ev.zscored else "")
    if cover is None:
        if uniform(pops, ev.qids):
            return f"trecqr: {len(ev.qids)} topics evaluated"
        return "trecqr: " + "; ".join(describe_groups(pops))

    def few(names):
        shown = ", ".join(names[:5])
        return f" ({shown}{', ...' if len(names) > 5 else ''})" if names else ""

    # a qrels dict's topics without judgments ({"b": {}}, ir_measures' names count them):
    # the populations' topics that are neither evaluated nor judged topics the run lacks
    listed = set(ev.qids) | set(cover["qrels_only"])
    empty = sorted({q for p in pops.values() for q in p.topics} - listed)
    rest = (f"{len(cover['qrels_only'])} only in qrels{few(cover['qrels_only'])}; "
            + (f"{len(empty)} without judgments{few(empty)}; " if empty else "")
            + f"{len(cover['run_only'])} only in run{few(cover['run_only'])}")
    if uniform(pops, ev.qids):
        return f"trecqr: {cover['evaluated']} topics evaluated; {rest}"
    distinct = set(pops.values())
    if len(distinct) == 1:
        p = distinct.pop()
        return f"trecqr: {p.describe()}, {p.n - len(p.without_results)} with results; {rest}"
    return f"trecqr: {'; '.join(describe_groups(pops))}; {rest}"
