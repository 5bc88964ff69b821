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
``trecqr.evaluate(qrels, run, preset(name).measures())`` applies the threshold without options.
nDCG uses the graded judgments and takes no threshold. The names are ir_measures', averaged over
every qrels turn (a turn the run lacks counting 0), except the paper reading's ``recip_rank``
(threshold 1), a trec_eval name averaged over the turns the run has: they agree when the run has
every qrels turn. The preset's own turns (``evaluated_turns``, ``complete``) are its protocol's:
``trecqr eval --protocol`` (:func:`protocol_evaluation`) and ``trecqr cqr --preset``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from trecqr.api.evaluation import score_trec
from trecqr.errors import UsageError
from trecqr.formats.run import Run, read_run
from trecqr.report.text_table import aligned_table
from trecqr.protocols.official_eval import official_evaluation
from trecqr.rankings.options import Options
from trecqr.protocols import scai
from trecqr.datasets.collapse import collapse_run
from trecqr.protocols.papers import PRESETS as PAPER_PRESETS
from trecqr.protocols.papers import PROTOCOLS as PAPER_PROTOCOLS
from trecqr.datasets.turn_ids import split_id

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
    qid_style: str  # turn id style of the published qrels (trecqr.datasets.turn_ids)
    mrr_paper: str = "recip_rank"  # the papers' "MRR@3": full recip_rank over the run
    mrr_true: str = "RR@3"
    standard: tuple = ("MRR", "NDCG@3", "R@10", "R@100")  # as the papers label them
    notes: str = ""
    extra: dict = field(default_factory=dict)
    complete: bool = False  # trec_eval -c: a judged turn without results counts 0
    protocol: str | None = None  # the Protocol that scores it (trecqr eval --protocol)
    source: str = ""  # the evaluation code read, file and commit
    missing: str = "raw"  # turn policy for a missing rewrite (trecqr.protocols.turn_policy)
    min_results: int | None = None  # a turn with fewer results leaves the average (RetPO)
    passage_max_len: int | None = None  # dense passage encoding, tokens
    query_max_len: int | None = None  # dense query encoding, tokens
    title_join: str | None = None  # TopiOCQA passage text: title and section joined by this
    bm25_query_tokens: int | None = None  # BM25 queries cut at N whitespace tokens

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
        """trecqr names of the standard measures: MRR (reading mrr), nDCG@3, R@10, R@100 (which
        topics each averages over: the module's docstring)."""
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
_PRESETS.update((d["name"], Preset(**d)) for d in PAPER_PRESETS)


def preset_names() -> list[str]:
    return list(_PRESETS)


# --------------------------------------------------------------------------- protocols
@dataclass(frozen=True)
class Protocol:
    """An official evaluation protocol: everything besides qrels and run that fixes a number.

    ``trecqr eval --protocol NAME`` applies it (and refuses -m, -l, -M, -c, which it fixes);
    the coverage line names it. ``kind`` is ``trec_eval`` (trec_eval with these options) or
    ``scai`` (the SCAI-QReCC-21 evaluator's own averaging, :mod:`trecqr.protocols.scai`).
    """

    name: str
    dataset: str
    source: str  # the paper or script reproduced
    rel_threshold: int  # trec_eval -l
    depth: int | None  # trec_eval -M (None: the whole ranking)
    complete: bool  # trec_eval -c
    measures: tuple  # trec_eval measure names
    dedup: str  # what happens to the run before scoring
    turns: str  # which turns count in the average
    kind: str = "trec_eval"
    notes: str = ""

    def flags(self) -> str:
        parts = (["-c"] if self.complete else []) + \
            ([f"-M{self.depth}"] if self.depth is not None else []) + [f"-l{self.rel_threshold}"]
        return " ".join(parts + [f"-m {m}" for m in self.measures])

    def options(self, compat: str = "9.0.8"):
        return Options(relevance_level=self.rel_threshold,
                       max_docs=sys.maxsize if self.depth is None else self.depth,
                       complete=self.complete, compat=compat)


