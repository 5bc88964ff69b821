"""Two sets of relevance judgments (say human and LLM qrels): how far their labels agree.

Agreement is measured over the judgments both qrels make, (topic, document) pairs that each
grades: :func:`shared_judgments` finds them. A pair only one of them judges says nothing
about agreement; its count is reported beside the measures.

* :func:`confusion_matrix` - counts of (grade in a, grade in b); equals scikit-learn's
  ``confusion_matrix(a, b, labels=labels)``;
* :func:`cohen_kappa` - Cohen's kappa, plain or weighted (linear, quadratic); equals
  scikit-learn's ``cohen_kappa_score(a, b, labels=labels, weights=weights)``;
* :func:`krippendorff_alpha` - Krippendorff's alpha for two coders and no missing label,
  nominal, ordinal or interval; equals the ``krippendorff`` package's
  ``alpha(reliability_data=[a, b], level_of_measurement=level)``;
* :func:`binarize` - relevant or not: grade >= threshold (trec_eval's ``-l``, default 1). The
  binary kappa and alpha are those of the binarized labels; the threshold is part of the
  result, so name it wherever the numbers are shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError, UsageError
from trecqr.formats.arrays import as_numpy
from trecqr.formats.textio import repeated_at

WEIGHTS = (None, "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


@dataclass(frozen=True)
class SharedJudgments:
    """The (topic, document) pairs two qrels both judge, sorted by topic then document, with
    each one's grade; only_a / only_b: how many pairs only one of them judges."""

    qid: pa.Array
    docno: pa.Array
    a: np.ndarray
    b: np.ndarray
    only_a: int
    only_b: int

    def __len__(self) -> int:
        return len(self.a)


def _keyed(qrels, name: str) -> pa.Table:
    table = pa.table({"qid": pa.array(qrels.qid).cast(pa.string()),
                      "docno": pa.array(qrels.docno).cast(pa.string()),
                      name: pa.array(np.asarray(qrels.grade, dtype=np.int64))})
    counts = table.group_by(["qid", "docno"]).aggregate([([], "count_all")])
    twice = pc.filter(counts, pc.greater(counts["count_all"], 1))
    if len(twice):
        qid, docno, n = (twice[c][0].as_py() for c in ("qid", "docno", "count_all"))
        where, lead, first = repeated_at(qrels, qid, docno)
        raise InputError(getattr(qrels, "source", "<qrels>"), where,
                         f"{lead}topic {qid!r} judges document {docno!r} {n} times{first}; "
                         "agreement needs one grade per judgment "
                         f"(keep one {'row' if lead else 'line'})")
    return table


def shared_judgments(qrels_a, qrels_b) -> SharedJudgments:
    """The judgments ``qrels_a`` and ``qrels_b`` (trecqr Qrels, or anything with ``qid``,
    ``docno`` and ``grade`` columns) share, with both grades. A pair judged twice in one
    qrels is an error (which grade would count?)."""
    ta, tb = _keyed(qrels_a, "a"), _keyed(qrels_b, "b")
    joined = ta.join(tb, keys=["qid", "docno"], join_type="inner")
    joined = joined.sort_by([("qid", "ascending"), ("docno", "ascending")])
    n = len(joined)
    return SharedJudgments(joined["qid"].combine_chunks(), joined["docno"].combine_chunks(),
                           as_numpy(joined["a"]), as_numpy(joined["b"]),
                           len(ta) - n, len(tb) - n)


def binarize(grades, threshold: int = 1) -> np.ndarray:
    """1 where grade >= threshold (relevant), else 0."""
    return (np.asarray(grades) >= threshold).astype(np.int64)


