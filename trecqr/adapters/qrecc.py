"""QReCC qrels (and the SCAI-QReCC-21 ground truth) to TREC qrels with canonical turn ids.

Published forms read (detected from the content, not the file name):

* JSON qrels ``{qid: {passage_url: 1}}`` (``qrels_test.json``, ``qrels_dev.json``), where
  ``{"": 1}`` marks a turn without a gold passage;
* TSV (or any white-space separated TREC) qrels ``qid 0 docno grade`` (``qrecc_qrel.tsv``, qids
  ``QReCC-Test_1_2``, passage ids integers from one paper's renumbering);
* the SCAI-QReCC-21 ground truth: a JSON list of turns with ``Conversation_no``, ``Turn_no`` and
  ``Truth_passages`` (an empty list marks a turn without gold).

Turns without a gold passage are left out of the qrels and counted (:class:`QrelsCounts`).
Every turn id becomes the canonical ``{conv}_{turn}``; passage ids are kept as opaque strings,
never renumbered. The QReCC test split gives 16,451 turns, 8,209 with gold and 10,507
(turn, passage) pairs from either qrels file.

Conversations (:func:`read_qrecc_turns`: the original QReCC JSON, SCAI turn files, InfoCQR's
JSONL) become topics with :func:`qrecc_topics` (query field raw, human, context joined by
``CONTEXT_SEP`` = ``" [SEP] "``, or a supplied rewrite); ``trecqr convert qrecc`` does both.

The helpers shared with :mod:`trecqr.adapters.topiocqa` (turn-id parsing, format detection,
the counts record) live here too, public, so that it imports them by name.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InputError, UsageError
from ..formats.qrels import Qrels, read_qrels, write_qrels
from ..formats.textio import read_source
from .rewrites import POLICIES, read_rewrites
from .topics import json_records, Topics
from .turn_ids import split_id

__all__ = [
    "QrelsCounts",
    "canonical_turn_id",
    "CONTEXT_SEP",
    "QreccTurn",
    "TurnCounts",
    "qrecc_topics",
    "read_qrecc_qrels",
    "read_qrecc_turns",
    "read_scai_rewrites",
    "turns_qrels",
    "write_turn_qrels",
]

# --------------------------------------------------------------------------- turn ids
def canonical_turn_id(qid: str, source: str = "<turn id>", line: int | None = None) -> str:
    """``{conv}_{turn}`` for any recognised style (``QReCC-Test_1_2``, ``1-2``, ...)."""
    return _parse_turn_id(qid, source, line)[0]


def _parse_turn_id(qid: str, source: str, line: int | None) -> tuple[str, str]:
    """(canonical id, style), with the styles of trecqr.adapters.turn_ids."""
    try:
        conv, turn, style = split_id(qid)
    except UsageError:
        raise InputError(source, line, f"turn id {qid!r} is not <conv>_<turn> in a known style "
                                       "(e.g. 1_2, 1-2, QReCC-Test_1_2, topiocqa-dev_1_1)") from None
    return f"{conv}_{turn}", style


class TurnIdStyleCheck:
    """Parse many turn ids; all of one input must share one style (no silent mixing)."""

    def __init__(self, source: str):
        self.source = source
        self.first: tuple[str, str] | None = None  # (style, example qid)

    def __call__(self, qid: str, line: int | None = None) -> str:
        canon, style = _parse_turn_id(qid, self.source, line)
        if self.first is None:
            self.first = (style, qid)
        elif style != self.first[0]:
            raise InputError(self.source, line,
                             f"turn id {qid!r} (style {style}) mixes with {self.first[1]!r} "
                             f"(style {self.first[0]}); one file must use one id style")
        return canon


# --------------------------------------------------------------------------- counts
@dataclass(frozen=True)
class QrelsCounts:
    """What a conversion read and kept.

    turns_read: turns in the input (for TREC/TSV qrels, the distinct qids: such files cannot
    list turns without gold); turns_with_gold: turns with at least one passage of grade > 0;
    pairs: (turn, passage) rows in the qrels.
    """

    turns_read: int
    turns_with_gold: int
    pairs: int

    @property
    def turns_without_gold(self) -> int:
        return self.turns_read - self.turns_with_gold

    def summary(self, dataset: str) -> str:
        return (f"{dataset}: {self.turns_read} turns read, {self.turns_with_gold} with gold, "
                f"{self.turns_without_gold} without gold left out; {self.pairs} "
                "(turn, passage) pairs written")


# --------------------------------------------------------------------------- reading
def read_json_or_text(path):
    """(Source, parsed JSON or None): the JSON document when the input starts with { or [."""
    src = read_source(path)
    head = src.data.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            return src, json.loads(src.data)
        except (ValueError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            raise InputError(src.name, line, f"invalid JSON: {getattr(exc, 'msg', exc)}") from None
    return src, None


def qrels_from_pairs(qids: list, docnos: list, grades: list, turns_read: int,
                source: str) -> tuple[Qrels, QrelsCounts]:
    qrels = Qrels(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
                  np.asarray(grades, dtype=np.int64), source)
    _check_pairs(qrels)
    return qrels, _counts(qrels, turns_read)


def _counts(qrels: Qrels, turns_read: int) -> QrelsCounts:
    gold = pc.filter(qrels.qid, pa.array(qrels.grade > 0))
    return QrelsCounts(turns_read, len(pc.unique(gold)), len(qrels))


def _check_pairs(qrels: Qrels, locate=None) -> None:
    """No white space in a passage id (a TREC line would break) and no duplicate pair."""
    if len(qrels) == 0:
        return
    space = pc.match_substring_regex(qrels.docno, r"\s")
    if pc.any(space).as_py():
        i = int(np.flatnonzero(space.to_numpy(zero_copy_only=False))[0])
        raise InputError(qrels.source, None, f"turn {qrels.qid[i].as_py()}: passage id "
                         f"{qrels.docno[i].as_py()!r} contains white space")
    key = pc.binary_join_element_wise(qrels.qid, qrels.docno, "\x00")
    if len(pc.unique(key)) != len(key):
        codes = key.dictionary_encode().indices.to_numpy()
        first = np.zeros(len(codes), dtype=bool)
        first[np.unique(codes, return_index=True)[1]] = True
        i = int(np.flatnonzero(~first)[0])
        qid, doc = qrels.qid[i].as_py(), qrels.docno[i].as_py()
        line = locate(i) if locate else None
        raise InputError(qrels.source, line, f"turn {qid} lists passage {doc!r} twice")


def qrels_from_json_dict(doc: dict, source: str) -> tuple[Qrels, QrelsCounts]:
    """``{qid: {passage: grade}}``; an empty passage id (``{"": 1}``) marks a turn without gold."""
    parse = TurnIdStyleCheck(source)
    seen: dict[str, str] = {}
    qids, docnos, grades = [], [], []
    for qid, docs in doc.items():
        if not isinstance(docs, dict):
            raise InputError(source, None, f"turn {qid!r}: expected a dict of passage -> grade "
                                           "({qid: {passage: grade}})")
        canon = parse(str(qid))
        if canon in seen:
            raise InputError(source, None, f"turn ids {seen[canon]!r} and {qid!r} are the same "
                                           f"turn {canon}")
        seen[canon] = qid
        for passage, grade in docs.items():
            if passage == "":
                continue  # QReCC's marker of a turn without gold passage
            if isinstance(grade, bool) or not isinstance(grade, int):
                raise InputError(source, None, f"turn {qid!r} passage {passage!r}: grade "
                                               f"{grade!r} is not an integer")
            qids.append(canon)
            docnos.append(passage)
            grades.append(grade)
    return qrels_from_pairs(qids, docnos, grades, len(doc), source)


def _scai_records(doc: list, source: str) -> tuple[Qrels, QrelsCounts]:
    """SCAI-QReCC-21 turns: ``Conversation_no``, ``Turn_no``, ``Truth_passages`` (a list)."""
    seen = set()
    qids, docnos = [], []
    for i, rec in enumerate(doc):
        canon = _scai_turn(rec, i, source)
        if canon in seen:
            raise InputError(source, None, f"record {i}: turn {canon} occurs twice")
        seen.add(canon)
        passages = rec.get("Truth_passages")
        if not isinstance(passages, list):
            raise InputError(source, None, f"record {i} (turn {canon}): no Truth_passages list")
        for passage in passages:
            if not isinstance(passage, str):
                raise InputError(source, None, f"record {i} (turn {canon}): passage id "
                                               f"{passage!r} is not a string")
            if passage:
                qids.append(canon)
                docnos.append(passage)
    return qrels_from_pairs(qids, docnos, [1] * len(qids), len(doc), source)


def _scai_turn(rec, i: int, source: str) -> str:
    if not isinstance(rec, dict):
        raise InputError(source, None, f"record {i}: expected a JSON object")
    conv, turn = rec.get("Conversation_no"), rec.get("Turn_no")
    for name, value in (("Conversation_no", conv), ("Turn_no", turn)):
        if isinstance(value, bool) or not isinstance(value, (int, str)) or \
                not str(value).isdigit():
            raise InputError(source, None, f"record {i}: {name} {value!r} is not a number")
    return f"{int(conv)}_{int(turn)}"


def qrels_from_text(src, source: str) -> tuple[Qrels, QrelsCounts]:
    """TREC/TSV qrels ``qid iter docno grade``: qids to canonical ids, passage ids untouched."""
    stream = io.BytesIO(src.data)
    stream.name = source
    raw = read_qrels(stream)
    raw.source = source
    parse = TurnIdStyleCheck(source)
    uniq = pc.unique(raw.qid)
    canon_of = {}
    for qid in uniq.to_pylist():
        try:
            canon = parse(qid)
        except InputError as exc:
            lines = raw.locate(lambda f, q=qid: f[0] == q)
            raise InputError(source, lines[0] if lines else None, exc.message) from None
        canon_of[qid] = canon
    if len(set(canon_of.values())) != len(canon_of):
        by: dict[str, str] = {}
        for qid, canon in canon_of.items():
            if canon in by:
                raise InputError(source, None, f"turn ids {by[canon]!r} and {qid!r} are the "
                                               f"same turn {canon}")
            by[canon] = qid
    mapped = pc.take(pa.array([canon_of[q] for q in uniq.to_pylist()], pa.string()),
                     pc.index_in(raw.qid, value_set=uniq))
    qrels = Qrels(mapped, raw.docno, raw.grade, source)

    def locate(i: int):
        q, d = raw.qid[i].as_py(), raw.docno[i].as_py()
        lines = raw.locate(lambda f: f[0] == q and f[2] == d)
        return lines[1] if len(lines) > 1 else None

    _check_pairs(qrels, locate)
    return qrels, _counts(qrels, len(uniq))


def read_qrecc_qrels(path) -> tuple[Qrels, QrelsCounts]:
    """QReCC qrels in any published form (JSON dict, TSV/TREC, SCAI ground truth), canonical ids.

    Turns without gold passage are left out of the qrels and counted in the returned record.
    """
    src, doc = read_json_or_text(path)
    if doc is None:
        return qrels_from_text(src, src.name)
    if isinstance(doc, dict):
        return qrels_from_json_dict(doc, src.name)
    if isinstance(doc, list) and all(isinstance(r, dict) for r in doc) and doc and \
            "Truth_passages" in doc[0]:
        return _scai_records(doc, src.name)
    raise InputError(src.name, None, "not QReCC qrels: expected {qid: {passage: grade}}, "
                                     "a list of turns with Truth_passages, or TREC/TSV lines")


def read_scai_rewrites(path, field: str = "Truth_rewrite") -> dict[str, str]:
    """``{conv_turn: text}`` from a SCAI-QReCC-21 turn file (``Truth_rewrite``,
    ``Transformer_rewrite``, ``Model_rewrite``, ...); turns without the field are left out."""
    src, doc = read_json_or_text(path)
    if not isinstance(doc, list):
        raise InputError(src.name, None, "expected a JSON list of SCAI turns")
    out = {}
    for i, rec in enumerate(doc):
        canon = _scai_turn(rec, i, src.name)
        value = rec.get(field)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(src.name, None, f"record {i} (turn {canon}): {field} is not text")
        out[canon] = value
    return out


def integer_passage_ids(qrels: Qrels) -> bool:
    """True when every passage id is all digits (qrecc_qrel.tsv's renumbering)."""
    return len(qrels) > 0 and pc.all(pc.match_substring_regex(qrels.docno, r"^[0-9]+$")).as_py()


# --------------------------------------------------------------------------- writing
def write_turn_qrels(qrels: Qrels, path) -> None:
    """TREC qrels ``conv_turn 0 passage grade``, atomically."""
    write_qrels(qrels, path)


def qrecc_note(qrels: Qrels) -> str | None:
    if integer_passage_ids(qrels):
        return ("trecqr: note: passage ids are integers (one paper's renumbering of QReCC); "
                "they will not match runs with URL passage ids")
    return None


# --------------------------------------------------------------------------- conversations
#: Separator between the turns of ``query_field="context"``: the earlier questions and answers
#: in dialogue order (oldest first), then the current question, joined by this string.
CONTEXT_SEP = " [SEP] "
QUERY_FIELDS = ("raw", "human", "context", "rewrite")


@dataclass
class QreccTurn:
    """One QReCC turn, whichever published file it came from.

    question: ``Question`` (None in SCAI ground-truth files, which have no question);
    human: the human rewrite (``Rewrite`` in the original JSON, ``Truth_rewrite`` in SCAI files
    and InfoCQR's JSONL; None when absent); context: the earlier questions and answers
    (``Context``, or ``NewContext`` in InfoCQR's JSONL; [] when absent); passages: the gold
    passage ids (``Truth_passages``; None when the file has no such field); line: the JSONL line
    (None for a JSON list).
    """

    qid: str
    question: str | None
    human: str | None
    context: list
    passages: list | None
    conversation_source: str | None = None
    line: int | None = None


@dataclass
class TurnCounts:
    """What a turns-to-topics conversion read and wrote."""

    turns_read: int
    turns_without_rewrite: int  # query field human/rewrite: missing or empty rewrite
    topics_written: int
    filled_raw: int = 0          # of those, given the raw question (missing="raw")
    dropped: int = 0             # of those, left out (missing="drop")

    def summary(self, dataset: str = "qrecc") -> str:
        text = (f"{dataset}: {self.turns_read} turns read, {self.turns_without_rewrite} without "
                f"rewrite")
        if self.filled_raw:
            text += f" ({self.filled_raw} fell back to the raw question)"
        if self.dropped:
            text += f" ({self.dropped} dropped)"
        return text + f"; {self.topics_written} topics written"


def turn_records(path):
    """(source name, [(line or None, record dict)], raw records) from a JSON list or JSONL."""
    src = read_source(path)
    head = src.data.lstrip()[:1]
    if head == b"[":
        src, doc = read_json_or_text(path)
        out = []
        for i, rec in enumerate(doc):
            if not isinstance(rec, dict):
                raise InputError(src.name, None, f"record {i}: expected a JSON object")
            out.append((None, rec))
        return src.name, out
    if head == b"{":
        try:
            text = src.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(src.name, None, f"not UTF-8: {exc}") from None
        return src.name, list(json_records(src.name, text))
    raise InputError(src.name, None, "not a QReCC turns file: expected a JSON list of turns or "
                                     "JSONL (one turn object per line)")


def _text_field(rec, name, where, source, line):
    value = rec.get(name)
    if value is None or isinstance(value, str):
        return value
    raise InputError(source, line, f"{where}: {name} is not text")


def read_qrecc_turns(path) -> list:
    """QReCC turns (list of :class:`QreccTurn`) from the original QReCC JSON (``Context,
    Question, Rewrite, Answer, Answer_URL, Conversation_no, Turn_no, Conversation_source``), a
    SCAI-QReCC-21 turn file (``Truth_rewrite, Truth_passages, ...``) or InfoCQR's JSONL
    (``NewContext, Question, Truth_rewrite, Truth_passages, GPT_rewrite, ...``); detected
    from the content. Turn ids become canonical ``conv_turn``; a turn listed twice is an error."""
    name, records = turn_records(path)
    if not records:
        raise InputError(name, None, "no turns")
    turns, seen = [], {}
    for i, (line, rec) in enumerate(records):
        canon = scai_turn_at(rec, i, name, line)
        where = f"turn {canon}"
        if canon in seen:
            raise InputError(name, line, f"{where} occurs twice (first as record {seen[canon]})")
        seen[canon] = i
        question = _text_field(rec, "Question", where, name, line)
        human_field = "Rewrite" if "Rewrite" in rec else "Truth_rewrite"
        human = _text_field(rec, human_field, where, name, line)
        ctx_field = "Context" if rec.get("Context") is not None else "NewContext"
        context = rec.get(ctx_field)
        if context is None:
            context = []
        if not isinstance(context, list) or not all(isinstance(c, str) for c in context):
            raise InputError(name, line, f"{where}: {ctx_field} is not a list of texts")
        passages = rec.get("Truth_passages")
        if passages is not None and (not isinstance(passages, list) or
                                     not all(isinstance(p, str) for p in passages)):
            raise InputError(name, line, f"{where}: Truth_passages is not a list of passage ids")
        source = rec.get("Conversation_source")
        turns.append(QreccTurn(canon, question, human, list(context),
                               None if passages is None else [p for p in passages if p],
                               source if isinstance(source, str) else None, line))
    return turns


def scai_turn_at(rec, i, source, line):
    try:
        return _scai_turn(rec, i, source)
    except InputError as exc:
        raise InputError(source, line, exc.message) from None


def turns_qrels(turns: list, source: str = "<turns>") -> tuple[Qrels, QrelsCounts]:
    """Qrels from the ``Truth_passages`` of turns (SCAI files, InfoCQR's JSONL)."""
    if any(t.passages is None for t in turns):
        raise InputError(source, None, "the turns carry no Truth_passages: give the qrels file "
                                       "(--qrels)")
    qids = [t.qid for t in turns for _ in t.passages]
    docnos = [p for t in turns for p in t.passages]
    return qrels_from_pairs(qids, docnos, [1] * len(qids), len(turns), source)


def _need_question(turn: QreccTurn, source: str) -> str:
    if turn.question is None:
        raise InputError(source, turn.line, f"turn {turn.qid} has no Question (SCAI "
                                            "ground-truth files have none): use the human "
                                            "rewrite or a supplied rewrite")
    return turn.question


def qrecc_topics(turns: list, query_field: str = "raw", *, rewrites=None, missing: str = "raw",
                 sep: str = CONTEXT_SEP, rewrite_field=None, id_field=None,
                 source: str = "<turns>") -> tuple:
    """(Topics with canonical ``conv_turn`` ids in the order of turns, :class:`TurnCounts`).

    query_field: ``raw`` (``Question``), ``human`` (``Rewrite``/``Truth_rewrite``),
    ``context`` (earlier questions and answers, oldest first, then the question, joined by sep,
    ``" [SEP] "`` by default; a first turn is its question alone) or ``rewrite`` (the file
    ``rewrites``, read by :func:`trecqr.adapters.rewrites.read_rewrites`, matched to the turns
    by (conversation, turn) whatever its id style). A missing or empty human or supplied
    rewrite follows ``missing``: ``raw`` (the question), ``drop`` or ``error``. Metadata:
    ``conversation_source`` (quac, nq, trec) where the file gives it.
    """
    if query_field not in QUERY_FIELDS:
        raise UsageError(f"unknown query field {query_field!r}: use one of "
                         f"{', '.join(QUERY_FIELDS)}")
    if missing not in POLICIES:
        raise UsageError(f"unknown missing-rewrite policy {missing!r}: use "
                         f"{', '.join(POLICIES)}")
    meta = {t.qid: {"conversation_source": t.conversation_source}
            for t in turns if t.conversation_source is not None}
    if query_field == "rewrite":
        if rewrites is None:
            raise UsageError("query field 'rewrite' needs a rewrites file (--rewrites)")
        has_q = all(t.question is not None for t in turns)
        raw = Topics([t.qid for t in turns], [t.question for t in turns], meta, source) \
            if has_q else {t.qid: None for t in turns}
        if not has_q and missing == "raw":
            raise UsageError(f"{source}: the turns have no Question to fall back on: use "
                             "--missing drop or error")
        result = read_rewrites(rewrites, id_field=id_field, rewrite_field=rewrite_field,
                               missing=missing, raw=raw,  # human: the dataset's rewrites
                               human={t.qid: t.human for t in turns if t.human})
        rep = result.report
        topics = result.topics
        if not isinstance(raw, Topics):
            topics = Topics(topics.qids, topics.queries, meta, source)
        return topics, TurnCounts(len(turns), len(rep.missing), len(topics), rep.filled_raw,
                                  rep.dropped)
    if missing == "human" and query_field not in ("raw", "context"):
        raise UsageError("--missing human falls back on the human rewrite: not for the human "
                         "query field itself")
    qids, queries, without, filled, dropped = [], [], [], 0, 0
    for t in turns:
        if query_field == "raw":
            text = _need_question(t, source)
        elif query_field == "context":
            text = sep.join(t.context + [_need_question(t, source)])
        else:
            text = (t.human or "").strip()
            if not text:
                without.append(t)
                if missing == "drop":
                    dropped += 1
                    continue
                if missing == "raw":
                    text = _need_question(t, source)
                    filled += 1
        qids.append(t.qid)
        queries.append(text)
    if without and missing == "error":
        shown = ", ".join(t.qid for t in without[:5])
        raise InputError(source, without[0].line, f"{len(without)} turns without a human "
                                                  f"rewrite: {shown}")
    meta = {q: meta[q] for q in qids if q in meta}
    return Topics(qids, queries, meta, source), TurnCounts(len(turns), len(without), len(qids),
                                                           filled, dropped)
