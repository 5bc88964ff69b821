"""QReCC conversations to topics: the turns half of :mod:`trecqr.datasets.qrecc.files`.

Kept apart from the qrels readers (:mod:`trecqr.datasets.qrecc.qrels`) because reading turn
files and choosing each turn's query text (raw, human, context, a supplied rewrite) is a
concern of its own, with its own counts (:class:`TurnCounts`). Conversations
(:func:`read_qrecc_turns`: the original QReCC JSON, SCAI turn files, InfoCQR's JSONL) become
topics with :func:`qrecc_topics` (query field raw, human, context joined by ``CONTEXT_SEP`` =
``" [SEP] "``, or a supplied rewrite); :func:`turns_qrels` reads the gold passages the turns
carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from trecqr.errors import InputError, UsageError, hinted
from trecqr.formats.qrels import Qrels
from trecqr.formats.textio import read_source
from trecqr.datasets.qrecc.qrels import QrelsCounts, qrels_from_pairs, read_json_or_text, scai_turn
from trecqr.datasets.rewrites.topics import POLICIES, read_rewrites
from trecqr.datasets.records import json_records
from trecqr.datasets.topics import Topics


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
        return scai_turn(rec, i, source)
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
    ``rewrites``, read by :func:`trecqr.datasets.rewrites.topics.read_rewrites`, matched to the
    turns by (conversation, turn) whatever its id style). A missing or empty human or supplied
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
            raise hinted(UsageError(f"{source}: the turns have no Question to fall back on"),
                         "use missing='drop' or 'error'", "use --missing drop or error")
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
        raise hinted(UsageError("the human rewrite is no fallback for the human query field "
                                "itself"), "missing='human' goes with the raw or context field",
                     "--missing human goes with --query-field raw or context")
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
