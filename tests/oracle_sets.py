"""The measure-set axis of tests/api/test_oracle_matrix.py: pytrec_eval's every measure,
ir_measures' registry name by name, the ir_measures names trecqr computes natively (cwl_eval,
gdeval, Compat, Accuracy) and the cut runs that exercise their providers' tie orders."""

from __future__ import annotations

import math
import shutil

import ir_measures
import pytest
import pytrec_eval

from conftest import data_path
from trecqr.engine.names import _TREC_NAMES

# measures pytrec_eval supports that trecqr does not reproduce (none today)
KNOWN_EXCEPTIONS: set = set()
PYTREC_ALL = set(pytrec_eval.supported_measures) - KNOWN_EXCEPTIONS

# trec_eval's and ir_measures' names in one call (evaluate x every input kind)
MIXED = ["map", "ndcg_cut.3", "recip_rank", "P.10", "recall.100", "num_ret", "nDCG@3", "RR@3",
         "R@100", "Judged@10"]

IRM_NAMES = ["RR", "RR@3", "AP", "AP@5", "nDCG", "nDCG@3", "R@100", "P@10", "P(rel=2)@5",
             "Rprec(rel=1)", "Bpref", "infAP(rel=1)", "Success@5", "Judged@10", "Judged", "NumQ",
             "NumRet", "NumRel", "NumRelRet", "SetP", "SetR", "SetF", "IPrec@0.5", "RR(rel=2)@2",
             "SetF(beta=0.5)", "AP(rel=2)", "SetP(relative=True)", "R(rel=2)@5",
             "NumRet(rel=2)", "IPrec@0.0", "Success(rel=2)@1", "Judged@1"]
IRM_NAMES_WITH_OPTIONS = [["nDCG(judged_only=True)@3", "P(judged_only=True)@5",
                           "SetF(judged_only=True)", "P@5"],
                          ["nDCG(gains={0:0,1:1,2:5})@10", "nDCG(gains={0:0,1:2,2:3})", "P@5"]]

# ir_measures' registry NAME -> instances covering its parameters; a name added to the registry
# and missing here fails test_oracle_edges_irm.py::test_every_registry_name_is_listed
AD_HOC = {
    "AP": ["AP", "AP@10", "AP(rel=2)", "AP(judged_only=True)"],
    "MAP": ["MAP@5"],
    "Accuracy": ["Accuracy", "Accuracy(rel=2)@20"],
    "BPM": ["BPM(max_rel=4)@10", "BPM(T=2.0,max_rel=4)@20"],
    "BPref": ["BPref"], "Bpref": ["Bpref(rel=2)"],
    "Compat": ["Compat", "Compat(p=0.8,normalize=False)"],
    "ERR": ["ERR@10", "ERR@20"],
    "INSQ": ["INSQ(max_rel=4)", "INSQ(T=2.0,max_rel=4)"],
    "INST": ["INST(max_rel=4)", "INST(T=3.0,max_rel=4)"],
    "IPrec": ["IPrec@0.2", "IPrec(rel=2)@0.5"],
    "Judged": ["Judged@10", "Judged"],
    "MRR": ["MRR@10"], "RR": ["RR", "RR@3", "RR(rel=2)@10"],
    "NDCG": ["NDCG@3"], "nDCG": ["nDCG", "nDCG@3", "nDCG@10", "nDCG(dcg='exp-log2')@10",
                                 "nDCG(judged_only=True)@5",
                                 "nDCG(gains={0:0,1:1,2:3,3:7,4:15})@5"],
    "NERR10": ["NERR10(max_rel=4)", "NERR10(p=0.8,max_rel=4)"],
    "NERR11": ["NERR11(max_rel=4)", "NERR11(T=3.0,max_rel=4)"],
    "NERR8": ["NERR8(max_rel=4)@10"], "NERR9": ["NERR9(max_rel=4)@10"],
    "NumQ": ["NumQ"], "NumRel": ["NumRel"], "NumRelRet": ["NumRelRet"],
    "NumRet": ["NumRet", "NumRet(rel=2)"],
    "P": ["P@5", "P(rel=2)@10", "P(judged_only=True)@10"], "Precision": ["Precision@3"],
    "R": ["R@100", "R@10"], "Recall": ["Recall@20"],
    "RBP": ["RBP(rel=1)", "RBP(p=0.5,rel=2)"],
    "RPrec": ["RPrec"], "Rprec": ["Rprec(rel=2)"],
    "SDCG": ["SDCG(max_rel=4)@10"],
    "SetAP": ["SetAP"], "SetF": ["SetF", "SetF(beta=0.5)"], "SetP": ["SetP", "SetP(rel=2)"],
    "SetR": ["SetR"], "SetRelP": ["SetRelP"],
    "Success": ["Success@1", "Success(rel=2)@5"],
    "infAP": ["infAP", "infAP(rel=2)"],
}
INTENT_AWARE = {
    "AP_IA": ["AP_IA"], "MAP_IA": ["MAP_IA"],
    "ERR_IA": ["ERR_IA@10", "ERR_IA@20"], "nERR_IA": ["nERR_IA@10", "nERR_IA@20"],
    "NRBP": ["NRBP", "NRBP(alpha=0.3,beta=0.8)"], "nNRBP": ["nNRBP"],
    "P_IA": ["P_IA@10", "P_IA@5"], "StRecall": ["StRecall@10", "StRecall@20"],
    "alpha_DCG": ["alpha_DCG@10"], "α_DCG": ["α_DCG@5"],
    "alpha_nDCG": ["alpha_nDCG@10", "alpha_nDCG(alpha=0.8)@20"], "α_nDCG": ["α_nDCG@5"],
}


