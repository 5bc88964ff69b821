"""ranx's ``compare`` beside trecqr.report.stats on the five CAsT 2021 organiser runs, map and
ndcg@3: with the same test (ranx "student" = the paired t-test, "tukey" = scipy's one-way
Tukey HSD, "fisher" = the paired randomization test), both find the same pairs significant
at 0.05.

ranx scores the runs itself, and its per-topic values differ from trec_eval's on two runs
whose scores tie (ranx breaks ties otherwise), so its p-values differ a little there; given
trecqr's per-topic scores, ranx's tests give trecqr's p-values (the t-test and Tukey's to
1e-9, the randomization test within Monte Carlo error)."""

from __future__ import annotations

import math
import warnings

import pytest

from cast_inputs import MEASURES, cast_scores, pairs
from trecqr.formats import read_qrels, read_run
from trecqr.report.stats import anova, paired

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from ranx import Qrels, Run, compare
    from ranx.statistical_tests import compute_statistical_significance

RANX_METRIC = {"map": "map", "ndcg_cut_3": "ndcg@3"}
PERMUTATIONS = 3000  # ranx's randomization test is numba-parallel: CPU time adds up


def _ours(test: str, measure: str) -> dict:
    """{(i, j): p} for every pair of runs, trecqr.report.stats on trecqr's per-topic scores."""
    x = cast_scores()[measure]
    if test == "tukey":
        p = anova.tukey_hsd(x, design="one-way").pvalues
        return {(i, j): p[i, j] for i, j in pairs(len(x))}
    out = {}
    for k, (i, j) in enumerate(pairs(len(x))):
        if test == "student":
            out[i, j] = paired.t_test(x[i], x[j])[1]
        else:
            out[i, j] = paired.randomization_test(x[i] - x[j], PERMUTATIONS, rng=k)
    return out


def _nested(table, values) -> dict:
    out: dict = {}
    for qid, docno, value in zip(table.qid.to_pylist(), table.docno.to_pylist(),
                                 values.tolist()):
        out.setdefault(qid, {})[docno] = value
    return out


@pytest.fixture(scope="module")
def ranx_runs():
    """ranx's Qrels and Runs of the files (built from dicts: ranx's own file reader takes
    twice as long and reads the same lines)."""
    s = cast_scores()
    q = read_qrels(s["qrels"])
    runs = []
    for path in s["runs"]:
        r = read_run(path)
        runs.append(Run(_nested(r, r.score), name=path.name))
    return Qrels(_nested(q, q.grade)), runs


@pytest.mark.parametrize("test", ["student", "tukey", "fisher"])
@pytest.mark.filterwarnings("ignore")  # numba's type-safety warnings inside ranx
def test_ranx_compare_finds_the_same_significant_pairs(ranx_runs, test):
    qrels, runs = ranx_runs
    report = compare(qrels, runs, list(RANX_METRIC.values()), stat_test=test, max_p=0.05,
                     n_permutations=PERMUTATIONS, make_comparable=True)
    for measure in MEASURES:
        ours = _ours(test, measure)
        for (i, j), p in ours.items():
            theirs = report.comparisons[runs[i].name, runs[j].name][RANX_METRIC[measure]]
            assert bool(theirs["significant"]) == (p <= 0.05), (test, measure, i, j, p, theirs)


@pytest.mark.filterwarnings("ignore")
def test_ranx_tests_on_trecqrs_scores_give_trecqrs_p_values():
    s = cast_scores()
    names = [f"run{i}" for i in range(len(s["runs"]))]
    scores = {n: {m: s[m][i] for m in MEASURES} for i, n in enumerate(names)}
    for test in ("student", "tukey", "fisher"):
        found = compute_statistical_significance(names, scores, stat_test=test,
                                                 n_permutations=PERMUTATIONS, max_p=0.05)
        for measure in MEASURES:
            for (i, j), p in _ours(test, measure).items():
                theirs = float(found[names[i], names[j]][measure]["p_value"])
                if test == "fisher":  # both estimate the same p from 3,000 draws
                    se = math.sqrt(max(p * (1 - p), 1 / PERMUTATIONS) / PERMUTATIONS)
                    assert abs(theirs - p) < 4 * math.sqrt(2) * se + 2 / PERMUTATIONS
                else:
                    assert theirs == pytest.approx(p, rel=1e-9, abs=1e-12)
