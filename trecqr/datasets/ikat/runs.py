"""TREC iKAT official runs (2023, 2024 JSON): to TREC passage and PTKB runs, and the official
validator's checks (the topics: :mod:`.ikat`).

Official run files (2023, 2024) are one JSON object::

    {"run_name": ..., "run_type": "automatic", "turns": [{"turn_id": "9-1_1", "responses": [
        {"rank": 1, "text": ..., "ptkb_provenance": [...],
         "passage_provenance": [{"id": "clueweb22-en0004-67-08978:7", "score": 3.1, "used": true},
                                ...]}]}]}

:func:`passage_run` turns one into a TREC passage run: per turn, every passage cited by any of
its responses (a turn id given twice is one turn), kept once at its best score, ranked as
trec_eval ranks (score descending, ties by passage id descending); the runid is ``run_name``.
:func:`ptkb_run` ranks the PTKB statements cited per turn in order of citation (2023's statement
objects carry a score, which ranks them instead), scored against the PTKB qrels
(``qid 0 statement-number grade``). :func:`validate_run` applies the official validator's
checks (2023/2024 ``run_validation``): see its docstring.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError
from trecqr.formats.run import Run
from trecqr.datasets.records import load_json
from trecqr.datasets.ikat.topics import IkatTopics

#: a ClueWeb22-B English passage id: document id, colon, passage number
PASSAGE_ID = re.compile(r"^clueweb22-en\d{4}-\d{2}-\d{5}:\d+$")
RUN_TYPES = ("automatic", "manual", "only_response")
_FIELDS = {  # the fields the official run format (protocol buffers) knows, per level
    "run": {"run_name", "run_type", "eval_response", "turns"},
    "turn": {"turn_id", "responses"},
    "response": {"text", "rank", "passage_provenance", "ptkb_provenance"},
    "passage": {"id", "text", "score", "used"},
    "ptkb": {"id", "text", "score"},
}


@dataclass
class Problem:
    turn: str | None  # None: the whole run
    what: str
    warning: bool = False

    def line(self, source: str) -> str:
        where = f"turn {self.turn}: " if self.turn is not None else ""
        return f"{source}: {where}{'warning: ' if self.warning else ''}{self.what}"


def _is_number(x) -> bool:
    """A finite double, as the validator's protocol buffers hold a score: a JSON integer too
    large for a double (1e400 written out) is not one."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def _not_a_score(x) -> str:
    if isinstance(x, int) and not isinstance(x, bool):
        return "is too large for a double (the validator's score type)"
    return "is not a number"


def _shown(x) -> str:
    """repr of a value for a message, a huge integer cut to its first digits."""
    if isinstance(x, int) and abs(x) >= 10 ** 30:
        return f"{str(x)[:12]}... ({len(str(x))} digits)"
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def _unknown(obj: dict, level: str) -> list:
    return sorted(k for k in obj if k not in _FIELDS[level])


