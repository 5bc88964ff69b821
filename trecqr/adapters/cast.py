"""TREC CAsT topic JSON (the organisers' evaluation topics) to TREC topics, and CAsT qrels.

Every year's topic file goes through :func:`read_cast_topics`; the year is told from the file's
shape (:func:`detect_year`), never from its name:

=====  ==========================================================  =================================
year   shape                                                       published turns
=====  ==========================================================  =================================
2019   turns carry only ``number`` and ``raw_utterance``            479 in 50 topics (evaluation)
2020   ``manual_canonical_result_id`` / ``automatic_...``           216 in 25 topics
2021   ``canonical_result_id`` + ``passage_id`` (+ ``passage``)     239 in 26 topics
2022   tree: ``participant`` User/System turns with ``parent``      205 evaluated user turns, 18 topics
2022   flattened-duplicated: one conversation per root-to-leaf      50 paths over 18 topics, the same
       path, string turn numbers ``1-3``, ``response`` on the turn  205 user turns
=====  ==========================================================  =================================

CAsT 2022 topics are trees. A user turn's context is its branch: the user utterances and system
responses met following ``parent`` from the turn up to the root (oldest first), not the file
order; query field ``context`` joins them and the turn's own utterance with ``" [SEP] "``
(the separator of the QReCC and TopiOCQA adapters). Turn ids are ``{topic}_{turn}`` with the
file's turn number, ``132_1-3``. Only the turns listed in the organisers'
``2022_evaluation_topics_turn_ids.json`` are kept (``turn_ids=``; by default the file of that
name beside the topic file, when there is one). The system responses' passage ``provenance`` is
kept per user turn (:attr:`CastTurn.provenance`): in file order over the turn's System children
(a user turn may have two, where a branch starts at its response), first occurrence kept;
:func:`provenance_run` ranks it as a TREC run (the organisers' canonical passages).

The 2019-2021 files (daltonj/treccastweb) are a list of conversations
``{"number": 106, "turn": [...]}``; each turn has ``number``, ``raw_utterance``, and, depending
on the file, ``manual_rewritten_utterance``, ``automatic_rewritten_utterance`` and a canonical
response: 2020 ``manual_canonical_result_id`` / ``automatic_canonical_result_id`` (a passage id
such as ``MARCO_5498474``), 2021 ``canonical_result_id`` (a document, ``MARCO_D59865``) plus
``passage_id`` (7) and the ``passage`` text, i.e. passage ``MARCO_D59865-7``.

Turn ids are ``{conv}_{turn}`` (``106_1``), the ids of the CAsT qrels. A query field that a file
does not have (the automatic topic files carry no manual rewrite) is an error, not a silent
fallback. Topics are written as TSV (``qid<TAB>query``) when the output name ends in ``.tsv``,
otherwise in the classic TREC topic format; this small writer is local to the CAsT adapter.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pyarrow.compute as pc

from ..errors import InputError, UsageError
from ..formats.qrels import read_qrels, write_qrels
from ..formats.writer import atomic_write_text
from . import topics as topics_io

QUERY_FIELDS = {"raw": "raw_utterance", "manual": "manual_rewritten_utterance",
                "automatic": "automatic_rewritten_utterance"}
#: query fields of the command: the three utterances, and the context (branch + utterance)
FIELD_CHOICES = (*QUERY_FIELDS, "context")
CONTEXT_SEP = " [SEP] "
_FALLBACK = {"raw": ("utterance",)}  # CAsT 2022 names the raw utterance "utterance"
_SPACES = re.compile(r"\s+")
TURN_IDS_FILE = "2022_evaluation_topics_turn_ids.json"
#: published turn counts, for the printed check
PUBLISHED = {"2019": (50, 479), "2020": (25, 216), "2021": (26, 239), "2022": (18, 205)}


@dataclass
class CastTurn:
    qid: str
    conversation: str
    turn: int
    queries: dict  # query field (raw/manual/automatic) -> text, for the fields the file has
    canonical_passage_id: str | None = None
    canonical_document_id: str | None = None
    canonical_source: str | None = None  # "manual", "automatic" (2020) or None
    passage: str | None = None
    context: tuple = ()  # earlier utterances and responses on this turn's branch, oldest first
    provenance: tuple | None = None  # 2022: the system responses' passage ids, in order

    def metadata(self) -> dict:
        meta = {"qid": self.qid, "conversation": self.conversation, "turn": self.turn}
        if self.canonical_passage_id is not None:
            meta["canonical_passage_id"] = self.canonical_passage_id
        if self.canonical_document_id is not None:
            meta["canonical_document_id"] = self.canonical_document_id
        if self.canonical_source is not None:
            meta["canonical_source"] = self.canonical_source
        if self.provenance is not None:  # 2022: the system responses' passages, in order
            meta["provenance"] = list(self.provenance)
        return meta


@dataclass
class CastTopics:
    turns: list
    source: str
    conversations: int = 0
    fields: set = field(default_factory=set)  # query fields present in every turn
    year: str = "?"  # detected from the file's shape (detect_year)
    shape: str = ""  # what the year was told from
    user_turns: int = 0  # user turns in the file (before keeping the evaluated ones)
    turn_ids_file: str | None = None  # 2022: the evaluated-turns file applied

    def __len__(self) -> int:
        return len(self.turns)

    @property
    def qids(self) -> list:
        return [t.qid for t in self.turns]

    def queries(self, query_field: str) -> list:
        """[(qid, query)] for query_field raw|manual|automatic|context, in file order."""
        if query_field == "context":
            return [(t.qid, CONTEXT_SEP.join((*t.context, t.queries["raw"])))
                    for t in self.turns]
        if query_field not in QUERY_FIELDS:
            raise UsageError(f"unknown CAsT query field {query_field!r} "
                             f"(choose from {', '.join(FIELD_CHOICES)})")
        out = []
        for t in self.turns:
            text = t.queries.get(query_field)
            if text is None:
                have = ", ".join(f for f in QUERY_FIELDS if f in self.fields) or "none"
                raise InputError(self.source, None,
                                 f"turn {t.qid} has no {QUERY_FIELDS[query_field]} "
                                 f"(query field {query_field!r}); every turn of this file "
                                 f"has: {have}")
            out.append((t.qid, text))
        return out

    def metadata(self) -> dict:
        """{qid: {conversation, turn, canonical_passage_id, ...}}."""
        return {t.qid: t.metadata() for t in self.turns}


def _clean(text) -> str | None:
    if not isinstance(text, str):
        return None
    text = _SPACES.sub(" ", text).strip()
    return text or None


def _number(value, source: str, what: str) -> str:
    if isinstance(value, bool) or value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(source, None, f"{what} has no usable 'number' ({value!r})")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    if any(c.isspace() for c in text):
        raise InputError(source, None, f"{what}: number {value!r} contains blanks")
    return text


def _canonical(raw: dict):
    """(passage id, document id, source) of a turn's canonical response, if it has one."""
    doc = raw.get("canonical_result_id")
    if isinstance(doc, str) and doc:
        pid = raw.get("passage_id")
        if isinstance(pid, (int, str)) and not isinstance(pid, bool) and str(pid) != "":
            return f"{doc}-{pid}", doc, None
        return doc, doc, None
    for source in ("manual", "automatic"):
        pid = raw.get(f"{source}_canonical_result_id")
        if isinstance(pid, str) and pid:
            return pid, None, source
    return None, None, None


