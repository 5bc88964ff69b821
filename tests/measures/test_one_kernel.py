"""Each measure name reaches exactly one kernel, through every door.

A profiler records the kernels a call runs: the ``compute``/``compute_all`` of a trec_eval
measure, an ir_measures kernel declared with ``@irm_native``, ir_measures' own orders
(``rr_at_cutoff``, ``judged_at_cutoff``), and the C pass over dicts (``dict_values``, the fast
path for pytrec_eval's common measures, inside the ranking layer). Each name is scored by
``trecqr.evaluate`` on files and on dicts, and pytrec_eval's names by ``RelevanceEvaluator``:
the union of the kernels reached must be one Python kernel, plus the C pass for the names it
covers. Before, ``recip_rank`` could also reach pytrec_eval itself (``--engine pytrec_eval``),
and ir_measures names were looked up in a string table of modules.
"""

from __future__ import annotations

import sys
import warnings

import pytest

import trecqr
from conftest import data_path, files_as_dicts
from trecqr.engine.plan import _C_CODES
from trecqr.measures import load_all
from trecqr.measures.base import IRM_NATIVE, Measure, irm_native
from trecqr.measures.catalog import ir_measures_names
from trecqr.measures.table import TABLE
from trecqr.rankings.irm import judged_at_cutoff, rr_at_cutoff

QRELS = data_path("trec_eval-test", "qrels.test")
RUN = data_path("trec_eval-test", "results.test")
IRM_EXAMPLES = ["RR@10", "Judged@10", "nDCG(dcg='exp-log2')@10", "ERR@10", "P@5", "R@100",
                "nDCG@10", "AP(rel=2)", "SetF", "alpha_nDCG@10", "RBP(rel=1)", "Compat(p=0.9)"]


DICTS = files_as_dicts(QRELS, RUN)


def _kernels_of(call) -> set:
    """The kernels ``call()`` runs: code objects of Python kernels, "C pass" for the C one."""
    native = {row.function.__code__ for row in IRM_NATIVE.values()}
    native |= {rr_at_cutoff.__code__, judged_at_cutoff.__code__}
    seen = set()

    def profile(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if code in native:
                seen.add(code)
            elif code.co_name in ("compute", "compute_all") \
                    and isinstance(frame.f_locals.get("self"), Measure):
                seen.add(code)
        elif event == "c_call" and getattr(arg, "__name__", "") == "dict_values":
            seen.add("C pass")

    sys.setprofile(profile)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    finally:
        sys.setprofile(None)
    return seen


def _trec_names(compat: str) -> list:
    registry = load_all()
    return [n for n in TABLE[compat]
            if "qrels" in getattr(registry[n], "rel_formats", ("qrels",))]


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_each_trec_eval_name_reaches_one_kernel(compat):
    """trec_eval's names through evaluate (files, dicts) and RelevanceEvaluator."""
    from trecqr.api.pytrec import supported_measures

    qrels, run = DICTS
    for name in _trec_names(compat):
        calls = [lambda: trecqr.evaluate(QRELS, RUN, [name], compat=compat),
                 lambda: trecqr.evaluate(qrels, run, [name], compat=compat)]
        if compat == "9.0.8" and name in supported_measures:
            calls.append(lambda: trecqr.RelevanceEvaluator(qrels, {name}).evaluate(run))
        reached = set().union(*(_kernels_of(c) for c in calls))
        python = reached - {"C pass"}
        assert len(python) == 1, (name, python)
        # 10.0 finds recall points with lround, which the C pass does not, and relstring's
        # text is numpy's (the C pass gives pytrec_eval's 0 only, in 9.0.8's drop-in)
        in_c_pass = name in _C_CODES and not (
            compat == "10.0" and name in ("iprec_at_recall", "11pt_avg", "relstring"))
        assert ("C pass" in reached) == in_c_pass, name


def _irm_names() -> list:
    names = [info.name for info in ir_measures_names()] + IRM_EXAMPLES
    return list(dict.fromkeys(names))


def test_each_ir_measures_name_reaches_one_kernel():
    """ir_measures' names trecqr lists, and examples with parameters: evaluate on files and on
    dicts reach one kernel (the pytrec_eval provider's names: trec_eval's measure)."""
    qrels, run = DICTS
    scored = 0
    for name in _irm_names():
        try:
            reached = _kernels_of(lambda: trecqr.evaluate(QRELS, RUN, [name]))
        except trecqr.UsageError:  # a name that needs parameters (RBP without rel)
            continue
        reached |= _kernels_of(lambda: trecqr.evaluate(qrels, run, [name]))
        assert len(reached - {"C pass"}) == 1, (name, reached)
        scored += 1
    assert scored > 40


def test_a_name_declared_twice_is_refused():
    """The declarations are the registry: a second kernel for a name is an error."""
    with pytest.raises(ValueError, match="declared twice"):
        irm_native("AP_IA", provider="pyndeval")(lambda *a: None)
