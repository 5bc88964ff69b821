"""``python -m trecqr``: the console script ``trecqr``, with its signal and error guards."""

from .launch import entry

entry()
