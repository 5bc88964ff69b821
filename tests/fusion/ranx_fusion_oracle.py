"""ranx 0.3.21's side of tests/fusion/test_fuse_ranx.py: the cuts of the CAsT 2021 organiser
runs that both sides fuse (defined once, so the two sides cannot cut differently), ranx runs in
trec_eval's order (:func:`ranx_run`, also used by the test process, where numba compiles it),
and, run as a script, ranx's fused run of every case, computed in a child process with numba's
JIT off.

Why a child without the JIT: numba compiles about a hundred of ranx's fusion and normalisation
functions on their first call, and a fresh venv has no cache (145 s of one worker in a cold
suite run, 2026-12-04). ranx's own Python source, run by CPython (``NUMBA_DISABLE_JIT=1``: its
typed dicts and lists become Python's), fuses these cuts in about 20 s. The source is the same;
numba compiles without fast-math, so the two differ at most in the last bits of a NumPy
reduction or math function (numba has its own: its sum adds in order, NumPy's pairwise), far
below the test's 1e-9, and in how an unstable sort orders ties, which the test's rules make
irrelevant. The test process still compares numba-compiled ranx on all
239 topics (test_cli_writes_ranx_order) and the fuzz finding on slidefuse.

Usage: ``python ranx_fusion_oracle.py OUT QRELS RUN...`` (NUMBA_DISABLE_JIT=1 in the
environment) writes a pickle of ``{key: {qid: [(docno, score), ...]}}`` in ranx's order, the
keys listed in :func:`cases`.
"""

from __future__ import annotations

import pickle
import sys

import numba
import numpy as np
import pyarrow as pa
import ranx
import ranx.fusion as rf
from numba import typed, types
from ranx.normalization import norm_switch

from trecqr.formats.order import trec_order
from trecqr.formats.run import Run, read_run

NAMES = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
         "org_manual_bm25"]
NORMS = [None, "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"]
W = [0.3, 0.2, 0.2, 0.2, 0.1]
UNTRAINED = {"min": {}, "max": {}, "med": {}, "sum": {}, "anz": {}, "mnz": {},
             "gmnz": {"gamma": 0.5}, "isr": {}, "log_isr": {}, "logn_isr": {}, "rrf": {},
             "rbc": {"phi": 0.8}, "bordafuse": {}, "w_bordafuse": {"weights": W},
             "wsum": {"weights": W}, "wmnz": {"weights": W}, "mixed": {"weights": W},
             "condorcet": {}, "w_condorcet": {"weights": W}}
TRAINED = ["posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse", "bayesfuse"]
N_TOPICS, N_CONDORCET, N_TRAINED = 20, 10, 80


def subset(run: Run, keep: set) -> Run:
    mask = pa.array([q in keep for q in run.qid.to_pylist()])
    return Run(run.qid.filter(mask), run.docno.filter(mask),
               run.score[np.asarray(mask.to_numpy(zero_copy_only=False))], run.runid)


def topics_of(runs: list) -> list:
    return sorted(set(runs[0].qid.to_pylist()))


def topic_count(method: str) -> int:
    """How many topics an untrained method is compared on (fewer for Condorcet, a Python sort
    in ranx)."""
    return N_CONDORCET if "condorcet" in method else N_TOPICS


def first_topics(runs: list, n: int) -> list:
    """The runs cut to their first n topics (by id)."""
    keep = set(topics_of(runs)[:n])
    return [subset(r, keep) for r in runs]


