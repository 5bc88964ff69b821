"""TopiOCQA gold qrels and turn types, with canonical ``{conv}_{turn}`` ids.

* Gold qrels as published (``dev_gold.trec``: ``1-1 Q0 14979903 1``, 2,514 dev turns, one gold
  passage each), or the same as a JSON dict ``{qid: {passage: grade}}``.
* Turn types (``dev_type.json``: turn ids grouped by type) as a ``{conv_turn: type}`` mapping,
  kept as topic metadata for breakdowns. The published file has three groups, ``1st`` (205),
  ``tc`` (1,637) and ``ts`` (672), together exactly the 2,514 dev turns; it has no separate
  "topic return" group (topic returns are not told apart from topic shifts there).

* Conversations (:func:`read_topiocqa_turns`): the raw JSON (a list of turns with
  ``Conversation_no``, ``Turn_no``, ``Question``, ``Answer``, ``Topic``, ``Topic_section``,
  ``Context`` (flat list q1, a1, q2, a2, ... of the earlier turns), ``Rationale``, ``is_nq`` and
  ``Gold_passage {id, title, text}`` where present) or the DPR-style retriever files (a list of
  ``{conv_id, turn_id, question, answers, positive_ctxs: [{passage_id, ...}], ...}``, where
  ``question`` may hold the history joined with ``[SEP]``), detected from the first record.
  :func:`turns_to_topics` gives topics for a query field:

  ``raw``      the question (for a DPR file whose ``question`` holds ``[SEP]``, its last part);
  ``history``  context + question joined with ``" [SEP] "``, oldest first, as the TopiOCQA
               baselines do (for a DPR file, its ``question`` re-joined the same way);
  ``last-k``   the last k turns of context (2k items: k questions and their answers) + question,
               joined with ``" [SEP] "`` (k=0 is the raw question);

  or a supplied rewrite (:func:`rewrite_topics`,
  :func:`trecqr.datasets.rewrites.topics.read_rewrites` with the ``raw|drop|error`` policy for
  missing rewrites). Gold qrels from the turns:
  ``Gold_passage.id`` (raw JSON) or ``positive_ctxs[0].passage_id`` (DPR); turns without one
  are left out of the qrels and counted.

Passage ids are opaque strings, never renumbered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trecqr.errors import InputError, UsageError
from trecqr.formats.qrels import Qrels
from trecqr.datasets.qrecc.qrels import (
    QrelsCounts,
    qrels_from_pairs,
    read_json_or_text,
    TurnIdStyleCheck,
    qrels_from_json_dict,
    qrels_from_text,
)
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import Topics
from trecqr.datasets.turn_ids import detect_style, to_canonical

__all__ = [
    "QUERY_FIELDS",
    "SEP",
    "TURN_TYPES",
    "TopiocqaTurns",
    "Turn",
    "read_topiocqa_qrels",
    "read_topiocqa_turns",
    "read_turn_types",
    "rewrite_topics",
    "turn_type_coverage",
    "turns_to_qrels",
    "turns_to_topics",
    "with_turn_types",
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
    src, doc = read_json_or_text(path)
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
    src, doc = read_json_or_text(path)
    if not isinstance(doc, dict):
        raise InputError(src.name, None, "expected a JSON object {type: [turn ids]}")
    parse = TurnIdStyleCheck(src.name)
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


# --------------------------------------------------------------------------- conversations
#: The separator the TopiOCQA baselines put between history items.
SEP = " [SEP] "
QUERY_FIELDS = ("raw", "history", "last-k", "rewrite")


@dataclass(frozen=True)
class Turn:
    """One turn: canonical id, question, earlier items (q1, a1, q2, a2, ...), gold passage."""

    qid: str
    question: str
    context: tuple
    gold: str | None


@dataclass
class TopiocqaTurns:
    """Turns in file order; ``kind`` is ``raw`` (the dataset JSON) or ``dpr`` (retriever file)."""

    turns: list
    kind: str
    source: str
    extra: dict = field(default_factory=dict)  # qid -> metadata kept on topics (Topic, ...)

    def __len__(self) -> int:
        return len(self.turns)


def _number(rec: dict, name: str, i: int, source: str) -> int:
    value = rec.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise InputError(source, None, f"record {i}: {name} {value!r} is not a number")
    return int(value)


def _text_field(rec: dict, name: str, i: int, qid: str, source: str) -> str:
    value = rec.get(name)
    if not isinstance(value, str):
        raise InputError(source, None, f"record {i} (turn {qid}): {name} is "
                                       f"{'missing' if value is None else 'not text'}")
    return value


def _passage_id(value, what: str, i: int, qid: str, source: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(source, None, f"record {i} (turn {qid}): {what} {value!r} is not a "
                                       "passage id")
    value = str(value)
    if value != "".join(value.split()):
        raise InputError(source, None, f"record {i} (turn {qid}): {what} {value!r} contains "
                                       "white space")
    return value


def _raw_turn(rec: dict, i: int, source: str) -> tuple[Turn, dict]:
    qid = f"{_number(rec, 'Conversation_no', i, source)}_{_number(rec, 'Turn_no', i, source)}"
    question = _text_field(rec, "Question", i, qid, source)
    context = rec.get("Context", [])
    if not isinstance(context, list) or not all(isinstance(c, str) for c in context):
        raise InputError(source, None, f"record {i} (turn {qid}): Context is not a list of text")
    gold = rec.get("Gold_passage")
    gold_id = None
    if gold is not None and gold != {}:
        if not isinstance(gold, dict):
            raise InputError(source, None, f"record {i} (turn {qid}): Gold_passage is not "
                                           "{id, title, text}")
        gold_id = _passage_id(gold.get("id"), "Gold_passage.id", i, qid, source)
    meta = {k: rec[k] for k in ("Topic", "Topic_section", "is_nq") if k in rec}
    return Turn(qid, question, tuple(context), gold_id), meta


def _dpr_turn(rec: dict, i: int, source: str) -> Turn:
    qid = f"{_number(rec, 'conv_id', i, source)}_{_number(rec, 'turn_id', i, source)}"
    text = _text_field(rec, "question", i, qid, source)
    parts = [p.strip() for p in text.split("[SEP]")]
    positives = rec.get("positive_ctxs", [])
    if not isinstance(positives, list):
        raise InputError(source, None, f"record {i} (turn {qid}): positive_ctxs is not a list")
    gold = None
    if positives:
        first = positives[0]
        if not isinstance(first, dict):
            raise InputError(source, None, f"record {i} (turn {qid}): positive_ctxs[0] is not "
                                           "an object")
        gold = _passage_id(first.get("passage_id"), "positive_ctxs[0].passage_id", i, qid,
                           source)
    return Turn(qid, parts[-1], tuple(parts[:-1]), gold)


def read_topiocqa_turns(path) -> TopiocqaTurns:
    """TopiOCQA turns from the raw dataset JSON or a DPR-style retriever file (detected from the
    first record's fields); ids are canonical ``conv_turn``; a turn given twice is an error."""
    src, doc = read_json_or_text(path)
    if not isinstance(doc, list) or not doc or not all(isinstance(r, dict) for r in doc):
        raise InputError(src.name, None, "not TopiOCQA turns: expected a JSON list of turns "
                                         "(raw dataset JSON or DPR retriever file)")
    first = doc[0]
    if "Conversation_no" in first and "Question" in first:
        kind = "raw"
    elif "conv_id" in first and "question" in first:
        kind = "dpr"
    else:
        raise InputError(src.name, None, "not TopiOCQA turns: the first record has neither "
                                         "Conversation_no/Turn_no/Question (raw JSON) nor "
                                         "conv_id/turn_id/question (DPR file)")
    turns, extra, seen = [], {}, {}
    for i, rec in enumerate(doc):
        if kind == "raw":
            turn, meta = _raw_turn(rec, i, src.name)
            if meta:
                extra[turn.qid] = meta
        else:
            turn = _dpr_turn(rec, i, src.name)
        if turn.qid in seen:
            raise InputError(src.name, None, f"record {i}: turn {turn.qid} occurs twice "
                                             f"(first as record {seen[turn.qid]})")
        seen[turn.qid] = i
        turns.append(turn)
    return TopiocqaTurns(turns, kind, src.name, extra)


def _query(turn: Turn, query_field: str, k: int) -> str:
    if query_field == "raw":
        return turn.question
    if query_field == "history":
        return SEP.join(turn.context + (turn.question,))
    if query_field == "last-k":
        items = turn.context[len(turn.context) - 2 * k:] if k > 0 else ()
        return SEP.join(tuple(items) + (turn.question,))
    raise UsageError(f"unknown query field {query_field!r}: use raw, history or last-k "
                     "(a rewrite comes from a rewrites file)")


def turns_to_topics(turns: TopiocqaTurns, query_field: str = "raw", k: int = 3):
    """Topics (canonical ids, file order) for query field ``raw``, ``history`` or ``last-k``.

    The raw JSON's ``Topic``, ``Topic_section`` and ``is_nq`` are kept as topic metadata.
    """
    if query_field == "last-k" and (isinstance(k, bool) or not isinstance(k, int) or k < 0):
        raise UsageError(f"k must be a whole number >= 0, not {k!r}")
    qids = [t.qid for t in turns.turns]
    queries = [_query(t, query_field, k) for t in turns.turns]
    meta = {q: dict(m) for q, m in turns.extra.items()}
    return Topics(qids, queries, meta, turns.source)


def rewrite_topics(rewrites_path, turns: TopiocqaTurns | None = None, missing: str = "raw",
                   **options):
    """Topics from a rewrites file (JSONL/TSV, see read_rewrites) with canonical ids.

    With ``turns``, the turn set is the dataset's and a missing rewrite follows ``missing``
    (``raw``: the raw question; ``drop``; ``error``). Returns (Topics, RewriteReport).
    """
    raw = turns_to_topics(turns, "raw") if turns is not None else None
    result = read_rewrites(rewrites_path, missing=missing, raw=raw, **options)
    topics = result.topics
    if raw is not None:
        for q in topics.qids:  # keep the dataset's metadata (Topic, ...)
            if q in raw.metadata and q not in topics.metadata:
                topics.metadata[q] = dict(raw.metadata[q])
    elif len(topics) and detect_style(topics.qids, result.report.source) != "canonical":
        topics = topics.restyle("canonical")
    return topics, result.report


def turns_to_qrels(turns: TopiocqaTurns) -> tuple[Qrels, QrelsCounts]:
    """Gold qrels (grade 1) from the turns' gold passages; turns without one are counted."""
    qids = [t.qid for t in turns.turns if t.gold is not None]
    docs = [t.gold for t in turns.turns if t.gold is not None]
    return qrels_from_pairs(qids, docs, [1] * len(qids), len(turns), turns.source)


def with_turn_types(topics, types: dict[str, str]):
    """Topics with metadata ``turn_type`` from ``{conv_turn: type}`` (topics in any id style).

    Returns (topics, {type: count}, [qids without a type])."""
    canon = to_canonical(topics.qids, topics.source).to_pylist() if len(topics) else []
    meta = {q: dict(m) for q, m in topics.metadata.items()}
    counts: dict[str, int] = {}
    untyped = []
    for qid, c in zip(topics.qids, canon):
        kind = types.get(c)
        if kind is None:
            untyped.append(qid)
            continue
        meta.setdefault(qid, {})["turn_type"] = kind
        counts[kind] = counts.get(kind, 0) + 1
    return Topics(list(topics.qids), list(topics.queries), meta, topics.source), counts, untyped


def type_summary(counts: dict, untyped: list, total: int) -> str:
    parts = [f"{counts[t]} {t}" for t in TURN_TYPES if counts.get(t)]
    line = f"topiocqa: turn types for {total - len(untyped)} of {total} topics"
    if parts:
        line += ": " + ", ".join(parts)
    if untyped:
        line += f"; {len(untyped)} without a type (e.g. {untyped[0]})"
    return line
