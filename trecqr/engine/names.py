"""ir_measures names (``nDCG@3``, ``RR@3``, ``P(rel=2)@5``, ``Judged@10``) beside trec_eval's.

A name is parsed with ``ir_measures.parse_measure`` and computed by trecqr exactly as
ir_measures' default pipeline computes it:

* measures its pytrec_eval provider supports become a trec_eval measure plus the options it
  passes (``P(rel=2)@5`` is ``P.5`` at relevance level 2, ``nDCG(judged_only=True)`` is ``ndcg``
  under -J, ``nDCG(gains=...)`` maps the grades first, ``SetF(beta=b)`` is ``set_F.b``), scored
  on the same rankings as trec_eval's names, with the pytrec_eval drop-in's rules;
* ``RR@k`` (msmarco provider) and ``Judged@k`` (judged provider) rank in Python's order
  (float64 score descending, docno ascending): :mod:`.irm_rankings`.

This module reads names; :mod:`.plan` turns them into one plan, :mod:`.core` runs it.

Aggregates are ir_measures': a topic of the qrels missing from the run counts as 0, so means
divide by the number of qrels topics; values are added in the run's topic order; ``Num*``
measures are sums. Per-topic values are given for the topics of the trec_eval evaluation.

Names that are trec_eval measures or nicknames (``Rprec``, ``infAP``, ``map``, ``P.5``...)
keep trec_eval's meaning, which differs from ir_measures' only in the aggregate (mean over the
evaluated topics); for ir_measures' ``Rprec`` and ``infAP`` pass ``Rprec(rel=1)``,
``infAP(rel=1)`` or the ir_measures objects themselves.

Differences from ir_measures, where its result is not well defined: ``NumRet`` and ``nDCG``
without gains are computed without -J and without gain mapping (ir_measures puts them in
whichever pytrec_eval invocation comes first in a set's iteration order).
"""

from __future__ import annotations

import os
import re
import sys
import warnings

import numpy as np

from trecqr.errors import UsageError
from trecqr.formats import Qrels
from trecqr.rankings.options import Options
from trecqr.measures.base import Measure
from trecqr.measures.table import NICKNAMES, TABLE

# ir_measures (about 50 ms to import) is imported where a name must be parsed as one of its
# names: a trec_eval-only evaluation never imports it.

_TREC_NAMES = frozenset(n for v in TABLE.values() for n in v) | frozenset(
    n for v in NICKNAMES.values() for n in v)


def _parse(name: str):
    try:
        import ir_measures
    except ImportError:  # pragma: no cover - ir_measures is a dependency
        return None
    try:
        return ir_measures.parse_measure(name)
    except (NameError, ValueError, SyntaxError, AssertionError, TypeError):
        return None


def split_measures(measures):
    """Split measure names into (trec_eval ``-m`` arguments, [(name, ir_measures measure)]).

    trec_eval names and nicknames (the text before the first ``.``) stay trec_eval's; other
    strings that ir_measures parses, and ir_measures measure objects, are ir_measures'.
    """
    if measures is None:
        return [], []
    if isinstance(measures, str) or not hasattr(measures, "__iter__"):
        measures = [measures]
    trec, irm = [], []
    for m in measures:
        if not isinstance(m, str):
            irm.append((str(m), m))
            continue
        parsed = None if m.partition(".")[0] in _TREC_NAMES else _parse(m)
        if parsed is None:
            trec.append(m)
        else:
            irm.append((m, parsed))
    return trec, irm


class MeasureNameWarning(UserWarning):
    """An ir_measures name that means something else than the measure papers give that name
    (``MRR@3``: a true cutoff, where the CQR papers' "MRR@3" is trec_eval's ``recip_rank``).
    Filter it (``warnings.filterwarnings("ignore", category=MeasureNameWarning)``) to silence
    it; on the command line ``--quiet`` does. ``cli``: the note in the command line's words."""

    def __init__(self, message: str, cli: str | None = None):
        super().__init__(message)
        self.cli = cli


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_ALIAS_CUTOFF = re.compile(r"^MRR(\(.*\))?@(\S+)$")  # MRR@3, MRR(rel=2)@3


def alias_notes(callers) -> None:
    """Warn (:class:`MeasureNameWarning`) once per name whose ir_measures meaning differs from
    the meaning papers give it: ``MRR@k`` is ir_measures' ``RR@k`` (MRR is its alias of RR),
    a true cutoff (0 when no relevant document is in the top k, as MS MARCO's MRR@10), while
    the CQR papers' "MRR@3" is trec_eval's ``recip_rank`` of their 100-deep runs."""
    for caller in dict.fromkeys(callers):
        found = _ALIAS_CUTOFF.match(caller)
        if found is None:
            continue
        k = found.group(2)
        head = (f"{caller} is ir_measures' RR@{k}, a true cutoff (0 when no relevant document "
                f"is in the top {k}, as MS MARCO's MRR@10); the CQR papers' \"MRR@3\" is "
                "trec_eval's recip_rank of 100-deep runs: ")
        warnings.warn(MeasureNameWarning(
            head + "ask for 'recip_rank' (max_docs=100 cuts deeper runs; filter "
                   "MeasureNameWarning to hide this note)",
            cli=head + "type -m recip_rank (-M 100 cuts deeper runs; --quiet hides this note)"),
            stacklevel=_caller_level())


