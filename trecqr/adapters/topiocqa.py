"""TopiOCQA gold qrels and turn types, with canonical ``{conv}_{turn}`` ids.

* Gold qrels as published (``dev_gold.trec``: ``1-1 Q0 14979903 1``, 2,514 dev turns, one gold
  passage each), or the same as a JSON dict ``{qid: {passage: grade}}``.
* Turn types (``dev_type.json``: turn ids grouped by type) as a ``{conv_turn: type}`` mapping,
  kept as topic metadata for breakdowns. The published file has three groups, ``1st`` (205),
  ``tc`` (1,637) and ``ts`` (672), together exactly the 2,514 dev turns; it has no separate
  "topic return" group (topic returns are not told apart from topic shifts there).

Passage ids are opaque strings, never renumbered.
"""

from __future__ import annotations

from ..errors import InputError
from ..formats.qrels import Qrels
from .qrecc import (
    QrelsCounts,
    _load,
    _StyleCheck,
    make_convert_command,
    qrels_from_json_dict,
    qrels_from_text,
)

__all__ = [
    "TURN_TYPES",
    "command",
    "read_topiocqa_qrels",
    "read_turn_types",
    "turn_type_coverage",
]

#: The canonical type names (dev_type.json uses the first, second and fourth).
TURN_TYPES = ("first_turn", "topic_shift", "topic_return", "no_shift")

# Group names as published (dev_type.json uses 1st / ts / tc) and spelled out.
_GROUP_TYPES = {
    "1st": "first_turn", "first": "first_turn", "first_turn": "first_turn",
    "first turn": "first_turn",
    "ts": "topic_shift", "shift": "topic_shift", "topic_shift": "topic_shift",
    "topic shift": "topic_shift",
    "tr": "topic_return", "return": "topic_return", "topic_return": "topic_return",
    "topic return": "topic_return",
    "tc": "no_shift", "no_shift": "no_shift", "no shift": "no_shift", "noshift": "no_shift",
    "topic_continuation": "no_shift", "topic continuation": "no_shift",
}


def read_topiocqa_qrels(path) -> tuple[Qrels, QrelsCounts]:
    """TopiOCQA gold qrels (TREC lines or a JSON dict) with canonical ``conv_turn`` ids."""
    src, doc = _load(path)
    if doc is None:
        return qrels_from_text(src, src.name)
    if isinstance(doc, dict):
        return qrels_from_json_dict(doc, src.name)
    raise InputError(src.name, None, "not TopiOCQA qrels: expected TREC qrels lines "
                                     "(qid Q0 passage grade) or {qid: {passage: grade}}")


def read_turn_types(path) -> dict[str, str]:
    """``{conv_turn: type}`` from a file of turn ids grouped by type (``dev_type.json``).

    Types are ``first_turn``, ``topic_shift``, ``topic_return``, ``no_shift`` (the file's
    ``1st``, ``ts``, ``tr``, ``tc``). A turn in two groups, or an unknown group, is an error.
    """
    src, doc = _load(path)
    if not isinstance(doc, dict):
        raise InputError(src.name, None, "expected a JSON object {type: [turn ids]}")
    parse = _StyleCheck(src.name)
    out: dict[str, str] = {}
    group_of: dict[str, str] = {}
    for group, ids in doc.items():
        kind = _GROUP_TYPES.get(str(group).strip().lower())
        if kind is None:
            raise InputError(src.name, None, f"unknown turn type group {group!r} (known: 1st, "
                                             "ts, tr, tc and their spelled-out names)")
        if not isinstance(ids, list):
            raise InputError(src.name, None, f"group {group!r}: expected a list of turn ids")
        for qid in ids:
            canon = parse(str(qid))
            if canon in out:
                raise InputError(src.name, None, f"turn {qid!r} is in both group "
                                                 f"{group_of[canon]!r} and {group!r}")
            out[canon] = kind
            group_of[canon] = group
    return out


def turn_type_coverage(types: dict[str, str], qrels: Qrels) -> tuple[list[str], list[str]]:
    """(qrels turns without a type, typed turns not in the qrels), each sorted by (conv, turn)."""
    turns = set(qrels.qid.to_pylist())

    def order(q):
        conv, turn = q.split("_")
        return int(conv), int(turn)

    return (sorted(turns - types.keys(), key=order), sorted(types.keys() - turns, key=order))


command = make_convert_command("topiocqa", read_topiocqa_qrels)
