"""``trecqr agree``'s results as text, JSON or CSV (:mod:`.agree` computes them).

Every output states what its numbers are over: the shared judgments and the binarisation
threshold (labels), each qrels' topics (rankings), the topics and depth (reproduction).
JSON keeps every digit (nan as null); CSV is one flat table per result, floats as ``repr``;
text rounds to ``places``.
"""

from __future__ import annotations

import csv
import io
import json
import math

from trecqr.report.agree import LabelAgreement, RankingAgreement, ReproAgreement
from trecqr.report.text_table import aligned_table, fmt_p, fmt_value

FORMATS = ("text", "json", "csv")
LABEL_WORDS = {"cohen_kappa": "Cohen's kappa",
               "weighted_kappa_linear": "weighted kappa (linear)",
               "weighted_kappa_quadratic": "weighted kappa (quadratic)",
               "krippendorff_alpha_nominal": "Krippendorff's alpha (nominal)",
               "krippendorff_alpha_ordinal": "Krippendorff's alpha (ordinal)",
               "krippendorff_alpha_interval": "Krippendorff's alpha (interval)",
               "krippendorff_alpha": "Krippendorff's alpha"}


def _clean(obj):
    """nan and inf as None, for JSON."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _csv(rows, header) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow(["" if isinstance(v, float) and math.isnan(v) else
                    repr(v) if isinstance(v, float) else v for v in row])
    return buf.getvalue()


def render(result, fmt: str = "text", places: int = 4) -> str:
    """The text of an agreement result (labels, rankings or reproduction) in ``fmt``."""
    if fmt == "json":
        d = {"kind": _kind(result), **result.to_dict()}
        return json.dumps(_clean(d), indent=2, allow_nan=False) + "\n"
    if isinstance(result, LabelAgreement):
        return labels_csv(result) if fmt == "csv" else labels_text(result, places)
    if isinstance(result, RankingAgreement):
        return rankings_csv(result) if fmt == "csv" else rankings_text(result, places)
    return repro_csv(result) if fmt == "csv" else repro_text(result, places)


def _kind(result) -> str:
    return {LabelAgreement: "labels", RankingAgreement: "rankings",
            ReproAgreement: "repro"}[type(result)]


# ---------------------------------------------------------------------------------------------
# labels


def _binary_words(r: LabelAgreement) -> str:
    return f"relevant: grade >= {r.relevance_level}"


def labels_text(r: LabelAgreement, places: int = 4) -> str:
    out = [f"qrels A: {r.qrels_a}; qrels B: {r.qrels_b}",
           f"judgments: {r.shared} shared ({r.topics} topics), {r.only_a} only in A, "
           f"{r.only_b} only in B; every statistic is over the {r.shared} shared", ""]
    rows = [[LABEL_WORDS[k], f"graded ({', '.join(map(str, r.grades))})", fmt_value(v, places)]
            for k, v in r.graded.items()]
    rows += [[LABEL_WORDS[k], f"binary (grade >= {r.relevance_level})", fmt_value(v, places)]
             for k, v in r.binary.items()]
    out += aligned_table(rows, ["statistic", "labels", "value"], left=2)
    out += ["", "confusion matrix (rows: A's grade, columns: B's grade)"]
    header = ["A \\ B"] + [str(g) for g in r.grades] + ["total"]
    rows = [[str(g)] + [str(c) for c in row] + [str(sum(row))]
            for g, row in zip(r.grades, r.confusion)]
    rows.append(["total"] + [str(sum(col)) for col in zip(*r.confusion)] + [str(r.shared)])
    out += aligned_table(rows, header)
    out += ["", f"binary confusion matrix ({_binary_words(r)})"]
    rows = [[name] + [str(c) for c in row]
            for name, row in zip(("A not relevant", "A relevant"), r.binary_confusion)]
    out += aligned_table(rows, ["", "B not relevant", "B relevant"])
    out += [f"note: {n}" for n in r.notes]
    return "\n".join(out) + "\n"


def labels_csv(r: LabelAgreement) -> str:
    """statistic,labels,grade_a,grade_b,value: the statistics, then the confusion counts."""
    rows = [[k, "graded", "", "", v] for k, v in r.graded.items()]
    rows += [[k, f"binary (grade >= {r.relevance_level})", "", "", v]
             for k, v in r.binary.items()]
    rows += [["shared", "", "", "", r.shared], ["only_a", "", "", "", r.only_a],
             ["only_b", "", "", "", r.only_b]]
    rows += [["confusion", "graded", ga, gb, c] for ga, row in zip(r.grades, r.confusion)
             for gb, c in zip(r.grades, row)]
    rows += [["confusion", f"binary (grade >= {r.relevance_level})", ga, gb, c]
             for ga, row in zip((0, 1), r.binary_confusion) for gb, c in zip((0, 1), row)]
    return _csv(rows, ["statistic", "labels", "grade_a", "grade_b", "value"])


# ---------------------------------------------------------------------------------------------
# system rankings


def _ranks(scores) -> list:
    """1 for the best; equal scores share the best rank."""
    return [1 + sum(1 for o in scores if o > s) for s in scores]


def rankings_text(r: RankingAgreement, places: int = 4) -> str:
    out = [f"qrels A: {r.qrels_a} ({r.topics_a})", f"qrels B: {r.qrels_b} ({r.topics_b})",
           f"{len(r.runs)} runs ranked by their mean under each qrels; tau_AP takes A's "
           f"ranking as the reference; RBO p = {r.rbo_p:g}", ""]
    rows = [[m] + [fmt_value(r.stats[m][s], places) for s in ("kendall_tau", "tau_ap",
                                                              "spearman", "rbo")]
            for m in r.measures]
    out += aligned_table(rows, ["measure", "Kendall's tau", "tau_AP", "Spearman", "RBO"])
    for m in r.measures:
        ra, rb = _ranks(r.scores_a[m]), _ranks(r.scores_b[m])
        rows = sorted(([n, fmt_value(a, places), str(x), fmt_value(b, places), str(y)]
                       for n, a, x, b, y in zip(r.runs, r.scores_a[m], ra, r.scores_b[m], rb)),
                      key=lambda row: (int(row[2]), row[0]))
        out += ["", f"{m}: each run's mean and rank"]
        out += aligned_table(rows, ["run", "A", "rank A", "B", "rank B"])
    out += [f"note: {n}" for n in r.notes]
    return "\n".join(out) + "\n"


def rankings_csv(r: RankingAgreement) -> str:
    """measure,run,statistic,value: each run's means under A and B (statistic mean_a,
    mean_b), then the agreement statistics (run empty)."""
    rows = []
    for m in r.measures:
        rows += [[m, n, "mean_a", a] for n, a in zip(r.runs, r.scores_a[m])]
        rows += [[m, n, "mean_b", b] for n, b in zip(r.runs, r.scores_b[m])]
        rows += [[m, "", s, v] for s, v in r.stats[m].items()]
    return _csv(rows, ["measure", "run", "statistic", "value"])


# ---------------------------------------------------------------------------------------------
# reproduction


def repro_text(r: ReproAgreement, places: int = 4) -> str:
    out = [f"original: {r.original}; reproduction: {r.reproduction}" +
           (f"; baseline: {r.baseline[0]}, reproduced as {r.baseline[1]}" if r.baseline
            else ""),
           f"document order (repro_eval's): KTU and RBO (p = {r.rbo_p:g}) of the rankings cut "
           f"at depth {r.depth}, means over the reproduction's topics", ""]
    rows = [[o["pair"], o["original"], o["reproduction"], str(o["topics"]),
             fmt_value(o["ktu"], places), fmt_value(o["rbo"], places)] for o in r.order]
    out += aligned_table(rows, ["pair", "original", "reproduction", "topics", "KTU", "RBO"],
                         left=3)
    if r.effect:
        out += ["", f"effectiveness ({r.population}; RMSE of the per-topic scores, p of the "
                "paired t-test original vs reproduction"
                + ("; ER and DeltaRI of the run over the baseline" if r.baseline else "") + ")"]
        header = ["measure", "topics", "RMSE", "p(t)"]
        keys = ["rmse_advanced", "p_advanced"]
        if r.baseline:
            header += ["RMSE baseline", "p(t) baseline", "ER", "DeltaRI"]
            keys += ["rmse_baseline", "p_baseline", "effect_ratio", "delta_ri"]
        rows = [[e["measure"], str(e["topics"])] +
                [(fmt_p if k.startswith("p_") else fmt_value)(e[k], places) for k in keys]
                for e in r.effect]
        out += aligned_table(rows, header)
    return "\n".join(out) + "\n"


def repro_csv(r: ReproAgreement) -> str:
    """measure,pair,statistic,value: KTU and RBO per pair (measure empty), then RMSE per pair
    and ER and DeltaRI per measure."""
    rows = []
    for o in r.order:
        rows += [["", o["pair"], "topics", o["topics"]], ["", o["pair"], "ktu", o["ktu"]],
                 ["", o["pair"], "rbo", o["rbo"]]]
    for e in r.effect:
        rows.append([e["measure"], "", "topics", e["topics"]])
        rows.append([e["measure"], "advanced", "rmse", e["rmse_advanced"]])
        rows.append([e["measure"], "advanced", "p_ttest", e["p_advanced"]])
        if "rmse_baseline" in e:
            rows += [[e["measure"], "baseline", "rmse", e["rmse_baseline"]],
                     [e["measure"], "baseline", "p_ttest", e["p_baseline"]],
                     [e["measure"], "", "effect_ratio", e["effect_ratio"]],
                     [e["measure"], "", "delta_ri", e["delta_ri"]]]
    return _csv(rows, ["measure", "pair", "statistic", "value"])
