"""Every measure name trecqr takes, with its family and a one-line description: what
``trecqr measures`` and ``trecqr eval -m help`` print (trec_eval lists its measures with -h).

Built from the declarations themselves, so the list cannot drift from what is computed:

* trec_eval's measures: the measure table of the chosen version (:mod:`.table`, output order),
  each measure's own ``explanation`` and the module that computes it (its family, ``FAMILY``);
* trec_eval's nicknames (``official``, ``all_trec``...): the measures they stand for;
* ir_measures' names: its registry (``ir_measures.measures.registry``), the first sentence of
  each measure's documentation, and as family the ir_measures provider whose values trecqr
  reproduces (pytrec_eval, judged, msmarco, and the families declared in :mod:`.irm_native`).
"""

from __future__ import annotations

import difflib
import importlib
import re
from dataclasses import dataclass

from trecqr.measures.base import REGISTRY, LongCutoffs
from trecqr.measures.table import FAMILY, MODULE_OF, NICKNAMES, TABLE

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
    from trecqr.measures.irm_native import NATIVE  # its families import ir_measures

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


# The same measure under its ir_measures name, trec_eval's name at full depth and trec_eval's
# name with a cutoff (None: that side has none), and the other spellings users type for it:
# the nearest names an unknown measure is offered (:func:`nearest_names`).
_SAME_MEASURE = (
    ("AP", "map", "map_cut", ("MAP",)),
    ("RR", "recip_rank", None, ("MRR",)),
    ("nDCG", "ndcg", "ndcg_cut", ("NDCG",)),
    ("P", None, "P", ("Precision",)),
    ("R", None, "recall", ("Recall",)),
    ("Success", None, "success", ("hit_rate",)),  # ranx's hit_rate@k
    ("Rprec", "Rprec", None, ("RPrec", "r-precision")),  # ranx's r-precision
    ("Bpref", "bpref", None, ("BPref",)),
    ("infAP", "infAP", None, ()),
    ("NumQ", "num_q", None, ()),
    ("NumRet", "num_ret", None, ()),
    ("NumRel", "num_rel", None, ()),
    ("NumRelRet", "num_rel_ret", None, ()),
    ("SetP", "set_P", None, ()),
    ("SetR", "set_recall", None, ()),
    ("SetAP", "set_map", None, ()),
    ("SetF", "set_F", None, ()),
)
_CUTOFF_FORM = re.compile(r"^(.+?)[@._](\d+)$", re.ASCII)  # ndcg@3, ndcg_cut_3, p.5


def _same_measure(base: str):
    low = base.lower()
    for row in _SAME_MEASURE:
        irm, full, cut, others = row
        if low in {n.lower() for n in (irm, full, cut, *others) if n}:
            return row
    return None


def _spellings(base: str, k: str | None, rest: str, trec: set, lower: dict) -> list:
    """The names of measure ``base`` (any case) with cutoff ``k`` or ir_measures parameters
    ``rest``, in both spellings: ``ndcg``, 3 -> ``nDCG@3``, ``ndcg_cut.3``."""
    out = []
    row = _same_measure(base)
    if row is not None:
        irm, full, cut, _ = row
        if k is not None:
            out += [f"{irm}@{k}"] + ([f"{cut}.{k}"] if cut else [full])
        else:
            out += [_irm_form(irm, rest)] + ([] if rest else [full or f"{cut}.10"])
    for n in lower.get(base.lower(), []):
        if n in trec:  # a trec_eval name in its value's spelling (map_cut_10, relative_P_5)
            if k is not None and isinstance(REGISTRY[n].params, LongCutoffs):
                out.append(f"{n}.{k}")
            elif k is None and not rest:
                out.append(n)
        elif k is not None:
            out.append(f"{n}@{k}")
        else:
            out.append(_irm_form(n, rest))
    return out


def _irm_form(name: str, rest: str) -> str:
    """An ir_measures name with its parameters ``rest``, and ``@10`` where it needs a cutoff
    (``P`` alone is not a measure)."""
    if "@" in rest:
        return name + rest
    try:
        import ir_measures

        info = ir_measures.measures.registry[name].SUPPORTED_PARAMS.get("cutoff")
    except (ImportError, KeyError):
        info = None
    return name + rest + ("@10" if info is not None and info.required else "")


def nearest_names(name: str, compat: str = "10.0") -> list:
    """Up to three measure names close to ``name``, which no table knows: the same measure in
    the other spelling (``ndcg@3`` -> ``nDCG@3``, ``ndcg_cut.3``; ``ndcg_cut_3`` -> the
    parameter form ``ndcg_cut.3``; ``mrr`` -> ``MRR``, ``recip_rank``), names that differ in
    case only, else difflib's close matches of the name's base."""
    trec = {r.name for r in trec_eval_measures(compat) if r.kind == "trec_eval"}
    lower = {}
    for n in sorted({r.name for r in trec_eval_measures(compat)} | set(_irm_registry_names())):
        lower.setdefault(n.lower(), []).append(n)
    out = [n if n in trec else _irm_form(n, "") for n in lower.get(name.lower(), [])]
    head = re.match(r"[^(@]*", name).group()
    cutoff = _CUTOFF_FORM.match(head + name[len(head):].rpartition(")")[2])
    if cutoff and "(" not in name:
        base, k, rest = cutoff.group(1), cutoff.group(2), ""
    else:
        base, k, rest = head, None, name[len(head):]
        if rest.startswith("@"):  # a cutoff that is not digits: leave it as written
            base, rest = head, rest
    out += _spellings(base, k, rest, trec, lower)
    if not out:
        for close in difflib.get_close_matches(base.lower(), list(lower), n=3, cutoff=0.75):
            out += _spellings(close, k, rest, trec, lower)
    seen = set()
    return [n for n in out if n != name and not (n in seen or seen.add(n))][:3]


def _irm_registry_names() -> list:
    try:
        import ir_measures
    except ImportError:  # pragma: no cover - a dependency
        return []
    return list(ir_measures.measures.registry)


def unknown_measure_message(name: str, compat: str = "10.0") -> str:
    """``unknown measure 'mrr'``, the nearest names, and where the list of names is."""
    near = nearest_names(name, compat)
    hint = ""
    if near:
        hint = "; did you mean " + " or ".join(repr(n) for n in near) + "?"
    return f"unknown measure {name!r}{hint} (trecqr measures lists every name)"
