"""TREC iKAT (2023-2025): topics with personal knowledge bases, official JSON runs, validation.

Topics (irlabamsterdam/iKAT, ``{year}_test_topics.json``) are a JSON list of topics::

    {"number": "9-1", "title": ..., "ptkb": {"1": "I'm vegetarian.", ...},      # 2023, 2024
     "turns": [{"turn_id": 1, "utterance": ..., "resolved_utterance": ..., "response": ...,
                "ptkb_provenance": [5], "response_provenance": ["clueweb22-...:1"]}, ...]}
    {"number": "1-1", "title": ..., "ptkb": ["I want to stop doom scrolling.", ...],  # 2025
     "responses": [{"turn_id": 1, "user_utterance": ..., "resolved_utterance": ..., "response": ...,
                    "relevant_ptkbs": [...], "citations": [...]}, ...]}

A turn's id is ``{number}_{turn_id}`` (``9-1_1``); ``number`` may itself hold a dash (a topic
variant sharing a persona). The PTKB is a dict of numbered statements, or (2025) a list, numbered
from 1 here, as the qrels number statements. Query fields: ``raw`` (``utterance`` /
``user_utterance``), ``resolved`` (``resolved_utterance``) and ``context`` (the topic's earlier
utterances and responses, oldest first, then the utterance, joined by ``" [SEP] "``). The PTKB is
per-turn metadata (``--meta-out``): every turn carries its topic's statements, and the statements
the organisers marked relevant to it (``ptkb_provenance``, 2025 ``relevant_ptkbs``).

Official runs (JSON): :mod:`.ikat_runs`.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field

from trecqr.errors import InputError, UsageError
from trecqr.datasets.cast.topics import ranked_lines
from trecqr.datasets.records import load_json

QUERY_FIELDS = ("raw", "resolved", "context")
CONTEXT_SEP = " [SEP] "
#: published test-topic counts (topics, turns)
PUBLISHED = {"2023": (25, 332), "2024": (17, 218), "2025": (17, 188)}


def _clean(text):
    return " ".join(text.split()) if isinstance(text, str) and text.strip() else None


# --------------------------------------------------------------------------- topics
@dataclass
class IkatTurn:
    qid: str
    topic: str
    turn: int
    raw: str
    resolved: str | None
    response: str | None
    context: tuple
    relevant_ptkb: list  # statement numbers (strings) marked relevant to this turn
    provenance: list  # the organisers' response provenance (2025: citations)


@dataclass
class IkatTopics:
    turns: list
    ptkb: dict  # topic number -> {statement number (str): text}
    source: str
    shape: str  # "2023/2024 (ptkb dict, turns)" or "2025 (ptkb list, responses)"
    titles: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.turns)

    @property
    def qids(self):
        return [t.qid for t in self.turns]

    def queries(self, query_field: str) -> list:
        if query_field not in QUERY_FIELDS:
            raise UsageError(f"unknown iKAT query field {query_field!r} "
                             f"(choose from {', '.join(QUERY_FIELDS)})")
        out, filled = [], []
        for t in self.turns:
            if query_field == "raw":
                text = t.raw
            elif query_field == "resolved":
                text = t.resolved
                if text is None:  # 2023's 12-1_12 has an empty one
                    filled.append(t.qid)
                    text = t.raw
            else:
                text = CONTEXT_SEP.join((*t.context, t.raw))
            out.append((t.qid, text))
        if filled:
            warnings.warn(f"{self.source}: {len(filled)} turns without a resolved_utterance "
                          f"take their raw utterance ({', '.join(filled[:5])})")
        return out

    def metadata(self, qid_turn: IkatTurn) -> dict:
        t = qid_turn
        return {"qid": t.qid, "topic": t.topic, "turn": t.turn, "title": self.titles.get(t.topic),
                "ptkb": self.ptkb[t.topic], "relevant_ptkb": t.relevant_ptkb,
                "response_provenance": t.provenance}


def _statement_number(value, name, where) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip():
        raise InputError(name, None, f"{where}: PTKB statement number {value!r} is not a number")
    return str(value).strip()


def read_ikat_topics(path) -> IkatTopics:
    """Read an iKAT test topics file (2023, 2024 or 2025 shape)."""
    name = os.fspath(path)
    doc = load_json(name)
    if not isinstance(doc, list) or not doc:
        raise InputError(name, None, "expected a JSON list of topics ({\"number\", \"ptkb\", "
                                     "\"turns\"|\"responses\"})")
    turns, ptkbs, titles, seen = [], {}, {}, set()
    shapes = set()
    for i, topic in enumerate(doc):
        if not isinstance(topic, dict):
            raise InputError(name, None, f"topic {i + 1}: not an object")
        number = topic.get("number")
        if isinstance(number, bool) or not isinstance(number, (int, str)) or \
                not str(number).strip() or "_" in str(number) or \
                str(number) != "".join(str(number).split()):
            raise InputError(name, None, f"topic {i + 1}: 'number' {number!r} is not a topic id")
        number = str(number)
        if number in ptkbs:
            raise InputError(name, None, f"topic {number} occurs twice")
        key = "turns" if "turns" in topic else "responses" if "responses" in topic else None
        if key is None or not isinstance(topic[key], list):
            raise InputError(name, None, f"topic {number} has no 'turns' (2023/2024) or "
                                         "'responses' (2025) list")
        ptkb = topic.get("ptkb", {})
        if isinstance(ptkb, dict):
            ptkb = {_statement_number(k, name, f"topic {number}"): v for k, v in ptkb.items()}
            shapes.add("2023/2024 (ptkb dict, turns)" if key == "turns" else "ptkb dict, responses")
        elif isinstance(ptkb, list):
            ptkb = {str(k): v for k, v in enumerate(ptkb, 1)}
            shapes.add("2025 (ptkb list, responses)" if key == "responses" else "ptkb list, turns")
        else:
            raise InputError(name, None, f"topic {number}: 'ptkb' is neither a dict nor a list")
        if not all(isinstance(v, str) for v in ptkb.values()):
            raise InputError(name, None, f"topic {number}: a PTKB statement is not a string")
        ptkbs[number] = ptkb
        titles[number] = topic.get("title")
        context: list = []
        for j, raw in enumerate(topic[key]):
            where = f"topic {number}, turn {j + 1}"
            if not isinstance(raw, dict):
                raise InputError(name, None, f"{where}: not an object")
            tid = raw.get("turn_id")
            if isinstance(tid, bool) or not isinstance(tid, (int, str)) or \
                    not str(tid).strip().isdigit():
                raise InputError(name, None, f"{where}: turn_id {tid!r} is not a number")
            qid = f"{number}_{str(tid).strip()}"
            if qid in seen:
                raise InputError(name, None, f"turn id {qid} occurs twice")
            seen.add(qid)
            utterance = _clean(raw.get("utterance", raw.get("user_utterance")))
            if utterance is None:
                raise InputError(name, None, f"turn {qid} has no utterance")
            rel = raw.get("ptkb_provenance", raw.get("relevant_ptkbs", []))
            rel = [_statement_number(s, name, f"turn {qid}") for s in (rel or [])]
            prov = raw.get("response_provenance", raw.get("citations", []))
            response = _clean(raw.get("response"))
            turns.append(IkatTurn(qid, number, int(str(tid).strip()), utterance,
                                  _clean(raw.get("resolved_utterance")), response,
                                  tuple(context), rel, list(prov or [])))
            context.append(utterance)
            if response is not None:
                context.append(response)
    if len(shapes) != 1:
        raise InputError(name, None, f"topics of two shapes in one file: {sorted(shapes)}")
    return IkatTopics(turns, ptkbs, name, shapes.pop(), titles)


def topics_ptkb_run(topics: IkatTopics, run_name: str = "ikat-topics-ptkb") -> list:
    """The organisers' relevant PTKB statements of each turn as a ranking (file order)."""
    return [line for t in topics.turns
            for line in ranked_lines(t.qid, t.relevant_ptkb, run_name)]
