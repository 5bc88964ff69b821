"""Plots of per-topic measures (matplotlib, Agg: no display needed; PNG or SVG by extension).

* :func:`plot_depth` (``trecqr plot depth QRELS RUN... -m M -o depth.png``): the mean of a
  measure per turn depth, one line per run, with a 95% t-based confidence band
  (mean +- t_{0.975, n-1} * sd / sqrt(n), sd with ddof=1; no band where n < 2); depths at or
  beyond ``max_depth`` (default 8) pooled as ``8+`` (0: no cap).
* :func:`plot_diff` (``trecqr plot diff QRELS A B -m M -o diff.svg``): per-topic difference
  B - A over the topics both are evaluated on, sorted descending, as bars (gains green, losses
  red), with the mean difference in the title.
* :func:`plot_dist` (``trecqr plot dist QRELS RUN... -m M -o dist.png [--violin]``): the
  measure's per-topic distribution per run, box plot (or violin), mean marked.

Every function returns the matplotlib Figure and writes it when ``output`` is given.
"""

from __future__ import annotations

import io
import math
import os

import numpy as np

from trecqr.errors import UsageError
from trecqr.runtime.memory import scipy_stats
from trecqr.runtime.output_paths import check_output_name
from trecqr.formats.writer import atomic_write_bytes
from trecqr.report.breakdown import DEFAULT_MAX_DEPTH, label_key, depth_groups, score_table

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def _figure(width=8.0, height=5.0):
    # a bare Figure (not pyplot): rendered by the Agg/SVG canvases, never a display
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    return fig


def _short(name: str) -> str:
    # a file name that is not UTF-8: its undecodable bytes drawn as U+FFFD (fonts need text)
    base = os.path.basename(name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    for ext in (".run", ".trec", ".txt", ".tsv"):
        if base.endswith(ext):
            return base[: -len(ext)]
    return base


def _check_output(path) -> str:
    check_output_name(path)
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in FORMATS:
        raise UsageError(f"plot file {path!s}: give a .png, .svg or .pdf name")
    return ext


def save_figure(fig, path) -> None:
    """Write fig to path (format from the extension: .png, .svg, .pdf), atomically."""
    ext = _check_output(path)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format=FORMATS[ext], dpi=100 if ext == ".png" else None)
    except (ValueError, TypeError):  # a title or run name that is not valid mathtext ('$x^$'),
        from matplotlib.text import Text  # or a file name that is not UTF-8: dollars as they

        for t in fig.findobj(Text):  # are, undecodable bytes as U+FFFD
            text = t.get_text().encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            t.set_text(text.replace("\\$", "$").replace("$", "\\$"))
        buf = io.BytesIO()
        fig.savefig(buf, format=FORMATS[ext], dpi=100 if ext == ".png" else None)
    atomic_write_bytes(path, [buf.getvalue()])