def _caller_level() -> int:
    """warnings.warn's stacklevel, from alias_notes' caller, of the first frame outside
    trecqr: the warning names the caller's line, whichever door it came through."""
    level, frame = 2, sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    return level


def ignore_measure_notes() -> None:
    """--quiet: leave the measure-name notes out (inside the command's warning capture)."""
    warnings.filterwarnings("ignore", category=MeasureNameWarning)


class IrMeasuresColumn(Measure):
    """An output column for an ir_measures name (not registered: never a ``-m`` name)."""

    summary = "mean"

    def __init__(self, name: str, integer: bool, sparse: bool = False):
        self.name = name
        self.integer = integer
        self.sparse = sparse  # NaN: the provider gives this topic no value (leave it out)
        self.explanation = f"ir_measures {name}"


def not_provided():
    """ir_measures' marker of a parameter left out."""
    from ir_measures.providers.base import NOT_PROVIDED

    return NOT_PROVIDED


_C_LONG_MAX = 2 ** 63 - 1  # pytrec_eval reads cutoffs as C longs (atol saturates there)


def _cutoff(m, what="cutoff"):
    value = m[what]
    if value is not_provided():
        raise UsageError(f"ir_measures measure {m} needs @{what}")
    return value


def _check_cutoff(m) -> None:
    """A cutoff past a C long: pytrec_eval's atol saturates it (``P_9223372036854775807``),
    where ir_measures looks for the value under the cutoff as written and fails (KeyError):
    ir_measures gives no value, so trecqr refuses it in one line."""
    value = m["cutoff"] if "cutoff" in m.SUPPORTED_PARAMS else None
    if isinstance(value, int) and value > _C_LONG_MAX:
        raise UsageError(f"ir_measures measure {str(m)!r}: cutoff past 2**63-1, which "
                         "ir_measures' pytrec_eval provider cannot score (pytrec_eval reads "
                         f"it as {_C_LONG_MAX}, then ir_measures finds no value): give at "
                         f"most {_C_LONG_MAX}")


_EXAMPLE_VALUES = {"cutoff": 10, "max_rel": 4, "rel": 2}  # in examples of a measure's use


def check_params(caller: str, m) -> None:
    """ir_measures' ``validate_params``, with messages that say what a parameter is and how
    to give it (ir_measures says ``invalid param max_rel=<object object at 0x...>``)."""
    supported = m.SUPPORTED_PARAMS
    unknown = sorted(set(m.params) - set(supported))
    if unknown:
        raise UsageError(f"ir_measures measure {caller!r}: no parameter {unknown[0]!r}; "
                         f"{m.NAME} takes {', '.join(supported) or 'none'}")
    missing = [p for p, info in supported.items()
               if info.required and m.params.get(p, not_provided()) is not_provided()]
    if missing:
        said = ", ".join(f"{p} ({supported[p].desc or 'required'})" for p in missing)
        raise UsageError(f"ir_measures measure {caller!r} needs {said}: e.g. "
                         f"{_example(m, missing)!r}")
    for p, info in supported.items():
        value = m.params.get(p, not_provided())
        if value is not_provided() or info.validate(value):
            continue
        need = (f"one of {', '.join(map(repr, info.choices))}"
                if info.choices is not not_provided() and info.dtype in (None, type(value))
                else _a(getattr(info.dtype, "__name__", "value")))
        raise UsageError(f"ir_measures measure {caller!r}: {p} ({info.desc}) must be {need}, "
                         f"not {value!r}")


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _example(m, missing) -> str:
    """The measure with every required parameter given: ``SDCG(max_rel=4)@10``."""
    params = {p: v for p, v in m.params.items() if p != "cutoff"}
    params.update({p: _EXAMPLE_VALUES.get(p, 1) for p in missing if p != "cutoff"})
    cutoff = m.params.get("cutoff", _EXAMPLE_VALUES["cutoff"] if "cutoff" in missing else None)
    text = m.NAME + (f"({','.join(f'{p}={v!r}' for p, v in params.items())})" if params else "")
    return text + (f"@{cutoff}" if cutoff is not None else "")


