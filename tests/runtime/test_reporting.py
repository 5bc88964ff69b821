"""The reporter interface (trecqr/runtime/progress.py): libraries send their progress bars and info
lines there; Python callers see today's behaviour by default and can silence or capture it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from trecqr.runtime import progress as reporting
from trecqr.retrieval.bm25 import build_index

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo" / "collection.jsonl"


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_info_lines_go_to_stderr_by_default_and_can_be_captured_or_silenced(capsys):
    reporting.info("lucene: Starting to index")
    assert capsys.readouterr().err == "lucene: Starting to index\n"
    with reporting.captured() as lines:
        reporting.info("one")
        reporting.info("two")
    assert lines == ["one", "two"] and capsys.readouterr().err == ""
    with reporting.silenced():
        reporting.info("nothing")
    assert capsys.readouterr().err == ""
    reporting.info("back")  # the default reporter is back after each block
    assert capsys.readouterr().err == "back\n"


def test_progress_off_is_the_iterable_itself():
    items = [1, 2, 3]
    assert reporting.progress(items, False, desc="x") is items
    with reporting.silenced():
        assert reporting.progress(items, True, desc="x") is items
        with reporting.progress_bar(True, total=3) as bar:
            bar.update(2)
        assert bar.n == 2


def test_a_library_bar_shows_on_a_terminal_unless_silenced(tmp_path, monkeypatch):
    pytest.importorskip("tqdm")
    pytest.importorskip("bm25s")
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    build_index(DEMO, tmp_path / "a", threads=1)
    assert "tokenising" in term.getvalue() and "996" in term.getvalue()
    term.seek(0)
    term.truncate()
    with reporting.silenced():
        build_index(DEMO, tmp_path / "b", threads=1)
    assert term.getvalue() == ""