def validate_run(doc, topics: IkatTopics | None = None) -> list:
    """Problems of a parsed official iKAT run (2023/2024 JSON), as the official validator
    (irlabamsterdam/iKAT ``run_validation``) checks it, without its passage-collection service:

    errors: the run is a JSON object with ``run_name``, ``run_type`` and a ``turns`` list, and no
    field the format does not define (the validator parses it into protocol buffers, which refuse
    unknown fields and values of the wrong type); a turn has a ``turn_id`` ``{topic}_{turn}`` with
    a numeric turn and a ``responses`` list; a response has an integer ``rank`` >= 1, ranks
    increasing within a turn; a passage provenance has an ``id`` of ClueWeb22-B's syntax
    (``clueweb22-en0004-67-08978:7``), a numeric ``score``, not above the score before it, and a
    boolean ``used``; PTKB provenance is statement numbers (2024) or statement objects with id,
    text and score (2023). With topics: every turn id is a turn of the topics, every topic turn
    is in the run, once, PTKB statement numbers exist in the turn's topic (2023: with the same
    text).

    warnings (the validator's, which do not reject a run): an empty run_name, a run_type not in
    automatic/manual/only_response, an empty response text, no passage marked ``used``, no PTKB
    provenance, more than 1000 passages in a response.
    """
    probs: list = []
    add = lambda turn, what, warning=False: probs.append(Problem(turn, what, warning))
    if not isinstance(doc, dict):
        add(None, "not a JSON object with run_name, run_type and turns")
        return probs
    for key in ("run_name", "run_type", "turns"):
        if key not in doc:
            add(None, f"required field {key!r} is missing")
    for key in _unknown(doc, "run"):
        add(None, f"unknown field {key!r}")
    if "run_name" in doc and not isinstance(doc["run_name"], str):
        add(None, "run_name is not a string")
    elif doc.get("run_name") == "":
        add(None, "run_name is empty", True)
    if "run_type" in doc:
        if not isinstance(doc["run_type"], str):
            add(None, "run_type is not a string")
        elif doc["run_type"] not in RUN_TYPES:
            add(None, f"run_type {doc['run_type']!r} is not one of {', '.join(RUN_TYPES)}", True)
    turns = doc.get("turns")
    if "turns" in doc and not isinstance(turns, list):
        add(None, "turns is not a list")
    if not isinstance(turns, list):
        return probs
    run_type = doc.get("run_type")
    known = set(topics.qids) if topics is not None else None
    seen_turns: list = []
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict):
            add(None, f"turns[{i}] is not an object")
            continue
        tid = turn.get("turn_id")
        if not isinstance(tid, str) or not re.fullmatch(r"[^_\s]+_\d+", tid):
            add(f"#{i + 1}" if not isinstance(tid, str) else tid,
                f"turn_id {tid!r} is not TOPIC_TURN (e.g. 9-1_1)")
            label = f"#{i + 1}" if not isinstance(tid, str) else tid
        else:
            label = tid
            seen_turns.append(tid)
            if known is not None and tid not in known:
                add(tid, "not a turn of the topics")
        for key in _unknown(turn, "turn"):
            add(label, f"unknown field {key!r}")
        responses = turn.get("responses")
        if not isinstance(responses, list):
            add(label, "required field 'responses' is missing or not a list")
            continue
        prev_rank = 0
        for r, resp in enumerate(responses, 1):
            where = f"response {r}"
            if not isinstance(resp, dict):
                add(label, f"{where} is not an object")
                continue
            for key in _unknown(resp, "response"):
                add(label, f"{where}: unknown field {key!r}")
            rank = resp.get("rank")
            if not (isinstance(rank, int) and not isinstance(rank, bool)) or rank < 1:
                add(label, f"{where}: rank {rank!r} is not an integer >= 1")
            else:
                if rank <= prev_rank:
                    add(label, f"{where}: rank {rank} is not above the previous rank {prev_rank}")
                prev_rank = rank
            text = resp.get("text", "")
            if not isinstance(text, str):
                add(label, f"{where}: text is not a string")
            elif text == "" and run_type != "only_response":
                add(label, f"{where}: response text is missing", True)
            passages = resp.get("passage_provenance", [])
            if not isinstance(passages, list):
                add(label, f"{where}: passage_provenance is not a list")
                passages = []
            prev_score = None
            used = 0
            for p, prov in enumerate(passages, 1):
                pw = f"{where}, passage {p}"
                if not isinstance(prov, dict):
                    add(label, f"{pw} is not an object")
                    continue
                for key in _unknown(prov, "passage"):
                    add(label, f"{pw}: unknown field {key!r}")
                pid = prov.get("id")
                if not isinstance(pid, str) or not PASSAGE_ID.match(pid):
                    add(label, f"{pw}: passage id {pid!r} is not a ClueWeb22 passage id "
                               "(clueweb22-enDDDD-DD-DDDDD:N)")
                score = prov.get("score")
                if not _is_number(score):
                    add(label, f"{pw}: score {_shown(score)} {_not_a_score(score)}")
                else:
                    if prev_score is not None and score > prev_score:
                        add(label, f"{pw}: score {score!r} is above the score before it "
                                   f"({prev_score!r}): scores must not increase with rank")
                    prev_score = score
                if "used" in prov and not isinstance(prov["used"], bool):
                    add(label, f"{pw}: used {prov['used']!r} is not true or false")
                used += prov.get("used") is True
                if "text" in prov and not isinstance(prov["text"], str):
                    add(label, f"{pw}: text is not a string")
            if passages and not used:
                add(label, f"{where}: no passage is marked used (the top 5 count as used)", True)
            if not passages:
                add(label, f"{where}: no passage provenance", True)
            elif len(passages) > 1000:
                add(label, f"{where}: {len(passages)} passages (more than 1000)", True)
            _check_ptkb(resp.get("ptkb_provenance", []), label, where, add, topics)
    if known is not None:  # the validator counts each topic's turns against the topics

        for tid, n in Counter(seen_turns).items():
            if n > 1 and tid in known:
                add(tid, f"given {n} times (each turn of the topics once)")
        missing = [q for q in topics.qids if q not in set(seen_turns)]
        if missing:
            add(None, f"{len(missing)} turns of the topics are not in the run (e.g. {missing[0]})")
    return probs


