"""trec_eval's ``-q -c -m all_trec`` on the five TREC CAsT 2021 document runs, byte for byte.

Expected files: tests/expected/cast2021/ (provenance in its README), produced by trec_eval 9.0.8
and 10.0 on ../shared/data/cast2021/. CAsT qrels judge 158 of the 239 turns the runs answer,
with grades 0-4, so these runs exercise graded measures, -c and turn ids like ``106_1``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from conftest import data_path, run_cli

EXPECTED = Path(__file__).parents[1] / "expected" / "cast2021"
RUNS = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
        "org_manual_bm25"]


@pytest.mark.parametrize("compat,tag", [("9.0.8", "908"), ("10.0", "10")])
@pytest.mark.parametrize("name", RUNS)
def test_all_trec_qc(name, compat, tag):
    folder = data_path("cast2021")
    result = run_cli(["eval", "--quiet", "--compat", compat, "-q", "-c", "-m", "all_trec",
                      "qrels-docs.2021.qrel", f"docrun_{name}.run"], cwd=folder)
    assert result.exit_code == 0, result.stderr
    expected = gzip.decompress((EXPECTED / f"docrun_{name}.{tag}.txt.gz").read_bytes()).decode()
    assert result.stdout == expected
