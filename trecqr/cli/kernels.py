"""``trecqr kernels``: the C kernels this install loaded, and from which file (a wheel's test,
an install that looks slow); exit status 1 when one is missing, with one line that says which
and how to get it back."""

from __future__ import annotations

import sys

import click

from trecqr.cli.kernels_loaded import loaded_kernels, missing_kernels_line
from trecqr.cli.failures import echo_line
from trecqr.cli.options import CONTEXT


@click.command("kernels", context_settings=CONTEXT)
def command():
    """List trecqr's C kernels (run-file scanner, dicts ranker, fusion pool): each one loaded,
    with its file, or missing, with why. Exit status 1 when one is missing."""
    kernels = loaded_kernels()
    for kernel in kernels:
        click.echo(kernel.line())
    line = missing_kernels_line(kernels)
    if line is not None:
        echo_line(line)
        sys.exit(1)