_CAST_NIST = ("ndcg_cut.3,5,500", "map_cut.500")
_PROTOCOLS = {
    p.name: p
    for p in (
        Protocol(
            name="scai-qrecc21", dataset="QReCC (SCAI-QReCC-21)",
            source="scai-conf/SCAI-QReCC-21 code/evaluation-script/scai-qrecc21-evaluator.py "
                   "(version 2021-10-04)",
            rel_threshold=1, depth=None, complete=False, measures=("recip_rank",),
            dedup="none", kind="scai",
            turns="run turns that are ground-truth turns with gold passages; with "
                  "--eval-missing-truth (the paper's setting) every ground-truth turn in the run, "
                  "gold-less turns judged {'': 1} (RR 0); a run turn with empty Model_passages "
                  "counts 0",
            notes="QR (gen --protocol scai-qrecc21): ROUGE-1 recall against Truth_rewrite, "
                  "rouge-score tokens without stemming, first turns left out unless "
                  "--eval-turn-one-rewrites, empty Truth_rewrite left out unless "
                  "--eval-missing-truth; the script prints a bootstrap median (unseeded), "
                  "trecqr the mean and, with --bootstrap-seed, that median"),
        Protocol(
            name="cast2021-nist", dataset="TREC CAsT 2021",
            source="Dalton et al., TREC CAsT 2021: The Conversational Assistance Track Overview "
                   "(TREC 2021); daltonj/treccastweb 2021/baselines (passage runs converted to "
                   "document ids and de-duplicated)",
            rel_threshold=2, depth=1000, complete=True, measures=_CAST_NIST,
            dedup="passage run to documents: each document at its best passage's rank "
                  "(trecqr collapse), before -M1000",
            turns="every judged turn (158 of 239 in qrels-docs.2021.qrel); -c: a judged turn "
                  "missing from the run counts 0"),
        Protocol(
            name="cast2022-nist", dataset="TREC CAsT 2022",
            source="Owoicho et al., TREC CAsT 2022: Going Beyond User Ask and System Retrieve "
                   "with Initiative and Response Generation (TREC 2022)",
            rel_threshold=2, depth=1000, complete=True, measures=_CAST_NIST,
            dedup="none (passage qrels, passage runs)",
            turns="every judged turn (165 of the 205 evaluated turns in cast2022.qrel); -c"),
        Protocol(
            name="ikat2023", dataset="TREC iKAT 2023",
            source="Aliannejadi et al., TREC iKAT 2023: The Interactive Knowledge Assistance "
                   "Track Overview (TREC 2023, arXiv:2401.01330)",
            rel_threshold=2, depth=1000, complete=True,
            measures=("ndcg_cut.3,5,1000", "P.20", "recall.20,1000", "map_cut.1000",
                      "recip_rank"),
            dedup="official JSON run: a passage cited twice in a turn kept once at its best "
                  "score (trecqr convert ikat --run)",
            turns="every judged turn of NIST's passage qrels (grades 0-4); -c",
            notes="passage qrels come from NIST only (not in ../shared/data); the measure list "
                  "follows the overview's tables and was not checked against a stored copy"),
        Protocol(
            name="ikat2024", dataset="TREC iKAT 2024",
            source="Abbasiantaeb et al., TREC iKAT 2024 overview (TREC 2024)",
            rel_threshold=2, depth=1000, complete=True,
            measures=("ndcg_cut.5,10,1000", "P.20", "recall.20,1000", "map_cut.1000",
                      "recip_rank"),
            dedup="official JSON run: a passage cited twice in a turn kept once at its best "
                  "score (trecqr convert ikat --run)",
            turns="every judged turn of NIST's passage qrels; -c",
            notes="as ikat2023: not checked against a stored copy of the overview"),
        Protocol(
            name="ikat2023-ptkb", dataset="TREC iKAT 2023 PTKB statement ranking",
            source="Aliannejadi et al. (TREC 2023); qrels 2023_ptkb_qrels_nist.txt and "
                   "2023_ptkb_qrels_org.txt (irlabamsterdam/iKAT)",
            rel_threshold=1, depth=None, complete=False,
            measures=("P.3", "recall.3", "ndcg_cut.3", "recip_rank", "map"),
            dedup="a statement cited twice in a turn kept once (trecqr convert ikat "
                  "--ptkb-run-out)",
            turns="turns judged in the PTKB qrels file given (NIST: 98, organisers: 112) that "
                  "the run ranks statements for"),
        Protocol(
            name="convsearch-r1-qrecc", dataset="QReCC test (ConvSearch-R1 and the CQR papers)",
            source="ConvSearch-R1 (Zhu et al., 2025) and InfoCQR/RetPO evaluation code: "
                   "pytrec_eval over a 100-deep BM25 run (preset qrecc-test)",
            rel_threshold=1, depth=100, complete=False,
            measures=("recip_rank", "ndcg_cut.3", "recall.10,100"),
            dedup="none", turns="the 8,209 test turns with a gold passage (turns without gold "
                                "left out of the qrels)",
            notes="the papers print recip_rank as 'MRR@3'; preset('qrecc-test') gives the true "
                  "RR@3 too"),
        Protocol(
            name="convsearch-r1-topiocqa", dataset="TopiOCQA dev (ConvSearch-R1)",
            source="ConvSearch-R1 (Zhu et al., 2025), preset topiocqa-dev",
            rel_threshold=1, depth=100, complete=False,
            measures=("recip_rank", "ndcg_cut.3", "recall.10,100"),
            dedup="none", turns="all 2,514 dev turns (one gold passage each)"),
    )
}
_PROTOCOLS.update((d["name"], Protocol(**d)) for d in PAPER_PROTOCOLS)


def protocol_names() -> list[str]:
    return list(_PROTOCOLS)


def protocol(name: str) -> Protocol:
    try:
        return _PROTOCOLS[name]
    except KeyError:
        raise UsageError(f"unknown protocol {name!r}: use one of {', '.join(_PROTOCOLS)}") \
            from None


