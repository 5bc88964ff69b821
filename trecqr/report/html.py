"""The HTML report: one self-contained page per comparison (``trecqr report``, ``cqr --html``,
:meth:`Comparison.to_html`, :meth:`CqrReport.to_html`).

Why: after the table of means, a CQR error analysis reads turns: where does system B beat A,
what did each rewrite say, what did each retrieve, are the wins unjudged passages? The page
holds, in one file that needs no server, network, script or font from outside:

1. the summary: ``compare``'s means with its significance marks, family and correction (the
   same :class:`Comparison`, so the same numbers), the pairs' tests, and the coverage (topics
   evaluated, qrels topics missing, unjudged share of the top k);
2. inline SVG plots (:mod:`.html_svg`) of the first measure: per-depth means with their 95%
   intervals, the sorted per-turn difference against the baseline, the distributions;
3. the per-turn table, sorted and filtered in the page (conversation, depth, ``--groups``,
   sign and size of the difference), written :data:`.html_assets.PAGE_SIZE` rows at a time;
4. the turn view: the conversation so far, each run's rewrite and the manual one, each run's
   top k with grades ("unjudged") and passage text, the rank of the first relevant document.

Measures are named as compare's tables name them (:mod:`.labels`: MRR, NDCG@3, ``--label``'s)
everywhere on the page, so a page and the paper table made from the same comparison agree; the
rule behind each label (``trec_eval 9.0.8 recip_rank``, ``ir_measures RR@3``) is in a note under
the summary and in the tooltips, since MRR alone does not say which of the two it is.

A run that is an upper bound (cqr's ``oracle`` row, chosen per turn with the qrels) is shown,
plotted and labelled "upper bound", but compared in no test: a test of it against a system
would read as a system beating another, and its p-values would enlarge the corrected family.

Text from the inputs reaches the page only as JSON inside a non-executed ``<script
type="application/json">`` (``<``, ``>`` and ``&`` written as ``\\u003c``...) and is put in the
DOM as text, so a ``<script>`` in a topic stays text; a Content-Security-Policy forbids every
request. The page's data is built by :mod:`.html_data`.
"""

from __future__ import annotations

import json
import math
import os
import re
from html import escape

import numpy as np

from trecqr.errors import UsageError
from trecqr.report import html_svg
from trecqr.report.breakdown import score_table
from trecqr.report.comparison_stats import compute as compare
from trecqr.report.comparison import TESTS
from trecqr.report.comparison_text import SHORT, topics_line
from trecqr.report.html_assets import CSS, PAGE_SIZE, SCRIPT
from trecqr.report.html_data import page_data
from trecqr.report.populations import run_names
from trecqr.report.text_table import fmt_p, fmt_value

MAX_DEPTH = 8  # depths from here on form one group, as breakdown --by depth
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:; connect-src 'none'; form-action 'none'")


def _json_script(data: dict) -> str:
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script id="trecqr-data" type="application/json">{text}</script>'


def _attr(v) -> str:
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else repr(v)


