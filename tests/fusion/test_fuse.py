"""trecqr fuse and trecqr.fuse / optimize_fusion beyond the ranx agreement (test_fuse_ranx.py):
inputs of every kind, names and aliases, the grid search, and the command's refusals."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import data_path, run_cli

import trecqr
from trecqr.errors import UsageError
from trecqr.fusion.optimize import grid_search, trials, weight_grid

D = ("cast2021",)
BM25, BERT = "docrun_org_manual_bm25.run", "docrun_org_manual_ance_bert.run"


def _runs():
    return [str(data_path(*D, BM25)), str(data_path(*D, BERT))]


def _qrels():
    return str(data_path(*D, "qrels-docs.2021.qrel"))


def _rows(run):
    return list(zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()))


def test_rrf_by_hand():
    a = {"q": {"x": 3.0, "y": 2.0, "z": 1.0}}
    b = {"q": {"y": 9.0, "w": 8.0}}
    fused = trecqr.fuse([a, b], method="rrf", params={"k": 1})
    assert _rows(fused) == [("q", "y", 1 / 3 + 1 / 2), ("q", "x", 1 / 2), ("q", "w", 1 / 3),
                            ("q", "z", 1 / 4)]


def test_ties_in_trec_eval_order_and_min_max_floor():
    # min-max with one document gives 0 (ranx's 1e-9 floor), so both tie at 0: docno descending
    fused = trecqr.fuse([{"q": {"a": 5.0}}, {"q": {"b": 7.0}}], method="combsum")
    assert _rows(fused) == [("q", "b", 0.0), ("q", "a", 0.0)]


def test_aliases_and_inputs_of_every_kind():
    import pandas as pd

    paths = _runs()
    runs = [trecqr.load_run(p) for p in paths]
    frame = pd.DataFrame({"query_id": runs[1].qid.to_pylist(), "doc_id": runs[1].docno.to_pylist(),
                          "score": runs[1].score})
    expected = _rows(trecqr.fuse(paths, method="combmnz"))
    for name in ("CombMNZ", "mnz", "comb_mnz"):
        assert _rows(trecqr.fuse([paths[0], frame], method=name)) == expected
    assert len(expected) == 30542


def test_weights_must_fit_the_runs():
    with pytest.raises(UsageError, match="1 weights for 2 runs"):
        trecqr.fuse(_runs(), method="wsum", params={"weights": [1.0]})
    with pytest.raises(UsageError, match="wsum needs weights"):
        trecqr.fuse(_runs(), method="wsum")
    with pytest.raises(UsageError, match="probfuse is trained"):
        trecqr.fuse(_runs(), method="probfuse", params={"n_segments": 5})


def test_grids_are_ranx_grids():
    from ranx.fusion_optimization.optimize_weights import get_possible_weights, get_trial_configs

    ranx_grid = [list(c) for c in get_trial_configs(get_possible_weights(0.1), 3)]
    assert weight_grid(3) == ranx_grid and len(ranx_grid) < 66  # sums like 0.1+0.2+0.7 != 1.0
    name, gammas = trials("combgmnz", 2)
    assert name == "gamma" and gammas[0] == 0.01 and gammas[-1] >= 1.0
    assert trials("rrf", 2) == ("k", list(range(10, 101, 10)))


def test_optimize_picks_the_last_best_k():
    qrels, runs = _qrels(), _runs()
    best, score, name = grid_search(qrels, runs, "rrf", "min-max", "ndcg_cut.3")
    by_k = {k: trecqr.evaluate(qrels, trecqr.fuse(runs, "rrf", params={"k": k}),
                               ["ndcg_cut.3"]).aggregate()["ndcg_cut_3"]
            for k in range(10, 101, 10)}
    top = max(by_k.values())
    assert name == "k" and score == top
    assert best == {"k": max(k for k, v in by_k.items() if v == top)}
    assert trecqr.optimize_fusion(qrels, runs, method="rrf", metric="ndcg_cut.3") == best


def test_trained_on_train_runs(tmp_path):
    """ProbFuse trained by the command on the given training runs equals the library's."""
    qrels, runs = _qrels(), _runs()
    out = tmp_path / "p.run"
    res = run_cli(["fuse", *runs, "-o", out, "--method", "probfuse", "--params", "n_segments=4",
                   "--train-qrels", qrels, "--train-run", runs[0], "--train-run", runs[1],
                   "--runid", "pf"])
    assert res.exit_code == 0, res.stderr
    lib = trecqr.fuse(runs, method="probfuse", params={"n_segments": 4}, train_qrels=qrels,
                      runid="pf")
    back = trecqr.load_run(str(out))
    assert back.runid == "pf"
    assert back.docno.to_pylist() == lib.docno.to_pylist()
    np.testing.assert_array_equal(back.score, lib.score)


def test_optimize_prints_its_choice(tmp_path):
    out = tmp_path / "w.run"
    res = run_cli(["fuse", *_runs(), "-o", out, "--method", "wsum", "--optimize", "ndcg_cut.3",
                   "--train-qrels", _qrels()])
    assert res.exit_code == 0, res.stderr
    assert "fuse: --optimize ndcg_cut.3: weights=0.4,0.6 (ndcg_cut.3 0.5322" in res.stderr
    fused = trecqr.fuse(_runs(), method="wsum", params={"weights": [0.4, 0.6]})
    assert trecqr.load_run(str(out)).docno.to_pylist() == fused.docno.to_pylist()


@pytest.mark.parametrize("args, message", [
    (["--method", "nope"], "unknown fusion method 'nope'"),
    (["--norm", "l2"], "unknown normalisation 'l2'"),
    (["--method", "wsum", "--weights", "1,x"], "--weights: expected numbers"),
    (["--method", "rrf", "--params", "k"], "--params: expected KEY=VALUE"),
    (["--method", "slidefuse", "--train-qrels", "Q"], "slidefuse needs w"),
    (["--method", "condorcet", "--optimize", "map", "--train-qrels", "Q"],
     "condorcet has no parameter to optimise"),
    (["--optimize", "map"], "--optimize needs --train-qrels"),
    (["--train-run", "R"], "1 --train-run for 2 runs"),
])
def test_bad_options_one_line_no_output(tmp_path, args, message):
    out = tmp_path / "out.run"
    res = run_cli(["fuse", *_runs(), "-o", out, *args])
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == [f"trecqr: {message}" + res.stderr.strip()
                                              .split(message, 1)[1]]
    assert not out.exists()


def test_one_run_and_a_missing_file(tmp_path):
    out = tmp_path / "out.run"
    res = run_cli(["fuse", _runs()[0], "-o", out])
    assert res.exit_code == 2 and res.stderr.strip() == "trecqr: fuse needs two or more runs"
    res = run_cli(["fuse", _runs()[0], str(tmp_path / "missing.run"), "-o", out])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1
    assert "missing.run" in res.stderr and not out.exists()
