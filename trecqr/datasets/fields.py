"""Fields of JSONL records named by options: checked before any work, and named in hints with
the caller's own option names.

A typo in a field option (``--rewrite-field GPT_rewirte``) must not run: a field that no
record has is refused in one line that lists the fields the file has. A hint that tells the
user to name a field uses the keyword on the Python side (``rewrite_field=``) and the option on
the command line (``--rewrite-field``), never a mix (:func:`trecqr.errors.hinted`).
"""

from __future__ import annotations

from trecqr.errors import UsageError, hinted

# the command line's option for each keyword that names a JSONL field (callers whose option
# has another name pass theirs as ``options``: {keyword: (Python name, CLI option)})
FIELD_OPTIONS = {"qid_field": "--qid-field", "query_field": "--query-field",
                 "id_field": "--id-field", "rewrite_field": "--rewrite-field",
                 "response_field": "--response-field"}


def field_list(fields, limit: int = 40) -> str:
    """The field names of a record (or any iterable of names), for a message."""
    names = list(fields)
    shown = ", ".join(names[:limit])
    return (shown + f", ... ({len(names)} fields)" if len(names) > limit else shown) or "none"


def name_it(exc, keyword: str, options: dict | None = None):
    """exc with the hint "name it with" the option of keyword: ``keyword=`` in Python, its
    command-line option on the command line (:func:`trecqr.errors.hinted`)."""
    python, cli = (options or {}).get(keyword, (keyword, FIELD_OPTIONS[keyword]))
    return hinted(exc, f"name it with {python}=", f"name it with {cli}")


def id_field_parts(qid_field):
    """An id field option as given (``"conv_turn"``, ``"CONV,TURN"`` or a pair): one name, or a
    (conv, turn) pair; any other shape is refused before the file is read, whatever it holds."""
    if isinstance(qid_field, str) and "," in qid_field:
        qid_field = tuple(f.strip() for f in qid_field.split(","))
    if isinstance(qid_field, (tuple, list)):
        if len(qid_field) != 2 or not all(qid_field):
            raise UsageError(f"id field {','.join(qid_field)!r}: give one field name or two, "
                             "CONV,TURN")
        return tuple(qid_field)
    if not qid_field:
        raise UsageError("id field: empty name")
    return qid_field


def check_named_fields(name: str, named: dict, fields) -> None:
    """Refuse, before any work, a field named by an option (named: {keyword: field or fields})
    that no record of the file has, listing the fields the file has (fields: their union)."""
    have = set(fields)
    for keyword, value in named.items():
        if keyword in ("id_field", "qid_field") and value is not None:
            id_field_parts(value)  # its shape first: a wrong shape is no typo of a field
        values = [value] if isinstance(value, str) else list(value or ())
        for f in values:
            parts = [p.strip() for p in f.split(",")] if isinstance(f, str) and "," in f \
                else [f]
            for part in parts:
                if part and part not in have:
                    raise UsageError(f"{name}: no record has the field {part!r}; the file's "
                                     f"fields: {field_list(fields)}")
