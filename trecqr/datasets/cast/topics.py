"""TREC CAsT topic JSON (the organisers' evaluation topics) to TREC topics, and CAsT qrels.

Every year's topic file goes through :func:`read_cast_topics`; the year is told from the file's
shape (:func:`detect_year`), never from its name:

=====  ==========================================================  ========================
year   shape                                                       published turns
=====  ==========================================================  ========================
2019   turns carry only ``number`` and ``raw_utterance``            479 in 50 topics
                                                                   (evaluation)
2020   ``manual_canonical_result_id`` / ``automatic_...``           216 in 25 topics
2021   ``canonical_result_id`` + ``passage_id`` (+ ``passage``)     239 in 26 topics
2022   tree: ``participant`` User/System turns with ``parent``      205 evaluated user turns,
                                                                   18 topics
2022   flattened-duplicated: one conversation per root-to-leaf      50 paths over 18 topics,
       path, string turn numbers ``1-3``, ``response`` on the turn  the same 205 user turns
=====  ==========================================================  ========================

CAsT 2022 topics are trees. A user turn's context is its branch: the user utterances and system
responses met following ``parent`` from the turn up to the root (oldest first), not the file
order; query field ``context`` joins them and the turn's own utterance with ``" [SEP] "``
(the separator of the QReCC and TopiOCQA readers). Turn ids are ``{topic}_{turn}`` with the
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

Each year's shape is walked into turns in :mod:`trecqr.datasets.cast.turns`; this module
tells the year, keeps the evaluated turns, and writes topics, metadata and qrels.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from trecqr.runtime.deferred import pc
from trecqr.errors import InputError, UsageError
from trecqr.formats.qrels import read_qrels, write_qrels
from trecqr.formats.writer import atomic_write_text
from trecqr.datasets import topics as topics_io
from trecqr.datasets.records import load_json  # noqa: F401  report/groups.py reads it here
from trecqr.datasets.cast.turns import (  # noqa: F401  CastTurn: named here too, with the topics
    CastTurn,
    detect_year,
    linear_turns,
    QUERY_FIELDS,
    read_turn_ids,
    turns_2022,
)

#: query fields of the command: the three utterances, and the context (branch + utterance)
FIELD_CHOICES = (*QUERY_FIELDS, "context")
CONTEXT_SEP = " [SEP] "
TURN_IDS_FILE = "2022_evaluation_topics_turn_ids.json"
#: published turn counts, for the printed check
PUBLISHED = {"2019": (50, 479), "2020": (25, 216), "2021": (26, 239), "2022": (18, 205)}


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
        turns, user_turns = turns_2022(doc, name, shape)
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
        turns, user_turns = linear_turns(doc, name)
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
    """Write [(qid, query)] atomically with trecqr.datasets.topics: TSV when the path ends in
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
