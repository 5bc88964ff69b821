"""QReCC: qrels (and the SCAI-QReCC-21 ground truth) to TREC qrels, conversations to topics.

The dataset's one import place: the qrels readers live in :mod:`trecqr.datasets.qrecc.qrels`
and the turns-to-topics conversion in :mod:`trecqr.datasets.qrecc.turns`; this module names
both, so that ``from trecqr.datasets.qrecc.files import ...`` keeps working whichever half holds
the code.

Published qrels forms (detected from the content, not the file name): JSON qrels
``{qid: {passage_url: 1}}`` (``qrels_test.json``, ``qrels_dev.json``; ``{"": 1}`` marks a turn
without a gold passage), TSV/TREC qrels ``qid 0 docno grade`` (``qrecc_qrel.tsv``) and the
SCAI-QReCC-21 ground truth (a JSON list of turns with ``Truth_passages``).

Turns without a gold passage are left out of the qrels and counted (:class:`QrelsCounts`).
Every turn id becomes the canonical ``{conv}_{turn}``; passage ids are kept as opaque strings,
never renumbered. The QReCC test split gives 16,451 turns, 8,209 with gold and 10,507
(turn, passage) pairs from either qrels file.

Conversations (:func:`read_qrecc_turns`: the original QReCC JSON, SCAI turn files, InfoCQR's
JSONL) become topics with :func:`qrecc_topics` (query field raw, human, context joined by
``CONTEXT_SEP`` = ``" [SEP] "``, or a supplied rewrite); ``trecqr convert qrecc`` does both.
"""

from __future__ import annotations

from trecqr.datasets.qrecc.qrels import (
    canonical_turn_id,
    integer_passage_ids,
    qrecc_note,
    QrelsCounts,
    read_qrecc_qrels,
    read_scai_rewrites,
    write_turn_qrels,
)
from trecqr.datasets.qrecc.turns import (
    CONTEXT_SEP,
    QreccTurn,
    QUERY_FIELDS,
    qrecc_topics,
    read_qrecc_turns,
    TurnCounts,
    turns_qrels,
)

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
    "integer_passage_ids",
    "qrecc_note",
    "QUERY_FIELDS",
]
