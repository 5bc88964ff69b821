"""C library math on arrays, bit for bit.

numpy's ``log``/``exp`` use their own SIMD kernels (AVX-512 on this class of machine) that
differ from glibc's in the last bit for about 0.1% of inputs; trec_eval (and pytrec_eval, which
embeds it) call libm. Per-topic values such as gm_map's log(AP) must match exactly, so these
go through Python's ``math`` module, which calls libm. Loops are per topic, never per document.
"""

from __future__ import annotations

import math
import re

import numpy as np


def log(values: np.ndarray) -> np.ndarray:
    """Elementwise C ``log``: 0 gives -inf, a negative number -nan (as glibc prints it)."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    out = np.fromiter((_clog(v) for v in flat.tolist()), dtype=np.float64, count=len(flat))
    return out.reshape(np.shape(values))


def exp(values: np.ndarray) -> np.ndarray:
    flat = np.asarray(values, dtype=np.float64).ravel()
    out = np.fromiter((_cexp(v) for v in flat.tolist()), dtype=np.float64, count=len(flat))
    return out.reshape(np.shape(values))


def _clog(v: float) -> float:
    if v > 0.0:
        return math.log(v)
    if v == 0.0:
        return -math.inf
    if v != v:
        return v
    return -math.nan  # glibc: log of a negative number is the default NaN, sign bit set


def _cexp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


_ATOF = re.compile(
    r"[ \t\n\v\f\r]*([+-]?)"
    r"(?:(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)"
    r"|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))",
    re.IGNORECASE | re.ASCII)  # C's isdigit: ASCII digits only


def c_atof(text: str) -> float:
    """C ``atof``: the longest numeric prefix (decimal, hex, inf, nan), 0.0 if none."""
    m = _ATOF.match(text)
    if not m:
        return 0.0
    sign = -1.0 if m.group(1) == "-" else 1.0
    if m.group(2):
        body = m.group(2)
        if not re.search(r"[pP]", body):
            body += "p0"
        if body[2:3] == ".":
            body = body[:2] + "0" + body[2:]
        return sign * float.fromhex(body)
    if m.group(3):
        return sign * float(m.group(3))
    word = m.group(4).lower()
    return sign * (float("inf") if word.startswith("inf") else float("nan"))
