"""Preference measures (trec_eval's m_prefs_*.c), for ``-R prefs`` and ``-R qrels_prefs``.

All read the per-judgment-group counts of :mod:`trecqr.rankings.prefs_counts` (computed once per
evaluation and shared). Suffixes: none = implied preferences count (one of the two documents
retrieved) and a preference between two unretrieved documents counts as a failure; ``_ret`` =
only preferences between two retrieved documents; ``_imp`` = like none, but preferences
between two unretrieved documents are ignored. ``simp`` counts preferences, ``pair`` averages
over document pairs, ``avgjg`` averages over judgment groups.
"""

from __future__ import annotations

import numpy as np

from trecqr.errors import UsageError
from trecqr.formats.prefs import Prefs
from trecqr.rankings.prefs_counts import form_prefs_counts
from trecqr.measures.base import Measure, register

PREFS_FORMATS = ("prefs", "qrels_prefs")


def prefs_counts(ctx):
    """The PrefCounts of this evaluation (form_prefs_counts), computed on first use."""
    cached = ctx.__dict__.get("_prefs_counts")
    if cached is None:
        if not isinstance(ctx.rel_info, Prefs):
            raise UsageError("preference measures (prefs_*) need -R prefs or -R qrels_prefs "
                             "relevance information")
        rk = ctx.rankings
        cached = form_prefs_counts(ctx.run, ctx.rel_info, list(rk.qids), rk.bogus, ctx.options)
        ctx.__dict__["_prefs_counts"] = cached
    return cached


def ratio(num, den) -> np.ndarray:
    """num / den where den > 0, else 0 (trec_eval leaves the value at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def avg_over_jgs(c, per_jg: np.ndarray) -> np.ndarray:
    """trec_eval's avgjg: add the jg ratios in jg order; if the sum is > 0, divide by #jgs."""
    total = c.per_topic_sum(per_jg)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0.0, total / np.maximum(c.num_jgs, 1), 0.0)
    return out


class _PrefsMeasure(Measure):
    rel_formats = PREFS_FORMATS

    def compute_all(self, ctx, params):
        return self.value(prefs_counts(ctx))[:, None].astype(np.float64)

    def value(self, c) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class _Count(_PrefsMeasure):
    integer = True
    summary = "sum"


@register
class NumPrefsPoss(_Count):
    name = "prefs_num_prefs_poss"
    explanation = ("Number of possible preferences, whether or not the documents were "
                   "retrieved. Summary is the sum over topics.")

    def value(self, c):
        return c.per_topic_total(c.poss_ret + c.poss_imp + c.notoccur)


@register
class NumPrefsFul(_Count):
    name = "prefs_num_prefs_ful"
    explanation = ("Number of preferences fulfilled, implied ones included (only the "
                   "preferred document retrieved). Summary is the sum over topics.")

    def value(self, c):
        return c.per_topic_total(c.ful_ret + c.ful_imp)


@register
class NumPrefsFulRet(_Count):
    name = "prefs_num_prefs_ful_ret"
    explanation = ("Number of preferences fulfilled between two retrieved documents. "
                   "Summary is the sum over topics.")

    def value(self, c):
        return c.per_topic_total(c.ful_ret)


@register
class PrefsSimp(_PrefsMeasure):
    name = "prefs_simp"
    explanation = ("Preferences fulfilled / preferences possible; a preference between two "
                   "unretrieved documents counts as a failure.")

    def value(self, c):
        return ratio(c.per_topic_total(c.ful_ret + c.ful_imp),
                     c.per_topic_total(c.poss_ret + c.poss_imp + c.notoccur))


@register
class PrefsPair(_PrefsMeasure):
    name = "prefs_pair"
    explanation = ("Average over document pairs of the fraction of judgment groups whose "
                   "preference for the pair is fulfilled.")

    def value(self, c):
        return ratio(c.pair_sum_all, c.pairs_ret + c.pairs_cross + c.pairs_unret)


@register
class PrefsAvgjg(_PrefsMeasure):
    name = "prefs_avgjg"
    explanation = "Preferences fulfilled / possible within each judgment group, averaged over jgs."

    def value(self, c):
        return avg_over_jgs(c, ratio(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp + c.notoccur))


def _rnonrel(ful, poss, rel_ret, rel, R, N, re_ful, re_poss):
    """Per-jg ratio with the number of nonrelevant documents set to R (no guard on 0/0)."""
    extra = R - N
    with np.errstate(invalid="ignore", divide="ignore"):
        grown = (ful + rel_ret * extra) / (poss + rel * extra).astype(np.float64)
        recount = re_ful / re_poss.astype(np.float64)
    return np.where(R >= N, grown, recount)


@register
class PrefsAvgjgRnonrel(_PrefsMeasure):
    name = "prefs_avgjg_Rnonrel"
    explanation = ("prefs_avgjg with the number of nonrelevant documents (rel_level 0) of each "
                   "judgment group set to its number of relevant documents R.")

    def value(self, c):
        per_jg = _rnonrel(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp + c.notoccur,
                          c.num_rel_ret, c.num_rel, c.num_rel, c.num_nonrel, c.rn_ful, c.rn_poss)
        return avg_over_jgs(c, per_jg)


@register
class PrefsSimpRet(_PrefsMeasure):
    name = "prefs_simp_ret"
    explanation = "prefs_simp counting only preferences between two retrieved documents."

    def value(self, c):
        return ratio(c.per_topic_total(c.ful_ret), c.per_topic_total(c.poss_ret))


@register
class PrefsPairRet(_PrefsMeasure):
    name = "prefs_pair_ret"
    explanation = "prefs_pair over pairs of two retrieved documents."

    def value(self, c):
        return ratio(c.pair_sum_ret, c.pairs_ret)


@register
class PrefsAvgjgRet(_PrefsMeasure):
    name = "prefs_avgjg_ret"
    explanation = "prefs_avgjg counting only preferences between two retrieved documents."

    def value(self, c):
        return avg_over_jgs(c, ratio(c.ful_ret, c.poss_ret))


@register
class PrefsAvgjgRnonrelRet(_PrefsMeasure):
    name = "prefs_avgjg_Rnonrel_ret"
    explanation = ("prefs_avgjg_Rnonrel counting only retrieved documents (R = relevant "
                   "retrieved documents of the jg).")

    def value(self, c):
        per_jg = _rnonrel(c.ful_ret, c.poss_ret, c.num_rel_ret, c.num_rel, c.num_rel_ret,
                          c.num_nonrel_ret, c.rnr_ful, c.rnr_poss)
        return avg_over_jgs(c, per_jg)


@register
class PrefsSimpImp(_PrefsMeasure):
    name = "prefs_simp_imp"
    explanation = "prefs_simp ignoring preferences between two unretrieved documents."

    def value(self, c):
        return ratio(c.per_topic_total(c.ful_ret + c.ful_imp),
                     c.per_topic_total(c.poss_ret + c.poss_imp))


@register
class PrefsPairImp(_PrefsMeasure):
    name = "prefs_pair_imp"
    explanation = "prefs_pair ignoring pairs of two unretrieved documents."

    def value(self, c):
        return ratio(c.pair_sum_all, c.pairs_ret + c.pairs_cross)


@register
class PrefsAvgjgImp(_PrefsMeasure):
    name = "prefs_avgjg_imp"
    explanation = "prefs_avgjg ignoring preferences between two unretrieved documents."

    def value(self, c):
        return avg_over_jgs(c, ratio(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp))
