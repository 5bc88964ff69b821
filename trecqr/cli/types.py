"""Click parameter types shared by the commands.

:class:`FiniteFloat` is click's FloatRange that also refuses ``nan`` and ``inf`` (FloatRange
lets NaN through every bound, since NaN compares false with everything), so a numeric option
is checked, with click's one usage line, before any work.
"""

from __future__ import annotations

import math

import click


class FiniteFloat(click.FloatRange):
    name = "finite float range"

    def convert(self, value, param, ctx):
        rv = super().convert(value, param, ctx)
        if rv is not None and not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return rv
