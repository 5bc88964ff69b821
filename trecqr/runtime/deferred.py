"""pyarrow and its parts, each loaded on its first use rather than when a module imports it.

Every module of trecqr takes pyarrow from here (``from trecqr.runtime.deferred import pa, pc``),
so that its header still says what it touches while a call that never reaches Arrow does not
pay for it: the pytrec_eval drop-in on dicts (the C pass reads them as they are), ``trecqr -h``,
and a small run on the command line, which needs pyarrow but none of ``pyarrow.compute``'s
kernel wrappers. Measured on the development machine: ``pyarrow`` about 30 ms, ``pyarrow.compute``
about 28 ms (it builds a Python function for each of Arrow's kernels), its CSV reader 5 ms,
Parquet 40 ms.

A handle is this package's own object, never an entry of ``sys.modules``: an importer's
process sees pyarrow exactly as it would without trecqr. On its first attribute read it imports
the module and copies the module's names into itself, so later reads are plain attribute
look-ups (no function call); a name the module gains later (a submodule imported afterwards)
is still found, through the module.
"""

from __future__ import annotations

import sys
import threading

_LOCK = threading.RLock()  # reentrant: an import hook run by the import may read a handle


class Deferred:
    """A module imported on the first read of one of its attributes."""

    def __init__(self, name: str):
        self.__dict__["_Deferred__name"] = name

    def __getattr__(self, attr: str):
        if attr.startswith("_Deferred__"):  # not loaded yet: nothing of ours is missing
            raise AttributeError(attr)
        with _LOCK:
            __import__(self.__name)  # the import statement's path: -X importtime names it
            module = sys.modules[self.__name]
            if "__name__" not in self.__dict__:
                self.__dict__.update(vars(module))
        return getattr(module, attr)

    def __repr__(self) -> str:
        loaded = "loaded" if "__name__" in self.__dict__ else "not loaded yet"
        return f"<deferred module {self.__name!r} ({loaded})>"


pa = Deferred("pyarrow")
pc = Deferred("pyarrow.compute")
pacsv = Deferred("pyarrow.csv")
parquet = Deferred("pyarrow.parquet")
feather = Deferred("pyarrow.feather")
pajson = Deferred("pyarrow.json")
