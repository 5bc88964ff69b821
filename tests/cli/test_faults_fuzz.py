"""Faults of every kind at random: a fast slice of the fuzz campaign (benchmarks/fuzz.py, the
package benchmarks/fuzzing/).

The full campaign (>= 4,000 cases, README and docs/robustness.md) runs outside the suite; this
slice, with its own seed, keeps the suite honest in about half a minute: every case must be
clean (exit 0 or 2, one stderr line on error, no traceback or internal error, nothing left
behind, no hang, no empty output with exit 0). The campaign's coverage is checked without
running it: every command of ``trecqr --help`` has a valid template, and the option picker
gives every option of every command a case.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from conftest import DATA, ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

from fuzzing.cases import TEMPLATES  # noqa: E402
from fuzzing.cli import static_gaps  # noqa: E402
from fuzzing.options import OptionPicker, flags, uncovered  # noqa: E402


def test_fuzz_slice_is_clean(tmp_path):
    report = tmp_path / "report.json"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "fuzz.py"), "--cases", "24",
                          "--seed", "20261203", "--jobs", "2", "--timeout", "60", "--fast",
                          "--report", str(report)], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, TRECQR_SHARED_DATA=str(DATA)))  # the tests' data
    data = json.loads(report.read_text())
    assert sum(row["cases"] for row in data["table"].values()) == 24
    unclean = [(u["sub"], u["changes"], u["flags"], u["stderr"][-300:]) for u in data["unclean"]]
    assert unclean == [], res.stdout
    assert res.returncode == 0


def test_every_command_has_a_template():
    """Each command path of ``trecqr --help`` (``convert cast``, ``plot dist``, ...) has at
    least one valid command the campaign starts from."""
    assert static_gaps() == []
    assert {t[0].split()[0] for t in TEMPLATES} >= {"fuse", "report", "measures", "validate"}


def test_the_picker_gives_every_option_a_case():
    """Picking the least-used option of a command, every option of every command is held by
    a case within as many cases as the command has options."""
    picker = OptionPicker()
    assert sum(len(o) for o in picker.table.values()) > 300
    rng = random.Random(0)
    for path, options in picker.table.items():
        for _ in options:
            picker.seen(path, [rng.choice(flags(picker.pick(rng, path)))])
    assert uncovered(picker.used, picker.table) == []
