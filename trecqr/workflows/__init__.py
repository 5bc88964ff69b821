"""End-to-end flows that join the layers below (datasets, protocols, retrieval, the API, the
report): :mod:`.cqr` searches and scores every rewrites input (``trecqr cqr``), its report in
:mod:`.cqr_report`, and :mod:`.cqr_candidates` the policies for several candidate rewrites per
turn. The top floor under :mod:`trecqr.cli` (floor 8, ``tests/test_layers.py``): nothing below
imports it.
"""
