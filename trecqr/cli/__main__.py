"""``python -m trecqr.cli``: the console script, through the same guards."""

from ..launch import entry

entry()
