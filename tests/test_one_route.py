"""One route from input to number: every door decides each input's kind once
(trecqr.formats.inputs.decide), and every door reaches the same engine function.

Spies wrap the deciding function and record the objects it is given: a door that looked at
an input's type a second time, or read it twice, shows up as a second call on the same input.
"""

from __future__ import annotations

import os

import ir_measures
import pandas as pd
import pytest

import trecqr
from conftest import cast2021_dicts, data_path, run_cli
from trecqr.api import many
from trecqr.formats import inputs

QRELS = str(data_path("cast2021", "qrels-docs.2021.qrel"))
RUN = str(data_path("cast2021", "docrun_org_convdr.run"))
OTHER_RUN = str(data_path("cast2021", "docrun_org_manual_bm25.run"))
TE_QRELS = str(data_path("trec_eval-test", "qrels.test"))
TE_RUN = str(data_path("trec_eval-test", "results.test"))


@pytest.fixture
def decided(monkeypatch):
    """The inputs :func:`inputs.decide` was called on, in call order (paths as strings)."""
    seen = []
    real = inputs.decide

    def spy(obj, **kw):
        seen.append(os.fspath(obj) if isinstance(obj, (str, os.PathLike)) else obj)
        return real(obj, **kw)

    monkeypatch.setattr(inputs, "decide", spy)
    monkeypatch.setattr(many, "_RELEVANCE", {})  # evaluate_many reads its qrels afresh
    return seen


def _once_each(seen, *given) -> bool:
    """Each given input was decided exactly once, and nothing else was."""
    return len(seen) == len(given) and all(
        sum(s is g or (isinstance(g, str) and s == g) for s in seen) == 1 for g in given)


def test_evaluate_decides_each_input_once(decided):
    """trecqr.evaluate on paths, on dicts and on DataFrames: one decision per input."""
    trecqr.evaluate(QRELS, RUN, ["map", "nDCG@3", "RR@3"])
    assert _once_each(decided, QRELS, RUN)
    qrels, run = cast2021_dicts()
    decided.clear()
    trecqr.evaluate(qrels, run, ["map", "P.5"])
    assert _once_each(decided, qrels, run)
    frame = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                         columns=["query_id", "doc_id", "score"])
    decided.clear()
    trecqr.evaluate(qrels, frame, ["map", "nDCG@10"])
    assert _once_each(decided, qrels, frame)


def test_relevance_evaluator_decides_each_input_once(decided):
    """RelevanceEvaluator: the qrels in its constructor, each run in evaluate, once each."""
    qrels, run = cast2021_dicts()
    evaluator = trecqr.RelevanceEvaluator(qrels, {"map", "bpref"})
    assert _once_each(decided, qrels)
    decided.clear()
    evaluator.evaluate(run)
    assert _once_each(decided, run)


def test_evaluate_many_decides_the_qrels_once_for_every_run(decided):
    """evaluate_many: the qrels decided once for all runs, each run once."""
    results = trecqr.evaluate_many(QRELS, [RUN, OTHER_RUN], ["map"], jobs=1)
    assert len(results) == 2
    assert _once_each(decided, QRELS, RUN, OTHER_RUN)


@pytest.mark.parametrize("names", [["map"], ["map", "nDCG@3"]])
def test_trecqr_eval_decides_each_input_once(decided, names):
    """trecqr eval, with trec_eval names and with ir_measures names: once per input."""
    args = ["eval"] + [a for n in names for a in ("-m", n)] + [QRELS, RUN]
    assert run_cli(args).exit_code == 0
    assert _once_each(decided, QRELS, RUN)


def test_ir_measures_provider_decides_each_input_once(decided):
    """The provider: the qrels when its evaluator is made, the run when it is scored."""
    trecqr.register_ir_measures()
    qrels, run = cast2021_dicts()
    measures = [ir_measures.parse_measure(m) for m in ("AP", "nDCG@10", "RR@10")]
    ir_measures.calc_aggregate(measures, qrels, run)  # the provider's one-off probes
    decided.clear()
    ir_measures.calc_aggregate(measures, qrels, run)
    assert _once_each(decided, qrels, run)


@pytest.fixture
def parsed(monkeypatch):
    """How often each measure name is read: ir_measures names parsed (names._parse), trec_eval
    measures looked up (selection.load_family), with the plan cache emptied."""
    from trecqr.engine import names, plan, selection

    seen = {"irm": [], "trec": []}
    real_parse, real_load = names._parse, selection.load_family
    monkeypatch.setattr(names, "_parse", lambda n: seen["irm"].append(n) or real_parse(n))
    monkeypatch.setattr(selection, "load_family",
                        lambda n: seen["trec"].append(n) or real_load(n))
    monkeypatch.setattr(plan, "_PLANS", {})
    return seen


@pytest.mark.parametrize("args", [
    ["-m", "map", "-m", "P.5"], ["-m", "map", "-m", "nDCG@3"], ["-m", "RR@3"],
    ["-R", "qrels_prefs", "-m", "prefs_simp"]])
def test_trecqr_eval_reads_each_measure_name_once(parsed, args):
    """trecqr eval reads its names once, into one plan, whatever the names and -R format
    (it used to sniff them for ir_measures names, then split and select them again)."""
    res = run_cli(["eval", *args, TE_QRELS, TE_RUN])
    assert res.exit_code == 0, res.stderr
    assert sorted(parsed["trec"]) == sorted(set(parsed["trec"]))
    assert sorted(parsed["irm"]) == sorted(set(parsed["irm"]))
    assert parsed["trec"] or parsed["irm"]


def test_evaluate_reads_each_measure_name_once(parsed):
    """trecqr.evaluate: each name read once per call."""
    trecqr.evaluate(TE_QRELS, TE_RUN, ["map", "P.5", "nDCG@3", "RR@3"])
    assert sorted(parsed["trec"]) == ["P", "map", "ndcg_cut"]  # nDCG@3: ndcg_cut.3
    assert sorted(parsed["irm"]) == ["RR@3", "nDCG@3"]
