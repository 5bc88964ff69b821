"""How a measure is declared, and trec_eval's rules for measure parameters.

A measure is a class with a name, a parameter kind, how its per-topic values are averaged and
printed, and one ``compute(batch, params)`` that returns a (topics x values) array for a whole
:class:`~trecqr.rankings.build.Batch` of topics at once. Registering it (``@register``) puts
it in the table; the order of output rows comes from :mod:`trecqr.measures.table`, which copies
trec_eval's ``measures.c``.

Parameter kinds mirror trec_eval's ``meas_init.c``: ``P.5,10`` are long cutoffs (read with
atol, sorted, must be positive and distinct; values named ``P_5``), ``iprec_at_recall..1,.2``
double cutoffs (named ``%3.2f``), ``Rprec_mult.5.0,0.2`` double parameters, and ``ndcg.1=3``
name=value pairs (the last two named after the parameter string as written).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from trecqr.errors import UsageError
from trecqr.measures import _libm

MIN_GEO_MEAN = 0.00001


def row_sums(rows: np.ndarray, terms: np.ndarray, n: int) -> np.ndarray:
    """Per-topic sums of sparse terms, added in the order given (rank order when rows, cols
    come from np.nonzero): 0.0 + t1 + t2 + ..., as trec_eval's loops add. bincount adds its
    weights one by one in input order, so this equals a left-to-right cumsum of the dense
    row (whose zeros add nothing)."""
    return np.bincount(rows, weights=terms, minlength=n).astype(np.float64, copy=False)


def relevant_positions(b):
    """(rows, cols) of the relevant retrieved documents, row-major (rank order per topic)."""
    return batch_memo(b, "relevant_positions", lambda: np.nonzero(b.is_rel))


def batch_memo(batch, key, compute):
    """compute() once per batch and key: measures that share an intermediate (bpref and
    gm_bpref, the ndcg family's gains, iprec_at_recall and 11pt_avg) read one copy."""
    memo = batch.__dict__.setdefault("_trecqr_memo", {})
    if key not in memo:
        memo[key] = compute()
    return memo[key]

# C's isspace and isdigit (the C locale): ASCII only, so ``P.５`` has no digits for trec_eval
# (its atol reads 0: "Negative cutoff detected") and none here
_ATOL = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+", re.ASCII)
_ATOF = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:0[xX][0-9a-fA-F.]|[0-9]|\.[0-9]|inf|nan)",
                   re.ASCII | re.IGNORECASE)


def atol(text: str, measure: str) -> int:
    """C atol on a cutoff: the leading integer (``23.4`` -> 23), saturated at the limits of a
    C long as glibc's strtol saturates (``P.99999999999999999999`` is trec_eval's
    ``P_9223372036854775807``); no digits at all is an error."""
    m = _ATOL.match(text)
    if not m:
        raise UsageError(f"measure {measure!r}: parameter {text!r} is not a number")
    return min(max(int(m.group()), -2 ** 63), 2 ** 63 - 1)


def atof(text: str, measure: str) -> float:
    """C atof on a parameter: the longest numeric prefix, hexadecimal included (``0x1p1`` is
    2.0, as glibc reads it); no number at all is an error, and so are ``nan`` and ``inf``,
    which trec_eval takes and then prints as values (``ndcg.1=nan``: nan)."""
    if not _ATOF.match(text):
        raise UsageError(f"measure {measure!r}: parameter {text!r} is not a number")
    value = _libm.c_atof(text)
    if not math.isfinite(value):
        raise UsageError(f"measure {measure!r}: parameter {text!r} is not a finite number "
                         "(trec_eval reads nan and inf, then prints nan or inf values): give "
                         "a finite number")
    return value


@dataclass(frozen=True)
class Params:
    """Parsed parameters: values, and the string as written (None when defaults are used)."""

    values: tuple
    printable: str | None = None


class ParamKind:
    def __init__(self, *default):
        self.default = Params(tuple(default))

    def parse(self, text: str, measure: str) -> Params:  # pragma: no cover - abstract
        raise NotImplementedError

    def value_names(self, name: str, params: Params) -> list[str]:
        if params.printable is None:
            return [name]
        return [f"{name}_{params.printable}"]


class LongCutoffs(ParamKind):
    """``P.5,10``: integer cutoffs; one value per cutoff, named ``P_5``."""

    def parse(self, text, measure):
        values = sorted(atol(t, measure) for t in text.split(","))
        if values[0] <= 0:
            raise UsageError(f"measure {measure!r}: cutoffs must be positive (got {text!r})")
        if len(set(values)) != len(values):
            raise UsageError(f"measure {measure!r}: duplicate cutoffs in {text!r}")
        return Params(tuple(values), text)

    def value_names(self, name, params):
        return [f"{name}_{v}" for v in params.values]