def summary_html(cmp, coverage: list, k: int, places: int, upper: dict | None = None,
                 rules: dict | None = None) -> str:
    """The means table with compare's marks, the pairs table and the coverage table.

    upper: {name: ({measure: mean}, topics)} of runs shown as upper bounds (an oracle's choice,
    made with the qrels): their rows are labelled so and carry no mark, as compare left them out.
    rules: {measure: whose rule it follows} (:func:`measure_rules`); the measures are headed
    by compare's labels (``cmp.label``: MRR, NDCG@3, ``--label``'s), each with its rule in its
    tooltip and in a note, so a reader sees both the paper's name and trec_eval's."""
    upper = upper or {}
    rules = rules or {m: m for m in cmp.measures}
    baseline_mode = len({p.baseline for p in cmp.pairs}) == 1 and not cmp.extra.get("all_pairs")
    sig = {(p.run, p.measure): ("+" if p.diff > 0 else "-") for p in cmp.pairs if p.significant}
    markers = cmp.markers() if len(cmp.baselines or []) > 1 else []
    if markers:  # several baselines: each one's marker after a mean that differs from it
        signs = [m for _, m, _ in markers]
        sig = {key: "".join(signs[k] for k, _ in got) for key, got in cmp.marks().items()}
        baseline_mode = True
    test = TESTS[cmp.test]
    out = [f'<p class="note" id="family">family: {escape(cmp.family)}; correction: '
           f'{escape(cmp.correction)}; alpha = {cmp.alpha:g}</p>',
           f'<p class="note">{escape(topics_line(cmp))}</p>']
    if markers:
        named = ", ".join(f"{m} {b}" for b, m, _ in markers)
        out.append(f'<p class="note" id="markers">baselines {escape(named)}: the marker after a '
                   f'mean that differs significantly from that baseline, {test}, '
                   f'{escape(cmp.correction)}-adjusted p &lt;= {cmp.alpha:g}</p>')
    elif baseline_mode:
        out.append(f'<p class="note">{escape(cmp.pairs[0].baseline)} is the baseline; +/- '
                   f'significantly better/worse, {test}, {escape(cmp.correction)}-adjusted p '
                   f'&lt;= {cmp.alpha:g}</p>')
    if upper:
        out.append(f'<p class="note" id="upper-note">{escape(", ".join(upper))}: upper bound '
                   f'(chosen per turn with the qrels), left out of the tests and the family</p>')
    out.append(f'<p class="note" id="measures">{escape(rules_line(cmp, rules))}</p>')
    out.append('<table id="summary"><thead><tr><th>run</th>' +
               "".join(f'<th class="n" data-measure="{escape(m)}" title="{escape(rules[m])}">'
                       f'{escape(cmp.label(m))}</th>' for m in cmp.measures) +
               '<th class="n">topics</th></tr></thead><tbody>')
    for r in cmp.runs:
        cells = []
        for m in cmp.measures:
            mark = sig.get((r, m), "") if baseline_mode else ""
            v = cmp.means[r][m]
            cells.append(f'<td class="n" data-run="{escape(r)}" data-measure="{escape(m)}" '
                         f'data-value="{_attr(v)}" data-sig="{mark}">'
                         f'{fmt_value(v, places)}{mark}</td>')
        out.append(f'<tr><th>{escape(r)}</th>{"".join(cells)}'
                   f'<td class="n">{cmp.num_topics[r]}</td></tr>')
    for r, (means, topics) in upper.items():
        cells = "".join(f'<td class="n" data-run="{escape(r)}" data-measure="{escape(m)}" '
                        f'data-value="{_attr(means[m])}" data-sig="">'
                        f'{fmt_value(means[m], places)}</td>' for m in cmp.measures)
        out.append(f'<tr class="upper" data-upper-bound="1"><th>{escape(r)} <span class="tag">'
                   f'upper bound</span></th>{cells}<td class="n">{topics}</td></tr>')
    out.append("</tbody></table>")
    heads = ["baseline", "run", "measure", "n", "diff", "95% CI", "d_z", "p(t)", "p(rand)",
             f"adj p({SHORT[cmp.test]})", "sig"]
    out.append('<h3>comparisons (diff = run - baseline)</h3><table id="pairs"><thead><tr>' +
               "".join(f"<th>{h}</th>" for h in heads) + "</tr></thead><tbody>")
    for p in cmp.pairs:
        adj = p.p_adj
        cells = [breakable(p.baseline), breakable(p.run),
                 f'<span title="{escape(rules[p.measure])}">{escape(cmp.label(p.measure))}</span>',
                 str(p.n),
                 fmt_value(p.diff, places),
                 f"[{fmt_value(p.ci_low, places)}, {fmt_value(p.ci_high, places)}]",
                 fmt_value(p.effect_dz, 2), fmt_p(p.p_t, places), fmt_p(p.p_rand, places),
                 fmt_p(adj, places), "*" if p.significant else ""]
        out.append(f'<tr data-baseline="{escape(p.baseline)}" data-run="{escape(p.run)}" '
                   f'data-measure="{escape(p.measure)}" data-diff="{_attr(p.diff)}" '
                   f'data-adj="{_attr(adj)}" data-significant="{int(p.significant)}">' +
                   "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    out.append(f'<h3>coverage</h3><table id="coverage"><thead><tr><th>run</th>'
               f'<th class="n">evaluated</th><th class="n">qrels topics missing</th>'
               f'<th class="n">unjudged in top {k}</th></tr></thead><tbody>')
    for c in coverage:
        share = "-" if c["unjudged_share"] is None else f"{100 * c['unjudged_share']:.1f}%"
        out.append(f'<tr data-run="{escape(c["run"])}"><th>{escape(c["run"])}</th>'
                   f'<td class="n">{c["evaluated"]}</td><td class="n">{c["missing"]}</td>'
                   f'<td class="n">{share}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def measure_rules(measures, irm=(), compat: str = "9.0.8") -> dict:
    """{measure: the rule it follows, in words}: ``trec_eval 9.0.8 recip_rank`` or
    ``ir_measures RR@3`` (irm: the ir_measures names among the measures)."""
    return {m: f"ir_measures {m}" if m in irm else f"trec_eval {compat} {m}" for m in measures}


def rules_line(cmp, rules: dict) -> str:
    """The note under the summary naming the measure behind each label."""
    return "measures: " + "; ".join(f"{cmp.label(m)} = {rules[m]}" for m in cmp.measures)


def breakable(name: str) -> str:
    """name as HTML with a break opportunity after each ``_ - . /``: a table of long run
    names then wraps them at their words instead of running past the window."""
    return re.sub(r"([_\-./])", r"\1<wbr>", escape(name))


def _depth_label(d):
    return None if d is None else (f"{MAX_DEPTH}+" if d >= MAX_DEPTH else str(d))


def plots_html(cmp, data: dict) -> str:
    """The three plots of the first measure (depth bands, win/loss per pair, distributions)."""
    m = 0
    measure = data["measures"][m]
    label, rule = data["labels"][m], data["rules"][m]
    names = data["runs"]
    complete = data["complete"]
    vals = [np.array([np.nan if v is None else v for v in data["values"][r][m]], np.float64)
            for r in range(len(names))]
    if complete:
        vals = [np.nan_to_num(v, nan=0.0) for v in vals]
    out = []
    labels = data["depth_labels"]
    if labels:
        lab_of = np.array([_depth_label(d) or "" for d in data["depth"]], dtype=object)
        means, halves = [], []
        for v in vals:
            ms, hs = [], []
            for lab in labels:
                x = v[(lab_of == lab) & ~np.isnan(v)]
                ms.append(float(x.mean()) if len(x) else math.nan)
                hs.append(1.96 * float(x.std(ddof=1)) / math.sqrt(len(x)) if len(x) > 1
                          else math.nan)
            means.append(ms)
            halves.append(hs)
        out.append(html_svg.depth_bands(labels, means, halves, names, label, rule))
    index = {n: i for i, n in enumerate(names)}
    for p in cmp.pairs:
        if p.measure != measure:
            continue
        a, b = vals[index[p.run]], vals[index[p.baseline]]
        d = a - b
        out.append(html_svg.win_loss(d[~np.isnan(d)], p.run, p.baseline, label))
    out.append(html_svg.distributions(vals, names, label, rule))
    return "\n".join(out)


def comparison_page(cmp, qrels, runs, measures, *, rewrites=None, raw=None, manual=None,
                    collection=None, index=None, groups=None, k: int = 10,
                    title: str | None = None, places: int = 4, relevance_level: int = 1,
                    max_docs=None, judged_only: bool = False, compat: str = "9.0.8",
                    names=None, upper_bounds=()) -> str:
    """The page of a :class:`Comparison` of these runs on these qrels with these measures (as
    given to compare); the scoring options must be those the comparison was made with.

    upper_bounds: names of runs among ``runs`` that the comparison left out because they are
    upper bounds (an oracle choosing per turn with the qrels): shown and plotted, labelled
    "upper bound", in no test; names then gives every run's name (default: the comparison's)."""
    upper_bounds = list(upper_bounds or ())
    names = list(names) if names is not None else list(cmp.runs)
    if [n for n in names if n not in upper_bounds] != list(cmp.runs) or \
            not set(upper_bounds) <= set(names):
        raise UsageError(f"the runs {', '.join(names)} less the upper bounds are not those of "
                         f"the comparison ({', '.join(cmp.runs)})")
    complete = cmp.extra.get("complete", cmp.topics == "complete")
    table = score_table(qrels, runs, measures, complete=complete,
                        names=names, relevance_level=relevance_level, max_docs=max_docs,
                        judged_only=judged_only, compat=compat)
    if list(table.measures) != list(cmp.measures):
        raise UsageError(f"the measures {', '.join(table.measures)} are not those of the "
                         f"comparison ({', '.join(cmp.measures)})")
    data = page_data(table, qrels, runs, k=k, rewrites=rewrites, raw=raw, manual=manual,
                     collection=collection, index=index, groups=groups,
                     relevance_level=relevance_level, max_docs=max_docs,
                     judged_only=judged_only, compat=compat)
    baseline = cmp.pairs[0].baseline if cmp.pairs else cmp.runs[0]
    data["baseline"] = names.index(baseline) if not cmp.extra.get("all_pairs") else 0
    data["places"] = places
    data["page_size"] = PAGE_SIZE
    data["short_runs"] = short_names(names)
    data["upper_bounds"] = [names.index(n) for n in upper_bounds]
    present = {_depth_label(d) for d in data["depth"] if d is not None}
    data["depth_labels"] = sorted(present, key=lambda s: (s.endswith("+"), int(s.rstrip("+"))))
    data["comparison"] = cmp.to_dict()
    rules = measure_rules(cmp.measures, table.irm, compat)
    data["labels"] = [cmp.label(m) for m in cmp.measures]  # the page's names of the measures
    data["rules"] = [rules[m] for m in cmp.measures]  # and the rule behind each, for tooltips
    upper = {n: (dict(table.summaries[names.index(n)]), len(table.topics(names.index(n))))
             for n in upper_bounds}
    title = title or f"trecqr report: {', '.join(names)}"
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n",
        f"<h1>{escape(title)}</h1>\n<h2>summary</h2>\n",
        summary_html(cmp, data["coverage"], k, places, upper, rules),
        f'\n<h2 id="plots-title" title="{escape(rules[cmp.measures[0]])}">plots '
        f'({escape(cmp.label(cmp.measures[0]))})</h2>\n',
        html_svg.legend(names, upper_bounds), '<div class="plots">',
        plots_html(cmp, data), "</div>\n<h2>turns</h2>\n", _controls(), "\n",
        _json_script(data), f"\n<script>{SCRIPT}</script>\n</body></html>\n"])


