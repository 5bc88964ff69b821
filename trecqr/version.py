"""trecqr's version, where every layer may read it (the pytrec_eval drop-in reports it as
pytrec_eval's ``__version__``, which ir_measures requires of a pytrec_eval module)."""

__version__ = "0.1.0"