def _pair(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise UsageError(f"labels must be two 1-D arrays of the same length (got shapes "
                         f"{a.shape} and {b.shape})")
    if len(a) == 0:
        raise UsageError("no shared judgments: the two qrels judge no (topic, document) pair "
                         "in common")
    return a, b


def confusion_matrix(a, b, labels=None) -> tuple[np.ndarray, np.ndarray]:
    """(labels, counts): counts[i, j] = the number of items labelled labels[i] in ``a`` and
    labels[j] in ``b``. labels: every label of either (sorted) unless given; items whose label
    is not in a given ``labels`` are left out."""
    a, b = _pair(a, b)
    labels = np.union1d(a, b) if labels is None else np.asarray(labels)
    k = len(labels)
    ia = np.searchsorted(labels, a) if np.all(labels[:-1] <= labels[1:]) else None
    if ia is None:  # labels given in another order: look each one up
        index = {v: i for i, v in enumerate(labels.tolist())}
        ia = np.array([index.get(v, -1) for v in a.tolist()])
        ib = np.array([index.get(v, -1) for v in b.tolist()])
    else:
        ib = np.searchsorted(labels, b)
        ia = np.where((ia < k) & (labels[np.minimum(ia, k - 1)] == a), ia, -1)
        ib = np.where((ib < k) & (labels[np.minimum(ib, k - 1)] == b), ib, -1)
    keep = (ia >= 0) & (ib >= 0)
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, (ia[keep], ib[keep]), 1)
    return labels, counts


def cohen_kappa(a, b, weights: str | None = None, labels=None) -> float:
    """Cohen's kappa of labels ``a`` and ``b``: 1 - sum(w * O) / sum(w * E), O the confusion
    matrix, E = outer(row sums, column sums) / total (agreement by chance), w the
    disagreement weights: 1 off the diagonal (plain kappa), |i - j| (``"linear"``) or
    (i - j)^2 (``"quadratic"``) for the i-th and j-th of ``labels``.

    As in scikit-learn, the weights count positions in ``labels`` (the sorted labels either
    set uses, unless given), not grade values: pass labels=[0, 1, 2, 3] so that a grade no
    one used still counts as a step of the scale."""
    if weights not in WEIGHTS:
        raise UsageError(f"unknown weights {weights!r} (None, linear, quadratic)")
    _, o = confusion_matrix(a, b, labels)
    o = o.astype(np.float64)
    k = len(o)
    e = np.outer(o.sum(axis=1), o.sum(axis=0)) / o.sum()
    if weights is None:
        w = 1.0 - np.eye(k)
    else:
        steps = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]).astype(np.float64)
        w = steps if weights == "linear" else steps ** 2
    return float(1 - np.sum(w * o) / np.sum(w * e))


def krippendorff_alpha(a, b, level: str = "ordinal") -> float:
    """Krippendorff's alpha of two coders who label every item: 1 - D_o / D_e.

    The coincidence matrix of two coders without missing labels is o = O + O^T (O the
    confusion matrix over the values either uses); n_c its row sums, n = 2N. D_o =
    sum o_ck delta_ck / n and D_e = sum n_c n_k delta_ck / (n (n - 1)) (the c = k terms are 0),
    with the level's squared distance delta: nominal 1 for c != k; ordinal
    (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2; interval (c - k)^2 on the values."""
    if level not in LEVELS:
        raise UsageError(f"unknown level {level!r} ({', '.join(LEVELS)})")
    values, o = confusion_matrix(a, b)
    if len(values) < 2:
        raise UsageError("Krippendorff's alpha needs at least two distinct labels")
    o = (o + o.T).astype(np.float64)
    nv = o.sum(axis=1)
    n = nv.sum()
    idx = np.arange(len(values))
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    elif level == "interval":
        v = values.astype(np.float64)
        delta = (v[:, None] - v[None, :]) ** 2
    else:
        cum = np.concatenate([[0.0], np.cumsum(nv)])
        lo, hi = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
        delta = (cum[hi + 1] - cum[lo] - (nv[:, None] + nv[None, :]) / 2) ** 2
    expected = (np.outer(nv, nv) - np.diag(nv)) / (n - 1)
    return float(1 - np.sum(o * delta) / np.sum(expected * delta))
