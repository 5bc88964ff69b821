"""trecqr.fuse takes every option of ``trecqr fuse`` as a keyword, with the same meaning:
``weights=`` is ``--weights``, ``optimize=`` is ``--optimize``; and it refuses what the command
refuses, in one UsageError naming Python's keywords."""

from __future__ import annotations

import inspect

import pytest

from conftest import data_path, run_cli

import trecqr
from trecqr.cli.fuse import command
from trecqr.errors import UsageError

D = ("cast2021",)


def _runs():
    return [str(data_path(*D, "docrun_org_manual_bm25.run")),
            str(data_path(*D, "docrun_org_manual_ance_bert.run"))]


def _qrels():
    return str(data_path(*D, "qrels-docs.2021.qrel"))


def _rows(run):
    return list(zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()))


def test_every_command_option_has_its_keyword():
    """Each option of the command is a keyword of trecqr.fuse (``-o`` aside: Python returns the
    Run, and trecqr.write_run writes it)."""
    options = {p.name for p in command.params} - {"output"}
    keywords = set(inspect.signature(trecqr.fuse).parameters)
    assert options <= keywords, options - keywords


def test_weights_keyword_is_the_command_line_weights(tmp_path):
    """weights=[...] fuses as params={"weights": [...]} and as ``--weights`` do."""
    by_keyword = trecqr.fuse(_runs(), method="wsum", weights=[0.7, 0.3])
    by_params = trecqr.fuse(_runs(), method="wsum", params={"weights": [0.7, 0.3]})
    assert _rows(by_keyword) == _rows(by_params)
    out = tmp_path / "w.run"
    res = run_cli(["fuse", *_runs(), "-o", out, "--method", "wsum", "--weights", "0.7,0.3"])
    assert res.exit_code == 0, res.stderr
    written = trecqr.load_run(str(out))
    assert written.docno.to_pylist() == by_keyword.docno.to_pylist()
    assert written.score.tolist() == by_keyword.score.tolist()


def test_optimize_keyword_chooses_what_the_command_chooses():
    """optimize="ndcg_cut.3" with train_qrels picks the weights --optimize prints (0.4, 0.6)."""
    chosen = trecqr.fuse(_runs(), method="wsum", optimize="ndcg_cut.3", train_qrels=_qrels())
    assert _rows(chosen) == _rows(trecqr.fuse(_runs(), method="wsum", weights=[0.4, 0.6]))


@pytest.mark.parametrize("keywords, message", [
    ({"weights": [1.0]}, "wsum: 1 weights for 2 runs"),
    ({"weights": [1, 1], "params": {"weights": [1, 1]}},
     "weights given twice: as weights= and in params; give one"),
    ({"weights": "0.5,0.5"}, "wsum: weights must be one number per run, got '0.5,0.5'"),
    ({"weights": [0.5, "x"]}, "wsum: weights must be numbers, got [0.5, 'x']"),
    ({"optimize": "map"}, "optimize needs train_qrels (the judgments to search on)"),
    ({"train_runs": ["a.run", "b.run"]}, "train_runs needs train_qrels"),
    ({"optimize": "map", "train_qrels": "q", "weights": [1, 1]},
     "optimize chooses weights: leave weights out"),
])
def test_refusals_name_the_keywords(keywords, message):
    with pytest.raises(UsageError) as info:
        trecqr.fuse(_runs(), method="wsum", **keywords)
    assert str(info.value) == message


@pytest.mark.parametrize("keywords, message", [
    ({"method": "rrf", "weights": [0.5, 0.5]}, "rrf takes no weights (it takes k)"),
    ({"method": "rrf", "params": {"kk": 10}}, "rrf takes no kk (it takes k)"),
    ({"method": "combsum", "params": {"k": 10}}, "combsum takes no k (it takes no parameter)"),
])
def test_a_parameter_the_method_does_not_take_is_refused(keywords, message, tmp_path):
    """Ignored, it would fuse with the method's defaults and say nothing; both doors refuse
    it, the command before reading any run."""
    with pytest.raises(UsageError) as info:
        trecqr.fuse(_runs(), **keywords)
    assert str(info.value) == message
    out = tmp_path / "out.run"
    args = ["--method", keywords["method"]]
    if "weights" in keywords:
        args += ["--weights", ",".join(map(str, keywords["weights"]))]
    for key, value in keywords.get("params", {}).items():
        args += ["--params", f"{key}={value}"]
    res = run_cli(["fuse", *_runs(), "-o", out, *args])
    assert res.exit_code == 2 and res.stderr.strip() == f"trecqr: {message}"
    assert not out.exists()
