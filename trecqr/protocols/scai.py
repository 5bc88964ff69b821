"""The SCAI-QReCC-21 evaluator's logic (QReCC's official evaluation), step by step.

Source: scai-conf/SCAI-QReCC-21 ``code/evaluation-script/scai-qrecc21-evaluator.py`` (version
2021-10-04). Its files are JSON lists of turns keyed by ``Conversation_no`` and ``Turn_no``
(integers; the turn id is ``"%d_%d"``):

ground truth
    ``Truth_rewrite``, ``Truth_passages`` (a list of passage ids; empty when the turn has no
    gold passage), ``Truth_answer``. QReCC's JSON qrels (``qrels_test.json``: ``{turn:
    {passage: 1}}``, ``{"": 1}`` for a turn without gold) are read as ground truth too (for MRR).
run
    ``Model_rewrite``, ``Model_passages`` (``{passage id: score}``), ``Model_answer``; each
    optional.

What the script computes, and what :func:`scai_mrr` and :func:`scai_qr` reproduce:

MRR (passage retrieval)
    The qrels are the ground-truth turns with gold passages, ``{passage: 1}``; with
    ``--eval-missing-truth`` (the paper's setting) a turn without gold passages is kept with
    the impossible judgment ``{"": 1}``. The run is every run turn that has ``Model_passages``
    (a turn given twice: its last passages) and is in those qrels; trec_eval's ``recip_rank``
    (pytrec_eval) is computed per turn and averaged over these turns, in the run's order. A run
    turn whose ``Model_passages`` is empty counts 0 (pytrec_eval scores an empty ranking), where
    trec_eval would leave the turn out; a passage id ``""`` in a run is an error (the script
    exits).
QR (question rewriting)
    ROUGE-1 recall of ``Model_rewrite`` against ``Truth_rewrite`` (rouge-score's tokenizer, no
    stemming: the ``rouge`` metric of Hugging Face ``datasets`` with its defaults), over the
    ground-truth turns in file order: first turns left out unless ``--eval-turn-one-rewrites``,
    turns with an empty ``Truth_rewrite`` left out unless ``--eval-missing-truth``; a turn
    without a rewrite in the run is scored with ``""`` (recall 0). The script reports
    ``score['rouge1'].mid.recall``: the median of 1,000 bootstrap means drawn with numpy's
    global random state, unseeded, so it changes from call to call (by about 1e-4 on 1,000
    turns). :func:`scai_qr` gives the mean recall (what the bootstrap estimates, exact), and the
    bootstrap median drawn exactly as rouge-score's ``BootstrapAggregator`` draws it from a
    given seed (``bootstrap_seed``), so a seeded run of the script is reproduced to the bit.

:func:`write_scai_files` builds SCAI-format files from QReCC turns that carry gold passages and
rewrites (InfoCQR's ``dev-sampled2k_chatgpt_ICL.jsonl``) and a TREC run.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.api.evaluation import score_trec
from trecqr.errors import InputError, UsageError
from trecqr.formats.order import trec_order
from trecqr.formats.qrels import qrels_from_dict
from trecqr.formats.run import read_run as read_trec_run, Run, write_run
from trecqr.formats.writer import atomic_write_text
from trecqr.rankings.options import Options
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.records import json_records, load_json
from trecqr.datasets.turn_ids import canonical_id, split_id

#: rouge-score's BootstrapAggregator defaults, as the script uses them
BOOTSTRAP_SAMPLES = 1000
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")  # the datasets metric's default order


def _load(path, what: str) -> tuple[list, str]:
    doc, name = _load_any(path)
    if not isinstance(doc, list):
        raise InputError(name, None, f"expected a JSON list of {what} turns")
    for i, rec in enumerate(doc):
        if not isinstance(rec, dict):
            raise InputError(name, None, f"record {i + 1} is not an object")
        for key in ("Conversation_no", "Turn_no"):
            v = rec.get(key)
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(name, None, f"record {i + 1}: {key} {v!r} is not an integer "
                                             "(the evaluator formats ids with %d)")
    return doc, name


def _load_any(path):
    name = os.fspath(path)
    return load_json(name), name


def _qrels_as_ground_truth(doc: dict, name: str) -> list:
    out = []
    for qid, rel in doc.items():
        try:
            conv, turn, _ = split_id(str(qid))
        except UsageError:
            raise InputError(name, None, f"turn id {qid!r} is not <conv>_<turn>") from None
        if not isinstance(rel, dict):
            raise InputError(name, None, f"turn {qid}: not an object {{passage: grade}}")
        passages = [p for p, g in rel.items() if p != "" and isinstance(g, (int, float))
                    and not isinstance(g, bool) and g > 0]
        out.append({"Conversation_no": int(conv), "Turn_no": int(turn), "Truth_rewrite": "",
                    "Truth_passages": passages})
    return out


def turn_id(rec: dict) -> str:
    return "%d_%d" % (rec["Conversation_no"], rec["Turn_no"])


def read_ground_truth(path) -> tuple[list, str]:
    """SCAI ground truth records; QReCC's JSON qrels (``{turn: {passage: 1}}``, ``{"": 1}`` for a
    gold-less turn: qrels_test.json, qrels_dev.json) are read as ground truth without rewrites."""
    doc, name = _load_any(path)
    if isinstance(doc, dict):
        return _qrels_as_ground_truth(doc, name), name
    doc, name = _load(path, "ground-truth")
    for i, rec in enumerate(doc):
        tp = rec.get("Truth_passages", [])
        if not isinstance(tp, list) or not all(isinstance(p, str) for p in tp):
            raise InputError(name, None, f"turn {turn_id(rec)}: Truth_passages is not a list "
                                         "of passage ids")
        if not isinstance(rec.get("Truth_rewrite", ""), str):
            raise InputError(name, None, f"turn {turn_id(rec)}: Truth_rewrite is not a string")
    return doc, name


def read_run(path) -> tuple[list, str]:
    doc, name = _load(path, "run")
    for rec in doc:
        mp = rec.get("Model_passages")
        if mp is None:
            continue
        if not isinstance(mp, dict):
            raise InputError(name, None, f"turn {turn_id(rec)}: Model_passages is not an "
                                         "object {passage id: score}")
        if "" in mp:
            raise InputError(name, None, f"turn {turn_id(rec)}: invalid passage id ''")
        for pid, score in mp.items():
            if isinstance(score, bool) or not isinstance(score, (int, float)) or \
                    score != score or score in (float("inf"), float("-inf")):
                raise InputError(name, None, f"turn {turn_id(rec)}: passage {pid!r}: score "
                                             f"{score!r} is not a finite number")
    return doc, name


def ground_truth_qrels(gt: list, eval_missing_truth: bool = False, source: str = "<gt>"):
    """The evaluator's qrels: ``{turn: {passage: 1}}``, gold-less turns ``{"": 1}`` when
    eval_missing_truth (a later record of a turn replaces an earlier one, as in the script)."""
    rel: dict = {}
    for rec in gt:
        tid = turn_id(rec)
        passages = rec.get("Truth_passages") or []
        if passages:
            rel[tid] = {p: 1 for p in passages}
        elif eval_missing_truth:
            rel[tid] = {"": 1}
    if not rel:
        raise InputError(source, None, "no turn with gold passages (use --eval-missing-truth "
                                       "to evaluate gold-less turns)")
    return qrels_from_dict(rel, source), rel


def run_passages(run: list) -> dict:
    """{turn: {passage: score}} of the run turns with Model_passages (last record wins, at the
    position of the first, as a Python dict assignment does)."""
    out: dict = {}
    for rec in run:
        if "Model_passages" in rec and rec["Model_passages"] is not None:
            out[turn_id(rec)] = rec["Model_passages"]
    return out


def trec_run(passages: dict, runid: str = "scai", source: str = "<scai run>"):
    """A trecqr Run from {turn: {passage: score}}."""
    qids, docs, scores = [], [], []
    for tid, ranking in passages.items():
        for pid, score in ranking.items():
            qids.append(tid)
            docs.append(pid)
            scores.append(float(score))
    return Run(pa.array(qids, pa.string()), pa.array(docs, pa.string()),
               np.array(scores, dtype=np.float64), runid=runid, source=source)


@dataclass
class ScaiMrr:
    mrr: float
    turns: int  # run turns evaluated (the mean's denominator)
    empty: int  # of them, turns with an empty Model_passages (0 each)
    per_turn: dict


def scai_mrr(gt: list, run: list, eval_missing_truth: bool = False, *,
             source: str = "<gt>", run_source: str = "<run>") -> ScaiMrr:
    """The evaluator's MRR (see the module docstring)."""
    qrels, rel = ground_truth_qrels(gt, eval_missing_truth, source)
    passages = {t: p for t, p in run_passages(run).items() if t in rel}
    if not passages:
        raise InputError(run_source, None, "no run turn with Model_passages is a turn of the "
                                           "ground truth")
    ranked = {t: p for t, p in passages.items() if p}
    per = {}
    if ranked:
        ev = score_trec(qrels, trec_run(ranked, source=run_source), ["recip_rank"], Options())
        col = next(c for c in ev.columns if c.name == "recip_rank")
        per = dict(zip(ev.qids, (float(v) for v in col.values)))
    values = [per.get(t, 0.0) for t in passages]
    return ScaiMrr(sum(values) / len(values), len(values), len(passages) - len(ranked),
                   dict(zip(passages, values)))


