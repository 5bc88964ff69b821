"""Write docs/cli.md from the commands themselves: ``python3 docs/make_cli.py > docs/cli.md``.

tests/docs/test_docs.py checks that docs/cli.md is what this prints, so the reference cannot drift
from the code: after changing a command or an option, run the line above.
"""

from __future__ import annotations

import click

WIDTH = 100


def command_paths():
    """(path, command, context) for trecqr and every subcommand, depth first, names sorted."""
    from trecqr.cli import main

    out = []

    def walk(cmd, path, parent):
        ctx = click.Context(cmd, info_name=path[-1] if path else "trecqr", parent=parent,
                            terminal_width=WIDTH, max_content_width=WIDTH)
        out.append((path, cmd, ctx))
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name], ctx)

    walk(main, [], None)
    return out


def render() -> str:
    paths = command_paths()
    lines = ["# Command reference", "",
             "Generated from the commands' own help by `python3 docs/make_cli.py > docs/cli.md`;",
             "tests/docs/test_docs.py fails when it is out of date. Every command also answers `-h`.",
             "`trecqr measures` (or `trecqr eval -m help`) lists every measure name.", "",
             "Shell completion of commands, options and file names is click's: add",
             "`eval \"$(_TRECQR_COMPLETE=bash_source trecqr)\"` to `~/.bashrc`",
             "(`zsh_source` in `~/.zshrc`; `_TRECQR_COMPLETE=fish_source trecqr | source` in",
             "`~/.config/fish/completions/trecqr.fish`).", ""]
    for path, cmd, _ in paths:
        if path:
            anchor = "-".join(path)
            lines.append(f"- [`trecqr {' '.join(path)}`](#trecqr-{anchor})")
    for path, cmd, ctx in paths:
        lines += ["", f"## trecqr {' '.join(path)}".rstrip(), "", "```text",
                  cmd.get_help(ctx).rstrip(), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
