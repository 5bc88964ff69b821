"""Tokenisation and the position-independent error rate (PER), two variants.

Tokenisation (shared by PER and sim_emb; recorded in every result as ``tokenizer``):

``alnum`` (default)
    lowercase, then the maximal runs of Unicode letters and digits (``[^\\W_]+``): every other
    character (space, punctuation, apostrophe, underscore) separates tokens, so
    ``"Australia's 1st PM?"`` -> ``australia s 1st pm``.
``whitespace``
    lowercase, then split on white space (punctuation stays attached).

``lowercase=False`` keeps case in either mode.

PER (``per``), the words of Dehghani et al. (2017): "the minimum number of word insertions and
deletions necessary to transform the generated query into the target query by neglecting the
words order, normalized by the length of the target query". With g and t the token multisets of
the generated and target queries and ``common`` the size of their multiset intersection::

    per    = (|g| + |t| - 2 * common) / |t|          (0 = same bag of words; can exceed 1)

The machine-translation PER (``per-mt``, Tillmann et al. 1997)::

    per_mt = 1 - (common - max(0, |g| - |t|)) / |t|

Both are 0 for identical bags of words and ignore word order. Empty target: the denominator is
``max(|t|, 1)``, so an empty target against an empty generation gives 0, and against a
generation of n words gives ``per = n`` and ``per_mt = 1 + n``.
"""

from __future__ import annotations

import re
from collections import Counter

from trecqr.errors import UsageError

TOKENIZERS = ("alnum", "whitespace")
_ALNUM = re.compile(r"[^\W_]+")


def tokenize(text: str, tokenizer: str = "alnum", lowercase: bool = True) -> list[str]:
    """Tokens of text, as described in the module docstring."""
    if lowercase:
        text = text.lower()
    if tokenizer == "alnum":
        return _ALNUM.findall(text)
    if tokenizer == "whitespace":
        return text.split()
    raise UsageError(f"unknown tokenizer {tokenizer!r}: use {' or '.join(TOKENIZERS)}")


def _counts(gen, target):
    g, t = Counter(gen), Counter(target)
    common = sum((g & t).values())
    return sum(g.values()), sum(t.values()), common


def per(gen_tokens, target_tokens) -> float:
    """Bag-of-words PER: (|g| + |t| - 2 common) / max(|t|, 1)."""
    ng, nt, common = _counts(gen_tokens, target_tokens)
    return (ng + nt - 2 * common) / max(nt, 1)


def per_mt(gen_tokens, target_tokens) -> float:
    """Machine-translation PER: 1 - (common - max(0, |g| - |t|)) / max(|t|, 1)."""
    ng, nt, common = _counts(gen_tokens, target_tokens)
    if nt == 0 and ng == 0:
        return 0.0
    return 1.0 - (common - max(0, ng - nt)) / max(nt, 1)
