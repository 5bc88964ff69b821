"""Evaluation protocols: how each paper or track scores a run, kept as data with its source.

* :mod:`.presets`: the protocols and presets (depth, relevance threshold, measures, ``-c``) that
  ``--preset`` and ``--protocol`` name, and their evaluation; :mod:`.papers`: the CQR papers'
  settings read from their own code; :mod:`.query_settings`: their query cuts and dense
  encoding lengths; :mod:`.turn_policy`: which turns count;
* :mod:`.scai`: SCAI-QReCC-21's evaluator step by step; :mod:`.official_eval`: the datasets'
  own evaluators, which judge passages by their text.

Apart from :mod:`trecqr.datasets` (which reads files) because a protocol is a choice of how to
score, not a file shape; floor 7 (``tests/test_layers.py``).
"""
