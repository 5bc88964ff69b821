"""BLEU (sacrebleu) and ROUGE-1/2/L F1 (rouge-score), the usual CQR rewrite metrics.

BLEU: per instance ``sacrebleu.sentence_bleu`` (its defaults: 13a tokenisation, case-sensitive
unless ``lowercase``, exponential smoothing, effective order); the aggregate is the corpus BLEU
of all pairs (``sacrebleu.corpus_bleu``, one reference each), as CQR papers report it. Scale
0-100. The sacrebleu signature is reported with the result.

ROUGE: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"])`` F-measure (its
tokeniser lowercases and keeps ``[a-z0-9]`` runs), Porter stemming only with ``stemmer=True``;
the aggregate is the mean over instances. Scale 0-1.
"""

from __future__ import annotations


def bleu(preds: list[str], refs: list[str], lowercase: bool = False):
    """(per-instance sentence BLEU list, corpus BLEU, signature string)."""
    from sacrebleu.metrics import BLEU

    sent = BLEU(lowercase=lowercase, effective_order=True)
    per_inst = [sent.sentence_score(p, [r]).score for p, r in zip(preds, refs)]
    corp = BLEU(lowercase=lowercase)
    if not preds:  # nothing to score (e.g. no targets): sacrebleu cannot sign an empty corpus
        return per_inst, float("nan"), f"sacrebleu BLEU (lowercase={lowercase}; no pairs)"
    score = corp.corpus_score(list(preds), [list(refs)]).score
    return per_inst, score, str(corp.get_signature())


ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


def rouge(preds: list[str], refs: list[str], types=ROUGE_TYPES, stemmer: bool = False):
    """{type: per-instance F1 list} (rouge_score's score(target, prediction))."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(types), use_stemmer=stemmer)
    out = {t: [] for t in types}
    for p, r in zip(preds, refs):
        s = scorer.score(r, p)
        for t in types:
            out[t].append(s[t].fmeasure)
    return out
