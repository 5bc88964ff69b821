"""pytrec_eval's semantics over trecqr's engine: measure strings, keys, topics, dict inputs.

Both front-ends need this: the pytrec_eval drop-in (:mod:`trecqr.api.pytrec`) and the
ir_measures names (:mod:`trecqr.engine.names`), whose pytrec_eval provider it reproduces;
the core (:mod:`trecqr.engine.execute`) computes both.

* measure strings go through pytrec_eval's own normalisation (nicknames expanded; ``P_5``,
  ``P.5`` and ``P.5,10`` merged into one ``P.10,5`` argument per measure; anything else is
  ``ValueError: unsupported measure``);
* topics are those of the run that have non-empty qrels, in the run's order; a topic whose
  ranking is empty is scored on an empty ranking (``iprec_at_recall_0.00`` is then NaN, as
  trec_eval's 0/0);
* keys: cutoff measures (``P``, ``recall``, ``ndcg_cut``...) give one key per value (``P_5``);
  every other measure gives one key, its name (``gm_map`` holds the per-topic
  ``log(max(AP, 1e-5))``, ``num_q`` 1.0, ``runid`` and ``relstring`` 0.0);
* scores are ranked as trec_eval 9.0.8 ranks them (C ``float``: near-ties below float32
  precision tie, broken by docno descending).
"""

from __future__ import annotations

import collections
import re
from itertools import chain, repeat
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.formats import Qrels
from trecqr.formats.arrays import as_numpy, grouped_dicts, id_array, require_utf8
from trecqr.formats.qrels import dict_grades
from trecqr.rankings.build import judgment_keys, levels_fit
from trecqr.engine.selection import select
from trecqr.measures.table import NICKNAMES

COMPAT = "9.0.8"  # the trec_eval pytrec_eval embeds

supported_measures = set(NICKNAMES[COMPAT]["all_trec"])
supported_nicknames = {name: set(members) for name, members in NICKNAMES[COMPAT].items()}

# measures trec_eval prints with te_print_single_meas_a_cut: one value per parameter
CUTOFF_MEASURES = frozenset({"P", "Rprec_mult", "iprec_at_recall", "map_cut", "ndcg_cut",
                             "recall", "relative_P", "success", "P_avgjg", "Rprec_mult_avgjg"})
# measures whose per-topic value pytrec_eval never fills (their output is a string or nothing)
ZERO_VALUED = frozenset({"runid", "relstring"})

RUNID = "my_little_test_run"  # what pytrec_eval names every run


SMALL_COUNT = 256  # judgments up to this many are counted by Python (DictQrels._count_small)
_COUNTED = frozenset({"grade", "levels", "level_counts", "wide", "num_rel_all"})


def value_keys(selection) -> dict:
    """pytrec_eval's keys of a selection's values ``((Measure, Params), ...)``: ``{key: (i,
    j)}``, value j of measure i; j None for a measure whose value pytrec_eval leaves at 0
    (:data:`ZERO_VALUED`). A cutoff measure has one key per value (``P_5``), any other its
    name (its first value)."""
    keys: dict = {}
    for i, (measure, params) in enumerate(selection):
        name = measure.name
        if name in CUTOFF_MEASURES:
            for j, key in enumerate(measure.value_names(params)):
                keys[key] = (i, j)
        elif name not in keys:
            keys[name] = (i, None if name in ZERO_VALUED else 0)
    return keys


# --------------------------------------------------------------------------- measure names
def expand_nicknames(measures) -> set:
    result = set()
    for measure in measures:
        if measure in supported_nicknames:
            result.update(supported_nicknames[measure])
        else:
            result.add(measure)
    return result


_PARAMS = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


def combine_measures(measures) -> set:
    """pytrec_eval's ``_combine_measures``: one ``name[.p1,p2]`` string per measure.

    The parameter regex is matched at the start only (``P_5x`` is ``P.5``), parameters are
    merged over all spellings, deduplicated and sorted as strings; a bare name given after a
    parameterised one adds nothing (``{"P.5", "P"}`` is ``P.5``).
    """
    param_meas: dict = collections.defaultdict(set)
    for measure in measures:
        if measure not in supported_measures and measure not in supported_nicknames:
            match = None
            for base in supported_measures:  # set order, as pytrec_eval
                m = re.match(_PARAMS.format(re.escape(base)), measure)
                if m is not None:
                    match = (base, m.group(1))
                    break
            if match is None:
                raise ValueError(f"unsupported measure {measure}")
            param_meas[match[0]].update(match[1].split(","))
        elif measure not in param_meas:
            param_meas[measure] = set()
    return {f"{m}.{','.join(sorted(args))}" if args else m for m, args in param_meas.items()}


