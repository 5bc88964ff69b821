"""Passage runs to document runs: keep each document's best passage (TREC CAsT 2021/2022).

CAsT 2021 and 2022 judge documents while systems retrieve passages whose ids are the
document id plus a passage number: ``MARCO_D2706327-1``, ``KILT_105219-12``,
``WAPO_1cf6896e-67be-11e1-ae17-a3ce76ec4751-3``. Collapsing strips the last ``-N`` (only the
last: Washington Post ids are often UUIDs, themselves full of dashes, and one whose last group
is all digits must keep it), keeps the first passage of each document in trec_eval's ranking
order (score descending, then docno descending; scores as doubles, so the kept passage is the
one with the highest score), keeps its score and renumbers ranks.

The organisers' own document runs (``docrun_org_*.run``) cut every dashed WAPO UUID at its first
dash (``WAPO_1cf6896e``), an id the qrels never use: see tests/datasets/test_adapters_cast.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats.arrays import arrow_indices, as_numpy
from trecqr.formats.order import qid_codes, trec_order
from trecqr.formats.run import read_run, Run, write_run

PASSAGE_SUFFIX = r"-[0-9]+$"


@dataclass
class CollapseCounts:
    passages: int  # rows in
    documents: int  # rows out
    topics: int
    no_suffix: int  # rows whose docno had no ``-N`` suffix (kept as they are)

    @property
    def dropped(self) -> int:
        return self.passages - self.documents


def document_ids(docno, pattern: str = PASSAGE_SUFFIX):
    """Passage ids to document ids (an Arrow string array): the trailing ``-N`` removed."""
    return pc.replace_substring_regex(docno, pattern, "", max_replacements=1)


def collapse_run(run: Run, pattern: str = PASSAGE_SUFFIX) -> tuple[Run, CollapseCounts]:
    """A document run from a passage run: each document's first passage in trec_eval's order."""
    n = len(run)
    qcode, topics = qid_codes(run.qid)
    order, _, _ = trec_order(run, float32=False, qcode=qcode)
    idx = arrow_indices(order)
    passages = run.docno.take(idx)
    if isinstance(passages, pa.ChunkedArray):
        passages = passages.combine_chunks()
    docs = document_ids(passages, pattern)
    no_suffix = int(pc.sum(pc.equal(pc.binary_length(docs),
                                    pc.binary_length(passages))).as_py() or 0) if n else 0
    dcode = as_numpy(pc.dictionary_encode(docs).indices).astype(np.int64)
    key = qcode[order].astype(np.int64) * (int(dcode.max(initial=0)) + 1) + dcode
    _, first = np.unique(key, return_index=True)  # first position of each (topic, document)
    first.sort()
    keep = order[first]
    out = Run(run.qid.take(arrow_indices(keep)), docs.take(arrow_indices(first)),
              np.ascontiguousarray(run.score[keep]), run.runid, run.source)
    return out, CollapseCounts(n, len(first), len(topics), no_suffix)


def collapse_file(path, out, *, runid: str | None = None,
                  pattern: str = PASSAGE_SUFFIX) -> CollapseCounts:
    """Read a passage run, write the document run (TREC format, atomically; runid kept)."""
    doc_run, counts = collapse_run(read_run(path), pattern)
    write_run(doc_run, out, runid=runid)
    return counts


def counts_line(counts: CollapseCounts, out) -> str:
    line = (f"collapse: {counts.passages} passages -> {counts.documents} documents over "
            f"{counts.topics} topics ({counts.dropped} lower-ranked passages of an already "
            f"ranked document dropped)")
    if counts.no_suffix:
        line += f"; {counts.no_suffix} docnos without a -N passage suffix kept as they are"
    return line + f"; wrote {out}"
