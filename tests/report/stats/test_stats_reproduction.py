"""trecqr.report.stats.reproduction against repro_eval 0.5 (Breuer et al., SIGIR 2020): a CAsT 2021
organiser run pair (manual BM25 as the baseline, ConvDR as the advanced run) against a
perturbed copy of each (adjacent documents swapped, a tenth of the documents replaced by new
ones, same length per topic), the way a reproduction paper compares its runs with the
original ones. KTU, RBO, RMSE, ER and DeltaRI equal repro_eval's to 1e-9."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import trecqr
from cast_inputs import cast_scores, perturb_run
from conftest import data_path
from trecqr.errors import UsageError
from trecqr.formats import read_run, run_from_dict
from trecqr.report.stats import reproduction

with warnings.catch_warnings():  # repro_eval imports scipy.stats.stats (deprecated)
    warnings.simplefilter("ignore", DeprecationWarning)
    from repro_eval.Evaluator import RpdEvaluator
    from repro_eval.measure import document_order, effectiveness, overall_effects
    from repro_eval.util import load_run

BASELINE, ADVANCED = "docrun_org_manual_bm25.run", "docrun_org_convdr.run"
# trecqr name -> repro_eval's (ir_measures') name of the same trec_eval measure
MEASURES = {"map": "AP", "ndcg_cut.10": "nDCG@10", "P.10": "P@10", "recip_rank": "RR"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("repro")
    out = {"qrels": cast_scores()["qrels"]}
    for key, name, seed in (("b", BASELINE, 1), ("a", ADVANCED, 2)):
        out[f"{key}_orig"] = data_path("cast2021", name)
        out[f"{key}_rep"] = folder / f"{key}.run"
        perturb_run(out[f"{key}_orig"], out[f"{key}_rep"], seed)
    return out


def test_ktu_and_rbo_are_repro_evals(runs):
    """Per topic and their mean, for the baseline and the advanced run."""
    for key in ("b", "a"):
        orig = reproduction.rankings_of(read_run(runs[f"{key}_orig"]))
        rep = reproduction.rankings_of(read_run(runs[f"{key}_rep"]))
        ref_orig = load_run(str(runs[f"{key}_orig"]))  # a str: a Path reads as no lines
        ref_rep = load_run(str(runs[f"{key}_rep"]))
        ktu = reproduction.ktu(orig, rep)
        ref = document_order.KTU(ref_orig, ref_rep, per_topic=True)
        assert sorted(ktu.topics) == sorted(ref) and len(ref) == 239
        np.testing.assert_allclose(ktu.values, [ref[t] for t in ktu.topics], rtol=0, atol=1e-9)
        assert abs(ktu.mean - document_order.KTU(ref_orig, ref_rep)) < 1e-9
        assert 0.3 < ktu.mean < 0.9  # a real perturbation, not a copy
        rbo = reproduction.rbo(orig, rep)
        ref = document_order.RBO(ref_orig, ref_rep, p=0.95, depth=1000, pbar=False,
                                 per_topic=True)
        np.testing.assert_allclose(rbo.values, [ref[t] for t in rbo.topics], rtol=0, atol=1e-9)
        for p, depth in ((0.8, 10), (0.99, 100)) if key == "b" else ():
            ref = document_order.RBO(ref_orig, ref_rep, p=p, depth=depth, pbar=False,
                                     per_topic=False)
            assert abs(reproduction.rbo(orig, rep, p, depth).mean - ref) < 1e-9
        assert reproduction.ktu(orig, orig).mean == pytest.approx(1.0, abs=1e-12)


def _trecqr_scores(run, measure: str, topics: list) -> np.ndarray:
    per = trecqr.evaluate(cast_scores()["qrels"], run, [measure]).per_query()
    return np.array([per[t][measure.replace(".", "_")] for t in topics])


@pytest.mark.filterwarnings("ignore::DeprecationWarning:ir_measures")
def test_rmse_er_and_delta_ri_are_repro_evals(runs):
    """repro_eval's evaluator end to end (it scores the four runs with pytrec_eval through
    ir_measures); trecqr's functions on trecqr's per-topic scores of the same measures."""
    rpd = RpdEvaluator(qrels_orig_path=str(runs["qrels"]), run_b_orig_path=str(runs["b_orig"]),
                       run_a_orig_path=str(runs["a_orig"]), run_b_rep_path=str(runs["b_rep"]),
                       run_a_rep_path=str(runs["a_rep"]))
    rpd.trim()
    rpd.evaluate()
    er, dri, rmse = rpd.er(), rpd.dri(), rpd.rmse()
    topics = list(rpd.run_b_orig_score)
    assert len(topics) == 158
    for measure, name in MEASURES.items():
        s = {k: _trecqr_scores(runs[k], measure, topics)
             for k in ("b_orig", "a_orig", "b_rep", "a_rep")}
        ref_b = np.array([rpd.run_b_orig_score[t][name] for t in topics])
        assert np.array_equal(s["b_orig"], ref_b)  # the same per-topic scores, bit for bit
        got = reproduction.effect_ratio(s["a_orig"], s["b_orig"], s["a_rep"], s["b_rep"])
        assert abs(got - er[name]) < 1e-9
        got = reproduction.delta_ri(s["a_orig"], s["b_orig"], s["a_rep"], s["b_rep"])
        assert abs(got - dri[name]) < 1e-9
        assert abs(reproduction.rmse(s["b_orig"], s["b_rep"]) - rmse["baseline"][name]) < 1e-9
        assert abs(reproduction.rmse(s["a_orig"], s["a_rep"]) - rmse["advanced"][name]) < 1e-9


def test_functions_on_scores_of_a_measure_repro_eval_does_not_list(runs):
    """ndcg_cut.3 is not among repro_eval's default measures: its ER, DeltaRI and RMSE
    functions on trecqr's per-topic dicts."""
    topics = cast_scores()["topics"]
    s = {k: _trecqr_scores(runs[k], "ndcg_cut.3", topics)
         for k in ("b_orig", "a_orig", "b_rep", "a_rep")}
    d = {k: {t: {"ndcg_cut_3": float(v)} for t, v in zip(topics, s[k])} for k in s}
    ref = overall_effects.ER(d["a_orig"], d["b_orig"], d["a_rep"], d["b_rep"])["ndcg_cut_3"]
    got = reproduction.effect_ratio(s["a_orig"], s["b_orig"], s["a_rep"], s["b_rep"])
    assert abs(got - ref) < 1e-9
    ref = overall_effects.DRI(d["a_orig"], d["b_orig"], d["a_rep"], d["b_rep"])["ndcg_cut_3"]
    got = reproduction.delta_ri(s["a_orig"], s["b_orig"], s["a_rep"], s["b_rep"])
    assert abs(got - ref) < 1e-9
    ref = effectiveness.RMSE(d["b_orig"], d["b_rep"])["ndcg_cut_3"]
    assert abs(reproduction.rmse(s["b_orig"], s["b_rep"]) - ref) < 1e-9