def protocol_evaluation(name: str, qrels, run, *, eval_missing_truth: bool = False,
                        compat: str = "9.0.8", collection=None):
    """(Evaluation, note) of RUN against QRELS under protocol NAME; note names the protocol
    for the coverage line. scai-qrecc21 reads the SCAI ground truth and run JSON (or TREC files)
    and gives the evaluator's MRR (as recip_rank, averaged as the evaluator averages)."""
    p = protocol(name)
    if eval_missing_truth and p.kind != "scai":
        raise UsageError(f"--eval-missing-truth belongs to scai-qrecc21, not {name}")
    if p.kind == "scai":
        return _scai_evaluation(p, qrels, run, eval_missing_truth, compat)
    if p.kind.endswith("-official"):  # trecqr/protocols/official_eval.py
        return official_evaluation(p.name, qrels, run, collection, compat)
    if p.dedup.startswith("passage run to documents"):
        run, _ = collapse_run(run if isinstance(run, Run) else read_run(run))
    ev = score_trec(qrels, run, list(p.measures), p.options(compat))
    return ev, f"; protocol {p.name} ({p.flags()})"


def _scai_evaluation(p, qrels, run, eval_missing_truth, compat):
    """The SCAI evaluator's MRR as a one-column trec_eval-style Evaluation."""
    gt, gt_name = scai.read_ground_truth(qrels)
    if _is_json_list(run):
        records, run_name = scai.read_run(run)
    else:
        trec = read_run(run)
        records, run_name = _records_from_trec(trec), trec.source
    result = scai.scai_mrr(gt, records, eval_missing_truth, source=gt_name, run_source=run_name)
    qrels_obj, rel = scai.ground_truth_qrels(gt, eval_missing_truth, gt_name)
    ranked = {t: r for t, r in scai.run_passages(records).items() if t in rel and r}
    ev = score_trec(qrels_obj, scai.trec_run(ranked, source=run_name), ["recip_rank"],
                    p.options(compat))
    # the evaluator's per-turn values and average: turns with empty Model_passages count 0
    col = ev.column("recip_rank")
    qids = list(result.per_turn)
    col.values = np.array([result.per_turn[q] for q in qids], dtype=np.float64)
    ev.qids = qids
    col.summary = result.mrr
    setting = "--eval-missing-truth" if eval_missing_truth else "gold turns only"
    return ev, (f"; protocol {p.name} ({setting}: MRR over the {result.turns} run turns in the "
                f"ground truth, {result.empty} with empty Model_passages)")


def _is_json_list(path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(64).lstrip()
    except OSError:
        return False
    return head.startswith(b"[")


def _records_from_trec(trec) -> list:
    passages: dict = {}
    for q, d, s in zip(trec.qid.to_pylist(), trec.docno.to_pylist(), trec.score.tolist()):
        passages.setdefault(q, {})[d] = s

    out = []
    for q, ranking in passages.items():
        conv, turn, _ = split_id(q)
        out.append({"Conversation_no": int(conv), "Turn_no": int(turn),
                    "Model_passages": ranking})
    return out


def preset(name: str) -> Preset:
    try:
        return _PRESETS[name]
    except KeyError:
        raise UsageError(f"unknown preset {name!r}: use one of {', '.join(_PRESETS)}") from None


__all__ = ["Preset", "preset", "preset_names", "MRR_READINGS", "Protocol", "protocol",
           "protocol_names", "protocol_evaluation"]


def protocol_scores(name: str, qrels, run, compat: str = "9.0.8") -> dict:
    """{measure: summary value, ..., "evaluated": topics} of one run (a path or a Run) under
    trec_eval protocol NAME, for :func:`protocol_table`; qrels may be read already."""
    p = protocol(name)
    if p.kind != "trec_eval":
        raise UsageError(f"{name} scores SCAI files: run trecqr eval --protocol {name} on the "
                         "ground truth and each kept run (--runs-dir)")
    ev, _ = protocol_evaluation(name, qrels, run, compat=compat)
    out = {c.name: float(c.summary) for c in ev.columns if c.name != "runid"}
    # the topics every column's mean is over: with -c every qrels topic, not only the run's
    out["evaluated"] = ev.rankings.num_qrels_topics if p.complete else len(ev.qids)
    return out


def protocol_table(name: str, rows: list) -> str:
    """The protocol's measures for each (row name, protocol_scores), as an aligned table under
    a line naming the protocol (``trecqr cqr --protocol``)."""
    p = protocol(name)
    header = ["run"] + ([k for k in rows[0][1] if k != "evaluated"] if rows else []) + \
        ["evaluated"]
    body = [[row] + [f"{v:.4f}" for k, v in scores.items() if k != "evaluated"]
            + [str(scores["evaluated"])] for row, scores in rows]
    over = ("every qrels turn, one the run lacks counting 0 (-c)" if p.complete else
            "the qrels turns the run has (trec_eval's rule)")
    return "\n".join([f"protocol {p.name} ({p.flags()}; de-duplication: {p.dedup})",
                      *aligned_table(body, header, rule=False),
                      f"every column averages over the evaluated turns: {over}"]) + "\n"
