"""One plan per evaluation: every measure name read once, into what the core computes.

:func:`make_plan` is the one function that reads measure names for trecqr's API and commands:
trec_eval's ``-m`` arguments and nicknames, ir_measures' strings and objects, the intent-aware
family. :func:`pytrec_plan` reads pytrec_eval's measure strings (the drop-in's rules). A
:class:`Plan` is immutable, so it is built once and run on any number of inputs
(``RelevanceEvaluator`` builds its plan in its constructor); :mod:`.core` runs it.

ir_measures names are sorted by the provider whose values trecqr reproduces:

* ``pytrec``: what ir_measures' pytrec_eval provider computes. Names that need the same
  pytrec_eval invocation (relevance level, -J, nDCG gains, ``set_F``'s first parameter) form
  one :class:`PytrecGroup`, computed on the trec_eval rankings of the call;
* ``judged`` and ``msmarco``: ``Judged@k`` and ``RR@k``, in ir_measures' Python order;
* ``native``: the families declared in :mod:`trecqr.measures.irm_native` (cwl_eval, gdeval,
  compat, accuracy, and the intent-aware measures of pyndeval).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from trecqr.errors import UsageError
from trecqr.rankings.options import Options
from trecqr.measures.base import Native
from trecqr.engine.names import (aggregator, alias_notes, check_options, check_params, not_provided,
                    pytrec_item, split_measures)
from trecqr.engine.pytrec_values import (COMPAT, CUTOFF_MEASURES, c_int, normalize_measures,
                                         select_measures)
from trecqr.engine.selection import select


@dataclass(frozen=True)
class IrmName:
    """One ir_measures name of the plan, as the caller wrote it."""

    caller: str
    measure: object        # the ir_measures measure object
    kind: str              # "pytrec", "judged", "msmarco" or "native"
    agg: str = "mean"      # ir_measures' aggregation: "mean" or "sum"
    group: int = -1        # pytrec: index into Plan.groups
    match: str = ""        # pytrec: its key among the group's values
    cutoff: int | None = None  # judged, msmarco
    row: Native | None = None  # native: where it is computed


@dataclass(frozen=True)
class PytrecGroup:
    """ir_measures names one pytrec_eval invocation computes: its options and measures."""

    level: int
    judged_only: bool
    gains: tuple | None     # nDCG's gains, sorted (grade, gain) pairs
    selection: tuple        # ((Measure, Params), ...), table order


@dataclass(frozen=True)
class Plan:
    """Everything decided before the inputs are read."""

    options: Options
    trec: tuple = ()        # ((Measure, Params), ...): the trec_eval names, table order
    irm: tuple = ()         # (IrmName, ...): distinct ir_measures names, in the caller's order
    groups: tuple = ()      # (PytrecGroup, ...)
    irm_semantics: bool = False  # the API's rules for ir_measures topics (see api.evaluate)
    keyed: bool = False     # pytrec_eval's result: run topics in run order, pytrec_eval's keys
    diversity: bool = False  # the qrels are diversity qrels (topic subtopic docno grade)
    # trec's and the groups' measures as rankings/_dicts.c computes them on dicts, when it
    # computes every one: ((key, code, cutoff, level, -J, x, xs), ...) (_c_specs)
    c_specs: tuple | None = None

    @cached_property  # a plan is immutable: read once (frozen: cached in its __dict__)
    def intent_aware(self) -> bool:
        return any(n.row is not None and n.row.qrels_kind == "diversity" for n in self.irm)

    @cached_property
    def needs_run_columns(self) -> bool:
        """Whether some name reads the run itself (not only trec_eval's rankings)."""
        return any(n.kind != "pytrec" for n in self.irm)


def pytrec_plan(normalized: set, relevance_level: int, judged_only: bool) -> Plan:
    """The plan of ``RelevanceEvaluator(qrels, measures, relevance_level, judged_only)``, from
    its normalised measure strings (:func:`.pytrec_values.normalize_measures`)."""
    return _pytrec_plan(frozenset(normalized), relevance_level, bool(judged_only))


@lru_cache(maxsize=256)
def _pytrec_plan(normalized: frozenset, relevance_level: int, judged_only: bool) -> Plan:
    options = Options(relevance_level=relevance_level, max_docs=sys.maxsize,
                      judged_only=bool(judged_only), compat=COMPAT)
    trec = tuple(select_measures(normalized))
    return Plan(options, trec, keyed=True, c_specs=_c_specs(trec, options, keyed=True))


# the measures rankings/_dicts.c's dict_values computes (_dict_measures.h's codes), with
# trec_eval's loops: the cutoff measures read an integer k; iprec_at_recall's recall points,
# Rprec_mult's multiples of R and set_F's beta are doubles, 11pt_avg's recall points and
# utility's coefficients a list of them
_C_CODES = {"P": 0, "recall": 1, "recip_rank": 2, "ndcg_cut": 3, "map": 4, "map_cut": 5,
            "success": 6, "ndcg": 7, "Rprec": 8, "num_ret": 9, "num_rel": 10,
            "num_rel_ret": 11, "num_nonrel_judged_ret": 12, "num_q": 13, "runid": 14,
            "bpref": 15, "gm_bpref": 16, "gm_map": 17, "iprec_at_recall": 18, "set_P": 19,
            "set_recall": 20, "set_relative_P": 21, "set_map": 22, "set_F": 23,
            "relative_P": 24, "Rprec_mult": 25, "binG": 26, "G": 27, "ndcg_rel": 28,
            "Rndcg": 29, "infAP": 30, "11pt_avg": 31, "utility": 32,
            "relstring": 14}  # the drop-in's 0, as runid's (pytrec_eval fills neither)
_C_DOUBLE = frozenset({"iprec_at_recall", "set_F", "Rprec_mult"})
_C_LIST = frozenset({"11pt_avg", "utility"})
_GAINS = frozenset({"ndcg", "G", "ndcg_rel", "Rndcg"})  # computed without gain parameters only
_RECALL_POINTS = frozenset({"iprec_at_recall", "11pt_avg"})  # 10.0 rounds them with lround
_C_LONG = 2 ** 63  # its cutoffs and levels are C long longs
_C_POINT = 2.0 ** 31  # past this, (long)(x * R + 0.9) could overflow: numpy takes it


def _c_list(name: str, values, options: Options) -> tuple | None:
    """11pt_avg's recall points (in order: trec_eval's walk over unsorted ones is numpy's) or
    utility's four coefficients, as doubles; None where the C pass does not take them."""
    xs = tuple(float(x) for x in values)
    if name == "11pt_avg":
        ok = xs and list(xs) == sorted(xs) and all(abs(x) < _C_POINT for x in xs)
    else:
        ok = len(xs) == 4 and 0 <= options.num_docs_in_coll < _C_LONG
    return xs if ok else None


def _c_values(measure, params, options: Options, keyed: bool) -> list | None:
    """(key, k, x, xs) of each value of one measure as dict_values computes it; None when it
    does not: gain parameters (ndcg.1=3), 10.0's recall points (lround), unsorted recall points
    of 11pt_avg, a number past its C types, relstring's text (pytrec_eval's 0 only). keyed:
    pytrec_eval's keys (a measure that is not a cutoff one is keyed by its name alone:
    ``set_F``, not ``set_F_0.5``)."""
    name, values = measure.name, params.values
    if name in _GAINS and values or name in _RECALL_POINTS and options.v10 or \
            name == "relstring" and not keyed:
        return None
    keys = measure.value_names(params)
    if keyed and name not in CUTOFF_MEASURES:
        keys = [name]
    if name in _C_LIST:
        xs = _c_list(name, values, options)
        return None if xs is None else [(keys[0], options.num_docs_in_coll, 0.0, xs)]
    if name in _C_DOUBLE:
        xs = [float(x) for x in values[:len(keys)]]
        if len(xs) != len(keys) or not all(abs(x) < _C_POINT for x in xs):  # NaN too
            return None
        return [(key, 0, x, ()) for key, x in zip(keys, xs)]
    ks = [int(k) for k in values] if values else [0] * len(keys)
    if any(k >= _C_LONG for k in ks):
        return None
    return [(key, k, 0.0, ()) for key, k in zip(keys, ks)]


def _c_specs(selection, options: Options, prefix: str = "", keyed: bool = False) -> tuple | None:
    """(key, C code, cutoff, relevance level, -J, double parameter, doubles) per value, in the
    keys' order (``prefix`` + the value's name, or pytrec_eval's key when keyed); None when
    some measure is not among those the C module computes, or the options are not its (-M, -l
    below 1, 10.0's -c)."""
    if options.max_docs != sys.maxsize or not 1 <= options.relevance_level < _C_LONG or \
            (options.complete and options.v10):
        return None
    specs = []
    for measure, params in selection:
        code = _C_CODES.get(measure.name)
        values = None if code is None else _c_values(measure, params, options, keyed)
        if values is None:
            return None
        specs += [(prefix + key, code, k, options.relevance_level, options.judged_only, x, xs)
                  for key, k, x, xs in values]
    return tuple(specs) if specs else None


def _all_c_specs(trec, groups, options: Options) -> tuple | None:
    """The specs of trec_eval's names and of every pytrec_eval invocation, keys of group i
    prefixed ``"i:"``: one C pass computes them all (None: some measure it does not)."""
    specs = () if not trec else _c_specs(trec, options)
    if specs is None:
        return None
    for i, group in enumerate(groups):
        opts = replace(options, relevance_level=group.level, judged_only=group.judged_only)
        more = None if group.gains else _c_specs(group.selection, opts, f"{i}:")
        if more is None:
            return None
        specs += more
    return specs or None


def make_plan(measures, options: Options | None = None, *, irm_semantics: bool = False,
              diversity: bool | None = False) -> Plan:
    """Read measure names once.

    measures: trec_eval arguments (``map``, ``P.5,10``, ``all_trec``), ir_measures names
    (``nDCG@3``) or objects, or a mix; None or no trec_eval name next to no ir_measures name
    means trec_eval's default, ``official``. diversity: True, the qrels are diversity qrels
    and only the intent-aware family is allowed (``-R diversity``); None, so when only
    intent-aware names are asked for; False, never.
    """
    options = options or Options()
    if isinstance(measures, str) or not hasattr(measures, "__iter__"):
        measures = None if measures is None else [measures]
    key = (None if measures is None else tuple(measures), options, irm_semantics, diversity)
    try:
        plan = _PLANS.get(key)
    except TypeError:  # an unhashable measure object: no cache
        key, plan = None, None
    if plan is None:
        trec_args, irm = split_measures(measures)
        plan = plan_of(trec_args, irm, options, irm_semantics=irm_semantics,
                       diversity=diversity)
        if key is not None:
            if len(_PLANS) >= _PLANS_KEPT:
                _PLANS.pop(next(iter(_PLANS)))
            _PLANS[key] = plan
    else:  # a plan made before: its notes again (plan_of said them for a new one)
        alias_notes(n.caller for n in plan.irm)
    return plan


# plans are immutable: the last ones made are kept, so that a loop calling evaluate with the
# same names parses them once
_PLANS: dict = {}
_PLANS_KEPT = 256


def plan_of(trec_args: list, irm: list, options: Options | None = None, *,
            irm_semantics: bool = False, diversity: bool | None = False) -> Plan:
    """:func:`make_plan` of names already split by :func:`.names.split_measures`."""
    options = options or Options()
    trec = tuple(select(trec_args, options.compat)) if trec_args or not irm else ()
    names, groups = _irm_names(irm, options) if irm else ((), ())
    alias_notes(n.caller for n in names)
    c_specs = _all_c_specs(trec, groups, options)
    plan = Plan(options, trec, names, groups, irm_semantics, c_specs=c_specs)
    only_ia = bool(names) and not trec and all(
        n.row is not None and n.row.qrels_kind == "diversity" for n in names)
    if diversity or (diversity is None and only_ia):
        other = list(trec_args) + [n.caller for n in names
                                   if n.row is None or n.row.qrels_kind != "diversity"]
        if other:
            raise UsageError("-R diversity computes the intent-aware measures (alpha_nDCG@k, "
                             "alpha_DCG@k, ERR_IA@k, nERR_IA@k, NRBP, nNRBP, P_IA@k, AP_IA, "
                             f"StRecall@k), not {other[0]!r}")
        plan = Plan(options, (), names, groups, irm_semantics, diversity=True)
    return plan


def _longest(cutoff):
    """A Python-side cutoff within numpy's int64: past any ranking, it cuts nothing
    (ir_measures' ``Judged@k`` and ``RR@k`` compare ranks with it in Python)."""
    return None if cutoff is None else min(cutoff, _C_LONG - 1)


def _irm_names(irm, options: Options):
    """(IrmName per distinct caller name, PytrecGroup per pytrec_eval invocation)."""
    import ir_measures  # parsed names are ir_measures objects: it is imported already

    from trecqr.measures.irm_native import native  # its families import ir_measures

    check_options(options)
    names, seen = [], set()
    keys: dict = {}  # (rel, set_F count, gains, judged_only) -> group index
    args: dict = {}  # group index -> its pytrec_eval measure strings
    setf_count = 0
    for caller, m in irm:
        if caller in seen:
            continue
        seen.add(caller)
        try:
            check_params(caller, m)
            m.validate_params()
            via_pytrec = ir_measures.pytrec_eval.supports(m)
            via_judged = not via_pytrec and ir_measures.judged.supports(m)
            via_msmarco = not (via_pytrec or via_judged) and ir_measures.msmarco.supports(m)
        except AssertionError as exc:
            raise UsageError(f"ir_measures measure {caller!r}: {exc}") from None
        agg = aggregator(m)
        if via_pytrec:
            key, arg, match, setf_count = pytrec_item(m, setf_count)
            group = keys.setdefault(key, len(keys))
            args.setdefault(group, []).append(arg)
            names.append(IrmName(caller, m, "pytrec", agg, group, match))
        elif via_judged:
            cutoff = None if m["cutoff"] is not_provided() else m["cutoff"]
            if cutoff is not None and cutoff < 1:
                raise UsageError(f"{caller!r}: the cutoff must be at least 1")
            names.append(IrmName(caller, m, "judged", agg, cutoff=_longest(cutoff)))
        elif via_msmarco:
            cutoff = m["cutoff"]
            if cutoff is not_provided():
                raise UsageError(f"ir_measures measure {m} needs @cutoff")
            if cutoff < 1:
                raise UsageError(f"{caller!r}: the cutoff must be at least 1")
            names.append(IrmName(caller, m, "msmarco", agg, cutoff=_longest(cutoff)))
        elif (row := native(m)) is not None:
            names.append(IrmName(caller, m, "native", agg, row=row))
        else:
            raise UsageError(f"ir_measures measure {caller!r} is not supported by trecqr")
    groups = []
    for (rel, _, gains, judged_only), index in keys.items():
        first = next(n.caller for n in names if n.group == index)
        try:
            level = c_int(rel)
        except TypeError:  # pytrec_eval reads rel as a C int
            raise UsageError(f"{first!r}: rel must be an integer of -2**31..2**31-1 "
                             "(pytrec_eval's C int)") from None
        if level < 1:
            raise UsageError(f"{first!r}: pytrec_eval needs rel >= 1 for this measure")
        groups.append(PytrecGroup(level, judged_only, gains,
                                  tuple(select_measures(normalize_measures(args[index])))))
    return tuple(names), tuple(groups)
