"""The Python API: ``evaluate`` and its ``Results`` (with their notebook views), ``evaluate_many``,
the pytrec_eval drop-in (``RelevanceEvaluator``) and the ir_measures provider.

The public names are exported by the package root (``trecqr.evaluate``,
``trecqr.RelevanceEvaluator``, ``trecqr.register_ir_measures``...); this package holds them,
one door per module.
"""