def _check_ptkb(ptkb, label, where, add, topics):
    if not isinstance(ptkb, list):
        add(label, f"{where}: ptkb_provenance is not a list")
        return
    if not ptkb:
        add(label, f"{where}: no PTKB provenance", True)
        return
    statements = None
    if topics is not None and "_" in label:
        statements = topics.ptkb.get(label.rsplit("_", 1)[0])
    prev = None
    for s in ptkb:
        text = None
        if isinstance(s, dict):  # 2023: {id, text, score}
            for key in _unknown(s, "ptkb"):
                add(label, f"{where}: PTKB provenance: unknown field {key!r}")
            sid, text, score = s.get("id"), s.get("text"), s.get("score")
            if not _is_number(score):
                add(label, f"{where}: PTKB statement {sid!r}: score {_shown(score)} "
                           f"{_not_a_score(score)}")
            else:
                if prev is not None and score > prev:
                    add(label, f"{where}: PTKB statement {sid!r}: score {score!r} is above the "
                               f"score before it ({prev!r})", True)
                prev = score
        else:
            sid = s
        if isinstance(sid, bool) or not isinstance(sid, (int, str)) or \
                not str(sid).strip().isdigit():
            add(label, f"{where}: PTKB statement number {sid!r} is not a number")
            continue
        if statements is not None:
            if str(sid).strip() not in statements:
                add(label, f"{where}: PTKB statement {sid} is not in the topic's PTKB "
                           f"(1-{len(statements)})")
            elif text is not None and text != statements[str(sid).strip()]:
                add(label, f"{where}: PTKB statement {sid}: text differs from the topic's")


def read_ikat_run(path) -> tuple[dict, str]:
    name = os.fspath(path)
    try:
        return load_json(name), name
    except InputError as exc:
        if "Extra data" in str(exc):  # one JSON object per line: the 2025 format
            raise InputError(name, exc.line, "one JSON object per line (iKAT 2025's run "
                                             "format?): trecqr reads the 2023/2024 run format, "
                                             "one JSON object") from None
        raise


def _require_valid(doc, name, topics=None):
    errors = [p for p in validate_run(doc, topics) if not p.warning]
    if errors:
        first = errors[0].line(name)
        more = f" (and {len(errors) - 1} more problems: trecqr validate ikat)" \
            if len(errors) > 1 else ""
        raise InputError(name, None, first.split(": ", 1)[1] + more)


@dataclass
class RunCounts:
    turns: int
    responses: int
    provenances: int  # passage provenances before de-duplication
    passages: int  # (turn, passage) pairs written
    duplicates: int  # provenances dropped as repeats of a passage in the same turn


def passage_run(doc, name: str):
    """(trecqr Run, RunCounts) from a parsed official run: best score per (turn, passage)."""
    _require_valid(doc, name)
    best: dict = {}  # (turn, passage) -> score, in first-citation order
    turns, responses, provs = [], 0, 0
    for turn in doc["turns"]:
        tid = turn["turn_id"]
        if tid not in turns:
            turns.append(tid)
        for resp in turn["responses"]:
            responses += 1
            for prov in resp.get("passage_provenance", []):
                provs += 1
                key = (tid, prov["id"])
                score = float(prov["score"])
                if key not in best or score > best[key]:
                    best[key] = score
    qids = [k[0] for k in best]
    run = Run(pa.array(qids, pa.string()), pa.array([k[1] for k in best], pa.string()),
              np.array(list(best.values()), dtype=np.float64), runid=doc["run_name"] or "ikat",
              source=name)
    return run, RunCounts(len(turns), responses, provs, len(best), provs - len(best))


def ptkb_run(doc, name: str, run_name: str | None = None) -> list:
    """TREC run lines of the PTKB statements cited per turn: 2024 numbers ranked in order of
    citation over the turn's responses (first citation kept), 2023 objects by their score (best
    kept); ties broken by trec_eval when scored."""
    _require_valid(doc, name)
    runid = run_name or doc["run_name"] or "ikat"
    order: dict = {}
    for turn in doc["turns"]:
        tid = turn["turn_id"]
        cited = order.setdefault(tid, {})
        for resp in turn["responses"]:
            for s in resp.get("ptkb_provenance", []):
                if isinstance(s, dict):
                    sid, score = str(s["id"]).strip(), float(s["score"])
                    cited[sid] = max(score, cited.get(sid, score))
                else:
                    sid = str(s).strip()
                    if sid not in cited:
                        cited[sid] = None
    lines = []
    for tid, cited in order.items():
        n = len(cited)
        ranked = [(sid, sc if sc is not None else float(n - i)) for i, (sid, sc) in
                  enumerate(cited.items())]
        ranked.sort(key=lambda x: -x[1])
        lines += [f"{tid} Q0 {sid} {i} {sc!r} {runid}\n" for i, (sid, sc) in enumerate(ranked, 1)]
    return lines
