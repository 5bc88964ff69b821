"""``python -m trecqr.cli``: the console script, through the same guards."""

from trecqr.runtime.launch import entry

entry()