def pytrec_item(m, setf_count: int):
    """(options key, pytrec_eval measure string, result key) as ir_measures' provider builds
    them (providers/pytrec_eval_provider.py)."""
    NOT_PROVIDED = not_provided()
    name = m.NAME
    _check_cutoff(m)
    rel = m["rel"] if "rel" in m.SUPPORTED_PARAMS else 1
    jo = bool(m["judged_only"]) if "judged_only" in m.SUPPORTED_PARAMS else False
    key, match = (rel, 0, None, jo), None
    if name == "P":
        arg = f"P_{_cutoff(m)}"
    elif name == "RR":
        arg = "recip_rank"
    elif name == "Rprec":
        arg = "Rprec"
    elif name == "AP":
        arg = "map" if m["cutoff"] is NOT_PROVIDED else f"map_cut_{m['cutoff']}"
    elif name in ("infAP", "Bpref", "SetR", "NumRel"):
        key = (rel, 0, None, False)
        arg = {"infAP": "infAP", "Bpref": "bpref", "SetR": "set_recall", "NumRel": "num_rel"}[name]
    elif name == "nDCG":
        gains = None if m["gains"] is NOT_PROVIDED else tuple(sorted(m["gains"].items()))
        key = (1, 0, gains, jo)
        arg = "ndcg" if m["cutoff"] is NOT_PROVIDED else f"ndcg_cut_{m['cutoff']}"
    elif name == "R":
        arg = f"recall_{_cutoff(m)}"
    elif name == "NumRet":
        if m["rel"] is NOT_PROVIDED:
            key, arg = (1, 0, None, False), "num_ret"
        else:
            key, arg = (m["rel"], 0, None, False), "num_rel_ret"
    elif name == "NumQ":
        key, arg = (1, 0, None, False), "num_q"
    elif name == "SetAP":
        arg = "set_map"
    elif name == "SetF":
        key = (rel, setf_count, None, jo)  # trec_eval keeps the first set_F parameter only
        setf_count += 1
        arg = "set_F" if m["beta"] == 1.0 else f"set_F_{m['beta']}"
        match = "set_F"
    elif name == "SetP":
        arg = "set_relative_P" if m["relative"] else "set_P"
    elif name == "Success":
        arg = f"success_{_cutoff(m)}"
    elif name == "IPrec":
        arg = f"iprec_at_recall_{_cutoff(m, 'recall'):.2f}"
    else:  # pragma: no cover - guarded by the provider's supports()
        raise UsageError(f"ir_measures measure {m} is not supported")
    return key, arg, match or arg, setf_count


def mapped_grades(grades: np.ndarray, gains) -> np.ndarray:
    """Grades mapped by nDCG's gains (``gains.get(grade, grade)``); pytrec_eval needs ints."""
    mapping = dict(gains)
    uniq, inverse = np.unique(grades, return_inverse=True)
    mapped = [mapping.get(int(g), int(g)) for g in uniq]
    if not all(isinstance(v, int) for v in mapped):
        raise UsageError(f"nDCG gains must be integers for pytrec_eval (got {mapping})")
    return np.array(mapped, np.int64)[inverse].reshape(np.shape(grades))


def map_gains(qrels, gains):
    """Qrels with their grades mapped by nDCG's gains."""
    return Qrels(qrels.qid, qrels.docno, mapped_grades(qrels.grade, gains), qrels.source)


def check_options(options) -> None:
    """ir_measures names carry their own parameters: trec_eval's options that would change them
    must be left alone. ``-c`` is the exception: it makes trec_eval names average every qrels
    topic, a topic without results counting 0, which is what ir_measures names always do, so
    beside them it changes nothing of theirs and lets one output hold one population."""
    default = Options()
    changed = [(attr, flag) for attr, flag in (("relevance_level", "-l"), ("max_docs", "-M"),
                                               ("judged_only", "-J"), ("compat", "--compat"))
               if getattr(options, attr) != getattr(default, attr)]
    if changed:
        head = "ir_measures names carry their own parameters (rel=, judged_only=, @cutoff); "
        tail = " applies" if len(changed) == 1 else " apply"
        tail += " to trec_eval names only"
        raise UsageError(head + ", ".join(f"{a}=" for a, _ in changed) + tail,
                         cli=head + ", ".join(f for _, f in changed) + tail)


def aggregator(m) -> str:
    """"sum" or "mean": how ir_measures aggregates measure m (its SumAgg or MeanAgg)."""
    from ir_measures.measures.base import MeanAgg, SumAgg

    agg = m.aggregator()
    if isinstance(agg, SumAgg):
        return "sum"
    if isinstance(agg, MeanAgg):
        return "mean"
    raise UsageError(f"ir_measures measure {m}: aggregator {type(agg).__name__} not supported")


def aggregate(kind: str, values: np.ndarray, n_qrels_topics: int):
    """ir_measures' MeanAgg / SumAgg (``kind``, from :func:`aggregator`) over the values in
    run order (missing topics add 0): (summary, whether it is a count)."""
    if len(values) <= 64:  # the same left-to-right sum, without numpy's per-call cost
        total = 0.0
        for v in values.tolist():
            total += v
    else:
        total = float(np.cumsum(values)[-1])
    return aggregated(kind, total, n_qrels_topics), kind == "sum"


def aggregated(kind: str, total: float, n_qrels_topics: int) -> float:
    """The summary of values whose left-to-right sum is ``total``: the sum, or the mean
    over the qrels topics (NaN over none)."""
    if kind == "sum":
        return total
    return total / n_qrels_topics if n_qrels_topics else float("nan")
