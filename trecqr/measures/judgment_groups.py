"""Measures averaged over judgment groups (trec_eval's m_map_avgjg.c, m_P_avgjg.c,
m_Rprec_mult_avgjg.c), for ``-R qrels_jg``.

Each is its standard counterpart computed on every (topic, jg) ranking of
:mod:`trecqr.rankings.judgment_groups`, then, per topic, the jg values added in jg order and divided
by the number of jgs when there is more than one.
"""

from __future__ import annotations

import numpy as np

from trecqr.errors import UsageError
from trecqr.formats.qrels_jg import QrelsJG
from trecqr.rankings.judgment_groups import form_res_rels_jg
from trecqr.rankings.build import seqsum
from trecqr.measures.base import DoubleCutoffs, LongCutoffs, Measure, register

JG_FORMATS = ("qrels_jg",)


def jg_rankings(ctx):
    """The JGRankings of this evaluation (form_res_rels_jg), built on first use."""
    cached = ctx.__dict__.get("_jg_rankings")
    if cached is None:
        if not isinstance(ctx.rel_info, QrelsJG):
            raise UsageError("judgment group measures (*_avgjg) need -R qrels_jg "
                             "relevance information")
        rk = ctx.rankings
        cached = form_res_rels_jg(ctx.run, ctx.rel_info, list(rk.qids), rk.bogus, ctx.options)
        ctx.__dict__["_jg_rankings"] = cached
    return cached


class _JGMeasure(Measure):
    rel_formats = JG_FORMATS

    def compute_all(self, ctx, params):
        jr = jg_rankings(ctx)
        k = len(self.value_names(params))
        per_jg = np.zeros((len(jr.rankings), k))
        for idx, batch in jr.rankings.batches():
            is_rel = (batch.rel >= batch.relevance_level) & batch.valid
            rel_so_far = np.cumsum(is_rel, axis=1)
            per_jg[idx] = self.per_jg(batch, is_rel, rel_so_far, jr.num_rel_ret[idx], params)
        return jr.average(per_jg)

    def per_jg(self, b, is_rel, rel_so_far, num_rel_ret, params):  # pragma: no cover
        raise NotImplementedError


def rel_in_top(b, rel_so_far, k: np.ndarray) -> np.ndarray:
    """Relevant documents among the first min(k, num_ret) of each ranking (k >= 1)."""
    if b.depth == 0:
        return np.zeros(b.n, np.int64)
    idx = np.clip(np.minimum(k, b.num_ret), 1, b.depth) - 1
    got = np.take_along_axis(rel_so_far, idx[:, None], axis=1)[:, 0]
    return np.where(b.num_ret > 0, got, 0)


@register
class MapAvgjg(_JGMeasure):
    name = "map_avgjg"
    explanation = ("Mean average precision over judgment groups: map of each jg's ranking, "
                   "averaged over the jgs of the topic.")

    def per_jg(self, b, is_rel, rel_so_far, num_rel_ret, params):
        prec = np.where(is_rel, rel_so_far / b.ranks[None, :], 0.0)
        total = seqsum(prec)
        found = rel_so_far[:, -1] if b.depth else np.zeros(b.n, np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(found > 0, total / b.num_rel, 0.0)[:, None]


@register
class PAvgjg(_JGMeasure):
    name = "P_avgjg"
    explanation = "Precision at cutoffs, averaged over the judgment groups of the topic."
    params = LongCutoffs(5, 10, 15, 20, 30, 100, 200, 500, 1000)

    def per_jg(self, b, is_rel, rel_so_far, num_rel_ret, params):
        cols = [rel_in_top(b, rel_so_far, np.full(b.n, k)) / float(k) for k in params.values]
        return np.stack(cols, axis=1)


@register
class RprecMultAvgjg(_JGMeasure):
    name = "Rprec_mult_avgjg"
    explanation = ("Precision at cutoffs (long)(m*R + 0.9) for multiples m of each judgment "
                   "group's R, averaged over the jgs of the topic.")
    params = DoubleCutoffs(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

    def per_jg(self, b, is_rel, rel_so_far, num_rel_ret, params):
        cols = []
        for m in params.values:
            cut = np.trunc(m * b.num_rel.astype(np.float64) + 0.9).astype(np.int64)
            beyond = cut > b.num_ret  # past the ranking: its relevant retrieved over cut
            top = rel_in_top(b, rel_so_far, np.maximum(cut, 1))
            num = np.where(beyond, num_rel_ret, top).astype(np.float64)
            cols.append(np.divide(num, cut.astype(np.float64), out=np.zeros(b.n),
                                  where=cut > 0))
        return np.stack(cols, axis=1)