def test_rankings_follow_trec_eval_order():
    """Score descending, equal scores by docno descending, whatever the file order."""
    run = run_from_dict({"q1": {"d1": 1.0, "d3": 1.0, "d2": 2.0, "d0": 0.5}, "q2": {"x": 3.0}})
    assert reproduction.rankings_of(run) == {"q1": ["d2", "d3", "d1", "d0"], "q2": ["x"]}


def test_mismatched_runs_are_refused():
    orig = {"q1": ["a", "b", "c"], "q2": ["a"]}
    with pytest.raises(UsageError, match="topic 'q1': the original ranks 3 documents, the "
                                         "reproduction 2"):
        reproduction.ktu(orig, {"q1": ["b", "a"]})
    assert reproduction.ktu(orig, {"q1": ["b", "a"]}, depth=2).values[0] == -1.0
    with pytest.raises(UsageError, match="topic 'q9' of the reproduction is not in the original"):
        reproduction.rbo(orig, {"q9": ["a"]})
    with pytest.raises(UsageError, match="depth must be from 1 to 100,000"):
        reproduction.rbo(orig, orig, depth=2 ** 31)  # its weights were summed to the depth
    with pytest.raises(UsageError, match="same topics"):
        reproduction.rmse([0.1, 0.2], [0.1])