def asked_as(names):
    """What trecqr is asked for: a name that is also trec_eval's (infAP) keeps trec_eval's
    meaning as a string, so ir_measures' is asked for with the measure object."""
    return [ir_measures.parse_measure(n) if n.partition(".")[0] in _TREC_NAMES else n
            for n in names]


def _needs_cwl():
    pytest.importorskip("cwl", reason="the oracle is ir_measures' cwl_eval provider "
                        "(pip install cwl-eval)")
    assert ir_measures.cwl_eval.is_available()


def _needs_perl():
    if shutil.which("perl") is None:
        pytest.skip("gdeval.pl needs perl")


# family -> (names, topics renumbered for the oracle (gdeval.pl takes digits only), a skip)
CUT_FAMILIES = {
    "cwl_eval": (["BPM(max_rel=4)@10", "BPM(T=2.0,min_rel=1,max_rel=3)@20", "INST(max_rel=4)",
                  "INST(T=2.5,max_rel=4)", "INSQ(max_rel=4)", "INSQ(T=3.0,max_rel=2)",
                  "SDCG(max_rel=4)@10", "SDCG(max_rel=4)@3", "NERR8(max_rel=4)@10",
                  "NERR9(max_rel=4)@5", "NERR10(max_rel=4)", "NERR10(p=0.5,max_rel=3)",
                  "NERR11(max_rel=4)", "NERR11(T=2.0,max_rel=4)", "RBP(rel=1)",
                  "RBP(p=0.95,rel=3)"], False, _needs_cwl),
    "gdeval": (["ERR@10", "ERR@1", "ERR@1000", "nDCG(dcg='exp-log2')@10",
                "nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@100"], True, _needs_perl),
    "Compat": (["Compat", "Compat(p=0.8)", "Compat(p=0.5,normalize=False)"], False, None),
    "Accuracy": (["Accuracy", "Accuracy(rel=2)"], False, None),
}
ACCURACY = ["Accuracy", "Accuracy@10", "Accuracy(rel=2)", "Accuracy(rel=3)@20"]
GENERATED_FAMILIES = ["BPM(max_rel=3)@5", "INST(max_rel=3)", "INSQ(max_rel=2)",
                      "SDCG(max_rel=3)@5", "NERR8(max_rel=3)@4", "NERR9(max_rel=3)@4",
                      "NERR10(max_rel=3)", "NERR11(max_rel=3)", "RBP(rel=1)", "RBP(p=0.5,rel=2)",
                      "ERR@5", "ERR@50", "nDCG(dcg='exp-log2')@5", "Compat",
                      "Compat(p=0.7,normalize=False)"]


def cut_case(run_name: str, ties: bool, folder):
    """(qrels path, run path): real lines of CAsT 2021's qrels and a document run, cut to the
    run's first 45 topics plus two judged turns the cut run lacks (ir_measures counts them 0),
    so that the providers' pure-Python loops stay fast. With ties: coarse scores
    (floor(score / 7)) and each topic's lines reversed, so the providers' tie orders are
    exercised: input order (cwl_eval, accuracy), docno ascending (compat), descending (gdeval)."""
    run_lines = data_path("cast2021", run_name).read_text().splitlines()
    qrels_lines = data_path("cast2021", "qrels-docs.2021.qrel").read_text().splitlines()
    run_topics = list(dict.fromkeys(line.split()[0] for line in run_lines))
    keep = set(run_topics[:45])
    judged = list(dict.fromkeys(line.split()[0] for line in qrels_lines))
    absent = [t for t in judged if t not in keep][-2:]
    run_out = [line for line in run_lines if line.split()[0] in keep]
    if ties:
        by_topic: dict = {}
        for line in run_out:
            f = line.split()
            f[4] = str(math.floor(float(f[4]) / 7))
            by_topic.setdefault(f[0], []).append(" ".join(f))
        run_out = [line for lines in by_topic.values() for line in reversed(lines)]
    qrels_out = [line for line in qrels_lines if line.split()[0] in keep | set(absent)]
    q, r = folder / "qrels.txt", folder / ("ties.run" if ties else "cut.run")
    q.write_text("\n".join(qrels_out) + "\n")
    r.write_text("\n".join(run_out) + "\n")
    return q, r
