"""Oracles the tests compare trecqr with (not part of the package)."""
