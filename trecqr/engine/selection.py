"""Turning ``-m`` arguments into the measures to compute, exactly as trec_eval's mark_measure.

``-m name.params``: the text before the first ``.`` is a measure or nickname, the rest its
parameters; the first ``-m`` that gives parameters for a measure wins; no ``-m`` means
``official``. Measures are computed and printed in table order.
"""

from __future__ import annotations

from trecqr.errors import UsageError
from trecqr.measures import load_family
from trecqr.measures.base import REGISTRY, Measure, Params
from trecqr.measures.table import MODULE_OF, NICKNAMES, TABLE


def select(args: list[str] | tuple[str, ...],
           compat: str = "9.0.8") -> list[tuple[Measure, Params]]:
    """Measures (with parsed parameters) named by trec_eval-style ``-m`` arguments."""
    table = TABLE[compat]
    nick = NICKNAMES[compat]
    marked: set[str] = set()
    params: dict[str, str] = {}
    for arg in (args or ["official"]):
        name, dot, param = arg.partition(".")
        if dot:
            if param == "":
                raise UsageError(f"improper measure in parameter {arg!r}")
            params.setdefault(name, param)
        if name in nick:
            marked.update(nick[name])
        elif name in table:
            marked.add(name)
        else:
            if name in MODULE_OF:
                text = f"unknown measure {arg!r} (not in trec_eval {compat}; try "
                raise UsageError(text + "compat='10.0')", cli=text + "--compat 10.0)")
            from trecqr.measures.catalog import unknown_measure_message  # the error path only

            raise UsageError(unknown_measure_message(arg, compat))
    for name in marked:
        load_family(name)  # import only the families asked for
    out = []
    for name in table:
        if name in marked:
            m = REGISTRY[name]
            out.append((m, m.parse(params.get(name))))
    return out
