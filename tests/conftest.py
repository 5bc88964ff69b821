"""Shared test helpers: where the real data lives, and running the CLI in-process."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

# ir_datasets makes folders under its home when imported: keep the tests out of ~/.ir_datasets
os.environ.setdefault("IR_DATASETS_HOME", tempfile.mkdtemp(prefix="trecqr-irds-"))

ROOT = Path(__file__).resolve().parent.parent
DATA = (ROOT / ".." / "shared" / "data").resolve()
TE = DATA / "trec_eval-test"


def data_path(*parts) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(f"test data missing: {path} (../shared/data must be present)")
    return path


def run_cli(args, cwd=None, input=None):
    """Run ``trecqr`` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from trecqr.cli import main

    runner = CliRunner()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        return runner.invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def cli():
    return run_cli
