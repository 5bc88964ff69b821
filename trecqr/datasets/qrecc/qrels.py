"""QReCC qrels (and the SCAI-QReCC-21 ground truth) to TREC qrels with canonical turn ids.

The qrels half of :mod:`trecqr.datasets.qrecc.files` (the conversations half is
:mod:`trecqr.datasets.qrecc.turns`): kept apart because the qrels readers, the turn-id parsing
and the counts record are shared with :mod:`trecqr.datasets.topiocqa` and the turns reader,
while the topics builder is QReCC's alone.

Published forms read (detected from the content, not the file name):

* JSON qrels ``{qid: {passage_url: 1}}`` (``qrels_test.json``, ``qrels_dev.json``), where
  ``{"": 1}`` marks a turn without a gold passage;
* TSV (or any white-space separated TREC) qrels ``qid 0 docno grade`` (``qrecc_qrel.tsv``, qids
  ``QReCC-Test_1_2``, passage ids integers from one paper's renumbering);
* the SCAI-QReCC-21 ground truth: a JSON list of turns with ``Conversation_no``, ``Turn_no`` and
  ``Truth_passages`` (an empty list marks a turn without gold).

Turns without a gold passage are left out of the qrels and counted (:class:`QrelsCounts`).
Every turn id becomes the canonical ``{conv}_{turn}``; passage ids are kept as opaque strings,
never renumbered. The helpers shared with the other readers (turn-id parsing, format
detection, the counts record, :func:`scai_turn`) are public, so that they import them by name.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError, UsageError
from trecqr.formats.qrels import Qrels, read_qrels, write_qrels
from trecqr.formats.textio import read_source
from trecqr.datasets.turn_ids import split_id


# --------------------------------------------------------------------------- turn ids
def canonical_turn_id(qid: str, source: str = "<turn id>", line: int | None = None) -> str:
    """``{conv}_{turn}`` for any recognised style (``QReCC-Test_1_2``, ``1-2``, ...)."""
    return _parse_turn_id(qid, source, line)[0]


def _parse_turn_id(qid: str, source: str, line: int | None) -> tuple[str, str]:
    """(canonical id, style), with the styles of trecqr.datasets.turn_ids."""
    try:
        conv, turn, style = split_id(qid)
    except UsageError:
        raise InputError(source, line,
                         f"turn id {qid!r} is not <conv>_<turn> in a known style "
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
        canon = scai_turn(rec, i, source)
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


def scai_turn(rec, i: int, source: str) -> str:
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
        canon = scai_turn(rec, i, src.name)
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