def normalize_measures(measures) -> set:
    """What RelevanceEvaluator hands to trec_eval for these measure strings."""
    try:
        return set(_normalized(frozenset(measures)))
    except TypeError:  # unhashable items: pytrec_eval's own error below
        return combine_measures(expand_nicknames(measures))


@lru_cache(maxsize=256)
def _normalized(measures: frozenset) -> frozenset:
    return frozenset(combine_measures(expand_nicknames(measures)))


def select_measures(normalized: set):
    """trecqr measures (with parameters) for normalised measure strings, in table order. An
    empty set selects nothing (trec_eval's default, ``official``, applies to its CLI only)."""
    if not normalized:
        return []
    return select(sorted(normalized), COMPAT)


def c_int(value) -> int:
    """A Python int read with PyArg format ``i`` into the low half of a C long: pytrec_eval's
    extension reads ``relevance_level`` so, hence a negative level becomes ``level + 2**32``
    and 0 is rejected. We reproduce that rather than "fix" it."""
    if isinstance(value, float) or not hasattr(value, "__index__"):
        raise TypeError("Expected object_relevance_per_qid dictionary and measures set.")
    value = value.__index__()
    if not -2 ** 31 <= value < 2 ** 31:
        raise TypeError("Expected object_relevance_per_qid dictionary and measures set.")
    return value % 2 ** 32


# --------------------------------------------------------------------------- values
@dataclass
class TopicValues:
    """Per-topic values keyed as pytrec_eval keys them; arrays aligned with ``qids``."""

    qids: list
    values: dict


# --------------------------------------------------------------------------- dict inputs
def _all_of(kind: type, values, strict: bool) -> bool:
    """Whether every value is a ``kind`` (strict: exactly, no bool for int), by the set of
    their types: one C-level pass, not a Python call per value."""
    types = set(map(type, values))
    return types <= {kind} or (not strict and all(issubclass(t, kind) for t in types))


