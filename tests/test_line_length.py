"""Every line of the Python sources (trecqr/, tests/, benchmarks/) fits the width setup.cfg
gives flake8 (``max-line-length``): a reader sees each line whole, side by side with another file.
"""

from __future__ import annotations

import configparser

from conftest import ROOT


def max_line_length() -> int:
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    return config.getint("flake8", "max-line-length")


def long_lines(paths, limit: int) -> list:
    """``path:line: N characters`` of every line of paths longer than limit."""
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > limit:
                found.append(f"{path.relative_to(ROOT)}:{number}: {len(line)} characters")
    return found


def test_every_source_line_fits_the_width_setup_cfg_gives():
    limit = max_line_length()
    assert limit == 100
    paths = sorted(p for folder in ("trecqr", "tests", "benchmarks")
                   for p in (ROOT / folder).rglob("*.py"))
    assert len(paths) > 300
    assert long_lines(paths, limit) == []


def test_the_check_sees_a_long_line():
    path = ROOT / "tests" / "test_line_length.py"  # this file: every line fits
    assert long_lines([path], 100) == []
    assert long_lines([path], 20)[0].startswith("tests/test_line_length.py:1: ")
