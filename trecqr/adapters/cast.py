"""TREC CAsT topic JSON (the organisers' evaluation topics) to TREC topics, and CAsT qrels.

The organisers' files (2020, 2021; daltonj/treccastweb) are a list of conversations
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
from dataclasses import dataclass, field

import click

from ..errors import InputError, UsageError
from ..formats.writer import atomic_write_text

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

    def metadata(self) -> dict:
        meta = {"qid": self.qid, "conversation": self.conversation, "turn": self.turn}
        if self.canonical_passage_id is not None:
            meta["canonical_passage_id"] = self.canonical_passage_id
        if self.canonical_document_id is not None:
            meta["canonical_document_id"] = self.canonical_document_id
        if self.canonical_source is not None:
            meta["canonical_source"] = self.canonical_source
        return meta


@dataclass
class CastTopics:
    turns: list
    source: str
    conversations: int = 0
    fields: set = field(default_factory=set)  # query fields present in every turn

    def __len__(self) -> int:
        return len(self.turns)

    @property
    def qids(self) -> list:
        return [t.qid for t in self.turns]

    def queries(self, query_field: str) -> list:
        """[(qid, query)] for query_field raw|manual|automatic, in file order."""
        if query_field not in QUERY_FIELDS:
            raise UsageError(f"unknown CAsT query field {query_field!r} "
                             f"(choose from {', '.join(QUERY_FIELDS)})")
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


def read_cast_topics(path) -> CastTopics:
    """Read an organisers' CAsT topic JSON file (a list of conversations with turns)."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise InputError(name, None, f"cannot read: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise InputError(name, line, f"not a JSON file: {getattr(exc, 'msg', exc)}") from None
    if not isinstance(doc, list):
        raise InputError(name, None, "expected a JSON list of conversations "
                                     "({\"number\": ..., \"turn\": [...]})")
    turns, seen = [], set()
    for i, conv in enumerate(doc):
        if not isinstance(conv, dict) or not isinstance(conv.get("turn"), list):
            raise InputError(name, None, f"conversation {i + 1} has no 'turn' list")
        cnum = _number(conv.get("number"), name, f"conversation {i + 1}")
        for j, raw in enumerate(conv["turn"]):
            if not isinstance(raw, dict):
                raise InputError(name, None, f"conversation {cnum}, turn {j + 1}: not an object")
            tnum = _number(raw.get("number"), name, f"conversation {cnum}, turn {j + 1}")
            qid = f"{cnum}_{tnum}"
            if qid in seen:
                raise InputError(name, None, f"turn id {qid} occurs twice")
            seen.add(qid)
            queries = {}
            for key, json_key in QUERY_FIELDS.items():
                text = _clean(raw.get(json_key))
                for alt in _FALLBACK.get(key, ()):
                    text = text if text is not None else _clean(raw.get(alt))
                if text is not None:
                    queries[key] = text
            pid, did, src = _canonical(raw)
            turn_no = int(tnum) if tnum.isdigit() else tnum
            turns.append(CastTurn(qid, cnum, turn_no, queries, pid, did, src,
                                  raw.get("passage") if isinstance(raw.get("passage"), str)
                                  else None))
    if not turns:
        raise InputError(name, None, "no turns")
    fields = {f for f in QUERY_FIELDS if all(f in t.queries for t in turns)}
    return CastTopics(turns, name, len(doc), fields)


# --------------------------------------------------------------------------- topic writer
def write_topics(pairs, path) -> str:
    """Write [(qid, query)] atomically with trecqr.adapters.topics: TSV when the path ends in
    .tsv, JSONL for .jsonl, otherwise the TREC topic format. Returns the format."""
    from . import topics as topics_io

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
    import numpy as np
    import pyarrow.compute as pc

    from ..formats.qrels import read_qrels, write_qrels

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


# --------------------------------------------------------------------------- command
@click.command("cast", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--topics", "topics_path", required=True, metavar="FILE",
              help="Organisers' CAsT topic JSON (e.g. 2021_manual_evaluation_topics_v1.0.json).")
@click.option("--query-field", type=click.Choice(list(QUERY_FIELDS)), required=True,
              help="raw_utterance, manual_rewritten_utterance or automatic_rewritten_utterance.")
@click.option("--topics-out", required=True, metavar="OUT",
              help="Topics to write: TSV if OUT ends in .tsv, else TREC <top> format.")
@click.option("--meta-out", default=None, metavar="FILE",
              help="Also write per-turn metadata (canonical passage id) as JSONL.")
@click.option("--qrels", "qrels_path", default=None, metavar="FILE",
              help="CAsT qrels to check against the turn ids and write to --qrels-out.")
@click.option("--qrels-out", default=None, metavar="OUT", help="Where to write the qrels.")
def cast_command(topics_path, query_field, topics_out, meta_out, qrels_path, qrels_out):
    """TREC CAsT topic JSON to TREC topics with turn ids CONV_TURN (106_1), as in the qrels."""
    from ..cli import _run_guarded

    def job():
        if (qrels_path is None) != (qrels_out is None):
            raise UsageError("--qrels and --qrels-out go together")
        topics = read_cast_topics(topics_path)
        pairs = topics.queries(query_field)
        fmt = write_topics(pairs, topics_out)
        canon = sum(t.canonical_passage_id is not None for t in topics.turns)
        click.echo(f"cast: {len(pairs)} turns in {topics.conversations} conversations, query "
                   f"field {query_field} ({QUERY_FIELDS[query_field]}), {canon} with a canonical "
                   f"passage; wrote {topics_out} ({fmt})", err=True)
        if meta_out is not None:
            write_metadata(topics, meta_out)
            click.echo(f"cast: wrote metadata of {len(topics)} turns to {meta_out}", err=True)
        if qrels_path is not None:
            c = convert_cast_qrels(qrels_path, topics, qrels_out)
            click.echo(f"cast: qrels {c.pairs} pairs ({c.relevant_pairs} relevant) for "
                       f"{c.turns_judged} turns; {c.turns_unjudged} turns without judgments; "
                       f"wrote {qrels_out}", err=True)

    _run_guarded(job)


command = cast_command