@dataclass
class ScaiQr:
    qr_mean: float  # mean ROUGE-1 recall over the scored turns
    qr_bootstrap: float | None  # the script's bootstrap median, drawn from bootstrap_seed
    turns: int  # turns scored
    without_rewrite: int  # of them, turns the run has no rewrite for (scored with "")
    seed: int | None


def rewriting_run(run: list) -> dict:
    """{turn: Model_rewrite} for the run turns with a rewrite that is not null."""
    out = {}
    for rec in run:
        if "Model_rewrite" in rec and rec["Model_rewrite"] is not None:
            out[turn_id(rec)] = rec["Model_rewrite"]
    return out


def scai_qr(gt: list, rewrites: dict, eval_missing_truth: bool = False,
            eval_turn_one_rewrites: bool = False, bootstrap_seed: int | None = None) -> ScaiQr:
    """The evaluator's QR (ROUGE-1 recall) for rewrites ``{turn id: text}``."""
    from rouge_score import rouge_scorer

    if not rewrites:
        raise UsageError("no rewrites to score (the run has no Model_rewrite)")
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)
    rows, missing = [], 0
    for rec in gt:
        if not (eval_turn_one_rewrites or rec["Turn_no"] > 1):
            continue
        reference = rec.get("Truth_rewrite", "")
        if not (eval_missing_truth or reference != ""):
            continue
        tid = turn_id(rec)
        if tid not in rewrites:
            missing += 1
        s = scorer.score(reference, rewrites.get(tid, ""))["rouge1"]
        rows.append((s.precision, s.recall, s.fmeasure))
    if not rows:
        raise UsageError("no ground-truth turn to score rewrites on")
    matrix = np.vstack(rows)
    mean = float(np.mean(matrix[:, 1]))
    boot = None
    if bootstrap_seed is not None:
        boot = bootstrap_median(matrix, bootstrap_seed)[1]
    return ScaiQr(mean, boot, len(rows), missing, bootstrap_seed)


