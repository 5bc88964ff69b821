"""Evaluation protocols: presets, the CQR papers' settings, query settings, turn policies,
SCAI-QReCC-21's and the official evaluators."""
