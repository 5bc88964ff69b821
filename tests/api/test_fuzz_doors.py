"""Odd values through the Python doors at random: a fast slice of benchmarks/fuzz_api.py.

Every case must end in values, or in trecqr's own error naming the value (pytrec_eval's
TypeError and ValueError for its drop-in); and ``evaluate`` on dicts must give the values that
each measure gives alone and that the same data gives as DataFrames. The full campaign (tens
of thousands of cases, docs/robustness.md) runs outside the suite; this slice has its own seed.
"""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import fuzz_api  # noqa: E402


def test_fuzz_slice_of_the_python_doors_is_clean(capsys):
    assert fuzz_api.main(["--cases", "400", "--seed", "20261204"]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out.strip().endswith("400 cases (seed 20261204); 0 unclean")
