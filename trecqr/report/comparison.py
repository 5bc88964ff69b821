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

TESTS = {"t": "t-test", "wilcoxon": "Wilcoxon signed-rank test",
         "randomization": "randomization test", "tukey-hsd": "randomised Tukey HSD"}
# what a family of each test counts, for the header's "family: ... = 20 t-tests"
TEST_UNITS = {"t": "t-test", "wilcoxon": "Wilcoxon signed-rank test",
              "randomization": "randomization test", "tukey-hsd": "randomised Tukey HSD p-value"}
# one marker per baseline, in the order the baselines are given: (text and Markdown, LaTeX)
MARKERS = (("\u2020", r"\dagger"), ("\u2021", r"\ddagger"), ("\u00a7", r"\S"),
           ("\u00b6", r"\P"), ("\u2016", r"\|"), ("#", r"\#"))


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
    significant: bool = False       # p_adj <= alpha
    w: float = math.nan             # Wilcoxon's statistic (the smaller rank sum)
    p_wilcoxon: float = math.nan
    p_wilcoxon_adj: float = math.nan
    p_tukey: float = math.nan       # --test tukey-hsd: the randomised Tukey HSD's p (every pair)
    p_adj: float = math.nan         # the chosen test's p, adjusted over the family


@dataclass(repr=False)
class Comparison:
    runs: list                      # run names, in the order given
    measures: list                  # output measure names (ndcg_cut_3, ...)
    means: dict                     # {run: {measure: mean over the run's compared topics}}
    num_topics: dict                # {run: number of topics its mean is over}
    pairs: list                     # PairResult, pair by pair, measure by measure
    topics: str                     # "complete": every qrels topic; "intersection": per run
    test: str                       # the test behind `significant`: a key of TESTS
    correction: str
    alpha: float
    permutations: int
    bootstrap: int
    seed: int
    family: str = ""
    extra: dict = field(default_factory=dict)
    topics_note: str = ""           # the header's topics line (populations.ScoreTable)
    population: dict = field(default_factory=dict)  # the topics every mean is over
    baselines: list = field(default_factory=list)   # the runs marked against, in order
    anova: dict = field(default_factory=dict)       # {measure: two-way ANOVA's fields, topics}
    labels: dict = field(default_factory=dict)      # {measure: display label} (.labels)

    def label(self, measure: str) -> str:
        """The measure's display label, heading the means tables."""
        return self.labels.get(measure, measure)

    def labels_line(self) -> str | None:
        """``labels: MAP = map, NDCG@3 = ndcg_cut_3``: the names behind the labels that differ
        from them, so a text table headed MAP still says which measure it is; None if none."""
        named = [f"{self.label(m)} = {m}" for m in self.measures if self.label(m) != m]
        return "labels: " + ", ".join(named) if named else None

    @property
    def baseline(self) -> str:
        """The (first) run the significance marks compare against."""
        if self.baselines:
            return self.baselines[0]
        return self.pairs[0].baseline if self.pairs else self.runs[0]

    def markers(self) -> list:
        """[(baseline, text/Markdown marker, LaTeX marker)], one per baseline, in order."""
        return [(b, *MARKERS[k]) for k, b in enumerate(self.baselines or [self.baseline])]

    def marks(self) -> dict:
        """{(run, measure): [(baseline index, +1 or -1)]}: the baselines run's mean differs from
        significantly (adjusted p of the chosen test <= alpha), +1 when it is higher."""
        out: dict = {}
        for k, (b, _, _) in enumerate(self.markers()):
            for p in self.pairs:
                if (not p.significant or not p.diff or p.diff != p.diff
                        or b not in (p.baseline, p.run)):
                    continue
                run, higher = (p.run, p.diff > 0) if p.baseline == b else (p.baseline, p.diff < 0)
                out.setdefault((run, p.measure), []).append((k, 1 if higher else -1))
        return out

    def adjusted(self) -> str:
        """How the p-values deciding significance are adjusted, in words."""
        if self.correction == "none":
            return "Tukey-adjusted" if self.test == "tukey-hsd" else "unadjusted"
        return f"{self.correction}-adjusted"

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
        d["anova"] = {m: {k: json_number(v) for k, v in a.items()} for m, a in self.anova.items()}
        d["markers"] = [{"baseline": b, "marker": text, "latex": tex}
                        for b, text, tex in self.markers()]
        marks = self.marks()  # {run: {measure: the markers of the baselines it differs from}}
        d["marks"] = {r: {m: "".join(MARKERS[k][0] for k, _ in marks.get((r, m), []))
                          for m in self.measures} for r in self.runs}
        return d
