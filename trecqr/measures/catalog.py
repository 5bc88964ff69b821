"""Every measure name trecqr takes, with its family and a one-line description: what
``trecqr measures`` and ``trecqr eval -m help`` print (trec_eval lists its measures with -h).

Built from the declarations themselves, so the list cannot drift from what is computed:

* trec_eval's measures: the measure table of the chosen version (:mod:`.table`, output order),
  each measure's own ``explanation`` and the module that computes it (its family, ``FAMILY``);
* trec_eval's nicknames (``official``, ``all_trec``...): the measures they stand for;
* ir_measures' names: its registry (``ir_measures.measures.registry``), the first sentence of
  each measure's documentation, and as family the ir_measures provider whose values trecqr
  reproduces (pytrec_eval, judged, msmarco, and the native rows of :mod:`.irm_native`).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass

from .base import REGISTRY
from .irm_native import NATIVE
from .table import FAMILY, MODULE_OF, NICKNAMES, TABLE

_PROVIDERS = ("pytrec_eval", "judged", "msmarco")  # the families names.py maps to trec_eval's
_SENTENCE = re.compile(r"(.+?[.:;])(\s|$)", re.S)


@dataclass(frozen=True)
class MeasureInfo:
    """One name: ``kind`` is trec_eval, nickname or ir_measures."""

    name: str
    kind: str
    family: str
    description: str


def _first_sentence(text: str) -> str:
    text = " ".join((text or "").split())
    found = _SENTENCE.match(text)
    return (found.group(1) if found else text).rstrip(":;")


def trec_eval_measures(compat: str = "10.0") -> list:
    for module in sorted(set(MODULE_OF.values())):
        importlib.import_module(f"{__package__}.{module}")  # each family registers its own
    out = [MeasureInfo(n, "trec_eval", MODULE_OF[n], _first_sentence(REGISTRY[n].explanation))
           for n in TABLE[compat]]
    out += [MeasureInfo(n, "nickname", "trec_eval", f"{len(names)} measures: "
                        + ", ".join(names[:6]) + (", ..." if len(names) > 6 else ""))
            for n, names in NICKNAMES[compat].items()]
    return out


def _irm_families(ir_measures) -> dict:
    """{ir_measures measure NAME: the provider whose values trecqr gives}."""
    families = {}
    for provider in _PROVIDERS:
        for measure in ir_measures.providers.registry[provider].SUPPORTED_MEASURES:
            families.setdefault(measure.NAME, provider)
    for name, row in NATIVE.items():
        families.setdefault(name, row.provider)
    return families


def ir_measures_names() -> list:
    """ir_measures' registry names trecqr computes (none when ir_measures is missing)."""
    try:
        import ir_measures
    except ImportError:  # pragma: no cover - a dependency
        return []
    families = _irm_families(ir_measures)
    out = []
    for name, measure in sorted(ir_measures.measures.registry.items(),
                                key=lambda kv: kv[0].lower()):
        family = families.get(measure.NAME)
        if family is None:
            continue
        text = _first_sentence(type(measure).__doc__)
        if name != measure.NAME:
            text = f"alias of {measure.NAME}: {text}"
        out.append(MeasureInfo(name, "ir_measures", family, text))
    return out


def measure_catalog(compat: str = "10.0") -> list:
    """Every name: trec_eval's measures and nicknames (of trec_eval ``compat``), then
    ir_measures' names, as :class:`MeasureInfo` rows."""
    return trec_eval_measures(compat) + ir_measures_names()


def format_catalog(rows, width: int = 100) -> str:
    """The rows as text: a section per kind, ``name  family  description`` aligned, each
    description cut to fit ``width`` columns."""
    titles = {"trec_eval": "trec_eval measures (-m NAME, NAME.PARAMS; values per parameter)",
              "nickname": "trec_eval nicknames (-m NAME)",
              "ir_measures": "ir_measures names (-m 'NAME@k', 'NAME(param=value)@k')"}
    name_w = max((len(r.name) for r in rows), default=4)
    fam_w = max((len(r.family) for r in rows), default=6)
    lines, kind = [], None
    for r in rows:
        if r.kind != kind:
            kind = r.kind
            lines += ([""] if lines else []) + [titles.get(kind, kind)]
        room = max(20, width - name_w - fam_w - 6)
        text = r.description if len(r.description) <= room else r.description[:room - 3] + "..."
        lines.append(f"  {r.name:<{name_w}}  {r.family:<{fam_w}}  {text}".rstrip())
    return "\n".join(lines) + "\n"
