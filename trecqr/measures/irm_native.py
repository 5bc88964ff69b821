"""ir_measures measures that trec_eval lacks, computed natively: one table, one signature.

Like trec_eval's ``measures.c`` table, ``NATIVE`` maps an ir_measures measure NAME to the
module and function that computes it, and the ir_measures provider whose values that function
reproduces (named in the output and the docs). Every function has the same signature::

    compute(run: Run, qrels, topics: list[str], measure) -> np.ndarray

* ``run``: a :class:`trecqr.formats.Run`; ``qrels``: a :class:`trecqr.formats.Qrels` (or the
  diversity qrels for the intent-aware family, ``qrels_kind == "diversity"``);
* ``topics``: the topics to return values for, in the order wanted (the run's topics that have
  judgments; ir_measures adds the measure's DEFAULT for qrels topics absent from the run);
* ``measure``: the parsed ir_measures measure object (read its parameters with ``measure[p]``);
* returns float64 values aligned with ``topics``, equal to what the provider yields for them.

Aggregation (ir_measures' ``MeanAgg``/``SumAgg`` over the qrels topics) is done by the caller,
:mod:`trecqr.engine.names`, for every family alike.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Native:
    """Where a native ir_measures measure is computed, and which provider it reproduces."""

    target: str            # "module:function", module relative to trecqr.measures
    provider: str          # the ir_measures provider whose values it equals
    qrels_kind: str = "qrels"  # "qrels" (topic, docno, grade) or "diversity" (with subtopic)
    # False where the provider yields values only for some topics and no DEFAULT for the rest
    # (it overrides Evaluator.iter_calc): NaN marks a topic without a value, and the mean is
    # taken over the topics that have one
    defaults: bool = True

    def function(self):
        module, func = self.target.split(":")
        return getattr(importlib.import_module(f"{__package__}.{module}"), func)


# NAME -> Native. Families fill their rows in; names absent here and outside the trec_eval
# families (pytrec_eval, judged, msmarco providers) are refused as unsupported.
NATIVE: dict = {
    # cwl_eval family (cwl.py): one C/W/L kernel per measure; RBP only as RBP(rel=r), no @k
    "BPM": Native("cwl:cwl_measure", "cwl_eval"),
    "INST": Native("cwl:cwl_measure", "cwl_eval"),
    "INSQ": Native("cwl:cwl_measure", "cwl_eval"),
    "SDCG": Native("cwl:cwl_measure", "cwl_eval"),
    "NERR8": Native("cwl:cwl_measure", "cwl_eval"),
    "NERR9": Native("cwl:cwl_measure", "cwl_eval"),
    "NERR10": Native("cwl:cwl_measure", "cwl_eval"),
    "NERR11": Native("cwl:cwl_measure", "cwl_eval"),
    "RBP": Native("cwl:cwl_measure", "cwl_eval"),
    # gdeval.pl (gdeval.py): ERR@k; nDCG only as nDCG(dcg='exp-log2')@k (log2 is pytrec_eval's)
    "ERR": Native("gdeval:err", "gdeval"),
    "nDCG": Native("gdeval:ndcg_exp_log2", "gdeval"),
    "Compat": Native("rbo_compat:compat", "compat"),
    # NaN = no value from the provider (it overrides iter_calc: no default); mean over the rest
    "Accuracy": Native("accuracy:accuracy", "accuracy", defaults=False),
    # ndeval's intent-aware family (diversity.py), from diversity qrels (topic subtopic docno
    # grade); aliases α_nDCG, α_DCG, MAP_IA parse to these names
    "alpha_nDCG": Native("diversity:alpha_ndcg", "pyndeval", "diversity"),
    "alpha_DCG": Native("diversity:alpha_dcg", "pyndeval", "diversity"),
    "ERR_IA": Native("diversity:err_ia", "pyndeval", "diversity"),
    "nERR_IA": Native("diversity:nerr_ia", "pyndeval", "diversity"),
    "NRBP": Native("diversity:nrbp", "pyndeval", "diversity"),
    "nNRBP": Native("diversity:nnrbp", "pyndeval", "diversity"),
    "P_IA": Native("diversity:p_ia", "pyndeval", "diversity"),
    "AP_IA": Native("diversity:ap_ia", "pyndeval", "diversity"),
    "StRecall": Native("diversity:st_recall", "pyndeval", "diversity"),
}


def native(measure) -> Native | None:
    """The table row for an ir_measures measure object, if trecqr computes it natively."""
    return NATIVE.get(measure.NAME)
