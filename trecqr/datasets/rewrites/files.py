"""Reading a rewrites file (JSONL from model inference, or TSV) into ids and candidate values,
before any missing-rewrite policy: :func:`parse_rewrites`, which
:mod:`trecqr.datasets.rewrites.topics` and :mod:`trecqr.datasets.rewrites.candidates` then match
to the turns.

Kept apart from the policies because reading is where a file's shape is judged: a field named
by an option that no record has is refused first (listing the file's fields), the id and
rewrite fields are found, and every candidate is counted by what it was written as (string,
empty string, null, chat-completion object...), so the counts line can say it.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from types import SimpleNamespace

from trecqr.errors import InputError, UsageError
from trecqr.datasets.fields import check_named_fields, field_list, name_it
from trecqr.datasets.records import id_getter, json_records, record_id
from trecqr.datasets.topics import parse_tsv, read_text_file

ID_FIELDS = ("qid", "sample_id", "query_id", "id", "turn_key")
REWRITE_FIELDS = ("rewrite", "rewritten_query", "rewritten", "rewrite_query", "model_rewrite",
                  "predicted_rewrite", "prediction", "GPT_rewrite", "output", "generated_query",
                  "automatic_rewritten_utterance")
HUMAN_REWRITE_FIELDS = ("Truth_rewrite", "Rewrite", "manual_rewritten_utterance",
                        "human_rewrite", "gold_rewrite", "oracle_rewrite")


def record_human(record: dict) -> str | None:
    """The human rewrite a record carries (first of HUMAN_REWRITE_FIELDS that is non-empty
    text): what ``missing="human"`` falls back to without human topics."""
    for f in HUMAN_REWRITE_FIELDS:
        value = record.get(f)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _rewrite_value(value, name, lineno):
    """A string rewrite (possibly empty) or None, from the value types models write."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        if not value:
            return None
        return _rewrite_value(value[0], name, lineno)
    if isinstance(value, dict):
        choices = value.get("choices")
        if isinstance(choices, list):
            if not choices:
                return None
            first = choices[0]
            if isinstance(first, dict):
                msg = first.get("message")
                if isinstance(msg, dict) and "content" in msg:
                    return _rewrite_value(msg["content"], name, lineno)
                if "text" in first:
                    return _rewrite_value(first["text"], name, lineno)
        for key in ("content", "text", "rewrite"):
            if key in value:
                return _rewrite_value(value[key], name, lineno)
    raise InputError(name, lineno, f"rewrite of type {type(value).__name__} is not text "
                     "(expected a string, a list of strings or a chat-completion object)")


def _rewrite_field(name: str, record: dict, options: dict | None = None) -> str:
    for f in REWRITE_FIELDS:
        if f in record:
            return f
    others = [k for k in record if k.lower().endswith("rewrite") and k not in HUMAN_REWRITE_FIELDS]
    if len(others) == 1:
        return others[0]
    if others:
        raise name_it(UsageError(f"{name}: several rewrite fields ({', '.join(others)})"),
                      "rewrite_field", options)
    raise name_it(UsageError(f"{name}: no rewrite field found (tried {', '.join(REWRITE_FIELDS)};"
                             f" the record's fields: {field_list(record)})"),
                  "rewrite_field", options)


# what a candidate was written as, for the counts line (CandidateStats.kinds)
KIND_NAMES = ("string", "empty string", "null", "chat-completion object", "object", "list",
              "absent", "unreadable")


def _kind(item) -> str:
    if item is None:
        return "null"
    if isinstance(item, str):
        return "string" if item.strip() else "empty string"
    if isinstance(item, dict):
        return "chat-completion object" if "choices" in item else "object"
    return "list" if isinstance(item, list) else "unreadable"


