"""The fusion algorithms by name: ranx's 25, their parameters, and which are trained.

trecqr's names are the usual ones in lower case (``combsum``, ``rrf``, ``wbordafuse``);
ranx's ``fuse(method=...)`` names (``sum``, ``mnz``, ``w_bordafuse``...) and underscored forms
(``comb_sum``) are aliases. Parameters have ranx's names and defaults (``k`` = 60 for RRF,
``sigma`` = 0.01 for logN_ISR); the others (weights, gamma, phi, ProbFuse's n_segments,
SlideFuse's w) have no default in ranx and none here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trecqr.fusion import comb
from trecqr.fusion import positional as P
from trecqr.fusion.condorcet import condorcet
from trecqr.fusion.pool import Pool


@dataclass(frozen=True)
class Method:
    name: str
    ranx: str  # ranx's name
    run: object  # (pool, params) -> fused scores
    params: tuple = ()  # required parameters
    defaults: dict = field(default_factory=dict)
    trained: tuple = ()  # what training gives (params it fills)
    train_params: tuple = ()  # parameters training needs


def _w(p):
    return p["weights"]


_TABLE = [
    Method("combmin", "min", lambda pool, p: comb.comb_min(pool)),
    Method("combmax", "max", lambda pool, p: comb.comb_max(pool)),
    Method("combmed", "med", lambda pool, p: comb.comb_med(pool)),
    Method("combsum", "sum", lambda pool, p: comb.comb_sum(pool)),
    Method("combanz", "anz", lambda pool, p: comb.comb_anz(pool)),
    Method("combmnz", "mnz", lambda pool, p: comb.comb_mnz(pool)),
    Method("combgmnz", "gmnz", lambda pool, p: comb.comb_gmnz(pool, float(p["gamma"])),
           ("gamma",)),
    Method("isr", "isr", lambda pool, p: comb.comb_mnz(P.isr(pool))),
    Method("log_isr", "log_isr", lambda pool, p: comb.log_mnz(P.isr(pool))),
    Method("logn_isr", "logn_isr",
           lambda pool, p: comb.logn_mnz(P.isr(pool), float(p["sigma"])), (),
           {"sigma": 0.01}),
    Method("rrf", "rrf", lambda pool, p: comb.comb_sum(P.rrf(pool, p["k"])), (), {"k": 60}),
    Method("rbc", "rbc", lambda pool, p: comb.comb_sum(P.rbc(pool, float(p["phi"]))),
           ("phi",)),
    Method("bordafuse", "bordafuse", lambda pool, p: comb.comb_sum(P.borda_points(pool))),
    Method("wbordafuse", "w_bordafuse",
           lambda pool, p: comb.wsum(P.borda_points(pool), _w(p)), ("weights",)),
    Method("condorcet", "condorcet", lambda pool, p: condorcet(pool)),
    Method("wcondorcet", "w_condorcet", lambda pool, p: condorcet(pool, _w(p)), ("weights",)),
    Method("wsum", "wsum", lambda pool, p: comb.wsum(pool, _w(p)), ("weights",)),
    Method("wmnz", "wmnz", lambda pool, p: comb.wmnz(pool, _w(p)), ("weights",)),
    Method("mixed", "mixed", lambda pool, p: comb.mixed(pool, _w(p)), ("weights",)),
    Method("posfuse", "posfuse", lambda pool, p: comb.comb_sum(P.posfuse(pool, p["probs"])),
           trained=("probs",)),
    Method("probfuse", "probfuse",
           lambda pool, p: comb.comb_sum(P.probfuse(pool, p["probs"])),
           trained=("probs",), train_params=("n_segments",)),
    Method("segfuse", "segfuse", lambda pool, p: comb.comb_sum(P.segfuse(pool, p["probs"])),
           trained=("probs",)),
    Method("slidefuse", "slidefuse",
           lambda pool, p: comb.comb_sum(P.slidefuse(pool, p["probs"], int(p["w"]))),
           ("w",), trained=("probs",)),
    Method("mapfuse", "mapfuse",
           lambda pool, p: comb.comb_sum(P.mapfuse(pool, p["map_scores"])),
           trained=("map_scores",)),
    Method("bayesfuse", "bayesfuse",
           lambda pool, p: comb.sum_odds(P.bayesfuse(pool, p["log_odds"])),
           trained=("log_odds",)),
]

METHODS = {m.name: m for m in _TABLE}
ALIASES = {m.ranx: m.name for m in _TABLE}
ALIASES.update({"comb_" + m.name[4:]: m.name for m in _TABLE if m.name.startswith("comb")})
ALIASES.update({"w_" + m.name[1:]: m.name for m in _TABLE if m.name in ("wbordafuse",
                                                                         "wcondorcet")})
ALIASES.update({"weighted_bordafuse": "wbordafuse", "weighted_condorcet": "wcondorcet",
                "weighted_sum": "wsum", "lognisr": "logn_isr", "logisr": "log_isr"})


def method(name: str) -> Method:
    key = str(name).lower().replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in METHODS:
        raise ValueError(f"unknown fusion method {name!r} (use one of "
                         f"{', '.join(METHODS)}, or ranx's names)")
    return METHODS[key]


def fused_scores(m: Method, pool: Pool, params: dict):
    return m.run(pool, params)
