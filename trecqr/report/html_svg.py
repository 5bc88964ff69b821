"""Inline SVG plots of the HTML report: per-depth means with their 95% intervals, the sorted
per-turn difference ("win/loss"), and the score distributions.

Why SVG written by hand rather than matplotlib's: the page must be one small file that opens
offline, and these three plots are a few lines and paths each; matplotlib's SVG embeds fonts
and glyph paths (tens of kilobytes per plot) and takes a second to import. Every label is
escaped (run names come from the command line). Plots of thousands of turns are drawn from at
most :data:`MAX_POINTS` quantiles of the sorted values, so their size stays bounded.

Layout rules a reader relies on: the title has a line of its own and the note (counts, what a
band is) the line under it, so a long title cannot run into the note (a title too long for the
plot is shortened in the middle, its full text in a ``<title>`` tooltip); the value axis has
round ticks (steps of 1, 2, 2.5 or 5 times a power of ten) and, whenever the range crosses or
touches it, a tick at 0 (the distributions' value axis too); per-depth intervals of several runs
are drawn side by side (dodged) as error bars, not as filled bands laid over each other.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf")
W, H = 460, 240
LEFT, RIGHT, TOP, BOTTOM = 46, 12, 38, 34
MAX_POINTS = 600
TITLE_CHARS = 60  # what fits the title line at 10px bold (about 6.5px a character)


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def nice_axis(lo: float, hi: float, count: int = 5) -> tuple:
    """(lo, hi, ticks, decimals): the range widened to round ticks, at most ``count`` + 1, at
    steps of 1, 2, 2.5 or 5 times a power of ten; 0 is a tick whenever lo <= 0 <= hi."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        lo, hi = (lo, lo + 1.0) if math.isfinite(lo) else (0.0, 1.0)
    raw = (hi - lo) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if round(step / 10.0 ** -decimals, 6) % 1:  # 2.5 x 10^k: one place more
        decimals += 1
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    # rounded to the step's own places (not a fixed 12: a step of 1e-17, P at a cutoff of
    # 2**63, would round every tick to 0); + 0.0: no -0.0
    ticks = [round(i * step, decimals + 1) + 0.0 for i in range(first, last + 1)]
    return ticks[0], ticks[-1], ticks, decimals


def shorten(text: str, limit: int = TITLE_CHARS) -> str:
    """text, cut in the middle with an ellipsis when longer than limit characters."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "\u2026" + text[len(text) - (limit - 1 - head):]


def _frame(title: str, body: list, ticks: list, decimals: int, xlabel: str, kind: str,
           note: str = "", shown: str | None = None) -> str:
    """The plot's box, title (``shown``: the title as it fits), note, ticks and x label."""
    lo, hi = ticks[0], ticks[-1]
    marks = []
    for v in ticks:
        y = _y(v, lo, hi)
        marks.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'class="{"zero" if v == 0 else "grid"}"/><text x="{LEFT - 4}" '
                     f'y="{y + 3:.1f}" text-anchor="end" class="tick">{v:.{decimals}f}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="{kind}" '
            f'viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
            f'aria-label="{escape(title)}"><title>{escape(title)}</title>'
            f'<text x="{LEFT}" y="14" class="title">{escape(shorten(shown or title))}</text>'
            f'<text x="{LEFT}" y="28" class="note">{escape(note)}</text>'
            f'{"".join(marks)}{"".join(body)}'
            f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 4}" text-anchor="middle">'
            f'{escape(xlabel)}</text></svg>')


def _y(v, lo, hi) -> float:
    span = (hi - lo) or 1.0
    return TOP + (H - TOP - BOTTOM) * (1 - (v - lo) / span)


def _x(i, n) -> float:
    return LEFT + (W - LEFT - RIGHT) * ((i + 0.5) / n if n else 0.5)


def legend(names, upper_bounds=()) -> str:
    """The runs' colours, one HTML line shared by the plots."""
    return '<p class="legend">' + " ".join(
        f'<span><span class="swatch" style="background:{color(i)}"></span>{escape(n)}'
        f'{" (upper bound)" if n in upper_bounds else ""}</span>'
        for i, n in enumerate(names)) + "</p>"


