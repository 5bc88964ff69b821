"""Model rewrites in: JSONL from model inference, or TSV, as topics, with missing turns counted.

JSONL: one object per line. The id is the first of ``ID_FIELDS`` present (ConvSearch-R1 writes
``{qid, rewrite, reasoning_content}``), or a pair of conversation/turn fields (``Conversation_no``
and ``Turn_no`` in QReCC-derived files, giving ``conv_turn``), or named with ``id_field`` (one
name, or two as ``"conv,turn"``). The rewrite is the first of ``REWRITE_FIELDS`` present, else
the one field whose name ends in ``rewrite`` and is not a human rewrite (``Truth_rewrite``,
``Rewrite``, ``manual_rewritten_utterance``, ...), or named with ``rewrite_field``. A rewrite
value may be a string, an OpenAI chat-completion object (``choices[0].message.content``, as
``GPT_rewrite`` in InfoCQR's dev-sampled2k_chatgpt_ICL.jsonl stores it) or a list of strings
(the first is taken). Rewrites are stripped of surrounding white space.

TSV: ``qid<TAB>rewrite`` lines; a line with only a qid (or an empty rewrite) is a missing rewrite.

A turn's rewrite is *missing* when its record has no rewrite field, a null, or an empty
(white-space only) rewrite, or, when the caller passes the raw questions (``raw=``, a Topics or
``{qid: question}``), when the raw turn does not appear in the file at all. The policy
``missing=`` decides what happens to those turns:

``raw``   the turn keeps its raw question (needs ``raw``; the default),
``drop``  the turn is left out (it will then count as a zero only if the evaluation's topic set
          comes from the qrels, e.g. ``trecqr eval -c``),
``human`` the turn takes its human rewrite (``human=``, else the record's own ``Truth_rewrite``),
``empty`` the turn keeps an empty query (an empty ranking, which scores 0),
``error`` InputError naming the count and the first missing turns.

A rewrite that cannot be read as text (a chat-completion object without content) is missing
too, and counted as unparsable; under ``error`` it is an error. See
:mod:`trecqr.adapters.turn_policy` for which paper uses which policy.

Whatever the policy, :class:`RewriteReport` counts every case, so a paper can say "2,000 turns,
1,993 rewritten, 7 fell back to the raw question".

When ``raw`` is given and both id lists are conversational turn ids in different styles
(``QReCC-Test_1_2`` in the file, ``1_2`` in the raw topics), turns are matched by (conversation,
turn) and written in the raw topics' style, unless ``qid_style`` asks for another.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from ..errors import InputError, TrecqrError, UsageError, hinted
from .fields import check_named_fields, field_list, name_it
from .topics import Topics, read_text_file, id_getter, json_records, parse_tsv, record_id
from .turn_ids import convert_ids, parse_ids, split_id
from .turn_policy import POLICIES, record_human
ID_FIELDS = ("qid", "sample_id", "query_id", "id", "turn_key")
REWRITE_FIELDS = ("rewrite", "rewritten_query", "rewritten", "rewrite_query", "model_rewrite",
                  "predicted_rewrite", "prediction", "GPT_rewrite", "output", "generated_query",
                  "automatic_rewritten_utterance")
HUMAN_REWRITE_FIELDS = ("Truth_rewrite", "Rewrite", "manual_rewritten_utterance",
                        "human_rewrite", "gold_rewrite", "oracle_rewrite")


@dataclass
class RewriteReport:
    """What happened to every turn."""

    source: str
    records: int = 0            # records (lines) read from the file
    rewritten: int = 0          # turns with a non-empty rewrite
    empty: list = field(default_factory=list)     # in the file, rewrite missing/null/empty
    absent: list = field(default_factory=list)    # in raw, not in the file
    extra: list = field(default_factory=list)     # in the file, not in raw (kept)
    policy: str = "raw"
    filled_raw: int = 0         # missing turns given their raw question
    dropped: int = 0            # missing turns left out
    filled_human: int = 0       # missing turns given their human rewrite
    kept_empty: int = 0         # missing turns kept with an empty query
    unparsable: list = field(default_factory=list)  # rewrites not readable as text
    id_field: str | None = None
    rewrite_field: str | None = None
    # candidates: turns whose candidate (this one) was unusable and took the turn's first
    # usable candidate instead (they are not missing: --missing is for turns with none)
    from_other: list = field(default_factory=list)
    candidate: int = 1

    @property
    def missing(self) -> list:
        return self.empty + self.absent

    @property
    def changed(self) -> int:
        return self.filled_raw + self.dropped + self.filled_human + self.kept_empty

    def summary(self) -> str:
        parts = [f"{self.source}: {self.records} records, {self.rewritten} rewrites"]
        if self.empty:
            parts.append(f"{len(self.empty)} empty or missing rewrites")
        if self.absent:
            parts.append(f"{len(self.absent)} raw turns absent from the file")
        if self.extra:
            parts.append(f"{len(self.extra)} turns not in the raw topics (kept)")
        if self.filled_raw:
            parts.append(f"{self.filled_raw} fell back to the raw question")
        if self.unparsable:
            parts.append(f"{len(self.unparsable)} of them not readable as text")
        if self.filled_human:
            parts.append(f"{self.filled_human} fell back to the human rewrite")
        if self.kept_empty:
            parts.append(f"{self.kept_empty} kept with an empty query (they score 0)")
        if self.dropped:
            parts.append(f"{self.dropped} dropped")
        if self.from_other:
            parts.append(f"{len(self.from_other)} turns with candidate {self.candidate} empty, "
                         "null or unreadable took their first usable candidate")
        if self.policy != "raw" or self.dropped:
            parts.append(f"policy --missing {self.policy}: {self.changed} turns changed"
                         + (f", {self.dropped} left the average" if self.dropped else ""))
        return "; ".join(parts)


@dataclass
class Rewrites:
    topics: Topics
    report: RewriteReport


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


def _jsonl(name, text, id_field, rewrite_field, report, humans, kinds, options=None):
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
            if id_field is None:
                f = next((f for f in ID_FIELDS if f in rec), None)
                get_id, report.id_field, _ = id_getter(name, rec, f, "id_field", options)
            else:
                get_id, report.id_field, _ = id_getter(name, rec, id_field, "id_field", options)
            if isinstance(rewrite_field, (list, tuple)):
                fields = list(rewrite_field) or [_rewrite_field(name, rec, options)]
            else:
                fields = [rewrite_field or _rewrite_field(name, rec, options)]
            report.rewrite_field = ",".join(fields)
        qid = record_id(name, lineno, get_id, rec, seen)
        qids.append(qid)
        values.append([c for f in fields for c in _candidates(rec, f, name, lineno, kinds)])
        humans.setdefault(qid, record_human(rec))
        lines.append(lineno)
    return qids, values, lines


def _tsv(name, text, report, kinds):
    topics = parse_tsv(name, text, allow_empty=True)
    report.id_field, report.rewrite_field = "column 1", "column 2"
    values = [[q.strip()] for q in topics.queries]
    kinds.update("string" if v[0] else "empty string" for v in values)
    return topics.qids, values, [None] * len(topics)


def match_keys(file_qids, raw_qids, source):
    """Keys to match file ids with raw ids: canonical (conv, turn) when both lists are turn ids
    of different styles, else the ids themselves. Returns (file keys, raw keys, raw style)."""
    try:
        f = parse_ids(file_qids, source)
        r = parse_ids(raw_qids, "<raw topics>")
    except TrecqrError:
        return list(file_qids), list(raw_qids), None
    if f.style == r.style or f.style is None or r.style is None:
        return list(file_qids), list(raw_qids), None
    return f.to_style("canonical").to_pylist(), r.to_style("canonical").to_pylist(), r.style


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
    report = RewriteReport(name)
    humans: dict = {}
    kinds: Counter = Counter()
    if fmt == "jsonl":
        qids, values, lines = _jsonl(name, text, id_field, rewrite_field, report, humans,
                                     kinds, options)
    else:
        qids, values, lines = _tsv(name, text, report, kinds)
    return Parsed(name, qids, values, lines, humans, report.id_field, report.rewrite_field,
                  kinds)


def check_policy(missing: str) -> None:
    if missing not in POLICIES:
        raise UsageError(f"unknown missing-rewrite policy {missing!r}: use "
                         f"{', '.join(POLICIES)}")


def read_rewrites(path, *, format: str | None = None, id_field=None, rewrite_field=None,
                  missing: str = "raw", raw=None, qid_style: str | None = None,
                  human=None, options: dict | None = None) -> Rewrites:
    """Read model rewrites (JSONL or TSV) into topics, applying the missing-rewrite policy; a
    record with several candidates gives its first usable one (trecqr.adapters.candidates reads
    them all). human: the human rewrites for ``missing="human"`` (Topics or {qid: text};
    default: each record's own human-rewrite field). options: see :func:`parse_rewrites`."""
    check_policy(missing)
    parsed = parse_rewrites(path, format=format, id_field=id_field, rewrite_field=rewrite_field,
                            options=options)
    return candidate_rewrites(parsed, 0, missing=missing, raw=raw, qid_style=qid_style,
                              human=human)


def candidate_rewrites(parsed: Parsed, index: int, *, missing: str = "raw", raw=None,
                       qid_style: str | None = None, human=None) -> Rewrites:
    """Candidate ``index`` (0-based) of every record as topics. A turn whose candidate is
    unusable (absent, null, empty or unreadable) but that has other usable candidates takes its
    first usable one (counted in ``report.from_other``); the missing-rewrite policy decides only
    for the turns without any usable candidate. A file none of whose records has a usable
    rewrite is refused (every turn would take the policy's query: a silent copy of it)."""
    name, qids, lines, humans = parsed.name, parsed.qids, parsed.lines, parsed.humans
    report = RewriteReport(name, policy=missing, id_field=parsed.id_field,
                           rewrite_field=parsed.rewrite_field, candidate=index + 1)
    if qids and not any(_usable(c) for cands in parsed.values for c in cands):
        kinds = ", ".join(f"{v} {k}" for k, v in parsed.kinds.most_common())
        raise UsageError(f"{name}: none of the {len(qids)} records has a usable rewrite in "
                         f"{parsed.rewrite_field} ({kinds})")
    values = []
    for qid, cands in zip(qids, parsed.values):
        value = cands[index] if index < len(cands) else None
        if not _usable(value):
            other = next((c for c in cands if _usable(c)), None)
            if other is not None:  # the turn keeps its other candidates
                report.from_other.append(qid)
                value = other
            elif isinstance(value, InputError):
                if missing == "error":
                    raise value
                report.unparsable.append(qid)
                value = None
        values.append(value)
    report.records = len(qids)
    if isinstance(raw, Topics):
        raw_map, raw_order = raw.as_dict(), list(raw.qids)
    elif raw is not None:
        raw_map = {str(k): v for k, v in dict(raw).items()}
        raw_order = list(raw_map)
    else:
        raw_map, raw_order = {}, []

    out_qids = list(qids)
    if raw is not None:
        fkeys, rkeys, raw_style = match_keys(qids, raw_order, name)
        raw_by_key = dict(zip(rkeys, raw_order))
        value_by_key = dict(zip(fkeys, values))
        line_by_key = dict(zip(fkeys, lines))
        order_keys = list(rkeys) + [k for k in fkeys if k not in raw_by_key]
        report.extra = [q for k, q in zip(fkeys, qids) if k not in raw_by_key]
        report.absent = [raw_by_key[k] for k in rkeys if k not in value_by_key]
        if raw_style is not None:  # file ids in another style: write them in raw's style
            extra_ids = convert_ids(report.extra, raw_style).to_pylist() if report.extra else []
            names = dict(zip([k for k in fkeys if k not in raw_by_key], extra_ids))
        else:
            names = {k: q for k, q in zip(fkeys, qids) if k not in raw_by_key}
        out_qids = [raw_by_key.get(k, names.get(k)) for k in order_keys]
        values = [value_by_key.get(k) for k in order_keys]
        lines = [line_by_key.get(k) for k in order_keys]
        in_file = [k in value_by_key for k in order_keys]
    else:
        in_file = [True] * len(qids)

    keep_q, keep_t = [], []
    first_missing_line = None
    table = _human_table(human, humans) if missing == "human" else {}
    for qid, value, line, present in zip(out_qids, values, lines, in_file):
        if value:  # non-empty rewrite
            report.rewritten += 1
            keep_q.append(qid)
            keep_t.append(value)
            continue
        if present:
            report.empty.append(qid)
            if first_missing_line is None:
                first_missing_line = line
        if missing == "drop":
            report.dropped += 1
        elif missing in ("human", "empty"):
            text = _human_text(table, qid, line, name) if missing == "human" else ""
            report.filled_human += missing == "human"
            report.kept_empty += missing == "empty"
            keep_q.append(qid)
            keep_t.append(text)
        elif missing == "raw":
            if qid not in raw_map:
                if raw is None:
                    raise hinted(UsageError(
                        f"{name}: turn {qid!r} has no rewrite and no raw question was given"),
                        "give the raw questions (raw=) or another policy (missing='drop', "
                        "'empty' or 'error')",
                        "give the raw questions (--raw FILE) or another policy (--missing drop, "
                        "empty or error)")
                raise InputError(name, line, f"turn {qid!r} has no rewrite and is not in the raw "
                                 "topics")
            report.filled_raw += 1
            keep_q.append(qid)
            keep_t.append(raw_map[qid])
    if missing == "error" and report.missing:
        shown = ", ".join(repr(q) for q in report.missing[:5])
        more = f" (and {len(report.missing) - 5} more)" if len(report.missing) > 5 else ""
        parts = []
        if report.empty:
            parts.append(f"{len(report.empty)} empty or missing rewrites")
        if report.absent:
            parts.append(f"{len(report.absent)} raw turns absent from the file")
        raise InputError(name, first_missing_line if report.empty else None,
                         f"{' and '.join(parts)}: {shown}{more}")
    raw_meta = raw.metadata if isinstance(raw, Topics) else {}
    meta = {q: dict(raw_meta[q]) for q in keep_q if q in raw_meta}
    topics = Topics(keep_q, keep_t, meta, name)
    if qid_style is not None:
        topics = topics.restyle(qid_style)
    return Rewrites(topics, report)


def _usable(value) -> bool:
    """A candidate that can be searched: non-empty text."""
    return isinstance(value, str) and bool(value)


def _human_table(human, humans) -> dict:
    """{qid or (conv, turn): human rewrite} for missing='human': the human topics given, else
    the records' own human-rewrite fields; turn ids also by (conversation, turn), so human topics
    in another id style still match."""
    table = humans if human is None else \
        (human.as_dict() if isinstance(human, Topics) else dict(human))
    out = {}
    for k, v in table.items():
        if not v:
            continue
        out[k] = v
        try:
            out.setdefault(tuple(split_id(k)[:2]), v)
        except TrecqrError:
            pass
    return out


def _human_text(table, qid, line, name) -> str:
    """The human rewrite of a turn without a usable model rewrite (missing='human')."""
    text = table.get(qid)
    if not text:
        try:
            text = table.get(tuple(split_id(qid)[:2]))
        except TrecqrError:
            text = None
    if not text:
        raise hinted(InputError(name, line, f"turn {qid!r} has no rewrite and no human rewrite"),
                     "missing='human' takes the human rewrites given (human=), else the "
                     "records' own Truth_rewrite",
                     "--missing human takes the human rewrites given (convert rewrites --human "
                     "FILE, cqr --dataset), else the records' own Truth_rewrite")
    return text
