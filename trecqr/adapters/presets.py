"""Evaluation protocols of the conversational query rewriting papers, as data.

Each :class:`Preset` records what a paper's numbers depend on besides the run: the BM25
parameters, the retrieval depth, the relevance threshold of binary measures, which turns are
evaluated (and out of how many), the qrels' size and id style, and what "MRR" means.

Two readings of "MRR":

``paper`` (``mrr="paper"``)
    What the CQR papers print as "MRR" or "MRR@3" for TopiOCQA and QReCC: trec_eval's full
    ``recip_rank`` over a 100-deep run (pytrec_eval ``recip_rank``), i.e. the rank of the first
    relevant passage anywhere in the top 100, not cut at 3.
``true`` (``mrr="true"``)
    A true reciprocal rank at 3 (ir_measures ``RR@3``): 0 when no relevant passage is in the top 3.

:meth:`Preset.measures` gives trecqr measure names for either reading, with the relevance
threshold written into the names when it is not 1 (``RR(rel=2)@3``, ``R(rel=2)@10``), so
``trecqr.evaluate(qrels, run, preset(name).measures())`` applies the protocol without options.
nDCG uses the graded judgments and takes no threshold.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError

MRR_READINGS = ("paper", "true")


@dataclass(frozen=True)
class Preset:
    name: str
    dataset: str
    split: str
    bm25_k1: float | None  # None: not fixed by the protocol
    bm25_b: float | None
    depth: int  # documents retrieved per turn
    rel_threshold: int  # minimum grade counted relevant by binary measures (trec_eval -l)
    evaluated_turns: int  # turns with qrels, the ones averaged over
    total_turns: int  # turns in the split
    qrels_pairs: int  # (turn, passage/document) rows in the qrels
    qid_style: str  # turn id style of the published qrels (trecqr.adapters.turn_ids)
    mrr_paper: str = "recip_rank"  # the papers' "MRR@3": full recip_rank over the run
    mrr_true: str = "RR@3"
    standard: tuple = ("MRR", "NDCG@3", "R@10", "R@100")  # as the papers label them
    notes: str = ""
    extra: dict = field(default_factory=dict)

    def mrr(self, reading: str = "paper") -> str:
        """The trecqr measure name of "MRR" in the given reading (threshold applied)."""
        if reading not in MRR_READINGS:
            raise ValueError(f"unknown MRR reading {reading!r}: use one of {MRR_READINGS}")
        if reading == "paper":
            return "recip_rank" if self.rel_threshold == 1 else f"RR(rel={self.rel_threshold})"
        return self._thresholded("RR", 3)

    def _thresholded(self, measure: str, cutoff: int) -> str:
        if self.rel_threshold == 1:
            return f"{measure}@{cutoff}"
        return f"{measure}(rel={self.rel_threshold})@{cutoff}"

    def measures(self, mrr: str = "paper") -> list[str]:
        """trecqr names of the standard measures: MRR (reading mrr), nDCG@3, R@10, R@100."""
        return [self.mrr(mrr), "nDCG@3", self._thresholded("R", 10), self._thresholded("R", 100)]

    def labels(self, mrr: str = "paper") -> dict:
        """{trecqr name: the label the papers print}."""
        return dict(zip(self.measures(mrr), self.standard))


_PRESETS = {
    p.name: p
    for p in (
        Preset(
            name="topiocqa-dev", dataset="TopiOCQA", split="dev",
            bm25_k1=0.9, bm25_b=0.4, depth=100, rel_threshold=1,
            evaluated_turns=2514, total_turns=2514, qrels_pairs=2514, qid_style="dash",
            notes="dev_gold.trec: one gold passage per turn, every turn evaluated",
        ),
        Preset(
            name="qrecc-test", dataset="QReCC", split="test",
            bm25_k1=0.82, bm25_b=0.68, depth=100, rel_threshold=1,
            evaluated_turns=8209, total_turns=16451, qrels_pairs=10507, qid_style="canonical",
            notes="turns without a gold passage ({'': 1} in qrels_test.json) are not evaluated; "
                  "ConvSearch-R1 prints 8,124 in one table and uses 8,209 in another",
        ),
        Preset(
            name="cast2020", dataset="TREC CAsT", split="2020",
            bm25_k1=None, bm25_b=None, depth=100, rel_threshold=2,
            evaluated_turns=208, total_turns=216, qrels_pairs=40451, qid_style="canonical",
            notes="official 2020qrels.txt (grades 0-4); binary measures count grade >= 2",
        ),
        Preset(
            name="cast2021", dataset="TREC CAsT", split="2021",
            bm25_k1=None, bm25_b=None, depth=100, rel_threshold=2,
            evaluated_turns=158, total_turns=239, qrels_pairs=19334, qid_style="canonical",
            notes="document qrels qrels-docs.2021.qrel (grades 0-4); passage runs are collapsed "
                  "to documents first; threshold 2 as in 2020",
        ),
    )
}


def preset_names() -> list[str]:
    return list(_PRESETS)


def preset(name: str) -> Preset:
    try:
        return _PRESETS[name]
    except KeyError:
        raise UsageError(f"unknown preset {name!r}: use one of {', '.join(_PRESETS)}") from None


__all__ = ["Preset", "preset", "preset_names", "MRR_READINGS"]
