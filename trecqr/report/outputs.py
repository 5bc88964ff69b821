"""Render an Evaluation: trec_eval text, or JSON/JSONL/CSV/TSV for pipelines."""

from __future__ import annotations

import csv
import io
import json

from .trec_text import format_trec


def rows(ev, *, query: bool, summary: bool):
    """(measure, qid, value) in trec_eval's print order."""
    if query:
        cols = [c for c in ev.columns if c.measure.per_query]
        for i, qid in enumerate(ev.qids):
            for c in cols:
                yield c.name, qid, _value(c, c.values[i])
    if summary:
        for c in ev.columns:
            if c.measure.name == "runid":
                yield "runid", "all", ev.runid
            elif c.measure.summary != "none":
                yield c.name, "all", _value(c, c.summary)


def _value(col, v):
    if isinstance(v, str):
        return v
    return int(v) if col.measure.integer and not getattr(col, "zscored", False) else float(v)


def render(ev, fmt: str, *, query: bool = False, summary: bool = True, places: int = 4) -> str:
    if fmt == "trec":
        return format_trec(ev, query=query, summary=summary, places=places)
    data = list(rows(ev, query=query, summary=summary))
    if fmt == "jsonl":
        return "".join(json.dumps({"measure": m, "qid": q, "value": v}) + "\n" for m, q, v in data)
    if fmt == "json":
        doc = {"runid": ev.runid, "compat": ev.options.compat, "summary": {}, "per_query": {}}
        for m, q, v in data:
            if q == "all":
                doc["summary"][m] = v
            else:
                doc["per_query"].setdefault(q, {})[m] = v
        if not query:
            del doc["per_query"]
        return json.dumps(doc, indent=2) + "\n"
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    writer.writerow(["measure", "qid", "value"])
    writer.writerows(data)
    return buf.getvalue()
