"""A system comparison as plain data: :class:`Comparison` (one :class:`PairResult` per pair and
measure), the values :mod:`.comparison_stats` computes.

Why plain data: the renderers (:mod:`.comparison_text` for text, JSON and CSV, :mod:`.tables`
for Markdown, LaTeX and the notebook's HTML table, :mod:`.html` for the page) import this
module and read its fields; this module imports none of them, so a renderer can be added or
changed without touching the numbers. :mod:`.comparison_views` adds the notebook's methods on
top (``to_latex``, ``_repr_html_``, ...)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from trecqr.report.text_table import json_number


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


@dataclass(repr=False)
class Comparison:
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

    @property
    def baseline(self) -> str:
        """The run the significance marks compare against."""
        return self.pairs[0].baseline if self.pairs else self.runs[0]

    def __repr__(self) -> str:
        significant = sum(p.significant for p in self.pairs)
        return (f"<Comparison: {len(self.runs)} runs x {len(self.measures)} measures "
                f"({', '.join(self.measures[:4])}{', ...' if len(self.measures) > 4 else ''}), "
                f"baseline {self.baseline}, {self.test} test, {self.correction} "
                f"correction, alpha {self.alpha}: {significant} of {len(self.pairs)} "
                f"differences significant>")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["pairs"] = [{k: json_number(v) for k, v in asdict(p).items()} for p in self.pairs]
        d["means"] = {r: {m: json_number(v) for m, v in ms.items()} for r, ms in self.means.items()}
        return d