def bootstrap_median(matrix, seed: int, n_samples: int = BOOTSTRAP_SAMPLES):
    """rouge-score's BootstrapAggregator median for a (turn, [p, r, f]) matrix, drawn from
    numpy's legacy RandomState(seed), as ``np.random.seed(seed)`` then the aggregator draws
    for its first score type (rouge1 is the first of the metric's default types)."""
    rng = np.random.RandomState(seed)
    means = np.zeros((n_samples, matrix.shape[1]))
    for i in range(n_samples):
        idx = rng.choice(np.arange(matrix.shape[0]), size=matrix.shape[0])
        means[i, :] = np.mean(matrix[idx, :], axis=0)
    return [float(x) for x in np.percentile(means, 50, axis=0)]


# --------------------------------------------------------------------------- writing files
@dataclass
class ScaiFiles:
    turns: int
    with_gold: int
    with_passages: int  # run turns with at least one passage
    passages: int


def write_scai_files(turns_path, run, gt_out, run_out, *, rewrite_field: str = "GPT_rewrite",
                     depth: int | None = None) -> ScaiFiles:
    """SCAI-format ground truth and run from a QReCC turns JSONL (``Conversation_no``,
    ``Turn_no``, ``Truth_rewrite``, ``Truth_passages``, ``Truth_answer``, and a model's rewrite
    in ``rewrite_field``, a string or an OpenAI chat completion) and a TREC run (path or Run) of
    the same turns (canonical ids ``conv_turn``): ``Model_rewrite`` is the rewrite,
    ``Model_passages`` the run's passages and scores (the first ``depth`` in trec_eval's order;
    ``{}`` for a turn the run has nothing for). Both files are written only when both are built.
    """
    name = os.fspath(turns_path)
    with open(name, encoding="utf-8") as fh:
        text = fh.read()
    records = [rec for _, rec in json_records(name, text)]
    gt = []
    for i, rec in enumerate(records, 1):
        for key in ("Conversation_no", "Turn_no", "Truth_rewrite", "Truth_passages",
                    "Truth_answer"):
            if key not in rec:
                raise InputError(name, i, f"record has no {key!r}")
        gt.append({"Conversation_no": rec["Conversation_no"], "Turn_no": rec["Turn_no"],
                   "Truth_rewrite": rec["Truth_rewrite"], "Truth_passages": rec["Truth_passages"],
                   "Truth_answer": rec["Truth_answer"]})
    _ = [turn_id(r) for r in gt]
    rewrites = read_rewrites(turns_path, format="jsonl", id_field="Conversation_no,Turn_no",
                             rewrite_field=rewrite_field, missing="drop").topics.as_dict()
    trec = read_trec_run(run) if not hasattr(run, "qid") else run
    order, _, _ = trec_order(trec, float32=False)
    qid = trec.qid.take(order).to_pylist()
    doc = trec.docno.take(order).to_pylist()
    score = trec.score[order].tolist()
    ranked: dict = {}
    for q, d, s in zip(qid, doc, score):
        lst = ranked.setdefault(q, {})
        if depth is None or len(lst) < depth:
            lst[d] = s
    out_run = []
    for rec in gt:
        tid = turn_id(rec)
        entry = {"Conversation_no": rec["Conversation_no"], "Turn_no": rec["Turn_no"]}
        if tid in rewrites:
            entry["Model_rewrite"] = rewrites[tid]
        entry["Model_passages"] = ranked.get(tid, {})
        out_run.append(entry)
    gt_text = json.dumps(gt, ensure_ascii=False, indent=1) + "\n"
    run_text = json.dumps(out_run, ensure_ascii=False, indent=1) + "\n"
    atomic_write_text(gt_out, gt_text)
    atomic_write_text(run_out, run_text)
    return ScaiFiles(len(gt), sum(bool(r["Truth_passages"]) for r in gt),
                     sum(bool(r["Model_passages"]) for r in out_run),
                     sum(len(r["Model_passages"]) for r in out_run))


