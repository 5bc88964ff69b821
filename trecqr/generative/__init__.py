"""Generative query metrics: a generated query (or rewrite) against a target query.

Metrics (direction: which way is better):

=========  ==========  =============================================================
name       better      definition
=========  ==========  =============================================================
per        lower       bag-of-words position-independent error rate (Dehghani et al.
                       2017): (|g| + |t| - 2 common) / |t|  (:mod:`.per`)
per-mt     lower       machine-translation PER: 1 - (common - max(0, |g|-|t|)) / |t|
sim_emb    higher      cosine of the vector-extrema embeddings (:mod:`.embedding`)
bleu       higher      sacrebleu BLEU, 0-100; aggregate = corpus BLEU (:mod:`.text`)
rouge1     higher      rouge-score ROUGE-1 F1, mean over instances
rouge2     higher      rouge-score ROUGE-2 F1, mean over instances
rougeL     higher      rouge-score ROUGE-L F1, mean over instances
=========  ==========  =============================================================

Ranking overlaps for sim_ret (RBO, Jaccard@k, overlap@k) are pure functions in :mod:`.overlap`.
Heavy libraries (sacrebleu, rouge-score, the GloVe vectors) are imported on first use.
"""

from trecqr.generative.overlap import rbo, jaccard_at_k, overlap_at_k  # noqa: F401
from trecqr.generative.per import per, per_mt, tokenize  # noqa: F401

METRICS = ("per", "per-mt", "sim_emb", "bleu", "rouge1", "rouge2", "rougeL")
LOWER_IS_BETTER = frozenset({"per", "per-mt"})
