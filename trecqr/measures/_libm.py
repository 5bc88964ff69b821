"""C library math on arrays, bit for bit.

numpy's ``log``/``exp`` use their own SIMD kernels (AVX-512 on this class of machine) that
differ from glibc's in the last bit for about 0.1% of inputs; trec_eval (and pytrec_eval, which
embeds it) call libm. Per-topic values such as gm_map's log(AP) must match exactly, so these
go through Python's ``math`` module, which calls libm. Loops are per topic, never per document.
"""

from __future__ import annotations

import math

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
