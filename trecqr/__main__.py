"""``python -m trecqr``: the console script ``trecqr``, with its signal and error guards."""

from trecqr.runtime.launch import entry

entry()