def t_band(values, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): t-based confidence interval of the mean; nan bounds when n < 2."""
    stats = scipy_stats()  # under a memory cap, only when it fits

    v = np.asarray(values, dtype=np.float64)
    n = len(v)
    if n == 0:
        return math.nan, math.nan, math.nan
    m = float(v.mean())
    if n < 2:
        return m, math.nan, math.nan
    h = float(stats.t.ppf((1 + level) / 2, n - 1)) * float(v.std(ddof=1)) / math.sqrt(n)
    return m, m - h, m + h


def _tables(qrels, runs, measure, names, options):
    if isinstance(measure, (list, tuple)):
        if len(measure) != 1:
            raise UsageError("a plot shows one measure (-m)")
        measure = measure[0]
    table = score_table(qrels, runs, [measure], names=names, command="plot", **options)
    if len(table.measures) != 1:
        raise UsageError(f"measure {measure!r} gives {len(table.measures)} values; pick one")
    return table, table.measures[0]


def depth_means(table, measure, max_depth=DEFAULT_MAX_DEPTH, level=0.95):
    """(groups, {run: [(mean, low, high, n) per group]}) of a ScoreTable."""
    all_topics = sorted({t for i in range(len(table.names)) for t in table.topics(i)})
    grouping = depth_groups(all_topics, max_depth)
    groups = sorted(set(grouping.values()), key=label_key)
    out = {}
    for i, name in enumerate(table.names):
        topics = table.topics(i)
        vals = table.vector(i, measure, topics)
        lab = np.array([grouping[t] for t in topics])
        out[name] = [(*t_band(vals[lab == g], level), int(np.count_nonzero(lab == g)))
                     for g in groups]
    return groups, out


def plot_depth(qrels, runs, measure, *, output=None, max_depth=DEFAULT_MAX_DEPTH, names=None,
               title=None, level=0.95, width=8.0, height=5.0, **options):
    """Mean measure per turn depth, one line per run, t-based confidence bands. Returns the
    Figure (written to output when given)."""
    if output is not None:
        _check_output(output)
    table, m = _tables(qrels, runs, measure, names, options)
    groups, means = depth_means(table, m, max_depth or None, level)
    fig = _figure(width, height)
    ax = fig.add_subplot()
    x = np.arange(1, len(groups) + 1)
    for name in table.names:
        rows = np.array([r[:3] for r in means[name]], dtype=np.float64)
        line, = ax.plot(x, rows[:, 0], marker="o", linewidth=1.8, label=_short(name))
        ax.fill_between(x, rows[:, 1], rows[:, 2], color=line.get_color(), alpha=0.15,
                        linewidth=0)
    ax.set_xticks(x, groups)
    counts = [means[table.names[0]][k][3] for k in range(len(groups))]
    ax.set_xlabel("turn depth (topics per depth: " + ", ".join(map(str, counts)) + ")")
    ax.set_ylabel(f"mean {m}")
    ax.set_title(title or f"{m} by turn depth ({int(level * 100)}% t confidence bands)")
    ax.grid(True, alpha=0.3)
    ax.legend(title="run", fontsize="small", loc="best")
    if output is not None:
        save_figure(fig, output)
    return fig


def plot_diff(qrels, run_a, run_b, measure, *, output=None, names=None, title=None,
              width=9.0, height=4.5, **options):
    """Per-topic difference run_b - run_a, sorted descending, as bars. Returns the Figure."""
    if output is not None:
        _check_output(output)
    table, m = _tables(qrels, [run_a, run_b], measure, names, options)
    topics = table.topics(0, 1)
    d = table.vector(1, m, topics) - table.vector(0, m, topics)
    order = np.argsort(-d, kind="stable")
    d = d[order]
    fig = _figure(width, height)
    ax = fig.add_subplot()
    colors = np.where(d > 0, "tab:green", np.where(d < 0, "tab:red", "tab:gray"))
    ax.bar(np.arange(len(d)), d, width=1.0, color=colors, linewidth=0)
    ax.axhline(0, color="black", linewidth=0.8)
    a, b = _short(table.names[0]), _short(table.names[1])
    ax.set_xlabel(f"topics sorted by difference ({len(d)} topics)")
    ax.set_ylabel(f"difference in {m}")
    ax.set_xlim(-0.5, len(d) - 0.5)
    wins, losses = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    mean = float(d.mean()) if len(d) else math.nan
    ax.set_title(title or f"{m}: {b} - {a}\nmean difference {mean:+.4f}; {wins} better, "
                          f"{losses} worse, {len(d) - wins - losses} tied")
    ax.grid(True, axis="y", alpha=0.3)
    if output is not None:
        save_figure(fig, output)
    return fig


def plot_dist(qrels, runs, measure, *, output=None, names=None, title=None, violin=False,
              width=8.0, height=5.0, **options):
    """Per-topic distribution of the measure per run (box plot, or violin). Returns the Figure."""
    if output is not None:
        _check_output(output)
    table, m = _tables(qrels, runs, measure, names, options)
    data = [table.vector(i, m, table.topics(i)) for i in range(len(table.names))]
    labels = [_short(n) for n in table.names]
    fig = _figure(max(width, 1.6 * len(labels)), height)
    ax = fig.add_subplot()
    pos = np.arange(1, len(data) + 1)
    if violin:
        ax.violinplot(data, positions=pos, showmedians=True)
    else:
        ax.boxplot(data, positions=pos)
    ax.plot(pos, [v.mean() if len(v) else math.nan for v in data], linestyle="none",
            marker="D", color="tab:red", label="mean")
    ax.set_xticks(pos, labels, rotation=20, ha="right")
    ax.set_xlabel("run")
    ax.set_ylabel(m)
    ax.set_title(title or f"distribution of {m} per topic "
                          f"({'violin' if violin else 'box'}; n = "
                          + ", ".join(str(len(v)) for v in data) + ")")
    ax.legend(fontsize="small", loc="best")
    ax.grid(True, axis="y", alpha=0.3)
    if output is not None:
        save_figure(fig, output)
    return fig
