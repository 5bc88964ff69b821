"""The C pass over dicts (rankings/_dicts.c, values from _dict_measures.h) gives pytrec_eval's
values bit for bit for every measure it computes, and the numpy kernels' values where
pytrec_eval has none to give.

Random small cases, seeded: ties, grades 0 to 3, negative grades (unjudged), documents the
qrels do not judge, topics without documents, relevance levels 1 to 3, -J, and each measure
with its default and odd parameters (recall points past 1, set_F's beta of 0). pytrec_eval
0.5 crashes on a topic whose grades are all negative and on a grade past 2**31, and leaves
``runid`` unset; those cases are compared with the numpy kernels instead (the same call with
``max_docs`` past every ranking: -M is not the C pass's, so every value comes from numpy),
under trec_eval 9.0.8's rules and 10.0's.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest

import pytrec_eval
import trecqr
from trecqr.engine.plan import _C_CODES

PARAMETERS = ["success.1,2,3,50", "iprec_at_recall.0.05,0.33,0.5,1.5", "set_F.0.5", "set_F.0",
              "P.1,3", "ndcg_cut.2,7", "map_cut.1,4", "recall.2,1000", "Rprec_mult.0.3,1.7",
              "relative_P.2,7", "11pt_avg.0.2,0.5,0.9", "utility.2,1,0.5,0.25"]
NAMES = sorted(_C_CODES) + PARAMETERS


def _case(r: random.Random, pytrec_safe: bool):
    qrels, run = {}, {}
    for t in range(r.choice([1, 2, 5, 12])):
        q, pool = f"q{t}", r.randrange(1, 30)
        grades = [-2, -1, 0, 0, 1, 1, 2, 3] + ([] if pytrec_safe else [2 ** 40])
        if r.random() < 0.9:
            qrels[q] = {f"d{r.randrange(2 * pool)}": r.choice(grades)
                        for _ in range(r.randrange(1, pool + 1))}
            if pytrec_safe and max(qrels[q].values()) < 0:
                qrels[q][f"d{2 * pool}"] = 0
        scores = [r.choice([0.5, 1.0, 2.0]) if r.random() < 0.3 else r.random()
                  for _ in range(r.choice([0, 1, 3, 10, 40]))]
        run[q] = {f"d{r.randrange(2 * pool)}": s for s in scores}
    qrels = qrels or {"q0": {"d0": 1}}
    return qrels, run, set(r.sample(NAMES, r.randrange(1, 6))), r.choice([1, 1, 2, 3]), \
        r.random() < 0.3


def _bits(value):
    """A value as compared: NaN equal to NaN, 0.0 unequal to -0.0 (relstring's text as is)."""
    if isinstance(value, str):
        return value
    return "nan" if math.isnan(value) else (value, math.copysign(1.0, value))


def _same(got: dict, want: dict) -> bool:
    return got.keys() == want.keys() and all(
        got[q].keys() == want[q].keys() and all(
            _bits(got[q][k]) == _bits(want[q][k]) for k in want[q]) for q in want)


def test_every_c_measure_is_pytrec_evals_bit_for_bit():
    r = random.Random(20261205)
    for _ in range(600):
        qrels, run, names, level, judged_only = _case(r, pytrec_safe=True)
        want = pytrec_eval.RelevanceEvaluator(qrels, names, relevance_level=level,
                                              judged_docs_only_flag=judged_only).evaluate(run)
        for row in want.values():  # pytrec_eval never sets runid's double; trecqr says 0.0
            if "runid" in row:
                row["runid"] = 0.0
        got = trecqr.RelevanceEvaluator(qrels, names, relevance_level=level,
                                        judged_docs_only_flag=judged_only).evaluate(run)
        assert _same(got, want), (qrels, run, names, level, judged_only)


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_every_c_measure_is_the_numpy_kernels_value(compat):
    """evaluate's per-topic values (the C pass) against the numpy kernels', grades past 2**31
    and topics judged only negatively included."""
    r = random.Random(f"numpy {compat}")
    for _ in range(300):
        qrels, run, names, level, judged_only = _case(r, pytrec_safe=False)
        kw = dict(relevance_level=level, judged_only=judged_only, compat=compat)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                c_pass = trecqr.evaluate(qrels, run, sorted(names), **kw)
            except trecqr.TrecqrError as exc:  # no run topic is judged: the same error
                with pytest.raises(type(exc)):
                    trecqr.evaluate(qrels, run, sorted(names), max_docs=10 ** 9, **kw)
                continue
            numpy = trecqr.evaluate(qrels, run, sorted(names), max_docs=10 ** 9, **kw)
        assert _same(c_pass.per_query(), numpy.per_query()), (qrels, run, names, kw)
        # gm_map, gm_bpref, num_q: only their summaries are shown
        means = numpy.aggregate()
        assert _same({"all": c_pass.aggregate()}, {"all": means}), (qrels, run, names, kw)


def test_small_calls_cost_what_pytrec_evals_do():
    """The C pass computes every measure of pytrec_eval (trec_eval's all_trec set): a call on
    one topic makes no numpy ranking (dict_values alone runs)."""
    from trecqr.engine.plan import pytrec_plan
    from trecqr.engine.pytrec_values import normalize_measures

    for names in [{"all_trec"}, {"official"}, {"ndcg", "success"},
                  {"set_F", "set_P", "set_map", "set_recall", "set_relative_P", "num_ret"},
                  {"map_cut.1,3,5,10,100,1000", "ndcg_cut.1,3,5,10,100,1000",
                   "recall.1,3,5,10,100,1000", "P.1,3,5,10,100,1000",
                   "success.1,3,5,10,100,1000"}]:
        assert pytrec_plan(normalize_measures(names), 1, False).c_specs is not None, names


def test_the_c_enum_and_the_plans_codes_are_one_table():
    """engine/plan.py's ``_C_CODES`` and the enum of rankings/_dict_measures.h say the same
    thing: each measure's code is the one its C case computes (``num_q`` is C_ONE, ``runid``
    and ``relstring`` C_ZERO: the drop-in's constants)."""
    import re
    from pathlib import Path

    import trecqr.rankings

    header = Path(trecqr.rankings.__file__).with_name("_dict_measures.h").read_text()
    enum = re.search(r"enum \{(.*?)\};", header, re.S).group(1)
    codes = {name: int(code) for name, code in re.findall(r"C_(\w+) = (\d+)", enum)}
    assert sorted(codes.values()) == list(range(len(codes)))
    aliases = {"num_q": "ONE", "runid": "ZERO", "relstring": "ZERO"}
    plan = {name: aliases.get(name, name.upper()) for name in _C_CODES}
    assert {codes[c] for c in plan.values()} == set(codes.values())
    assert {name: codes[c] for name, c in plan.items()} == _C_CODES
