"""Every command and group answers ``-h`` (and ``--help``), and every option and argument-free
flag explains itself: a new user's first two questions."""

from __future__ import annotations

import click
import pytest

from conftest import run_cli


def command_paths():
    """Every command path of ``trecqr``, groups included, walked through click itself (the lazy
    groups load their subcommands), so a new command is covered without touching this test."""
    from trecqr.cli import main

    paths = []

    def walk(cmd, path):
        paths.append((path, cmd))
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name])

    walk(main, [])
    return paths


PATHS = command_paths()


def test_the_walk_finds_every_command():
    names = {" ".join(p) for p, _ in PATHS}
    assert {"", "eval", "convert", "convert topics", "convert sessions", "index", "search", "cqr",
            "gen", "suggest", "compare", "breakdown", "plot", "plot depth", "diff",
            "collapse"} <= names


@pytest.mark.parametrize("path", [p for p, _ in PATHS], ids=lambda p: " ".join(p) or "trecqr")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help_flag(path, flag):
    result = run_cli([*path, flag])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Usage: main {' '.join(path)}".rstrip() + " ")
    assert "Options:" in result.stdout


def test_every_option_has_help():
    missing = [f"trecqr {' '.join(path)} {param.opts[0]}"
               for path, cmd in PATHS for param in cmd.params
               if isinstance(param, click.Option) and not param.hidden
               and not (param.help or "").strip()]
    assert missing == []


def test_no_option_help_shows_an_unbounded_range():
    """click describes a range type with no bound as ``[x<=None]`` (-M, --timeout): the help
    says nothing of a range there."""
    shown = [f"trecqr {' '.join(path)}" for path, _ in PATHS
             if "None]" in run_cli([*path, "--help"]).stdout]
    assert shown == []


def test_every_command_declares_its_help_options():
    """Declared, not inherited: click caches a command's help option the first time it is used,
    so a command run on its own first (a test, an embedding program) would lose an inherited -h."""
    assert [" ".join(p) for p, cmd in PATHS
            if "-h" not in cmd.context_settings.get("help_option_names", [])] == []
