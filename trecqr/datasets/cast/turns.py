"""The CAsT topic files' shapes, year by year, read into turns (:class:`CastTurn`).

The reading half of :mod:`trecqr.datasets.cast.topics`: each year's JSON shape (2019-2021 linear
conversations, 2022 trees and flattened-duplicated paths) has its own walk to user turns, their
context and their responses' provenance; :mod:`trecqr.datasets.cast.topics` tells the year,
keeps the evaluated turns and writes topics and qrels. :func:`trecqr.datasets.records.load_json`
reads the files, as it does iKAT's and the report groups', with the same one-line errors.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass

from trecqr.errors import InputError
from trecqr.datasets.records import load_json

QUERY_FIELDS = {"raw": "raw_utterance", "manual": "manual_rewritten_utterance",
                "automatic": "automatic_rewritten_utterance"}
_FALLBACK = {"raw": ("utterance",)}  # CAsT 2022 names the raw utterance "utterance"
_SPACES = re.compile(r"\s+")


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


def linear_turns(doc, name: str) -> tuple[list, int]:
    """2019-2021: conversations of turns in order; context = earlier raw utterances (and the
    canonical passage text where the file gives it)."""
    turns, seen = [], set()
    context: list = []
    for _, cnum, j, tnum, raw in _numbered(doc, name):
        if j == 0:  # a conversation begins
            context = []
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


def _numbered(doc, name: str):
    """(path index, conversation number, turn index, turn number, turn) of every turn of
    every conversation in order, the numbers checked: what the readers of conversations as
    lists of turns share."""
    for i, conv in enumerate(doc):
        cnum = _number(conv.get("number"), name, f"conversation {i + 1}")
        for j, raw in enumerate(conv["turn"]):
            if not isinstance(raw, dict):
                raise InputError(name, None, f"conversation {cnum}, turn {j + 1}: not an object")
            yield i, cnum, j, _number(raw.get("number"), name,
                                      f"conversation {cnum}, turn {j + 1}"), raw


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
    context: list = []
    for i, cnum, j, tnum, raw in _numbered(doc, name):
        if j == 0:  # a path begins
            context = []
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


def turns_2022(doc, name: str, shape: str) -> tuple[list, int]:
    """CAsT 2022's turns, from the tree or the flattened-duplicated paths (by the detected
    shape), warning once for the passage ids read with their white space removed."""
    reader = _tree_turns if shape.startswith("topic tree") else _flattened_turns
    _BLANKED.clear()
    try:
        return reader(doc, name)
    finally:
        _warn_blanked(name)
