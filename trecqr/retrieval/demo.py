"""The QReCC demo collection: real passages, qrels and three topic sets from 2,000 QReCC dev turns.

Source: ``dev-sampled2k_chatgpt_ICL.jsonl`` (smartyfh/InfoCQR @ 2953c46; 2,000 real QReCC dev turns,
one JSON object per line with ``Conversation_no``, ``Turn_no``, ``Question``, ``Truth_rewrite``,
``GPT_rewrite``, ``Truth_passages`` and ``Truth_answer``).

:func:`build_qrecc_demo` writes, into ``out_dir``:

``collection.jsonl``
    Pyserini's layout, one ``{"id": ..., "contents": ...}`` per line, sorted by id (byte order). One
    passage per distinct gold passage id. Its text is real text only: the ``Truth_answer`` of the
    turns for which it is gold. When a passage is gold for several turns (93 of 996 ids here, 89 of
    them with different answers), the *distinct* answers of those turns are joined with a single
    space, in (conversation, turn) order, each answer once. (The answers are excerpts of the same
    passage, so the joined text stays on topic.) Turns with gold passages always have a non-empty
    answer in this file, so no passage is empty.
``qrels.txt``
    ``qid 0 passage_id 1`` for every (turn, gold passage) pair, turns in (conversation, turn) order,
    passages in the file's order within a turn. Canonical turn ids ``conv_turn`` (``9467_1``).
``topics-raw.tsv``, ``topics-human.tsv``, ``topics-gpt.tsv``
    ``qid<TAB>query`` (no header): the raw ``Question``, the human ``Truth_rewrite`` and the model
    ``GPT_rewrite`` (a string or an OpenAI chat-completion object, unpacked by
    :func:`trecqr.datasets.rewrites.topics.read_rewrites`), for the qrels turns, in their order.

Turns without a gold passage (``Truth_passages == []``: 1,073 of 2,000) are left out of the qrels
and of the topics; :class:`DemoStats` counts them.

:func:`build_cast_demo` writes the TREC CAsT 2021 half (``fixtures/cast2021-demo``) from the two
official 2021 topic files (daltonj/treccastweb): ``collection.jsonl`` holds every turn's canonical
response passage (``passage`` text, id ``<canonical_result_id>-<passage_id>`` as in the CAsT 2021
passage runs, e.g. ``MARCO_D59865-7``), once per id (one id, ``MARCO_D684519-2``, is given two
different texts by the organisers' file; like the QReCC half, its distinct texts are joined with a
space in turn order); white space runs are collapsed to one space; ``qrels.txt`` makes each
turn's own canonical passage its one relevant passage (a known-item task: find the passage the
organisers' system answered the turn with); ``topics-raw.tsv``, ``topics-manual.tsv`` and
``topics-automatic.tsv`` hold the raw utterance, the manual and the automatic rewrite of every
turn with a canonical passage.
The two files must agree on the turns, raw utterances and canonical passages.

Run it as ``python -m trecqr.retrieval.demo [SOURCE.jsonl] [OUT_DIR]`` (defaults: the shared data
file and ``fixtures/qrecc-demo``), or ``python -m trecqr.retrieval.demo cast [MANUAL.json
AUTOMATIC.json] [OUT_DIR]`` for the CAsT half.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from trecqr.datasets.cast.topics import read_cast_topics
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.records import json_records
from trecqr.datasets.topics import Topics, write_topics
from trecqr.errors import InputError
from trecqr.formats.writer import atomic_write_text
from trecqr.runtime.progress import info

COLLECTION = "collection.jsonl"
QRELS = "qrels.txt"
TOPICS = {"raw": "topics-raw.tsv", "human": "topics-human.tsv", "gpt": "topics-gpt.tsv"}
FILES = (COLLECTION, QRELS, *TOPICS.values())


@dataclass
class DemoStats:
    turns: int = 0              # records in the source file
    with_gold: int = 0          # turns with at least one gold passage (in qrels and topics)
    without_gold: int = 0       # turns left out
    passages: int = 0           # distinct gold passage ids (= collection size)
    pairs: int = 0              # (turn, passage) qrels lines
    shared_passages: int = 0    # passages gold for more than one turn
    joined_passages: int = 0    # of those, passages whose text joins several distinct answers

    def summary(self) -> str:
        return (f"{self.turns} turns, {self.with_gold} with gold "
                f"({self.without_gold} without, left out); "
                f"{self.passages} passages ({self.shared_passages} gold for several turns, "
                f"{self.joined_passages} joining several answers); {self.pairs} qrels pairs")


def _records(path):
    name = os.fspath(path)

    with open(path, encoding="utf-8") as fh:
        for lineno, rec in json_records(name, fh):
            for key in ("Conversation_no", "Turn_no", "Question", "Truth_rewrite", "Truth_passages",
                        "Truth_answer"):
                if key not in rec:
                    raise InputError(name, lineno, f"no field {key!r}")
            yield lineno, rec


def build_qrecc_demo(jsonl_path, out_dir) -> DemoStats:
    """Build the demo collection, qrels and topics from ``jsonl_path`` into ``out_dir``."""
    name = os.fspath(jsonl_path)
    stats = DemoStats()
    turns = []  # (conv, turn, qid, rec)
    seen = {}
    for lineno, rec in _records(jsonl_path):
        conv, turn = int(rec["Conversation_no"]), int(rec["Turn_no"])
        qid = f"{conv}_{turn}"
        if qid in seen:
            raise InputError(name, lineno, f"duplicate turn {qid} (first on line {seen[qid]})")
        seen[qid] = lineno
        turns.append((conv, turn, qid, rec))
    stats.turns = len(turns)
    turns.sort(key=lambda t: (t[0], t[1]))

    questions = {qid: rec["Question"].strip() for _, _, qid, rec in turns}
    gpt = read_rewrites(jsonl_path, format="jsonl", id_field="Conversation_no,Turn_no",
                        rewrite_field="GPT_rewrite", missing="raw", raw=questions).topics.as_dict()

    qrels_lines, answers, gold_for = [], {}, {}
    raw, human, model = {}, {}, {}
    for _, _, qid, rec in turns:
        pids = [str(p).strip() for p in rec["Truth_passages"] or []]
        pids = [p for p in dict.fromkeys(pids) if p]
        if not pids:
            stats.without_gold += 1
            continue
        stats.with_gold += 1
        answer = str(rec["Truth_answer"]).strip()  # verbatim (two answers hold double spaces)
        for pid in pids:
            if any(c.isspace() for c in pid):
                raise InputError(name, seen[qid], f"passage id {pid!r} contains white space")
            qrels_lines.append(f"{qid} 0 {pid} 1\n")
            gold_for[pid] = gold_for.get(pid, 0) + 1
            texts = answers.setdefault(pid, [])
            if answer and answer not in texts:
                texts.append(answer)
        raw[qid] = rec["Question"].strip()
        human[qid] = rec["Truth_rewrite"].strip()
        model[qid] = gpt[qid]
    stats.pairs = len(qrels_lines)
    stats.passages = len(answers)
    stats.shared_passages = sum(1 for n in gold_for.values() if n > 1)
    stats.joined_passages = sum(1 for t in answers.values() if len(t) > 1)
    empty = [p for p, t in answers.items() if not t]
    if empty:
        raise InputError(name, None,
                         f"{len(empty)} gold passages have no answer text (first {empty[0]})")

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    coll = "".join(json.dumps({"id": pid, "contents": " ".join(answers[pid])},
                              ensure_ascii=False) + "\n"
                   for pid in sorted(answers, key=lambda p: p.encode("utf-8")))
    atomic_write_text(out / COLLECTION, coll)
    atomic_write_text(out / QRELS, "".join(qrels_lines))
    for kind, queries in (("raw", raw), ("human", human), ("gpt", model)):
        topics = Topics.from_dict(queries, source=f"{name} ({kind})")
        write_topics(topics, out / TOPICS[kind], "tsv")
    return stats


CAST_TOPICS = {"raw": "topics-raw.tsv", "manual": "topics-manual.tsv",
               "automatic": "topics-automatic.tsv"}


def build_cast_demo(manual_json, automatic_json, out_dir) -> dict:
    """Build the CAsT 2021 demo (see the module docstring); returns counts."""
    manual, automatic = read_cast_topics(manual_json), read_cast_topics(automatic_json)
    auto_by_qid = {t.qid: t for t in automatic.turns}
    if [t.qid for t in manual.turns] != [t.qid for t in automatic.turns]:
        raise InputError(os.fspath(automatic_json), None, "not the manual file's turns")
    passages, qrels_lines = {}, []
    queries = {kind: {} for kind in CAST_TOPICS}
    for t in manual.turns:
        a = auto_by_qid[t.qid]
        if (a.queries.get("raw"), a.canonical_passage_id, a.passage) != (
                t.queries.get("raw"), t.canonical_passage_id, t.passage):
            raise InputError(os.fspath(automatic_json), None,
                             f"turn {t.qid}: raw utterance or canonical passage differs from "
                             "the manual file's")
        if not t.canonical_passage_id or not (t.passage or "").strip():
            continue
        pid, text = t.canonical_passage_id, " ".join(t.passage.split())
        texts = passages.setdefault(pid, [])
        if text not in texts:
            texts.append(text)
        qrels_lines.append(f"{t.qid} 0 {pid} 1\n")
        queries["raw"][t.qid] = t.queries["raw"]
        queries["manual"][t.qid] = t.queries["manual"]
        queries["automatic"][t.qid] = a.queries["automatic"]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / COLLECTION, "".join(
        json.dumps({"id": pid, "contents": " ".join(passages[pid])}, ensure_ascii=False) + "\n"
        for pid in sorted(passages, key=lambda p: p.encode("utf-8"))))
    atomic_write_text(out / QRELS, "".join(qrels_lines))
    for kind, qs in queries.items():
        write_topics(Topics.from_dict(qs, source=f"CAsT 2021 ({kind})"), out / CAST_TOPICS[kind],
                     "tsv")
    return {"turns": len(manual.turns), "with_passage": len(qrels_lines),
            "passages": len(passages),
            "passages_with_two_texts": sum(1 for t in passages.values() if len(t) > 1)}


def main(argv=None) -> int:
    """``python -m trecqr.retrieval.demo``: rebuild a demo fixture; its summary goes to the
    reporter (stderr)."""
    argv = sys.argv[1:] if argv is None else argv
    root = Path(__file__).resolve().parents[2]
    if argv and argv[0] == "cast":
        c21 = root / ".." / "shared" / "data" / "cast2021"
        src = argv[1:3] if len(argv) >= 3 else [
            c21 / "2021_manual_evaluation_topics_v1.0.json",
            c21 / "2021_automatic_evaluation_topics_v1.0.json"]
        out = argv[3] if len(argv) > 3 else (argv[1] if len(argv) == 2 else
                                             root / "fixtures" / "cast2021-demo")
        info(str(build_cast_demo(*src, out)))
        return 0
    default = root / ".." / "shared" / "data" / "qrecc" / "dev-sampled2k_chatgpt_ICL.jsonl"
    src = argv[0] if argv else default
    out = argv[1] if len(argv) > 1 else root / "fixtures" / "qrecc-demo"
    info(build_qrecc_demo(src, out).summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
