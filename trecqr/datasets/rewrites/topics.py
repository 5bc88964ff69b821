"""Model rewrites in: JSONL from model inference, or TSV, as topics, with missing turns counted.

JSONL (read by :mod:`trecqr.datasets.rewrites.files`): one object per line. The id is the first of
``ID_FIELDS`` present (ConvSearch-R1 writes ``{qid, rewrite, reasoning_content}``), or a pair of
conversation/turn fields (``Conversation_no`` and ``Turn_no`` in QReCC-derived files, giving
``conv_turn``), or named with ``id_field`` (one name, or two as ``"conv,turn"``). The rewrite is
the first of ``REWRITE_FIELDS`` present, else the one field whose name ends in ``rewrite`` and is
not a human rewrite (``Truth_rewrite``, ``Rewrite``, ``manual_rewritten_utterance``, ...), or named
with ``rewrite_field``. A rewrite value may be a string, an OpenAI chat-completion object
(``choices[0].message.content``, as ``GPT_rewrite`` in InfoCQR's dev-sampled2k_chatgpt_ICL.jsonl
stores it) or a list of strings (the first is taken). Rewrites are stripped of surrounding white
space.

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
:mod:`trecqr.protocols.turn_policy` for which paper uses which policy.

Whatever the policy, :class:`RewriteReport` counts every case, so a paper can say "2,000 turns,
1,993 rewritten, 7 fell back to the raw question".

When ``raw`` is given and both id lists are conversational turn ids in different styles
(``QReCC-Test_1_2`` in the file, ``1_2`` in the raw topics), turns are matched by (conversation,
turn) and written in the raw topics' style, unless ``qid_style`` asks for another.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trecqr.errors import InputError, TrecqrError, UsageError, hinted
from trecqr.datasets.rewrites.files import Parsed, parse_rewrites  # the file reader
from trecqr.datasets.topics import Topics
from trecqr.datasets.turn_ids import convert_ids, parse_ids, split_id

# ``missing=``: what becomes of a turn whose rewrite is unusable (the module docstring)
POLICIES = ("raw", "drop", "human", "empty", "error")


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
            n = len(self.from_other)
            turns, their = ("turn", "its") if n == 1 else ("turns", "their")
            parts.append(f"{n} {turns} with candidate {self.candidate} empty, null or "
                         f"unreadable took {their} first usable candidate")
        if self.policy != "raw" or self.dropped:
            parts.append(f"policy --missing {self.policy}: {self.changed} turns changed"
                         + (f", {self.dropped} left the average" if self.dropped else ""))
        return "; ".join(parts)


@dataclass
class Rewrites:
    topics: Topics
    report: RewriteReport

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

def check_policy(missing: str) -> None:
    if missing not in POLICIES:
        raise UsageError(f"unknown missing-rewrite policy {missing!r}: use "
                         f"{', '.join(POLICIES)}")


def read_rewrites(path, *, format: str | None = None, id_field=None, rewrite_field=None,
                  missing: str = "raw", raw=None, qid_style: str | None = None,
                  human=None, options: dict | None = None) -> Rewrites:
    """Read model rewrites (JSONL or TSV) into topics, applying the missing-rewrite policy; a
    record with several candidates gives its first usable one
    (trecqr.datasets.rewrites.candidates reads them all). human: the human rewrites for
    ``missing="human"`` (Topics or {qid: text}; default: each record's own human-rewrite field).
    options: see :func:`parse_rewrites`."""
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
