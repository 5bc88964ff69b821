"""The result of a system comparison (:class:`Comparison`, one :class:`PairResult` per pair and
measure) and the words that describe it, shared by :mod:`.compare` (which computes and prints it)
and :mod:`.tables` (paper tables)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from trecqr.report.comparison_views import ComparisonViews


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 run``, ``2 runs``; nouns: an irregular plural."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


@dataclass
class PairResult:
    baseline: str
    run: str
    measure: str
    n: int
    mean_baseline: float
    mean_run: float
    diff: float
    ci_low: float
    ci_high: float
    effect_dz: float
    t: float
    p_t: float
    p_rand: float
    p_t_adj: float = math.nan
    p_rand_adj: float = math.nan
    significant: bool = False


@dataclass(repr=False)  # comparison_views: a short repr, _repr_html_, to_dataframe, to_latex
class Comparison(ComparisonViews):
    runs: list                      # run names, in the order given
    measures: list                  # output measure names (ndcg_cut_3, ...)
    means: dict                     # {run: {measure: mean over the run's compared topics}}
    num_topics: dict                # {run: number of topics its mean is over}
    pairs: list                     # PairResult, pair by pair, measure by measure
    topics: str                     # "complete": every qrels topic; "intersection": per run
    test: str                       # p-value behind `significant`: "t" or "randomization"
    correction: str
    alpha: float
    permutations: int
    bootstrap: int
    seed: int
    family: str = ""
    extra: dict = field(default_factory=dict)
    topics_note: str = ""           # the header's topics line (populations.ScoreTable)
    population: dict = field(default_factory=dict)  # the topics every mean is over

    def to_dict(self) -> dict:
        d = asdict(self)
        d["pairs"] = [{k: json_number(v) for k, v in asdict(p).items()} for p in self.pairs]
        d["means"] = {r: {m: json_number(v) for m, v in ms.items()} for r, ms in self.means.items()}
        return d

    def to_html(self, qrels, runs, measures, **options) -> str:
        """The HTML report of this comparison (:func:`.html.comparison_page`): the runs and
        measures as given to compare, options those it was made with plus the turn view's."""
        from trecqr.report.html import comparison_page

        return comparison_page(self, qrels, runs, measures, **options)


def json_number(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def topics_line(cmp: Comparison) -> str:
    if cmp.topics_note:
        return cmp.topics_note
    counts = sorted({p.n for p in cmp.pairs})
    n = ", ".join(str(c) for c in counts)
    if cmp.topics == "complete":
        return (f"topics: all {n} qrels topics (-c: a topic missing from a run counts 0)")
    return f"topics: per pair, the qrels topics both runs are evaluated on ({n})"
