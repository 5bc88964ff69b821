"""Inline SVG plots of the HTML report: per-depth bands, the sorted per-turn difference
("win/loss"), and the score distributions.

Why SVG written by hand rather than matplotlib's: the page must be one small file that opens
offline, and these three plots are a few lines and paths each; matplotlib's SVG embeds fonts
and glyph paths (tens of kilobytes per plot) and takes a second to import. Every label is
escaped (run names come from the command line). Plots of thousands of turns are drawn from at
most :data:`MAX_POINTS` quantiles of the sorted values, so their size stays bounded.
"""

from __future__ import annotations

import math
from html import escape

import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
           "#17becf")
W, H = 460, 230
LEFT, RIGHT, TOP, BOTTOM = 46, 12, 24, 34
MAX_POINTS = 600


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _frame(title: str, body: list, ylo: float, yhi: float, xlabel: str, kind: str,
           subtitle: str = "") -> str:
    ticks = []
    for v in np.linspace(ylo, yhi, 5):
        y = _y(v, ylo, yhi)
        ticks.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'class="grid"/><text x="{LEFT - 4}" y="{y + 3:.1f}" '
                     f'text-anchor="end">{v:.2f}</text>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="{kind}" '
            f'viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
            f'aria-label="{escape(title)}"><text x="{LEFT}" y="14" class="title">'
            f'{escape(title)}</text><text x="{W - RIGHT}" y="14" text-anchor="end">'
            f'{escape(subtitle)}</text>{"".join(ticks)}{"".join(body)}'
            f'<text x="{(LEFT + W - RIGHT) / 2:.0f}" y="{H - 4}" text-anchor="middle">'
            f'{escape(xlabel)}</text></svg>')


def _y(v, lo, hi) -> float:
    span = (hi - lo) or 1.0
    return TOP + (H - TOP - BOTTOM) * (1 - (v - lo) / span)


def _x(i, n) -> float:
    return LEFT + (W - LEFT - RIGHT) * ((i + 0.5) / n if n else 0.5)


def legend(names) -> str:
    """The runs' colours, one HTML line shared by the plots."""
    return '<p class="legend">' + " ".join(
        f'<span><span class="swatch" style="background:{color(i)}"></span>{escape(n)}</span>'
        for i, n in enumerate(names)) + "</p>"


def depth_bands(labels: list, means: list, halfwidths: list, names: list, measure: str) -> str:
    """One line per run over the depth groups, with a band of +-1.96 standard errors.

    labels: depth labels in order; means[r][g], halfwidths[r][g]: nan where a group is empty."""
    vals = [m + s * h for ms, hs in zip(means, halfwidths) for m, h in zip(ms, hs)
            for s in (-1, 1) if not math.isnan(m)]
    lo, hi = (min(0.0, min(vals)), max(vals)) if vals else (0.0, 1.0)
    n = len(labels)
    body = []
    for r, (ms, hs) in enumerate(zip(means, halfwidths)):
        pts = [(_x(g, n), m, h) for g, (m, h) in enumerate(zip(ms, hs)) if not math.isnan(m)]
        if not pts:
            continue
        up = " ".join(f"{x:.1f},{_y(m + (0 if math.isnan(h) else h), lo, hi):.1f}"
                      for x, m, h in pts)
        down = " ".join(f"{x:.1f},{_y(m - (0 if math.isnan(h) else h), lo, hi):.1f}"
                        for x, m, h in reversed(pts))
        line = " ".join(f"{x:.1f},{_y(m, lo, hi):.1f}" for x, m, _ in pts)
        body.append(f'<polygon points="{up} {down}" fill="{color(r)}" opacity="0.15"/>'
                    f'<polyline points="{line}" fill="none" stroke="{color(r)}" '
                    f'stroke-width="2"/>')
    for g, lab in enumerate(labels):
        body.append(f'<text x="{_x(g, n):.1f}" y="{H - BOTTOM + 13}" text-anchor="middle">'
                    f'{escape(lab)}</text>')
    return _frame("by turn depth", body, lo, hi, "turn depth", "depth", "mean, 95% band")


def win_loss(diffs, run: str, baseline: str, measure: str) -> str:
    """The per-turn differences run - baseline, sorted descending: bars above 0 are wins."""
    d = np.sort(np.asarray(diffs, dtype=np.float64))[::-1]
    n = len(d)
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    if n > MAX_POINTS:  # quantiles of the sorted values: the same shape, a bounded size
        d = d[np.linspace(0, n - 1, MAX_POINTS).round().astype(int)]
    lo, hi = (min(0.0, float(d.min())), max(0.0, float(d.max()))) if n else (-1.0, 1.0)
    if lo == hi:
        lo, hi = -1.0, 1.0
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
    return _frame(f"{run} - {baseline}", body, lo, hi, f"{n} turns, sorted by the difference",
                  "winloss", f"{wins} better, {losses} worse, {n - wins - losses} tied")


def distributions(values: list, names: list, measure: str, bins: int = 20) -> str:
    """Histogram (share of turns per bin) of each run's per-turn values, as outlines."""
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    arrays = [a[~np.isnan(a)] for a in arrays]
    allv = np.concatenate(arrays) if arrays else np.array([])
    lo, hi = (float(allv.min()), float(allv.max())) if len(allv) else (0.0, 1.0)
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, bins + 1)
    shares = [np.histogram(a, edges)[0] / max(len(a), 1) for a in arrays]
    top = max([float(s.max()) for s in shares if len(s)] + [0.01])
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
    for v in (lo, (lo + hi) / 2, hi):
        x = LEFT + (W - LEFT - RIGHT) * (v - lo) / (hi - lo)
        body.append(f'<text x="{x:.1f}" y="{H - BOTTOM + 13}" text-anchor="middle">'
                    f'{v:.2f}</text>')
    return _frame("distribution over turns", body, 0, top, measure, "dist", "share per bin")
