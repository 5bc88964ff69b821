"""The datasets' own retrieval evaluators, which judge passages by their text, not their ids.

``qrecc-official`` (apple/ml-qrecc @ cf44d03, ``utils/evaluate_retrieval.py`` with
``utils/span_heuristic.py`` and ``utils/evaluate_qa.py``): a retrieved passage is relevant to a
turn when the closest span of its text to the turn's gold answer has a SQuAD-style token F1 of
at least 0.8; a turn without an answer has no relevant passage. MRR is averaged over every turn
the run answers (no relevance-based filtering), and "Recall@k" is success@k: 1 when any
relevant passage is in the top k. The closest span is found in two steps: the run of words of
the passage (windows of ``len(answer words) + int(0.05 * that)`` words) with the highest
``difflib.SequenceMatcher.quick_ratio`` against the answer (the answer itself when it is a
substring), then the sub-span of that window with the best token F1 (tokens lower-cased, with
punctuation and articles removed); its F1 against the answer is the passage's.

``topiocqa-official`` (McGill-NLP/topiocqa @ 49b710e, ``evaluate_retriever.py``): a turn's rank
is the first retrieved passage whose title and text equal the gold passage's (so a duplicate
passage under another id counts), 1000 when there is none; Hits@k is the percentage of turns
with rank <= k, over every turn of the data file, rounded to 2 places.

Both need the passages' text: any collection :func:`trecqr.retrieval.collections.iter_collection`
reads (the indexed text is title and text joined, so title + text equality is equality of that
text).
"""

from __future__ import annotations

import collections
import os
import re
import string
import sys
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from trecqr.datasets.qrecc.turns import scai_turn_at, turn_records
from trecqr.api.evaluation import load_qrels, load_run, score_trec
from trecqr.errors import UsageError
from trecqr.rankings.options import Options
from trecqr.retrieval.collections import iter_collection

QRECC_THRESHOLD = 0.8
QRECC_KS = (10, 100)
TOPIOCQA_KS = (1, 3, 5, 10, 20, 30, 50, 100)
NOT_FOUND = 1000.0

_PUNCT = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


