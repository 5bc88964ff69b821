"""Click parameter types shared by the commands.

:class:`OutputFile` and :class:`OutputFolder` mark the options a command writes to; before the
command's work, :func:`check_output_options` (called by :func:`trecqr.cli.lifecycle.run_guarded`)
refuses those that cannot be written, in the writer's words, so no work is lost to them.

:class:`RunTag` is a runid: one field of a TREC line. :class:`FiniteFloat` is click's
FloatRange that also refuses ``nan`` and ``inf`` (FloatRange
lets NaN through every bound, since NaN compares false with everything), so a numeric option
is checked, with click's one usage line, before any work.
"""

from __future__ import annotations

import math
import re

import click

from trecqr.runtime.output_paths import check_outputs


class _Described:
    """A range's help: click writes an unbounded one as ``[x<=None]``; it says nothing."""

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()


class FiniteFloat(_Described, click.FloatRange):
    name = "finite float range"

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if rv is not None and not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv


_C_DIGITS = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*", re.ASCII)


class CInteger(_Described, click.IntRange):
    """An integer option of trec_eval's (-l, -M, -N): ASCII digits only. Python's int reads
    ``٣`` as 3 and ``1_0`` as 10, where trec_eval's atol reads 0 and 1; rather than a number
    that differs from trec_eval's, the option is refused with click's one usage line."""

    name = "integer"

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not _C_DIGITS.fullmatch(value) and _python_int(value):
            self.fail(f"{value!r} is not an integer in ASCII digits (trec_eval's atol would "
                      "read only its leading ASCII digits, 0 if none).", param, ctx)
        return super().convert(value, param, ctx)


def _python_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


class RunTag(click.ParamType):
    """A runid option: one field of a TREC line, refused (click's usage line, before any
    work) when empty or holding white space or NUL, which would split or cut it when read:
    formats.writer.splits_field's rule, written again here because that module loads pyarrow,
    which `trecqr -h` does not."""

    name = "text"

    def convert(self, value, param, ctx):
        if not value or any(c in value for c in " \t\n\v\f\r\0"):
            self.fail(f"{value!r} cannot be one field of a TREC line (it is empty, or holds "
                      "white space or NUL).", param, ctx)
        return value


class OutputFile(click.ParamType):
    """A file the command writes (``-``: stdout); the value stays the string given."""

    name = "file"


class OutputFolder(click.ParamType):
    """A folder the command makes (with its parents) and writes into."""

    name = "folder"


def check_output_options(ctx) -> None:
    """Refuse the context's outputs that cannot be written, before the command's work."""
    files, folders = [], []
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if value is None or not isinstance(param.type, (OutputFile, OutputFolder)):
            continue
        (folders if isinstance(param.type, OutputFolder) else files).append(value)
    check_outputs(files, folders)
