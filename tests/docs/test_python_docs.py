"""docs/python.md documents the whole public Python API: every name of ``trecqr.__all__`` has a
row in its table of public names, and the table names nothing that is not public. (Its examples
run in tests/docs/test_docs.py.)"""

from __future__ import annotations

import re

import trecqr
from conftest import ROOT

DOC = ROOT / "docs" / "python.md"


def table_names() -> set:
    """The names in the first column of the "Every public name" table."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Every public name", 1)[1].split("\n## ", 1)[0]
    names = set()
    for line in section.splitlines():
        cells = line.split("|")
        if line.startswith("| `") and len(cells) > 2:
            names.update(re.findall(r"`(\w+)`", cells[1]))
    return names


def test_every_public_name_has_its_row():
    listed = table_names()
    assert sorted(set(trecqr.__all__) - listed) == [], "public names missing from docs/python.md"
    assert sorted(listed - set(trecqr.__all__)) == [], "docs/python.md lists names not public"


def test_every_public_name_appears_in_the_text_too():
    """Each name is also used or described outside the table (an example or a sentence)."""
    text = DOC.read_text(encoding="utf-8").split("## Every public name", 1)[0]
    missing = [n for n in trecqr.__all__ if not re.search(rf"\b{n}\b", text)]
    assert missing == []