def _candidates(record, field_name, name, lineno, kinds: Counter) -> list:
    """A record field's candidate rewrites: one per list element (LLM4CS' ``predicted_rewrite``
    lists), else the one value; an element not readable as text is kept as its InputError.
    kinds counts what each candidate was written as (a field the record lacks: absent)."""
    if field_name not in record:
        kinds["absent"] += 1
        return [None]
    value = record[field_name]
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        try:
            text = _rewrite_value(item, name, lineno)
            kinds[_kind(item)] += 1
        except InputError as exc:
            kinds["unreadable"] += 1
            text = exc
        out.append(text)
    if not out:
        kinds["absent"] += 1
    return out or [None]


def _jsonl(name, text, id_field, rewrite_field, labels, humans, kinds, options=None):
    """(qids, candidate lists, line numbers): rewrite_field is one field name, or several
    (their candidates in order: candidates 1..n). A field named that no record has is refused
    first, listing the file's fields."""
    qids, values, lines, seen = [], [], [], {}
    get_id = fields = None
    records = list(json_records(name, text))
    check_named_fields(name, {"id_field": id_field, "rewrite_field": rewrite_field},
                       dict.fromkeys(k for _, rec in records for k in rec))
    for lineno, rec in records:
        if get_id is None:
            f = id_field if id_field is not None else next((f for f in ID_FIELDS if f in rec), None)
            get_id, labels.id_field, _ = id_getter(name, rec, f, "id_field", options)
            if isinstance(rewrite_field, (list, tuple)):
                fields = list(rewrite_field) or [_rewrite_field(name, rec, options)]
            else:
                fields = [rewrite_field or _rewrite_field(name, rec, options)]
            labels.rewrite_field = ",".join(fields)
        qid = record_id(name, lineno, get_id, rec, seen)
        qids.append(qid)
        values.append([c for f in fields for c in _candidates(rec, f, name, lineno, kinds)])
        humans.setdefault(qid, record_human(rec))
        lines.append(lineno)
    return qids, values, lines


def _tsv(name, text, labels, kinds):
    topics = parse_tsv(name, text, allow_empty=True)
    labels.id_field, labels.rewrite_field = "column 1", "column 2"
    values = [[q.strip()] for q in topics.queries]
    kinds.update("string" if v[0] else "empty string" for v in values)
    return topics.qids, values, [None] * len(topics)


@dataclass
class Parsed:
    """A rewrites file read: per record its id, its candidate rewrites (1..n; a candidate not
    readable as text is its InputError) and its line; what read_rewrites and read_candidates
    then match against the raw turns, once per candidate."""

    name: str
    qids: list
    values: list  # per record, its candidates
    lines: list
    humans: dict  # {qid: the record's own human rewrite}
    id_field: str | None
    rewrite_field: str | None
    kinds: Counter = field(default_factory=Counter)  # what the candidates were written as


def parse_rewrites(path, *, format: str | None = None, id_field=None,
                   rewrite_field=None, options: dict | None = None) -> Parsed:
    """Read a rewrites file (JSONL or TSV) without applying any policy; rewrite_field: one
    field name or several. A field named that no record has is a UsageError listing the
    file's fields. options: {keyword: (Python name, CLI option)} for the hints, when the
    caller's own arguments name these fields otherwise (``trecqr gen``'s pred_field)."""
    fmt = format
    if fmt is None:
        lower = os.fspath(path).lower() if not hasattr(path, "read") else ""
        lower = lower.removesuffix(".gz")
        fmt = "tsv" if lower.endswith((".tsv", ".tab", ".txt")) else "jsonl"
    if fmt not in ("jsonl", "tsv"):
        raise UsageError(f"unknown rewrites format {fmt!r}: use jsonl or tsv")
    name, text = read_text_file(path)
    labels = SimpleNamespace(id_field=None, rewrite_field=None)  # what the reader found
    humans: dict = {}
    kinds: Counter = Counter()
    if fmt == "jsonl":
        qids, values, lines = _jsonl(name, text, id_field, rewrite_field, labels, humans,
                                     kinds, options)
    else:
        qids, values, lines = _tsv(name, text, labels, kinds)
    return Parsed(name, qids, values, lines, humans, labels.id_field, labels.rewrite_field,
                  kinds)