class DictQrels:
    """Validated pytrec_eval qrels (``{qid: {docno: int}}``, topics with judgments only) with
    what rankings need per topic: grade counts per level, judged totals. strict: ids exactly
    str and grades exactly int (no bool, no numpy integer), as trecqr.evaluate's fast path
    takes them (TypeError otherwise: the general reader then converts or refuses them)."""

    def __init__(self, query_relevance: dict, strict: bool = False):
        for qid, docs in query_relevance.items():
            if not isinstance(qid, str):
                raise TypeError("Expected string as key.")
            if not isinstance(docs, dict):
                raise TypeError("Expected dictionary as value.")
            if not _all_of(str, docs, strict):
                raise TypeError("Expected mapping of document id to query relevance or "
                                "matching score.")
            if not _all_of(int, docs.values(), strict):
                raise TypeError("Expected relevance to be integer.")
        self.source = "<qrels dict>"
        require_utf8(query_relevance, self.source)
        # the C ranker reads plain dicts (a dict subclass, e.g. defaultdict, is copied)
        self._dicts = {q: d if type(d) is dict else dict(d) for q, d in query_relevance.items()}
        self._sizes = self._count_topics(self._dicts)
        self._columns = None

    @classmethod
    def from_grouped(cls, grouped: dict, qrels: Qrels) -> DictQrels:
        """The judgments of small columns, already grouped ``{qid: {docno: grade}}``
        (:func:`~trecqr.formats.arrays.grouped_dicts` of ``qrels``): their types are the
        columns', so nothing is checked again."""
        self = cls.__new__(cls)
        self.source = qrels.source
        require_utf8(grouped, self.source)  # the C pass reads only the run's topics
        self._sizes = self._count_topics(grouped)
        self._dicts = grouped
        self._columns = qrels
        return self

    @classmethod
    def from_columns(cls, qrels: Qrels) -> DictQrels:
        """The judgments of columns (a DataFrame's, an Arrow table's...), topics in
        first-seen order, counted by numpy: no dict is made unless a run dict is ranked
        against them (:attr:`dicts`)."""
        self = cls.__new__(cls)
        encoded = _encoded(qrels.qid)
        self._count(encoded.dictionary.to_pylist(), as_numpy(encoded.indices).astype(np.int64),
                    np.asarray(qrels.grade, dtype=np.int64))
        self._dicts = None
        self.source = qrels.source
        self._columns = qrels
        return self

    def _count(self, qids: list, topic_of: np.ndarray, grade: np.ndarray) -> None:
        """What rankings need per topic: grade counts per level, judged totals."""
        self.topics = qids
        self.index = {q: i for i, q in enumerate(qids)}
        self.grade = grade
        judged = grade >= 0
        self.levels = np.unique(grade[judged])
        lev = np.searchsorted(self.levels, grade[judged])
        self.level_counts = np.bincount(
            topic_of[judged] * len(self.levels) + lev,
            minlength=len(qids) * len(self.levels)).reshape(len(qids), len(self.levels))
        self.wide = not levels_fit(grade)
        self.num_rel_all = int(np.count_nonzero(grade > 0))

    def _count_topics(self, dicts: dict) -> list:
        """:meth:`_count` of ``{qid: {docno: grade}}``: by Python's ints when the judgments
        are few, and then only when first read (the C pass computes its values from the dicts
        alone, so a small call that gets them never counts); else by numpy. The topics'
        sizes."""
        qids = list(dicts)
        sizes = [len(d) for d in dicts.values()]
        total = sum(sizes)
        if total <= SMALL_COUNT:
            self.topics = qids
            self.index = {q: i for i, q in enumerate(qids)}
            self._pending = (qids, dicts, sizes)
        else:
            self._count(qids, np.repeat(np.arange(len(qids)), sizes),
                        dict_grades(chain.from_iterable(d.values() for d in dicts.values()),
                                     total, dicts, self.source))
        return sizes

    def __getattr__(self, name):
        """The counts of a few judgments (:meth:`_count_topics`), made on first read."""
        pending = self.__dict__.get("_pending")
        if pending is None or name not in _COUNTED:
            raise AttributeError(name)
        self._count_small(*pending)  # a grade out of range raises here, and again if asked
        del self._pending
        return getattr(self, name)

    def _count_small(self, qids: list, dicts: dict, sizes: list) -> None:
        """:meth:`_count` of a few judgments, by Python's ints: numpy's per-call costs would
        be most of a small call's time. The same arrays."""
        grades = list(chain.from_iterable(d.values() for d in dicts.values()))
        self.topics = qids
        self.index = {q: i for i, q in enumerate(qids)}
        self.grade = dict_grades(grades, len(grades), dicts, self.source)
        levels = sorted({g for g in grades if g >= 0})
        column = {g: j for j, g in enumerate(levels)}
        counts = [0] * (len(qids) * len(levels))
        row = 0
        for topic, size in enumerate(sizes):
            for g in grades[row:row + size]:
                if g >= 0:
                    counts[topic * len(levels) + column[g]] += 1
            row += size
        self.levels = np.array(levels, dtype=np.int64)
        self.level_counts = np.array(counts, dtype=np.int64).reshape(len(qids), len(levels))
        self.wide = not all(-2 ** 31 < g < 2 ** 31 for g in grades)
        self.num_rel_all = sum(g > 0 for g in grades)

    @property
    def dicts(self) -> dict:
        """``{qid: {docno: grade}}``, what the C ranker reads (of columns: made on first use,
        one ``dict(zip(...))`` a topic)."""
        if self._dicts is None:
            q = self._columns
            self._dicts = grouped_dicts(q.qid, q.docno, q.grade)
            if self._dicts is None:  # a (topic, docno) repeats: named as the columns name it
                topics = as_numpy(_indices(q.qid))
                docs = as_numpy(_indices(q.docno))
                judgment_keys(q, topics, docs, int(docs.max()) + 1)
        return self._dicts

    def columns(self) -> Qrels:
        """The same judgments as trecqr columns (for the columnar path)."""
        if self._columns is None:
            qids = list(chain.from_iterable(repeat(q, n) for q, n in zip(self.topics,
                                                                        self._sizes)))
            docnos = list(chain.from_iterable(self._dicts.values()))
            self._columns = Qrels(id_array(qids, "<qrels dict>"),
                                  id_array(docnos, "<qrels dict>"), self.grade, "<qrels dict>")
        return self._columns


def _encoded(col) -> pa.DictionaryArray:
    encoded = pc.dictionary_encode(col)
    return encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded


def _indices(col) -> pa.Array:
    return _encoded(col).indices