def halves(runs: list, qrels_path) -> tuple:
    """(training qrels {qid: {passage: grade}}, training runs, test runs): the first 40 topics
    train, the next 40 are fused. The judgments are of documents, the runs of passages
    (``DOC-N``): a passage is judged as its document."""
    topics = topics_of(runs)
    judged: dict = {}
    for line in open(qrels_path).read().splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, {})[d] = int(g)
    train_topics = set(topics[:N_TRAINED // 2])
    passages: dict = {}
    for run in runs:
        for q, d in zip(run.qid.to_pylist(), run.docno.to_pylist()):
            grade = judged.get(q, {}).get(d.rsplit("-", 1)[0])
            if grade is not None and q in train_topics:
                passages.setdefault(q, {})[d] = grade
    qrels = {q: passages[q] for q in sorted(passages)}
    train = [subset(r, set(qrels)) for r in runs]
    test = [subset(r, set(topics[:N_TRAINED]) - train_topics) for r in runs]
    return qrels, train, test


def trained_params(method: str) -> dict:
    """trecqr's parameters of a trained method (ranx's are the trained tables)."""
    return {"probfuse": {"n_segments": 10}, "slidefuse": {"w": 5}}.get(method, {})


def cases() -> list:
    """The keys of the oracle's pickle: (method, norm) for every method and normalisation, and
    ("rrf-cli", "min-max-inverted") for the command line's first two runs."""
    return [(m, n) for m in [*UNTRAINED, *TRAINED] for n in NORMS] + \
        [("rrf-cli", "min-max-inverted")]


def typed_dicts(py: dict, value_type):
    """numba's typed dicts holding py ({qid: {docno: value}}) in its inner dicts' order."""
    outer = typed.Dict.empty(key_type=types.unicode_type,
                             value_type=types.DictType(types.unicode_type, value_type))
    for qid in sorted(py):
        inner = typed.Dict.empty(key_type=types.unicode_type, value_type=value_type)
        for doc, value in py[qid].items():
            inner[doc] = value
        outer[qid] = inner
    return outer


def as_run(py: dict):
    """A ranx Run holding py ({qid: {docno: score}}, inner dicts in the wanted order) as is."""
    out = ranx.Run()
    out.run, out.sorted = typed_dicts(py, types.float64), True
    return out


def ranx_run(run: Run):
    """A ranx Run of run, in trec_eval's order (``sorted`` set, so ranx keeps that order)."""
    order, _, _ = trec_order(run, float32=False)
    py: dict = {}
    for q, d, s in zip(run.qid.take(order).to_pylist(), run.docno.take(order).to_pylist(),
                       run.score[order].tolist()):
        py.setdefault(q, {})[d] = s
    return as_run(py)


def _resorted(run):
    """A normalised ranx run in score order, ties by docno descending (trecqr's reading)."""
    return as_run({qid: dict(sorted(run[qid].items(), key=lambda kv: (
        -kv[1], [-b for b in kv[0].encode()]))) for qid in run.keys()})


class _TrecSortedRun(ranx.Run):
    """ranx's Run, sorted again (min-max-inverted) with ties by docno descending."""

    def sort(self):
        self.run, self.sorted = _resorted(self).run, True


def _first_appearance(runs):
    """A topic's candidates in order of first appearance over the runs in turn."""
    out = typed.List()
    for qid in runs[0].keys():
        seen: dict = {}
        for run in runs:
            for doc in run[qid].keys():
                seen.setdefault(doc, None)
        out.append(typed.List(list(seen)) if seen else
                   typed.List.empty_list(types.unicode_type))
    return out


def _patch_ranx():
    """ranx given trecqr's order where its own is arbitrary (test_fuse_ranx's docstring gives
    the rules); only in the child, which exits after."""
    for name in ("ranx.fusion.bordafuse", "ranx.fusion.weighted_bordafuse",
                 "ranx.fusion.condorcet", "ranx.fusion.weighted_condorcet",
                 "ranx.normalization.borda_norm"):
        __import__(name)
        sys.modules[name].get_candidates = _first_appearance
    sys.modules["ranx.normalization.min_max_norm"].Run = _TrecSortedRun


def fused(runs: list, qrels_path) -> dict:
    """ranx's fused run of every case, as ``{qid: [(docno, score), ...]}`` in its order."""
    assert numba.config.DISABLE_JIT, "run with NUMBA_DISABLE_JIT=1 (see the module docstring)"
    _patch_ranx()

    def lists(run) -> dict:
        return {q: list(docs.items()) for q, docs in run.run.items()}

    out: dict = {}
    cut: dict = {}
    for method, params in UNTRAINED.items():
        n = topic_count(method)
        if n not in cut:
            cut[n] = [ranx_run(r) for r in first_topics(runs, n)]
        theirs = cut[n]
        for norm in NORMS:
            out[method, norm] = lists(ranx.fuse(theirs, norm=norm, method=method,
                                                params=params))
    qrels, train, test = halves(runs, qrels_path)
    ranx_qrels = ranx.Qrels(qrels)
    ranx_train, ranx_test = [ranx_run(r) for r in train], [ranx_run(r) for r in test]
    assert list(ranx_qrels.keys()) == list(ranx_train[0].keys())
    for norm in NORMS:
        if norm is None:
            normed = ranx_train
        elif norm == "borda":
            normed = norm_switch(norm)([ranx_run(r) for r in train])
        else:
            normed = [norm_switch(norm)(ranx_run(r)) for r in train]
        normed = [_resorted(r) for r in normed]
        for method in TRAINED:
            if method == "probfuse":
                params = {"probs": rf.probfuse_train(ranx_qrels, normed, 10)}
            elif method == "slidefuse":
                params = {"probs": rf.slidefuse_train(ranx_qrels, normed), "w": 5}
            elif method == "mapfuse":
                params = {"map_scores": rf.mapfuse_train(ranx_qrels, normed)}
            elif method == "bayesfuse":
                params = {"log_odds": rf.bayesfuse_train(ranx_qrels, normed)}
            else:
                params = {"probs": getattr(rf, method + "_train")(ranx_qrels, normed)}
            out[method, norm] = lists(ranx.fuse(ranx_test, norm=norm, method=method,
                                                params=params))
    two = [ranx_run(r) for r in first_topics(runs[:2], N_TOPICS)]
    out["rrf-cli", "min-max-inverted"] = lists(ranx.fuse(two, norm="min_max_inverted",
                                                         method="rrf"))
    assert sorted(out, key=str) == sorted(cases(), key=str)
    return out


if __name__ == "__main__":
    target, qrels_file, *run_files = sys.argv[1:]
    result = fused([read_run(p) for p in run_files], qrels_file)
    with open(target, "wb") as f:
        pickle.dump(result, f)
