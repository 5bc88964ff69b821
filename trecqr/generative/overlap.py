"""Overlap of two rankings (for sim_ret): extrapolated RBO, Jaccard@k, overlap@k.

Pure functions over two ranked lists of ids (best first). A list is cut at ``k`` when ``k`` is
given; a repeated id keeps only its first (best) position.

``rbo(S, L, p=0.9)``
    Extrapolated rank-biased overlap, Webber, Moffat and Zobel (2010), eq. 32 (lists of
    different lengths; eq. 30 when they are equal). With s = |S| <= l = |L|, X_d the overlap of
    the depth-d prefixes (for d > s, of all of S with L[:d])::

        RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d )
                  + ( (X_l - X_s)/l + X_s/s ) p^l

    Identical lists give 1, disjoint lists 0. Two empty lists give 1, one empty list 0.
    As p grows, deeper ranks weigh more: agreement only at the top loses value, agreement
    only deeper down gains it.
``jaccard_at_k(A, B, k)``
    |A[:k] & B[:k]| / |A[:k] | B[:k]| (two empty lists: 1).
``overlap_at_k(A, B, k)``
    |A[:k] & B[:k]| / k; with k None, k = the longer list's length (two empty lists: 1).
"""

from __future__ import annotations


def _dedup(items, k=None):
    seen, out = set(), []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
            if k is not None and len(out) >= k:
                break
    return out


def rbo(a, b, p: float = 0.9, k: int | None = None) -> float:
    """Extrapolated RBO of two rankings (see the module docstring)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must be in (0, 1), not {p}")
    S, L = _dedup(a, k), _dedup(b, k)
    if len(S) > len(L):
        S, L = L, S
    s, l = len(S), len(L)
    if l == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_s, seen_l = set(), set()
    x = 0
    X = [0] * (l + 1)
    for d in range(1, l + 1):
        item_l = L[d - 1]
        if d <= s:
            item_s = S[d - 1]
            if item_s == item_l:
                x += 1
            else:
                x += (item_s in seen_l) + (item_l in seen_s)
            seen_s.add(item_s)
        else:
            x += item_l in seen_s
        seen_l.add(item_l)
        X[d] = x
    total = sum(X[d] / d * p ** d for d in range(1, l + 1))
    total += sum(X[s] * (d - s) / (s * d) * p ** d for d in range(s + 1, l + 1))
    return (1 - p) / p * total + ((X[l] - X[s]) / l + X[s] / s) * p ** l


def jaccard_at_k(a, b, k: int | None = None) -> float:
    A, B = set(_dedup(a, k)), set(_dedup(b, k))
    if not A and not B:
        return 1.0
    return len(A & B) / len(A | B)


def overlap_at_k(a, b, k: int | None = None) -> float:
    A, B = _dedup(a, k), _dedup(b, k)
    denom = k if k is not None else max(len(A), len(B))
    if denom == 0:
        return 1.0
    return len(set(A) & set(B)) / denom
