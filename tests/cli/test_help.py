"""``trecqr -h`` and ``trecqr convert -h`` list their commands from the command table of
trecqr/cli/__init__.py, without importing a command (together they loaded numpy, scipy and the
reports: about a second). The table's short help is each command's own, and the list is the one
click would print from the commands themselves, at any terminal width.
"""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from conftest import ROOT
from trecqr.cli import convert_group as convert, main


@pytest.mark.parametrize("group", [main, convert], ids=["trecqr", "convert"])
def test_each_listed_help_is_the_commands_own(group):
    ctx = click.Context(group)
    for name in group.lazy:
        real, listed = group.get_command(ctx, name), group.lazy_help(name)
        assert not real.hidden and real.name == name
        for limit in (10, 30, 45, 62, 80, 10 ** 6):
            assert listed.get_short_help_str(limit) == real.get_short_help_str(limit), name


@pytest.mark.parametrize("width", [40, 80, 132])
@pytest.mark.parametrize("group", [main, convert], ids=["trecqr", "convert"])
def test_the_list_is_what_click_prints_from_the_commands(group, width):
    ctx = click.Context(group, info_name=group.name, terminal_width=width)
    ours, clicks = ctx.make_formatter(), ctx.make_formatter()
    group.format_commands(ctx, ours)
    click.Group.format_commands(group, ctx, clicks)  # imports every command
    assert ours.getvalue() == clicks.getvalue() and "Commands:" in ours.getvalue()


@pytest.mark.parametrize("args", [["-h"], ["convert", "-h"]])
def test_help_imports_no_command(args):
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "trecqr", *args],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and "Commands:" in done.stdout, done.stderr[-500:]
    loaded = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")]
    assert "trecqr.cli" in loaded and "click" in loaded  # the check sees the imports
    heavy = ("numpy", "pyarrow", "scipy", "trecqr.cli.eval", "trecqr.cli.convert",
             "trecqr.cli.report")
    assert [m for m in loaded if m in heavy] == []
