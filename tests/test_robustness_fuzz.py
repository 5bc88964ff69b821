"""A fast slice of the fuzz campaign (benchmarks/fuzz.py): 200 cases over every subcommand (15).

The full campaign (>= 4,000 cases, docs/robustness.md) runs outside the suite; this slice, with
its own seed, keeps the suite honest in under two minutes: every case must be clean (exit 0 or
2, one stderr line on error, no traceback or internal error, nothing left behind, no hang).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import DATA, ROOT


def test_fuzz_slice_is_clean(tmp_path):
    report = tmp_path / "report.json"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fuzz.py"), "--cases", "200",
                          "--seed", "20261201", "--jobs", "2", "--timeout", "60", "--fast",
                          "--report", str(report)], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, TRECQR_SHARED_DATA=str(DATA)))  # as the tests found it
    data = json.loads(report.read_text())
    assert sum(row["cases"] for row in data["table"].values()) == 200
    assert len(data["table"]) == 15, sorted(data["table"])  # every subcommand had cases
    unclean = [(u["sub"], u["changes"], u["flags"], u["stderr"][-300:]) for u in data["unclean"]]
    assert unclean == [], res.stdout
    assert res.returncode == 0
