"""ir_measures measures that trec_eval lacks, computed natively: where their declarations are.

Each family declares its ir_measures names next to its kernel (``@irm_native`` of
:mod:`.base`): cwl_eval's (:mod:`.cwl`), gdeval's (:mod:`.gdeval`), Compat (:mod:`.rbo_compat`),
Accuracy (:mod:`.accuracy`) and ndeval's intent-aware family (:mod:`.diversity`, from diversity
qrels). Importing this module imports those families (they import ir_measures, so only a call
that reads an ir_measures name imports this module); names absent here and outside the
pytrec_eval, judged and msmarco providers are refused as unsupported.
"""

from __future__ import annotations

# imported for their @irm_native declarations
from trecqr.measures import accuracy, cwl, diversity, gdeval, rbo_compat  # noqa: F401
from trecqr.measures.base import IRM_NATIVE as NATIVE
from trecqr.measures.base import Native


def native(measure) -> Native | None:
    """The declaration of an ir_measures measure object, if trecqr computes it natively."""
    return NATIVE.get(measure.NAME)
