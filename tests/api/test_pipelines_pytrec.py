"""Libraries that import pytrec_eval themselves score with trecqr in its place, to the bit.

BEIR's ``EvaluateRetrieval.evaluate`` and MTEB's ``calculate_retrieval_scores`` are run as their
users run them, with ``sys.modules["pytrec_eval"] = trecqr`` set before they are imported (the
form docs/python.md gives). Each result, or the exception each library raises of itself, is
compared with the same library code calling pytrec_eval, in one fresh interpreter: real CAsT
2021 runs at BEIR's and MTEB's cut-offs, and the seeded cases of tests/compat_cases.py (float
ties, negative grades, topics missing on either side, empty rankings, query ids that are also
document ids).
"""

from __future__ import annotations

import importlib.util
import pickle
import subprocess
import sys
import textwrap

import pytest

from compat_cases import make_case
from conftest import ROOT
from oracle_cases import cast2021, dicts_of_files

# found, not imported: importing mteb takes seconds, which every worker would pay at collection
pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("beir", "mteb")),
                                reason="beir and mteb are in the test extra")

KS = [1, 3, 5, 10, 100, 1000]
RUNS = ["docrun_org_manual_bm25.run", "docrun_org_convdr.run"]

SCRIPT = textwrap.dedent("""
    import copy, pickle, sys
    import pytrec_eval
    import trecqr
    sys.modules["pytrec_eval"] = trecqr  # before BEIR and MTEB import it
    from beir.retrieval import evaluation as beir_evaluation
    from mteb._evaluators import retrieval_metrics as mteb_metrics
    assert beir_evaluation.pytrec_eval is trecqr and mteb_metrics.pytrec_eval is trecqr

    def outcome(call, *args, **kw):
        try:
            return call(*copy.deepcopy(args), **kw)
        except Exception as exc:  # the library's own failure, the same under both
            return ("raised", type(exc).__name__)

    def both(cases):
        got = {}
        for name, (qrels, run, ks) in cases.items():
            asked = {q: docs for q, docs in run.items() if q in qrels}  # MTEB's queries are judged
            got[name] = (outcome(beir_evaluation.EvaluateRetrieval.evaluate, qrels, run, ks),
                         outcome(mteb_metrics.calculate_retrieval_scores, asked, qrels, ks))
            if name.endswith(".run"):  # MTEB's skip_first_result, on the real runs
                got[name] += (outcome(mteb_metrics.calculate_retrieval_scores, asked, qrels,
                                      ks, skip_first_result=True),)
        return got

    cases = pickle.load(sys.stdin.buffer)
    with_trecqr = both(cases)
    beir_evaluation.pytrec_eval = mteb_metrics.pytrec_eval = pytrec_eval
    with_pytrec = both(cases)
    pickle.dump((with_trecqr, with_pytrec), sys.stdout.buffer)
""")


def _cases() -> dict:
    cases = {}
    for name in RUNS:
        qrels, run = dicts_of_files(*cast2021(name))
        cases[name] = (qrels, run, KS)
    for seed in range(12):
        qrels, run = make_case(seed)
        if seed % 4 == 0 and run:  # BEIR drops a document whose id is the query's id
            qid = next(iter(run))
            run[qid][qid] = max(run[qid].values(), default=1.0)
        cases[f"seed {seed}"] = (qrels, run, [1, 3, 5, 10])
    return cases


def test_beir_and_mteb_give_pytrec_evals_numbers_with_trecqr_in_its_place():
    cases = _cases()
    done = subprocess.run([sys.executable, "-c", SCRIPT], input=pickle.dumps(cases),
                          capture_output=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    with_trecqr, with_pytrec = pickle.loads(done.stdout)
    assert with_trecqr.keys() == cases.keys()
    for name in cases:  # repr: every float to the bit, and MTEB's NaN nAUCs equal as text
        assert repr(with_trecqr[name]) == repr(with_pytrec[name]), name
    beir, mteb, _ = with_trecqr[RUNS[0]]
    assert beir[0]["NDCG@3"] > 0 and mteb.ndcg["NDCG@3"] > 0  # real numbers, not two failures
    failed = [n for n in cases if any(r[:1] == ("raised",) for r in with_trecqr[n])]
    assert not failed, failed