def short_names(names: list, limit: int = 24) -> list:
    """Run names short enough for a table header: the words (split at ``_ - . /`` and spaces)
    that every name shares at its start or end dropped, then cut in the middle to ``limit``
    characters; the names themselves when that would make two alike."""
    words = [re.split(r"(?<=[_\-./ ])", n) for n in names]
    head = 0
    while all(len(w) > head + 1 for w in words) and len({w[head] for w in words}) == 1:
        head += 1
    tail = 0
    while all(len(w) > head + tail + 1 for w in words) and \
            len({w[len(w) - 1 - tail] for w in words}) == 1:
        tail += 1
    short = ["".join(w[head:len(w) - tail]).strip("_-./ ") or n for w, n in zip(words, names)]
    short = [html_svg.shorten(s, limit) for s in short]
    return short if len(set(short)) == len(short) else list(names)


def _controls() -> str:
    return ('<div id="controls">'
            '<label>measure <select id="f-measure"></select></label>'
            '<label>diff: run <select id="f-run"></select></label>'
            '<label>minus <select id="f-base"></select></label>'
            '<label>conversation <input id="f-conv" size="6"></label>'
            '<label>depth <select id="f-depth"></select></label>'
            '<label>group <select id="f-group"></select></label>'
            '<label>difference <select id="f-sign"><option value="">any</option>'
            '<option value="win">run better</option><option value="loss">run worse</option>'
            '<option value="tie">tied</option></select></label>'
            '<label>|diff| &gt;= <input id="f-min" type="number" step="0.05" min="0" '
            'value="0" size="5"></label>'
            '<span id="count"></span><button id="prev">previous</button>'
            '<span id="pageinfo"></span><button id="next">next</button></div>'
            '<p class="note">Click a column to sort, a row to open the turn; '
            f'the table shows {PAGE_SIZE} rows at a time; #turn=ID after the address opens '
            'a turn.</p><p class="note" id="hash-note" hidden></p>'
            '<div class="wide"><table id="turns"><thead><tr></tr></thead><tbody></tbody>'
            '</table></div><div id="turn" hidden></div>')


