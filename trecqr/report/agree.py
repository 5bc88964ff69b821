"""Agreement between judgments, and between a run and its reproduction (``trecqr agree``).

Three questions a paper answers before it trusts a second set of judgments or a reproduced run;
each function returns plain data (rendered by :mod:`.agree_render`), its statistics computed by
:mod:`trecqr.report.stats` (each checked there against its reference package):

* :func:`agree_labels` - two qrels (say human and LLM judgments): Cohen's kappa (plain and
  weighted), Krippendorff's alpha and the confusion matrix over the (topic, document) pairs
  both judge, graded and binarized at the relevance level (trec_eval's ``-l``, stated in the
  result); the pairs only one of them judges are counted, not compared.
* :func:`agree_rankings` - two qrels and several runs: each run's mean under a measure with
  either qrels (the value ``trecqr eval`` prints for it), and how far the two system rankings
  agree: Kendall's tau-b, tau_AP (the first qrels the reference), Spearman's rho, RBO.
* :func:`agree_repro` - a run and its reproduction, repro_eval's measures (Breuer et al.,
  SIGIR 2020): KTU and RBO of the document rankings, RMSE of a measure's per-topic scores,
  and with a baseline pair (the original baseline and its reproduction) the Effect Ratio and
  DeltaRI of the advanced run over the baseline.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field

import numpy as np

from trecqr.api.evaluation import load_qrels, load_run
from trecqr.errors import UsageError
from trecqr.formats.inputs import named_runs
from trecqr.report.populations import score_table
from trecqr.report.stats import labels, rankings, reproduction
from trecqr.report.stats.paired import t_test
from trecqr.report.stats.reproduction import MAX_DEPTH

GRADED_STATS = (("cohen_kappa", None, None), ("weighted_kappa_linear", "linear", None),
                ("weighted_kappa_quadratic", "quadratic", None),
                ("krippendorff_alpha_nominal", None, "nominal"),
                ("krippendorff_alpha_ordinal", None, "ordinal"),
                ("krippendorff_alpha_interval", None, "interval"))


def _name(obj, default: str) -> str:
    return os.path.basename(os.fspath(obj)) if isinstance(obj, (str, os.PathLike)) else default


def _safe(fn, *args, **kwargs):
    """A statistic, or (nan, why) when the data leave it undefined (one label only, ties)."""
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(fn(*args, **kwargs)), None
    except UsageError as exc:
        return float("nan"), str(exc)


# ---------------------------------------------------------------------------------------------
# labels


@dataclass
class LabelAgreement:
    """Two qrels' labels compared over the judgments both make.

    grades: the confusion matrix's labels (every grade either qrels gives a shared pair);
    confusion[i][j]: pairs graded grades[i] by A and grades[j] by B; graded and binary:
    {statistic: value} on the grades and on relevant (grade >= relevance_level) or not;
    notes: why a statistic is nan."""

    qrels_a: str
    qrels_b: str
    shared: int
    only_a: int
    only_b: int
    topics: int
    relevance_level: int
    grades: list
    confusion: list
    binary_confusion: list
    graded: dict
    binary: dict
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def __repr__(self) -> str:
        return (f"LabelAgreement({self.qrels_a} vs {self.qrels_b}: {self.shared} shared, kappa "
                f"{self.graded['cohen_kappa']:.4f}, binary kappa "
                f"{self.binary['cohen_kappa']:.4f} at grade >= {self.relevance_level})")


def agree_labels(qrels_a, qrels_b, *, relevance_level: int = 1) -> LabelAgreement:
    """How far two qrels' labels agree on the (topic, document) pairs both judge. The weights
    of the weighted kappa count steps between the grades either qrels uses (scikit-learn's
    rule); binary statistics are on grade >= relevance_level (trec_eval's ``-l``)."""
    a, b = load_qrels(qrels_a), load_qrels(qrels_b)
    shared = labels.shared_judgments(a, b)
    if len(shared) == 0:
        raise UsageError(f"{_name(qrels_a, 'A')} and {_name(qrels_b, 'B')} judge no (topic, "
                         f"document) pair in common ({shared.only_a} and {shared.only_b} "
                         "judgments): agreement is measured on the pairs both judge")
    notes = []
    graded = {}
    for name, weights, level in GRADED_STATS:
        if level is None:
            graded[name], why = _safe(labels.cohen_kappa, shared.a, shared.b, weights)
        else:
            graded[name], why = _safe(labels.krippendorff_alpha, shared.a, shared.b, level)
        if why:
            notes.append(f"{name}: {why}")
    ba, bb = labels.binarize(shared.a, relevance_level), labels.binarize(shared.b, relevance_level)
    binary = {}
    binary["cohen_kappa"], why = _safe(labels.cohen_kappa, ba, bb)
    binary["krippendorff_alpha"], why2 = _safe(labels.krippendorff_alpha, ba, bb, "nominal")
    notes += [f"binary {n}: {w}" for n, w in (("cohen_kappa", why), ("krippendorff_alpha", why2))
              if w]
    grades, counts = labels.confusion_matrix(shared.a, shared.b)
    _, bcounts = labels.confusion_matrix(ba, bb, labels=[0, 1])
    for name, value in list(graded.items()) + [(f"binary {k}", v) for k, v in binary.items()]:
        if np.isnan(value) and not any(n.startswith(name + ":") for n in notes):
            notes.append(f"{name}: undefined (both qrels give every shared pair the same label)")
    return LabelAgreement(_name(qrels_a, "A"), _name(qrels_b, "B"), len(shared), shared.only_a,
                          shared.only_b, len(set(shared.qid.to_pylist())), relevance_level,
                          [int(g) for g in grades], counts.tolist(), bcounts.tolist(), graded,
                          binary, notes)


# ---------------------------------------------------------------------------------------------
# system rankings


@dataclass
class RankingAgreement:
    """The runs ranked by a measure under two qrels, and how far the rankings agree.

    scores_a / scores_b: {measure: [each run's mean, in runs' order]}; stats: {measure:
    {statistic: value}} (tau_AP takes A's ranking as the reference); topics_a / topics_b: the
    population lines of the two score tables; notes: why a statistic is nan (tied runs)."""

    qrels_a: str
    qrels_b: str
    runs: list
    measures: list
    scores_a: dict
    scores_b: dict
    stats: dict
    rbo_p: float
    topics_a: str
    topics_b: str
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    def __repr__(self) -> str:
        taus = ", ".join(f"{m} tau {self.stats[m]['kendall_tau']:.4f}" for m in self.measures)
        return f"RankingAgreement({self.qrels_a} vs {self.qrels_b}, {len(self.runs)} runs: {taus})"


def agree_rankings(qrels_a, qrels_b, runs, measures, *, names=None, rbo_p: float = 0.9,
                   relevance_level: int = 1, complete: bool = False, max_docs=None,
                   compat: str = "9.0.8") -> RankingAgreement:
    """Each run's mean under ``measures`` with qrels A and with qrels B (``trecqr eval``'s
    value, with the same options), and the agreement of the two rankings of the runs."""
    runs, names = named_runs(runs, names, door="agree_rankings")
    if len(runs) < 3:
        raise UsageError(f"a ranking agreement needs at least 3 runs (got {len(runs)}): two "
                         "runs give one pair, and tau is then 1 or -1")
    if not 0 < rbo_p < 1:
        raise UsageError(f"RBO's persistence must be between 0 and 1 (got {rbo_p!r})",
                         cli=f"--rbo-p must be between 0 and 1 (got {rbo_p!r})")
    opts = dict(names=names, relevance_level=relevance_level, complete=complete,
                max_docs=max_docs, compat=compat, command="agree rankings")
    ta = score_table(qrels_a, runs, measures, **opts)
    tb = score_table(qrels_b, runs, measures, **opts)
    stats, notes = {}, []
    sa = {m: [ta.summaries[i][m] for i in range(len(runs))] for m in ta.measures}
    sb = {m: [tb.summaries[i][m] for i in range(len(runs))] for m in ta.measures}
    for m in ta.measures:
        x, y = np.array(sa[m]), np.array(sb[m])
        row = {}
        for stat, fn, kw in (("kendall_tau", rankings.kendall_tau, {}),
                             ("tau_ap", rankings.tau_ap, {}),
                             ("spearman", rankings.spearman, {}),
                             ("rbo", rankings.rbo, {"p": rbo_p})):
            row[stat], why = _safe(fn, x, y, **kw)
            if why is None and np.isnan(row[stat]):
                why = "undefined: every run ties under one of the qrels"
            if why:
                notes.append(f"{m} {stat}: {_tie_words(why, ta.names)}")
        stats[m] = row
    return RankingAgreement(_name(qrels_a, "A"), _name(qrels_b, "B"), ta.names, ta.measures,
                            sa, sb, stats, rbo_p, _topics_words(ta), _topics_words(tb), notes)


def _topics_words(table) -> str:
    """The score table's population line, without the paired tests agree does not make."""
    return table.population_line().replace(", measure and test", " and measure")


def _tie_words(why: str, names: list) -> str:
    """The stats' "systems 0, 3 tie" in run names."""
    if why.startswith("systems "):
        head, _, rest = why[len("systems "):].partition(" tie ")
        try:
            who = ", ".join(names[int(i)] for i in head.split(", "))
        except (ValueError, IndexError):
            return why
        return f"runs {who} tie {rest}"
    return why


# ---------------------------------------------------------------------------------------------
# reproduction


@dataclass
class ReproAgreement:
    """A run and its reproduction compared (repro_eval's measures).

    order: one row per pair compared ("advanced": the run, "baseline": the baseline pair),
    {pair, original, reproduction, topics, ktu, rbo}, the means over the reproduction's topics;
    effect: one row per measure, {measure, topics, rmse_advanced, p_advanced, rmse_baseline,
    p_baseline, effect_ratio, delta_ri} (the baseline's and the ratios only with a baseline
    pair); p_*: the paired two-sided t-test of the original's per-topic scores against the
    reproduction's (repro_eval's ``ttest``; 1 where every score is equal)."""

    original: str
    reproduction: str
    baseline: list
    depth: int
    rbo_p: float
    order: list
    effect: list
    population: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def __repr__(self) -> str:
        order = ", ".join(f"{o['pair']} KTU {o['ktu']:.4f} RBO {o['rbo']:.4f}" for o in self.order)
        return (f"ReproAgreement({self.original} vs {self.reproduction}: {order}; "
                f"{len(self.effect)} measures)")


def agree_repro(original, reproduction, *, baseline=None, qrels=None, measures=(),
                depth: int = reproduction.KTU_DEPTH, rbo_p: float = reproduction.RBO_P,
                relevance_level: int = 1, complete: bool = False, max_docs=None,
                compat: str = "9.0.8") -> ReproAgreement:
    """KTU and RBO of each pair's document rankings (to ``depth``; RBO with persistence
    ``rbo_p``), and with ``qrels`` and ``measures`` the RMSE of each pair's per-topic scores;
    baseline = (original baseline, reproduced baseline) adds the Effect Ratio and DeltaRI of
    the run over the baseline."""
    if isinstance(measures, str):
        measures = [measures]
    measures = list(measures or [])
    if measures and qrels is None:
        raise UsageError("measures need qrels to score the runs (qrels=...)",
                         cli="-m needs --qrels QRELS to score the runs")
    if qrels is not None and not measures:
        raise UsageError("qrels without measures: name the measures RMSE, ER and DeltaRI "
                         "compare (measures=[...])",
                         cli="--qrels needs -m MEASURE: the measure RMSE, ER and DeltaRI compare")
    if not 1 <= depth <= MAX_DEPTH:  # RBO sums its weights to the depth
        raise UsageError(f"depth must be from 1 to {MAX_DEPTH:,} (got {depth})",
                         cli=f"--depth must be from 1 to {MAX_DEPTH:,} (got {depth})")
    if not 0 < rbo_p < 1:
        raise UsageError(f"RBO's persistence must be between 0 and 1 (got {rbo_p!r})",
                         cli=f"--rbo-p must be between 0 and 1 (got {rbo_p!r})")
    pairs = [("advanced", original, reproduction)]
    if baseline is not None:
        if len(baseline) != 2:
            raise UsageError("baseline is a pair: (original baseline, reproduced baseline)")
        pairs.append(("baseline", baseline[0], baseline[1]))
    order = [_order_row(kind, o, r, depth, rbo_p) for kind, o, r in pairs]
    effect, population = [], ""
    if measures:
        runs = [x for _, o, r in pairs for x in (o, r)]
        table = score_table(qrels, runs, measures, relevance_level=relevance_level,
                            complete=complete, max_docs=max_docs, compat=compat,
                            command="agree repro")
        population = _topics_words(table)
        for m in table.measures:
            effect.append(_effect_row(table, m, baseline is not None))
    return ReproAgreement(_name(original, "original"), _name(reproduction, "reproduction"),
                          [_name(b, n) for b, n in zip(baseline, ("baseline", "reproduced "
                                                                  "baseline"))]
                          if baseline is not None else [], depth, rbo_p, order, effect,
                          population)


def _order_row(kind, orig, rep, depth, rbo_p) -> dict:
    a = reproduction.rankings_of(load_run(orig))
    b = reproduction.rankings_of(load_run(rep))
    if not b:
        raise UsageError(f"the reproduction {_name(rep, kind)} ranks no document")
    uneven = [t for t in b if t in a and len(a[t][:depth]) != len(b[t][:depth])]
    if uneven:  # KTU compares rankings of equal length: say which depth cuts every topic so
        t = uneven[0]
        short = min(min(len(a[u]), len(b[u])) for u in uneven)
        msg = (f"topic {t!r}: the original {_name(orig, kind)} ranks {len(a[t][:depth])} "
               f"documents, the reproduction {_name(rep, kind)} {len(b[t][:depth])} "
               f"({len(uneven)} topics differ so); KTU compares rankings of equal length")
        raise UsageError(f"{msg} (depth={short})", cli=f"{msg} (--depth {short})")
    ktu = reproduction.ktu(a, b, depth)
    rbo = reproduction.rbo(a, b, rbo_p, depth)
    return {"pair": kind, "original": _name(orig, "original"),
            "reproduction": _name(rep, "reproduction"), "topics": len(ktu.topics),
            "ktu": ktu.mean, "rbo": rbo.mean}


def _effect_row(table, m: str, with_baseline: bool) -> dict:
    """Run indices: 0 original, 1 reproduction, 2 original baseline, 3 reproduced baseline."""
    def vectors(i, j):
        topics = table.topics(i, j)
        return table.vector(i, m, topics), table.vector(j, m, topics), len(topics)

    oa, ra, n = vectors(0, 1)
    row = {"measure": m, "topics": n, "rmse_advanced": reproduction.rmse(oa, ra),
           "p_advanced": t_test(oa, ra)[1]}
    if with_baseline:
        ob, rb, _ = vectors(2, 3)
        row["rmse_baseline"] = reproduction.rmse(ob, rb)
        row["p_baseline"] = t_test(ob, rb)[1]
        o_a, o_b, _ = vectors(0, 2)  # the original experiment: run over baseline
        r_a, r_b, _ = vectors(1, 3)  # the reproduced one
        with np.errstate(divide="ignore", invalid="ignore"):
            row["effect_ratio"] = reproduction.effect_ratio(o_a, o_b, r_a, r_b)
            row["delta_ri"] = reproduction.delta_ri(o_a, o_b, r_a, r_b)
    return row
