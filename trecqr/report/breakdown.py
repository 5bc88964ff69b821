"""Breakdowns: means, counts and paired t-tests per group of topics.

``trecqr breakdown QRELS RUN... -m MEASURE... --by depth|type|labels`` (and :func:`breakdown`
in Python) groups the topics

* ``depth``: by turn depth, the turn number parsed from the turn id (``106_3`` -> 3; any style
  :mod:`trecqr.datasets.turn_ids` knows); depths at or beyond ``max_depth`` (default 8) form one
  group ``8+`` (``max_depth=0``: no cap);
* ``type``: by turn type, from a ``{qid: type}`` mapping or a TopiOCQA ``dev_type.json`` file
  (first_turn, topic_shift, topic_return, no_shift); ids are matched as written, else in
  canonical form (``topiocqa-dev_31_4`` finds ``31-4``);
* ``labels``: by any label, from a ``{qid: label}`` mapping or a TSV file ``qid<TAB>label``
  (blank lines and ``#`` comments skipped).

Per group and run: the mean (trec_eval's summation order) and count of the run's topics in the
group, its topics being the table's population (:mod:`.populations`: every qrels topic with
``-c`` or ir_measures names, else the qrels topics the run has), so a group holding every topic
gives ``trecqr eval``'s value; per group, measure and run other than the baseline: the mean
difference against the baseline over the group's topics both runs have, and the paired two-sided
t-test (scipy.stats.ttest_rel). P-values are adjusted (Holm default, Bonferroni, BH, BY, none)
over the family of every (group x non-baseline run x measure) test, stated in the output. Topics
without a label are left out and counted.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field

from trecqr.datasets.topiocqa import read_turn_types
from trecqr.datasets.turn_ids import split_id
from trecqr.errors import InputError, UsageError
from trecqr.formats.textio import unreadable
from trecqr.report.groups import group_order, memberships, read_groups
from trecqr.report.populations import ScoreTable, score_table  # noqa: F401 (plots, html use them)
from trecqr.report.stats.corrections import adjust
from trecqr.report.stats.paired import t_test
from trecqr.report.text_table import (aligned_table, fmt_p, fmt_value, json_number, plural,
                                      render_csv)

DEFAULT_MAX_DEPTH = 8
TYPE_ORDER = ("first_turn", "topic_shift", "topic_return", "no_shift")


# ---------------------------------------------------------------------------------------------
# grouping


def depth_of(qid: str) -> int:
    return int(split_id(qid)[1])


def depth_label(depth: int, max_depth: int | None = DEFAULT_MAX_DEPTH) -> str:
    if max_depth and depth >= max_depth:
        return f"{max_depth}+"
    return str(depth)


def depth_groups(qids, max_depth: int | None = DEFAULT_MAX_DEPTH) -> dict:
    """{qid: depth label} ('1', '2', ..., 'N+')."""
    return {q: depth_label(depth_of(q), max_depth) for q in qids}


def label_key(label: str):
    """Sort key: depths numerically (N+ last), turn types in their natural order, else text."""
    if label.endswith("+") and label[:-1].isdigit():
        return (0, int(label[:-1]), 1, "")
    if label.isdigit():
        return (0, int(label), 0, "")
    if label in TYPE_ORDER:
        return (1, TYPE_ORDER.index(label), 0, "")
    return (2, 0, 0, label)


def read_labels(path) -> dict:
    """{qid: label} from a TSV file ``qid<TAB>label`` (blank lines and # comments skipped)."""
    path = os.fspath(path)
    out: dict[str, str] = {}
    try:
        fh = open(path, encoding="utf-8")  # noqa: SIM115 (closed by the with below)
    except OSError as exc:
        raise unreadable(path, exc) from None
    with fh:
        try:
            lines = list(enumerate(fh, 1))
        except UnicodeDecodeError as exc:  # compressed or binary: labels files are plain text
            raise InputError(path, None, f"not UTF-8 text ({exc.reason}); labels are a plain "
                                         "qid<TAB>label file") from None
        for n, line in lines:
            line = line.rstrip("\r\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise InputError(path, n, "expected qid<TAB>label")
            qid, label = parts[0].strip(), parts[1].strip()
            if qid in out and out[qid] != label:
                raise InputError(path, n, f"query {qid!r} labelled {out[qid]!r} and {label!r}")
            out[qid] = label
    if not out:
        raise InputError(path, None, "no labels")
    return out


def _lookup(mapping: dict, qid: str):
    if qid in mapping:
        return mapping[qid]

    try:
        conv, turn, _ = split_id(qid)
    except UsageError:
        return None
    for key in (f"{conv}_{turn}", f"{conv}-{turn}"):
        if key in mapping:
            return mapping[key]
    return None


def group_topics(qids, by: str = "depth", labels=None,
                 max_depth: int | None = DEFAULT_MAX_DEPTH) -> dict:
    """{qid: group} for the qids that have a group (unlabelled ones are left out)."""
    if by == "depth":
        return depth_groups(qids, max_depth)
    if by not in ("type", "labels"):
        raise UsageError(f"unknown breakdown {by!r} (depth, type, labels)")
    if labels is None:
        raise UsageError(f"--by {by} needs --labels (a {'dev_type.json' if by == 'type' else 'TSV'}"
                         " file or a mapping)")
    if isinstance(labels, (str, os.PathLike)):
        if by == "type":
            labels = read_turn_types(labels)
        else:
            labels = read_labels(labels)
    out = {}
    for q in qids:
        lab = _lookup(labels, q)
        if lab is not None:
            out[q] = str(lab)
    return out


# ---------------------------------------------------------------------------------------------
# breakdown


@dataclass
class GroupResult:
    group: str
    run: str
    measure: str
    n: int                 # the run's topics in the group
    mean: float
    baseline: str = ""
    n_pair: int = 0        # topics of the group both the run and the baseline are evaluated on
    diff: float = math.nan
    t: float = math.nan
    p_t: float = math.nan
    p_t_adj: float = math.nan
    significant: bool = False


@dataclass
class Breakdown:
    by: str
    groups: list            # group labels, in order
    runs: list
    measures: list
    baseline: str
    rows: list              # GroupResult, group by group, measure by measure, run by run
    counts: dict            # {group: topics of the union of the runs' populations}
    unlabelled: list        # evaluated topics without a group
    topics: str
    correction: str
    alpha: float
    family: str
    extra: dict = field(default_factory=dict)
    topics_note: str = ""   # the header's topics line (populations.ScoreTable)
    population: dict = field(default_factory=dict)  # the topics every mean is over

    def get(self, group, run, measure) -> GroupResult:
        for r in self.rows:
            if r.group == group and r.run == run and r.measure == measure:
                return r
        raise KeyError((group, run, measure))

    def to_dict(self) -> dict:
        d = asdict(self)
        d["rows"] = [{k: json_number(v) for k, v in asdict(r).items()} for r in self.rows]
        return d


def breakdown(qrels, runs, measures, *, by: str = "depth", labels=None,
              max_depth: int | None = DEFAULT_MAX_DEPTH, baseline=None, complete: bool = False,
              correction: str | None = "holm", alpha: float = 0.05, names=None,
              relevance_level: int = 1, max_docs=None, judged_only: bool = False,
              compat: str = "9.0.8", table: ScoreTable | None = None,
              groups=None) -> Breakdown:
    """Per-group means, counts and paired t-tests against the baseline (default the first run).

    groups: overlapping groups ({group: [ids]} or a JSON file of it, :mod:`.groups`) in place of
    ``by``, with an ``all`` group. The family corrected is every (group x non-baseline run x
    measure) t-test."""
    correction = correction or "holm"
    adjust([], correction)
    if table is None:
        table = score_table(qrels, runs, measures, complete=complete, names=names,
                            relevance_level=relevance_level, max_docs=max_docs,
                            judged_only=judged_only, compat=compat, command="breakdown")
    names = table.names
    b = 0 if baseline is None else table.run_index(baseline)
    all_topics = []
    seen = set()
    for i in range(len(names)):
        for t in table.topics(i):
            if t not in seen:
                seen.add(t)
                all_topics.append(t)
    if groups is not None:  # overlapping groups: trecqr/report/groups.py
        groups = read_groups(groups, labels=False) if isinstance(groups, (str, os.PathLike)) \
            else groups
        member, groups, by = memberships(all_topics, groups), group_order(groups), "groups"
    else:
        grouping = group_topics(all_topics, by, labels, max_depth)
        member = {t: (g,) for t, g in grouping.items()}
        groups = sorted(set(grouping.values()), key=label_key)
    unlabelled = [t for t in all_topics if t not in member]
    counts = {g: sum(1 for t in all_topics if g in member.get(t, ())) for g in groups}
    rows = []
    for g in groups:
        for m in table.measures:
            for i, name in enumerate(names):
                topics = [t for t in table.topics(i) if g in member.get(t, ())]
                row = GroupResult(g, name, m, len(topics), table.mean(i, m, topics))
                if i != b and len(names) > 1:
                    pt = [t for t in table.topics(b, i) if g in member.get(t, ())]
                    a, base = table.vector(i, m, pt), table.vector(b, m, pt)
                    row.baseline, row.n_pair = names[b], len(pt)
                    row.diff = table.mean(i, m, pt) - table.mean(b, m, pt) if pt else math.nan
                    row.t, row.p_t = t_test(a, base) if pt else (math.nan, math.nan)
                rows.append(row)
    tested = [r for r in rows if r.baseline]
    for r, p in zip(tested, adjust([r.p_t for r in tested], correction)):
        r.p_t_adj = float(p)
        r.significant = bool(p <= alpha)
    n_runs = len(names) - 1
    family = (f"{plural(len(groups), 'group')} x {plural(n_runs, 'run')} vs baseline "
              f"{names[b]} x {plural(len(table.measures), 'measure')} = "
              f"{plural(len(tested), 't-test')}")
    extra = {"max_depth": max_depth} if by == "depth" else {}
    tested_n = sorted({r.n_pair for r in tested})
    return Breakdown(by, groups, names, table.measures, names[b], rows, counts, unlabelled,
                     "complete" if table.complete else "intersection", correction, alpha,
                     family, extra, table.population_line(tested_n), table.population())


# ---------------------------------------------------------------------------------------------
# output


def render_text(bd: Breakdown, places: int = 4) -> str:
    what = {"depth": "turn depth" + (f" (depths >= {bd.extra['max_depth']} grouped)"
                                     if bd.extra.get("max_depth") else ""),
            "type": "turn type", "labels": "label",
            "groups": "group (groups overlap; 'all': every topic)"}[bd.by]
    out = [f"breakdown by {what}; {bd.topics_note}",
           f"family: {bd.family}; correction: {bd.correction}; alpha = {bd.alpha:g}"]
    if bd.unlabelled:
        out.append(f"{len(bd.unlabelled)} topics without a group left out "
                   f"(e.g. {', '.join(bd.unlabelled[:3])})")
    out.append("")
    # n: the topics each mean is over; one column when every run's mean in a group is over as
    # many, else one per run
    per_run = any(len({bd.get(g, r, m).n for r in bd.runs}) > 1
                  for g in bd.groups for m in bd.measures)
    for m in bd.measures:
        header = ["group"] + ([f"n {r}" for r in bd.runs] if per_run else ["n"]) + bd.runs
        rows = []
        for g in bd.groups:
            ns = [str(bd.get(g, r, m).n) for r in bd.runs]
            row = [g] + (ns if per_run else ns[:1])
            for r in bd.runs:
                x = bd.get(g, r, m)
                mark = ""
                if x.baseline:
                    mark = ("+" if x.diff > 0 else "-") if x.significant else " "
                row.append(f"{fmt_value(x.mean, places)}{mark}")
            rows.append(row)
        out.append(f"{m} (baseline {bd.baseline}; +/- significantly better/worse, paired "
                   f"t-test, {bd.correction}-adjusted p <= {bd.alpha:g})")
        out += aligned_table(rows, header)
        out.append("")
    header = ["group", "run", "measure", "n", "diff", "p(t)", "adj p(t)", "sig"]
    rows = [[x.group, x.run, x.measure, str(x.n_pair), fmt_value(x.diff, places),
             fmt_p(x.p_t, places), fmt_p(x.p_t_adj, places), "*" if x.significant else ""]
            for x in bd.rows if x.baseline]
    out.append(f"comparisons vs {bd.baseline} (diff = run - baseline)")
    out += aligned_table(rows, header, left=3)
    return "\n".join(out) + "\n"


CSV_FIELDS = ["group", "run", "measure", "n", "mean", "baseline", "n_pair", "diff", "t", "p_t",
              "p_t_adj", "significant"]


def render(bd: Breakdown, fmt: str = "text", places: int = 4) -> str:
    if fmt == "json":
        return json.dumps(bd.to_dict(), indent=2, allow_nan=False) + "\n"
    if fmt == "csv":
        return render_csv(bd.rows, CSV_FIELDS)
    return render_text(bd, places)