def load_json(name: str):
    """A whole JSON document; unreadable or malformed files are one-line errors with the line."""
    try:
        with open(name, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise InputError(name, line, f"not a JSON file: {getattr(exc, 'msg', exc)}") from None


def detect_year(doc) -> tuple[str, str]:
    """(year, what it was told from) for a parsed CAsT topic file (a list of conversations)."""
    turns = [t for c in doc if isinstance(c, dict) and isinstance(c.get("turn"), list)
             for t in c["turn"] if isinstance(t, dict)]
    keys = set().union(*(t.keys() for t in turns)) if turns else set()
    if "participant" in keys or "parent" in keys:
        return "2022", "topic tree (participant, parent)"
    if "provenance" in keys or any(isinstance(t.get("number"), str) and "-" in t["number"]
                                   for t in turns):
        return "2022", "flattened-duplicated paths (turn numbers like 1-3, response provenance)"
    if "canonical_result_id" in keys:
        return "2021", "canonical_result_id + passage_id"
    if keys & {"manual_canonical_result_id", "automatic_canonical_result_id"}:
        return "2020", "manual/automatic_canonical_result_id"
    if keys and keys <= {"number", "raw_utterance"}:
        return "2019", "turns with only number and raw_utterance"
    return "?", "fields " + ", ".join(sorted(keys))


def read_turn_ids(path) -> list:
    """The organisers' evaluated turns ({topic: [turn, ...]}) as ids ``132_1-3``, in order."""
    name = os.fspath(path)
    doc = load_json(name)
    if not isinstance(doc, dict) or not all(isinstance(v, list) for v in doc.values()):
        raise InputError(name, None, "expected a JSON object {topic: [turn number, ...]}")
    return [f"{k}_{t}" for k, v in doc.items() for t in v]


def _queries(raw: dict) -> dict:
    queries = {}
    for key, json_key in QUERY_FIELDS.items():
        text = _clean(raw.get(json_key))
        for alt in _FALLBACK.get(key, ()):
            text = text if text is not None else _clean(raw.get(alt))
        if text is not None:
            queries[key] = text
    return queries


def _provenance(raw: dict, name: str, what: str) -> list:
    """A response's passage ids. White space inside an id is removed, with a warning: the 2022
    tree files cite ``MARCO_50_2268879788 -3`` (turns 149_1-4, 149_1-6), which the qrels judge
    as ``MARCO_50_2268879788-3``."""
    prov = raw.get("provenance", [])
    if not isinstance(prov, list) or not all(isinstance(p, str) and p.strip() for p in prov):
        raise InputError(name, None, f"{what}: 'provenance' is not a list of passage ids")
    out = []
    for p in prov:
        joined = "".join(p.split())
        if joined != p:
            _BLANKED.append(f"{what}: passage id {p!r} read as {joined!r}")
        out.append(joined)
    return out


_BLANKED: list = []  # passage ids read with their white space removed, warned once per file


def _warn_blanked(name: str) -> None:
    if _BLANKED:
        warnings.warn(f"{name}: {len(_BLANKED)} passage ids had white space inside, removed "
                      f"(first: {_BLANKED[0]})")
        _BLANKED.clear()


def _add_unique(out: list, ids) -> None:
    for pid in ids:
        if pid not in out:
            out.append(pid)


def _linear_turns(doc, name: str) -> tuple[list, int]:
    """2019-2021: conversations of turns in order; context = earlier raw utterances (and the
    canonical passage text where the file gives it)."""
    turns, seen = [], set()
    for i, conv in enumerate(doc):
        cnum = _number(conv.get("number"), name, f"conversation {i + 1}")
        context: list = []
        for j, raw in enumerate(conv["turn"]):
            if not isinstance(raw, dict):
                raise InputError(name, None, f"conversation {cnum}, turn {j + 1}: not an object")
            tnum = _number(raw.get("number"), name, f"conversation {cnum}, turn {j + 1}")
            qid = f"{cnum}_{tnum}"
            if qid in seen:
                raise InputError(name, None, f"turn id {qid} occurs twice")
            seen.add(qid)
            queries = _queries(raw)
            pid, did, src = _canonical(raw)
            turn_no = int(tnum) if tnum.isdigit() else tnum
            passage = raw.get("passage") if isinstance(raw.get("passage"), str) else None
            turns.append(CastTurn(qid, cnum, turn_no, queries, pid, did, src, passage,
                                  tuple(context)))
            if "raw" in queries:
                context.append(queries["raw"])
            if _clean(passage):
                context.append(_clean(passage))
    return turns, len(turns)


def _tree_turns(doc, name: str) -> tuple[list, int]:
    """2022 tree: user turns with their branch (follow ``parent``) and responses' provenance."""
    turns = []
    for i, conv in enumerate(doc):
        cnum = _number(conv.get("number"), name, f"conversation {i + 1}")
        nodes: dict = {}
        for j, raw in enumerate(conv["turn"]):
            if not isinstance(raw, dict):
                raise InputError(name, None, f"conversation {cnum}, turn {j + 1}: not an object")
            tnum = _number(raw.get("number"), name, f"conversation {cnum}, turn {j + 1}")
            if tnum in nodes:
                raise InputError(name, None, f"turn id {cnum}_{tnum} occurs twice")
            who = raw.get("participant")
            if who not in ("User", "System"):
                raise InputError(name, None, f"turn {cnum}_{tnum}: participant {who!r} is not "
                                             "User or System")
            nodes[tnum] = raw
        children: dict = {}
        for tnum, raw in nodes.items():
            parent = raw.get("parent")
            if parent is not None:
                parent = str(parent)
                if parent not in nodes:
                    raise InputError(name, None, f"turn {cnum}_{tnum}: parent {parent!r} is not "
                                                 "a turn of its topic")
                children.setdefault(parent, []).append(tnum)
        for tnum, raw in nodes.items():
            if raw["participant"] != "User":
                continue
            path, node, steps = [], raw.get("parent"), 0
            while node is not None:
                steps += 1
                if steps > len(nodes):
                    raise InputError(name, None, f"turn {cnum}_{tnum}: its parents form a cycle")
                up = nodes[str(node)]
                text = _clean(up.get("utterance") if up["participant"] == "User"
                              else up.get("response"))
                if text is not None:
                    path.append(text)
                node = up.get("parent")
            prov: list = []
            for kid in children.get(tnum, []):
                if nodes[kid]["participant"] == "System":
                    _add_unique(prov, _provenance(nodes[kid], name, f"turn {cnum}_{kid}"))
            turns.append(CastTurn(f"{cnum}_{tnum}", cnum, tnum, _queries(raw),
                                  context=tuple(reversed(path)), provenance=tuple(prov)))
    return turns, len(turns)


def _flattened_turns(doc, name: str) -> tuple[list, int]:
    """2022 flattened-duplicated: one conversation per path; a turn met on several paths is kept
    once (its context, the path before it, is the same on each; its provenance is the union of
    the responses it gets on the paths, in order)."""
    by_id: dict = {}
    for i, conv in enumerate(doc):
        cnum = _number(conv.get("number"), name, f"conversation {i + 1}")
        context: list = []
        for j, raw in enumerate(conv["turn"]):
            if not isinstance(raw, dict):
                raise InputError(name, None, f"conversation {cnum}, turn {j + 1}: not an object")
            tnum = _number(raw.get("number"), name, f"conversation {cnum}, turn {j + 1}")
            qid = f"{cnum}_{tnum}"
            queries = _queries(raw)
            prov = _provenance(raw, name, f"path {i + 1}, turn {qid}")
            if qid not in by_id:
                by_id[qid] = CastTurn(qid, cnum, tnum, queries, context=tuple(context),
                                      provenance=tuple(prov))
            else:
                turn = by_id[qid]
                if turn.context != tuple(context) or turn.queries != queries:
                    raise InputError(name, None, f"turn {qid} differs between two paths")
                merged = list(turn.provenance)
                _add_unique(merged, prov)
                turn.provenance = tuple(merged)
            if "raw" in queries:
                context.append(queries["raw"])
            if _clean(raw.get("response")):
                context.append(_clean(raw.get("response")))
    return list(by_id.values()), len(by_id)


def read_cast_topics(path, turn_ids=None) -> CastTopics:
    """Read an organisers' CAsT topic JSON file of any year (2019-2022, see the module doc).

    turn_ids: 2022 only, the evaluated-turns JSON; default: ``2022_evaluation_topics_turn_ids.json``
    beside the topic file when it exists (otherwise every user turn is kept). A listed turn that
    is not in the topic file is an error.
    """
    name = os.fspath(path)
    doc = load_json(name)
    if not isinstance(doc, list):
        raise InputError(name, None, "expected a JSON list of conversations "
                                     "({\"number\": ..., \"turn\": [...]})")
    for i, conv in enumerate(doc):
        if not isinstance(conv, dict) or not isinstance(conv.get("turn"), list):
            raise InputError(name, None, f"conversation {i + 1} has no 'turn' list")
    year, shape = detect_year(doc)
    if year == "2022":
        reader = _tree_turns if shape.startswith("topic tree") else _flattened_turns
        _BLANKED.clear()
        try:
            turns, user_turns = reader(doc, name)
        finally:
            _warn_blanked(name)
        if turn_ids is None:
            beside = os.path.join(os.path.dirname(os.path.abspath(name)), TURN_IDS_FILE)
            turn_ids = beside if os.path.exists(beside) else None
        if turn_ids is not None:
            keep = read_turn_ids(turn_ids)
            have = {t.qid for t in turns}
            absent = [q for q in keep if q not in have]
            if absent:
                raise InputError(os.fspath(turn_ids), None,
                                 f"{len(absent)} evaluated turns are not user turns of {name} "
                                 f"(e.g. {absent[0]!r})")
            keep = set(keep)
            turns = [t for t in turns if t.qid in keep]
    else:
        if turn_ids is not None:
            raise UsageError("an evaluated-turns file goes with CAsT 2022 topic files only")
        turns, user_turns = _linear_turns(doc, name)
    if not turns:
        raise InputError(name, None, "no turns")
    for t in turns:
        if "raw" not in t.queries:
            raise InputError(name, None, f"turn {t.qid} has no raw utterance")
    fields = {f for f in QUERY_FIELDS if all(f in t.queries for t in turns)}
    conversations = len({t.conversation for t in turns})
    return CastTopics(turns, name, conversations, fields, year, shape, user_turns,
                      None if turn_ids is None else os.fspath(turn_ids))


def provenance_run(topics: CastTopics, run_name: str = "cast-provenance") -> list:
    """TREC run lines ``qid Q0 passage rank score run_name`` from the turns' response provenance:
    rank i gets score n - i + 1 (no ties, so trec_eval keeps the organisers' order)."""
    if any(t.provenance is None for t in topics.turns):
        raise UsageError(f"{topics.source}: only CAsT 2022 topic files carry response provenance")
    return [line for t in topics.turns for line in ranked_lines(t.qid, t.provenance, run_name)]


def ranked_lines(qid: str, ids, run_name: str) -> list:
    """TREC run lines for ids in rank order: rank i gets score n - i + 1 (no ties, so
    trec_eval keeps the given order)."""
    n = len(ids)
    return [f"{qid} Q0 {doc} {i} {n - i + 1} {run_name}\n" for i, doc in enumerate(ids, 1)]


# --------------------------------------------------------------------------- topic writer
def write_topics(pairs, path) -> str:
    """Write [(qid, query)] atomically with trecqr.adapters.topics: TSV when the path ends in
    .tsv, JSONL for .jsonl, otherwise the TREC topic format. Returns the format."""
    try:
        fmt = topics_io.format_of(path)
    except UsageError:
        fmt = "trec"
    qids = [q for q, _ in pairs]
    topics_io.write_topics(topics_io.Topics(qids, [t for _, t in pairs]), path, fmt)
    return fmt


def write_metadata(topics: CastTopics, path) -> None:
    """One JSON object per turn (qid, conversation, turn, canonical passage/document id)."""
    atomic_write_text(path, "".join(json.dumps(t.metadata(), ensure_ascii=False) + "\n"
                                    for t in topics.turns))


# --------------------------------------------------------------------------- qrels
@dataclass
class QrelsCounts:
    pairs: int
    turns_judged: int
    turns_unjudged: int  # topic turns with no qrels line
    relevant_pairs: int


def convert_cast_qrels(path, topics: CastTopics, out) -> QrelsCounts:
    """Check CAsT qrels against the topics' turn ids (``106_1``) and write them as TREC qrels.

    CAsT qrels already use the canonical ids; a qid that is not a turn of the topic file (another
    year's qrels, another id style) is an error naming it.
    """
    qrels = read_qrels(path)
    judged = pc.unique(qrels.qid).to_pylist()
    known = set(topics.qids)
    unknown = [q for q in judged if q not in known]
    if unknown:
        raise InputError(qrels.source, None,
                         f"{len(unknown)} qids are not turns of {topics.source} "
                         f"(e.g. {unknown[0]!r}; CAsT turn ids look like {topics.qids[0]!r})")
    write_qrels(qrels, out)
    return QrelsCounts(len(qrels), len(judged), len(known) - len(judged),
                       int(np.count_nonzero(qrels.grade > 0)))