# --------------------------------------------------------------------------- answer F1
def _squad_normal(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list:
    return _squad_normal(text).split() if text else []


def _f1_tokens(gold: list, pred: list) -> float:
    if not gold or not pred:
        return float(gold == pred)
    same = sum((collections.Counter(gold) & collections.Counter(pred)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def answer_f1(gold: str, pred: str) -> float:
    """SQuAD token F1 of pred against gold (QReCC's evaluate_qa.compute_f1)."""
    return _f1_tokens(_tokens(gold), _tokens(pred))


def _closest_window(passage: str, answer: str) -> str:
    if answer in passage:
        return answer
    words = passage.split()
    n = len(answer.split())
    n += int(0.05 * n)
    best, best_sim = "", 0.0
    matcher = SequenceMatcher()
    matcher.set_seq2(answer)
    for i in range(len(words) - n + 1):
        candidate = " ".join(words[i:i + n])
        matcher.set_seq1(candidate)
        sim = matcher.quick_ratio()
        if sim > best_sim:
            best, best_sim = candidate, sim
        if sim == 1.0:
            break
    return best


def _word_normal(word: str) -> str:
    word = "".join(ch for ch in word.lower() if ch not in _PUNCT)
    return _ARTICLES.sub("", word)


def span_f1(passage: str, answer: str) -> tuple:
    """(closest span, its F1 against answer): QReCC's span heuristic (module docstring). The
    sub-spans of the window are scanned with running token counts, the same F1 per span as
    recounting each (and the first best span in the same order) at O(n^2) instead of O(n^3)."""
    window = _closest_window(passage, answer).split()
    normal = [_word_normal(w) for w in window]
    gold = [t for t in (_word_normal(w) for w in answer.split()) if t]
    need = collections.Counter(gold)
    best, lo, hi = 0.0, None, None
    for i in range(len(normal)):
        have: collections.Counter = collections.Counter()
        same = size = 0
        for j in range(i, len(normal)):
            t = normal[j]
            if t:
                size += 1
                have[t] += 1
                same += have[t] <= need[t]
            if not gold or not size:
                score = float(not gold and not size)
            elif same == 0:
                score = 0.0
            else:
                precision, recall = same / size, same / len(gold)
                score = 2 * precision * recall / (precision + recall)
            if score > best:
                best, lo, hi = score, i, j + 1
    span = " ".join(window[lo:hi])
    return span, answer_f1(answer, span)


# --------------------------------------------------------------------------- evaluators
@dataclass
class OfficialResult:
    name: str
    scores: dict                      # {label: value} as the script prints them (unrounded)
    turns: int                        # turns averaged over
    per_turn: dict = field(default_factory=dict)  # {qid: RR (qrecc) or rank (topiocqa)}
    relevant: int = 0                 # qrecc: (turn, passage) pairs judged relevant


def _ranked(run) -> dict:
    """{qid: [docno, ...]} in trec_eval's order (score descending, docno descending)."""
    r = load_run(run)
    by_q: dict = {}
    for q, d, s in zip(r.qid.to_pylist(), r.docno.to_pylist(), r.score.tolist()):
        by_q.setdefault(q, []).append((s, d))
    return {q: [d for _, d in sorted(v, key=lambda x: (x[0], x[1]), reverse=True)]
            for q, v in by_q.items()}


def passage_texts(collection, wanted=None) -> dict:
    """{docid: indexed text} of a collection (only the docids in wanted, when given)."""
    return {d.docid: d.text for d in iter_collection(collection)
            if wanted is None or d.docid in wanted}


NO_RELEVANT = "<no relevant passage>"  # judged for a turn with none, so it still counts 0


def qrecc_judgments(answers: dict, ranked: dict, passages: dict,
                    threshold: float = QRECC_THRESHOLD) -> dict:
    """{qid: {docid: 1}}: the run's passages whose answer-span F1 reaches threshold, for every
    run turn (a turn with none judges NO_RELEVANT, so trec_eval scores it 0, as the script's
    average over all turns does)."""
    out: dict = {}
    cache: dict = {}
    for q, docs in ranked.items():
        answer = answers.get(q, "")
        rel = {}
        for d in docs if answer else ():
            if (d, answer) not in cache:
                cache[(d, answer)] = span_f1(passages.get(d, ""), answer)[1]
            if cache[(d, answer)] >= threshold:
                rel[d] = 1
        out[q] = rel or {NO_RELEVANT: 1}
    return out


def qrecc_official(answers: dict, run, passages: dict, threshold: float = QRECC_THRESHOLD,
                   ks=QRECC_KS) -> OfficialResult:
    """QReCC's evaluate_retrieval.py on a run. answers: {qid: gold answer}; passages:
    {docid: text}. Every run turn counts (a turn without an answer scores 0)."""
    ranked = _ranked(run)
    judged = qrecc_judgments(answers, ranked, passages, threshold)
    rr, success = {}, {k: 0 for k in ks}
    for q, docs in ranked.items():
        top = next((i for i, d in enumerate(docs, 1) if d in judged[q]), None)
        rr[q] = 1.0 / top if top else 0.0
        for k in ks:
            success[k] += bool(top and top <= k)
    n = len(ranked)
    scores = {"MRR": sum(rr.values()) / n if n else 0.0}
    scores.update({f"Recall@{k}": success[k] / n if n else 0.0 for k in ks})
    relevant = sum(len(v) for v in judged.values() if NO_RELEVANT not in v)
    return OfficialResult("qrecc-official", scores, n, rr, relevant)


def topiocqa_judgments(gold: dict, ranked: dict, passages: dict) -> dict:
    """{qid: {docid: 1}}: each gold turn's gold passage and every retrieved passage with the
    same text (title and text), the script's match."""
    out = {}
    for q, g in gold.items():
        want = passages.get(g)
        out[q] = {g: 1, **{d: 1 for d in ranked.get(q, [])
                           if want is not None and passages.get(d) == want}}
    return out


def topiocqa_official(gold: dict, run, passages: dict, ks=TOPIOCQA_KS) -> OfficialResult:
    """TopiOCQA's evaluate_retriever.py on a run. gold: {qid: gold passage id} (every turn of
    the data file; a turn the run lacks ranks 1000); passages: {docid: text}."""
    ranked = _ranked(run)
    judged = topiocqa_judgments(gold, ranked, passages)
    ranks = {q: next((float(i) for i, d in enumerate(ranked.get(q, []), 1) if d in judged[q]),
                     NOT_FOUND) for q in gold}
    n = len(ranks)
    scores = {f"Hits@{k}": (sum(r <= k for r in ranks.values()) * 100.0 / n if n else 0.0)
              for k in ks}
    return OfficialResult("topiocqa-official", scores, n, ranks)


def official_evaluation(name: str, gold, run, collection, compat: str = "9.0.8"):
    """(Evaluation, note) of ``trecqr eval --protocol qrecc-official|topiocqa-official``: the
    script's relevance written as qrels, then trec_eval's recip_rank and success (the script's
    Recall@k and Hits@k / 100) on them. gold: QReCC turns (answers) or TopiOCQA gold qrels."""

    if collection is None:
        raise UsageError(f"--protocol {name} judges passages by their text: give --collection")
    ranked = _ranked(run)
    wanted = {d for docs in ranked.values() for d in docs}
    if name == "qrecc-official":
        passages = passage_texts(collection, wanted)
        judged = qrecc_judgments(qrecc_answers(gold), ranked, passages)
        ev = score_trec(judged, run, ["recip_rank", "success.10,100"],
                        Options(max_docs=sys.maxsize, compat=compat))
        relevant = sum(len(v) for v in judged.values() if NO_RELEVANT not in v)
        return ev, (f"; protocol qrecc-official (relevant: answer-span F1 >= {QRECC_THRESHOLD} "
                    f"in the passage text, {relevant} (turn, passage) pairs; MRR over the "
                    f"{len(judged)} run turns; the script's Recall@k is success_k)")
    q = load_qrels(gold)
    first: dict = {}
    for qid, d in zip(q.qid.to_pylist(), q.docno.to_pylist()):
        first.setdefault(qid, d)  # the script's positive_ctxs[0]
    passages = passage_texts(collection, wanted | set(first.values()))
    judged = topiocqa_judgments(first, ranked, passages)
    ev = score_trec(judged, run, [f"success.{','.join(map(str, TOPIOCQA_KS))}"],
                    Options(max_docs=sys.maxsize, complete=True, compat=compat))
    extra = sum(len(v) - 1 for v in judged.values())
    return ev, (f"; protocol topiocqa-official (the gold passage matched by title + text: "
                f"{extra} retrieved duplicates under other ids; every gold turn counts, rank "
                f"1000 when not found; Hits@k = 100 x success_k)")


def qrecc_answers(path) -> dict:
    """{conv_turn: gold answer} from a QReCC JSON/JSONL file of turns (``Truth_answer`` in
    SCAI and InfoCQR files, ``Answer`` in the original QReCC files)."""
    name, records = turn_records(os.fspath(path))
    out = {}
    for i, (line, rec) in enumerate(records):
        answer = rec.get("Truth_answer", rec.get("Answer"))
        out[scai_turn_at(rec, i, name, line)] = answer if isinstance(answer, str) else ""
    return out
