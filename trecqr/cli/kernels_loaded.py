"""Which of trecqr's C kernels this process loaded, and from which file.

The kernels are built into every wheel and required by a build from source (pyproject.toml), but
a copy of the package without them (a source tree never built, a wheel for another Python) fails
at the first command that needs one, and there is no slower Python path to fall back to. This module
imports each kernel the way its caller does, so that ``trecqr kernels`` (and a release's wheel
test, docs/install.md) can show what runs, and a missing one by name with its import error.
"""

from __future__ import annotations

from dataclasses import dataclass

try:
    from trecqr.formats import _scan
except ImportError as exc:  # the caller (formats/run.py) falls back to the Arrow readers
    _scan = exc
try:
    from trecqr.rankings import _dicts
except ImportError as exc:  # the caller (measures/core_rankings.py) falls back to columns
    _dicts = exc
try:
    from trecqr.rankings import _columns
except ImportError as exc:  # the caller (rankings/trec_order.py) needs it: ranking fails
    _columns = exc
try:
    from trecqr.fusion import _pool
except ImportError as exc:  # the caller (fusion/pool.py) falls back to numpy
    _pool = exc

# name, and the module or its ImportError
_IMPORTED = (
    ("trecqr.formats._scan", _scan),    # the run-file scanner
    ("trecqr.rankings._dicts", _dicts),  # pytrec_eval dicts ranked and scored in one pass
    ("trecqr.rankings._columns", _columns),  # run columns ranked in one pass
    ("trecqr.fusion._pool", _pool),     # fusion's candidates, one hash table per topic
)
NAME_WIDTH = max(len(name) for name, _ in _IMPORTED)


@dataclass(frozen=True)
class Kernel:
    """One C kernel: its module name, and the file it was loaded from (or why it could not be
    imported)."""

    name: str
    path: str | None
    error: str | None

    @property
    def loaded(self) -> bool:
        return self.path is not None

    def line(self) -> str:
        """``NAME  loaded   FILE`` or ``NAME  missing  IMPORT ERROR``, the name padded to one
        width so that the lines align."""
        state, where = ("loaded", self.path) if self.loaded else ("missing", self.error)
        return f"{self.name:<{NAME_WIDTH}}  {state:<7}  {where}"


def loaded_kernels() -> list:
    """The C kernels, in a fixed order, each loaded (with its file) or missing (with why)."""
    out = []
    for name, module in _IMPORTED:
        if isinstance(module, ImportError):
            out.append(Kernel(name, None, " ".join(str(module).split())))
        else:
            out.append(Kernel(name, module.__file__, None))
    return out


def missing_kernels_line(kernels) -> str | None:
    """None when every kernel is loaded, else one line naming the missing ones and the cure."""
    missing = [k.name for k in kernels if not k.loaded]
    if not missing:
        return None
    return (f"trecqr: {len(missing)} of {len(kernels)} C kernels missing ({', '.join(missing)}); "
            f"trecqr cannot score without them: reinstall trecqr from a wheel, or from "
            f"source with a C compiler (pip install --force-reinstall trecqr)")