def depth_bands(labels: list, means: list, halfwidths: list, names: list, measure: str,
                rule: str = "") -> str:
    """Per run, the mean of each depth group with its +-1.96 standard-error bar; the runs of a
    group side by side, a thin line joining each run's means.

    labels: depth labels in order; means[r][g], halfwidths[r][g]: nan where a group is empty;
    measure: its label (MRR) in the title, rule (trec_eval's name) in the tooltip."""
    vals = [m + s * (0 if math.isnan(h) else h) for ms, hs in zip(means, halfwidths)
            for m, h in zip(ms, hs) for s in (-1, 1) if not math.isnan(m)]
    lo, hi, ticks, places = nice_axis(min([0.0] + vals), max(vals) if vals else 1.0)
    n, runs = len(labels), len(means)
    slot = (W - LEFT - RIGHT) / max(n, 1)
    dodge = slot * 0.7 / max(runs, 1)  # the runs of one group share 70% of its slot
    body = []
    for r, (ms, hs) in enumerate(zip(means, halfwidths)):
        shift = (r - (runs - 1) / 2) * dodge
        pts = [(_x(g, n) + shift, g, m, h) for g, (m, h) in enumerate(zip(ms, hs))
               if not math.isnan(m)]
        if not pts:
            continue
        line = " ".join(f"{x:.1f},{_y(m, lo, hi):.1f}" for x, _, m, _ in pts)
        parts = [f'<polyline points="{line}" fill="none" stroke="{color(r)}" '
                 f'stroke-width="1" opacity="0.55"/>']
        for x, g, m, h in pts:
            if not math.isnan(h):
                parts.append(f'<line class="err" data-group="{g}" x1="{x:.1f}" x2="{x:.1f}" '
                             f'y1="{_y(m - h, lo, hi):.1f}" y2="{_y(m + h, lo, hi):.1f}" '
                             f'stroke="{color(r)}" stroke-width="1.6"/>')
            parts.append(f'<circle data-group="{g}" cx="{x:.1f}" cy="{_y(m, lo, hi):.1f}" '
                         f'r="2.4" fill="{color(r)}"/>')
        body.append(f'<g data-run="{r}">{"".join(parts)}</g>')
    for g, lab in enumerate(labels):
        body.append(f'<text x="{_x(g, n):.1f}" y="{H - BOTTOM + 13}" text-anchor="middle">'
                    f'{escape(lab)}</text>')
    return _frame(_with_rule(f"{measure} by turn depth", rule), body, ticks, places,
                  "turn depth", "depth", "mean and 95% interval per run",
                  f"{measure} by turn depth")


def win_loss(diffs, run: str, baseline: str, measure: str) -> str:
    """The per-turn differences run - baseline, sorted descending: bars above 0 are wins;
    measure: its label, in the x axis's words."""
    d = np.sort(np.asarray(diffs, dtype=np.float64))[::-1]
    n = len(d)
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    if n > MAX_POINTS:  # quantiles of the sorted values: the same shape, a bounded size
        d = d[np.linspace(0, n - 1, MAX_POINTS).round().astype(int)]
    lo, hi = (min(0.0, float(d.min())), max(0.0, float(d.max()))) if n else (-1.0, 1.0)
    if lo == hi:
        lo, hi = -1.0, 1.0
    lo, hi, ticks, places = nice_axis(lo, hi)
    y0 = _y(0.0, lo, hi)
    m = len(d)
    bar = (W - LEFT - RIGHT) / m if m else 1
    width = f"{max(bar * 0.8, 0.6):.2f}"
    body = []
    for stroke, keep in (("#1a7f37", d > 0), ("#c62828", d < 0)):  # wins green, losses red
        path = "".join(f"M{_x(i, m):.1f} {y0:.1f}V{_y(v, lo, hi):.1f}"
                       for i, v in enumerate(d) if keep[i])
        body.append(f'<path d="{path}" stroke="{stroke}" stroke-width="{width}"/>')
    body += [f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y0:.1f}" y2="{y0:.1f}" class="axis"/>']
    half = (TITLE_CHARS - 3) // 2  # each name shortened, so both stay recognisable
    return _frame(f"{run} - {baseline}", body, ticks, places,
                  f"{n} turns, sorted by the {measure} difference", "winloss",
                  f"{wins} better, {losses} worse, {n - wins - losses} tied",
                  f"{shorten(run, half)} - {shorten(baseline, half)}")


def distributions(values: list, names: list, measure: str, rule: str = "",
                  bins: int = 20) -> str:
    """Histogram (share of turns per bin) of each run's per-turn values, as outlines; measure:
    its label (the x axis), rule: trec_eval's name (the tooltip)."""
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    arrays = [a[~np.isnan(a)] for a in arrays]
    allv = np.concatenate(arrays) if arrays else np.array([])
    lo, hi = (float(allv.min()), float(allv.max())) if len(allv) else (0.0, 1.0)
    lo, hi, xticks, xplaces = nice_axis(lo, hi)  # bins over round bounds, round labels
    edges = np.linspace(lo, hi, bins + 1)
    shares = [np.histogram(a, edges)[0] / max(len(a), 1) for a in arrays]
    top = max([float(s.max()) for s in shares if len(s)] + [0.01])
    _, top, ticks, places = nice_axis(0.0, top)
    body = []
    for r, s in enumerate(shares):
        pts = []
        for b, v in enumerate(s):
            x0 = LEFT + (W - LEFT - RIGHT) * b / bins
            x1 = LEFT + (W - LEFT - RIGHT) * (b + 1) / bins
            y = _y(v, 0, top)
            pts.append(f"{x0:.1f},{y:.1f} {x1:.1f},{y:.1f}")
        body.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{color(r)}" '
                    f'stroke-width="1.6"/>')
    for v in xticks:
        x = LEFT + (W - LEFT - RIGHT) * (v - lo) / (hi - lo)
        body.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 13}" text-anchor="middle" '
                    f'class="xtick">{v:.{xplaces}f}</text>')
    return _frame(_with_rule(f"{measure}: distribution over turns", rule), body, ticks, places,
                  measure, "dist", "share of turns per bin", f"{measure}: distribution over turns")


def _with_rule(title: str, rule: str) -> str:
    """A plot's full title (its tooltip): the shown title and the measure's rule."""
    return f"{title} ({rule})" if rule else title
