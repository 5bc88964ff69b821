"""The aligned text tables, the CSV rows and the words and numbers of every report: compare,
breakdown, cqr and the protocol tables print through :func:`aligned_table`, compare and breakdown
write CSV through :func:`render_csv`, so a change of layout or number format is made once.

A table is its header, a rule of dashes (``rule``) and the rows, columns two spaces apart; the
first ``left`` columns are left-aligned (names), the others right-aligned (numbers); trailing
spaces are cut.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``1 run``, ``2 runs``; nouns: an irregular plural."""
    return f"{n} {noun if n == 1 else (nouns or noun + 's')}"


def json_number(v):
    """A float JSON can hold: nan and infinities as None (JSON has no nan)."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def aligned_table(rows, header, left: int = 1, rule: bool = True) -> list:
    """The lines of the table (no newlines): header, a dashed rule when ``rule``, rows."""
    widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]

    def line(cells):
        return "  ".join(str(x).ljust(w) if c < left else str(x).rjust(w)
                         for c, (x, w) in enumerate(zip(cells, widths))).rstrip()

    lines = [line(header)]
    if rule:
        lines.append(line(["-" * w for w in widths]))
    return lines + [line(r) for r in rows]


def fmt_value(v, places: int) -> str:
    """A mean or difference at ``places`` decimals; ``-`` for none or nan."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.{places}f}"


def fmt_p(p, places: int) -> str:
    """A p-value at ``places`` decimals, in scientific notation below 10^-places."""
    if p is None or math.isnan(p):
        return "-"
    if p != 0 and p < 10 ** -places:
        return f"{p:.1e}"
    return f"{p:.{places}f}"


def render_csv(records, fields) -> str:
    """CSV of dataclass records, one row each with the given fields: floats as ``repr`` (every
    digit), nan as an empty cell."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(fields)
    for r in records:
        d = asdict(r)
        w.writerow(["" if isinstance(d[f], float) and math.isnan(d[f]) else
                    repr(d[f]) if isinstance(d[f], float) else d[f] for f in fields])
    return buf.getvalue()
