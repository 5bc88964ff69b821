"""What each output SAYS about the topics it averages: the only place of the differential
harness that reads wording or field names, so that a change of an output's wording is adapted
here. Each function returns {key: n} (or {(run, key): n}): the number of topics the output
states for that name's mean. Fields read:

- eval (stderr): the coverage line ``trecqr: N topics evaluated; K only in qrels (...); ...``:
  N for every name (``N qrels topics (-c: ...)`` under -c); a per-name segment ``NAMES: N ...``
  (``RR@3, nDCG@3: 34 qrels topics (...);
  recip_rank: 25 evaluated``) overrides it for the names it lists.
- eval --format json: ``topics.evaluated`` for every name; ``averaged_over[name].n`` overrides
  it for each name it lists.
- Results: ``n`` per name when it has one (an attribute or method ``n`` giving {name: N}),
  else the N of its repr ``<Results: N topics, ...>``.
- compare --format json, trecqr.compare().to_dict(), report's comparison: ``num_topics[run]``
  (an int: every name; or {name: N}); pairs' ``n``; ``topics_note`` ``(... (N))``.
- report's data: ``coverage[i].evaluated`` per run (every name), or ``coverage[i].n`` {name: N}.
- breakdown: the JSON rows' ``n`` (read by the door), and the text table's ``n`` column: per
  measure block ``group  n  run1  run2``, one n per group row, stated for every run with a value.
"""

from __future__ import annotations

import re


def eval_coverage(stderr: str, keys) -> dict:
    line = next((ln for ln in stderr.splitlines() if "topics" in ln or "evaluated" in ln), "")
    line = re.sub(r"^trecqr:\s*", "", line)
    out = {}
    first = re.match(r"(\d+) topics evaluated", line) or \
        re.match(r"(\d+) qrels topics \(-c: ", line)
    if first:
        out = {k: int(first.group(1)) for k in keys}
    for segment in line.split(";"):
        names, sep, rest = segment.partition(":")
        number = re.search(r"\d+", rest)
        if sep and number:
            for name in (n.strip() for n in names.split(",")):
                if name in keys:
                    out[name] = int(number.group(0))
    return out


def eval_json(obj: dict, keys) -> dict:
    topics = obj.get("topics", {})
    out = {k: topics["evaluated"] for k in keys} if "evaluated" in topics else {}
    for name, stated in obj.get("averaged_over", {}).items():
        if name in keys:
            out[name] = stated["n"]
    return out


def results_counts(results, keys) -> dict:
    n = getattr(results, "n", None)
    n = n() if callable(n) else n
    if isinstance(n, dict):
        return {k: v for k, v in n.items() if k in keys}
    found = re.match(r"<Results: (\d+) topics?", repr(results))
    return {k: int(found.group(1)) for k in keys} if found else {}


def compare_counts(d: dict, keys) -> dict:
    out = {}
    for run, n in d.get("num_topics", {}).items():
        for key in keys:
            value = n.get(key) if isinstance(n, dict) else n
            if value is not None:
                out[(run, key)] = value
    return out


def compare_note(d: dict):
    """The count compare's topics line states for its pairs: {"*": N} (one for all), or None."""
    found = re.search(r"\((\d+)\)\s*$", d.get("topics_note", ""))
    return {"*": int(found.group(1))} if found else {}


def report_coverage(data: dict, keys) -> dict:
    out = {}
    for cov in data.get("coverage", []):
        n = cov.get("n", cov.get("evaluated"))
        for key in keys:
            value = n.get(key) if isinstance(n, dict) else n
            if value is not None:
                out[(cov["run"], key)] = value
    return out


def breakdown_text_n(table: str, runs) -> dict:
    """{(group, run, key): n} from the text table's measure blocks."""
    out, key, header = {}, None, None
    for line in table.splitlines():
        head = re.match(r"^(\S+) \(baseline ", line)
        if head:
            key, header = head.group(1), None
            continue
        fields = line.split()
        if key and fields[:2] == ["group", "n"]:
            header = fields[2:]
            continue
        if not fields:
            key = None
            continue
        if key and header and not set(line.strip()) <= set("- ") and len(fields) == 2 + len(header):
            for run, value in zip(header, fields[2:]):
                if value != "-" and run in runs:
                    out[(fields[0], run, key)] = int(fields[1])
    return out