def report_page(qrels, runs, measures, *, rewrites=None, raw=None, manual=None,
                collection=None, index=None, groups=None, k: int = 10, title=None,
                places: int = 4, names=None, relevance_level: int = 1, max_docs=None,
                judged_only: bool = False, compat: str = "9.0.8", upper_bounds=(),
                **compare_options) -> str:
    """Compare the runs (:func:`.compare.compare`, same options) and return the page.

    upper_bounds: runs (their names, or the paths as given) that are upper bounds, such as
    cqr's ``oracle`` row: on the page, labelled so, and left out of compare's tests. labels
    (one of compare's options): {measure: label}, the page's names of the measures."""
    runs = list(runs)
    all_names = run_names(runs, names)
    upper = [_run_name(u, runs, all_names) for u in upper_bounds or ()]
    keep = [i for i, n in enumerate(all_names) if n not in upper]
    if upper and len(keep) < 2:
        raise UsageError(f"the tests need two runs besides the upper bounds "
                         f"({', '.join(upper)}); {len(keep)} left")
    if upper:
        base = compare_options.get("baseline")
        bases = list(base) if isinstance(base, (list, tuple)) else [] if base is None else [base]
        bases = [all_names[b] if isinstance(b, int) else b for b in bases]
        if base is not None:
            compare_options["baseline"] = bases if isinstance(base, (list, tuple)) else bases[0]
        for b in bases:
            if _run_name(b, runs, all_names) in upper:
                raise UsageError(f"the baseline {b} is also an upper bound, which is in no test: "
                                 "choose another baseline")
    cmp = compare(qrels, [runs[i] for i in keep], list(measures),
                  names=[all_names[i] for i in keep], relevance_level=relevance_level,
                  max_docs=max_docs, judged_only=judged_only, compat=compat, **compare_options)
    return comparison_page(cmp, qrels, runs, list(measures), rewrites=rewrites, raw=raw,
                           manual=manual, collection=collection, index=index, groups=groups,
                           k=k, title=title, places=places, relevance_level=relevance_level,
                           max_docs=max_docs, judged_only=judged_only, compat=compat,
                           names=all_names, upper_bounds=upper)


def _run_name(which, runs, names) -> str:
    """The name of a run given by its name or by its path as given."""
    for run, name in zip(runs, names):
        if which == name or (isinstance(run, (str, os.PathLike)) and
                             os.fspath(which) == os.fspath(run)):
            return name
    raise UsageError(f"upper bound {which}: no such run (the runs: {', '.join(names)})")