def convert_scai_run(path, out) -> tuple[int, int, int]:
    """SCAI run JSON -> TREC run file (``conv_turn Q0 passage rank score scai``): (turns with
    passages, passages, turns with an empty Model_passages, which a TREC run cannot hold)."""
    run, name = read_run(path)
    passages = run_passages(run)
    ranked = {t: p for t, p in passages.items() if p}
    if not ranked:
        raise InputError(name, None, "no turn has Model_passages")
    trec = trec_run(ranked, runid="scai", source=name)
    write_run(trec, out)
    return len(ranked), len(trec.qid), len(passages) - len(ranked)


def qr_from_files(pred, ref, *, eval_missing_truth: bool = False,
                  eval_turn_one_rewrites: bool = False, bootstrap_seed: int | None = None):
    """:func:`scai_qr` of PRED (a SCAI run JSON with Model_rewrite, or any rewrites file trecqr
    reads, JSONL or TSV, matched by turn) against REF (a SCAI ground truth JSON)."""
    gt, _ = read_ground_truth(ref)
    with open(os.fspath(pred), "rb") as fh:
        is_json_list = fh.read(64).lstrip().startswith(b"[")
    if is_json_list:
        run, _ = read_run(pred)
        rewrites = rewriting_run(run)
    else:
        topics = read_rewrites(pred, missing="drop").topics
        rewrites = {canonical_id(q): text for q, text in topics}
    return scai_qr(gt, rewrites, eval_missing_truth, eval_turn_one_rewrites, bootstrap_seed)


def qr_table(result: ScaiQr, eval_missing_truth: bool, eval_turn_one_rewrites: bool) -> str:
    lines = [f"QR\t{result.qr_mean:.4f}\tROUGE-1 recall against Truth_rewrite, mean over "
             f"{result.turns} turns"]
    if result.qr_bootstrap is not None:
        lines.append(f"QR_bootstrap\t{result.qr_bootstrap:.4f}\tthe evaluator's bootstrap median "
                     f"(1000 samples, numpy seed {result.seed})")
    lines.append(f"# protocol scai-qrecc21: first turns "
                 f"{'kept' if eval_turn_one_rewrites else 'left out'}; empty Truth_rewrite "
                 f"{'kept' if eval_missing_truth else 'left out'}; {result.without_rewrite} "
                 "turns without a rewrite scored with ''")
    return "\n".join(lines) + "\n"