class DoubleCutoffs(ParamKind):
    """``iprec_at_recall..10,.20``: float cutoffs, named with ``%3.2f``."""

    def parse(self, text, measure):
        values = sorted(atof(t, measure) for t in text.split(","))
        if len(set(values)) != len(values):
            raise UsageError(f"measure {measure!r}: duplicate cutoffs in {text!r}")
        return Params(tuple(values), text)

    def value_names(self, name, params):
        # snprintf(full, strlen(name) + 10, "%s_%3.2f"): at most strlen(name)+9 characters
        return [f"{name}_{v:3.2f}"[: len(name) + 9] for v in params.values]


class DoubleParams(ParamKind):
    """``Rprec_mult.5.0,0.2`` or ``utility.2,-1,0,0``: ordered float parameters."""

    def parse(self, text, measure):
        return Params(tuple(atof(t, measure) if t.strip() else 0.0 for t in text.split(",")),
                      text)


class ParamPairs(ParamKind):
    """``ndcg.1=3,2=9``: name=value pairs (gains for grades, or rbp's ``p=0.8``)."""

    def parse(self, text, measure):
        last = ","
        for ch in text:
            if ch in ",=":
                if ch == last:
                    last = ","
                    break
                last = ch
        if last != "=":
            raise UsageError(f"measure {measure!r}: malformed pair parameters in {text!r}")
        pairs = []
        for item in text.split(","):
            key, _, value = item.partition("=")
            pairs.append((key, atof(value, measure) if _ATOF.match(value) else 0.0))
        return Params(tuple(pairs), text)


class Measure:
    """A trec_eval measure (or family, when parameters make several values)."""

    name: str = ""
    explanation: str = ""
    params: ParamKind | None = None
    integer: bool = False        # per-topic and summary values printed as %ld
    summary: str = "mean"        # mean | sum | gm | count | none
    per_query: bool = True       # printed with -q
    since: str = "9.0.8"         # first trec_eval version that has it
    bogus_zero: bool = False     # 10.0 -c: zeroed for topics missing from the run

    def parse(self, text: str | None) -> Params:
        if self.params is None:
            return Params(())
        if text is None:
            return self.params.default
        return self.params.parse(text, self.name)

    def value_names(self, params: Params) -> list[str]:
        if self.params is None:
            return [self.name]
        return self.params.value_names(self.name, params)

    def compute(self, batch, params: Params) -> np.ndarray:
        """Per-topic values, shape (batch.n, len(value_names)). Add in rank order (seqsum)."""
        raise NotImplementedError

    def summarize(self, values: np.ndarray, ctx) -> np.ndarray:
        """Summary over topics from per-topic values (n, k), as trec_eval's calc_avg does."""
        total = np.cumsum(values, axis=0)[-1] if len(values) else np.zeros(values.shape[1])
        if self.summary == "sum":
            return total
        if self.summary == "count":
            return np.full(values.shape[1], float(ctx.num_avg))
        if self.summary == "gm":
            if ctx.num_avg <= 0:
                return total
            total = total + (ctx.num_avg - ctx.num_evaluated) * math.log(MIN_GEO_MEAN)

            return _libm.exp(total / ctx.num_avg)
        if self.summary == "mean":
            return total / ctx.num_avg if ctx.num_avg else total
        return total


REGISTRY: dict[str, Measure] = {}


def register(cls):
    """Class decorator: add a measure to the registry under its trec_eval name."""
    inst = cls()
    if inst.name in REGISTRY:
        raise RuntimeError(f"measure {inst.name} registered twice")
    REGISTRY[inst.name] = inst
    return cls


@dataclass(frozen=True)
class Native:
    """An ir_measures measure trecqr computes natively (trec_eval lacks it): its kernel and
    the provider whose values that kernel reproduces. Every kernel has one signature,
    ``kernel(run: Run, qrels, topics: list[str], measure) -> np.ndarray`` (values aligned
    with ``topics``; the caller aggregates as ir_measures does)."""

    function: object       # the kernel
    provider: str          # the ir_measures provider whose values it equals
    qrels_kind: str = "qrels"  # "qrels" (topic, docno, grade) or "diversity" (with subtopic)
    # False where the provider yields values only for some topics and no DEFAULT for the rest
    # (it overrides Evaluator.iter_calc): NaN marks a topic without a value, and the mean is
    # taken over the topics that have one
    defaults: bool = True


IRM_NATIVE: dict = {}  # ir_measures NAME -> Native, filled by the @irm_native declarations


def irm_native(*names: str, provider: str, qrels_kind: str = "qrels", defaults: bool = True):
    """Declare the decorated kernel as the one that computes these ir_measures names (next to
    the kernel, as ``@register`` declares trec_eval's measures); a name declared twice is an
    error, so each name reaches one kernel."""
    def declare(function):
        for name in names:
            if name in IRM_NATIVE:
                raise ValueError(f"ir_measures name {name!r} is declared twice")
            IRM_NATIVE[name] = Native(function, provider, qrels_kind, defaults)
        return function
    return declare

