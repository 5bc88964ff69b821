"""JSONL records read line by line, and their ids: the one reader behind every JSONL input
(topics, rewrites, candidates, collections, datasets, SCAI's files).

:func:`json_records` yields each record with its line number, so that every error names
``file:line``; :func:`id_getter` finds a record's id field (an explicit one, a conversation and
turn pair, or the first of :data:`QID_FIELDS`), and :func:`record_id` reads it and refuses an id
seen before; :func:`load_json` reads a whole JSON document with the same one-line errors.
Apart from :mod:`trecqr.datasets.topics` because readers that are not topics use it.
"""

from __future__ import annotations

import json

from trecqr.datasets.fields import field_list, id_field_parts, name_it
from trecqr.errors import InputError, UsageError
from trecqr.formats.textio import unreadable

QID_FIELDS = ("qid", "query_id", "sample_id", "id", "topic_id", "number")
TURN_FIELD_PAIRS = (("Conversation_no", "Turn_no"), ("conv_id", "turn_id"),
                    ("conversation_id", "turn_id"), ("conv_no", "turn_no"))


def json_records(name: str, text, start: int = 1):
    """Yield (line number, dict) for every non-blank line of a JSONL text (a string, or any
    iterable of lines, such as an open file), numbering its lines from start."""
    lines = text.split("\n") if isinstance(text, str) else text
    for lineno, line in enumerate(lines, start):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(name, lineno, f"invalid JSON: {exc.msg}") from None
        if not isinstance(rec, dict):
            raise InputError(name, lineno, "expected a JSON object per line")
        yield lineno, rec


def record_id(name, lineno, get_id, rec, seen: dict, what: str = "id") -> str:
    """The id of a JSONL record (get_id from :func:`id_getter`); a missing id field or an id
    seen before (seen: id -> first line, updated) is an InputError at lineno."""
    try:
        qid = get_id(rec)
    except KeyError as exc:
        raise InputError(name, lineno, f"no id field {exc.args[0]!r} (the record's fields: "
                         f"{field_list(rec)})") from None
    if qid in seen:
        raise InputError(name, lineno, f"duplicate {what} {qid!r} (first on line {seen[qid]})")
    seen[qid] = lineno
    return qid


def id_getter(name: str, record: dict, qid_field=None, keyword: str = "qid_field",
              options: dict | None = None):
    """A function record -> qid string, for an explicit field, a (conv, turn) pair of fields,
    or the first of QID_FIELDS / TURN_FIELD_PAIRS present in record. Also returns its label.
    keyword: the caller's argument that names the id field, for the hint when none is found."""
    if qid_field is not None:
        qid_field = id_field_parts(qid_field)
        if isinstance(qid_field, tuple):
            conv_f, turn_f = qid_field
            return (lambda r: f"{r[conv_f]}_{r[turn_f]}"), f"{conv_f}_{turn_f}", (conv_f, turn_f)
        return (lambda r: str(r[qid_field])), qid_field, (qid_field,)
    for f in QID_FIELDS:
        if f in record:
            return (lambda r, f=f: str(r[f])), f, (f,)
    for conv_f, turn_f in TURN_FIELD_PAIRS:
        if conv_f in record and turn_f in record:
            return ((lambda r, c=conv_f, t=turn_f: f"{r[c]}_{r[t]}"), f"{conv_f}_{turn_f}",
                    (conv_f, turn_f))
    raise name_it(UsageError(f"{name}: no id field found (tried {', '.join(QID_FIELDS)} and "
                             f"conversation/turn pairs; the record's fields: "
                             f"{field_list(record)})"), keyword, options)


def load_json(name: str):
    """A whole JSON document; unreadable or malformed files are one-line errors with the line."""
    try:
        with open(name, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise unreadable(name, exc) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise InputError(name, line, f"not a JSON file: {getattr(exc, 'msg', exc)}") from None
