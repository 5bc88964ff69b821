"""``trecqr validate``: check a run file in an evaluation campaign's official format before
submitting or converting it (the organisers' own checks; see each subcommand)."""

from __future__ import annotations

import click


@click.group("validate", context_settings={"help_option_names": ["-h", "--help"]})
def command():
    """Check official run files (one line per problem, exit status 2 if any)."""


def _ikat():
    from .ikat import validate_command

    return validate_command


command.add_command(_ikat(), "ikat")
