"""Runs and qrels held as tables: pandas DataFrames, pyarrow Tables, the tables of libraries that
export Arrow (polars, DuckDB, Hugging Face datasets), rows of namedtuples.

Every table becomes the columns the TREC file readers produce (:class:`~trecqr.formats.Run`,
:class:`~trecqr.formats.Qrels`) in Arrow, column by column, with no Python object per row: a
DataFrame's columns go to Arrow with ``pyarrow.Array.from_pandas``, rows of namedtuples
(ir_datasets' ``qrels_iter()`` / ``scoreddocs_iter()``, ir_measures' ``Qrel``/``ScoredDoc``)
are transposed once with ``zip`` and each column is converted by Arrow in one call.

The column names of the tools users hold are all read, the first one present winning:

=========  ============================================================================
column     names
=========  ============================================================================
topic      ``query_id`` (ir_measures, ir_datasets), ``qid`` (PyTerrier), ``q_id`` (ranx),
           ``query-id`` (BEIR, MTEB)
document   ``doc_id``, ``docno`` (PyTerrier), ``docid``, ``corpus-id`` (BEIR, MTEB), ``corpus_id``
score      ``score`` (a run; PyTerrier's ``rank`` is ignored, as trec_eval ignores ranks)
grade      ``relevance``, ``label`` (PyTerrier), ``score`` (ranx's qrels frame, BEIR's),
           ``grade``, ``rel``
=========  ============================================================================

Integer (or categorical) ids are read as their decimal text, as a TREC file would hold them.
A bad value is reported as one line naming the object and its row (0-based, positional):
``<run DataFrame>: row 17: score 'abc' is not a number``.
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError
from trecqr.formats.arrays import SMALL_ROWS, as_numpy, key_id, not_utf8_among, one_chunk
from trecqr.formats.qrels import ListedQrels, Qrels, parse_grade, warn_truncated
from trecqr.formats.run import ListedRun, Run, parse_score

TOPIC = ("query_id", "qid", "q_id", "query-id")
DOCUMENT = ("doc_id", "docno", "docid", "corpus-id", "corpus_id")
SCORE = ("score",)
GRADE = ("relevance", "label", "score", "grade", "rel")


def is_frame(obj) -> bool:
    """A pandas DataFrame, told by its shape (pandas need not be imported)."""
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns") and hasattr(obj, "iloc")


def is_arrow_table(obj) -> bool:
    return isinstance(obj, (pa.Table, pa.RecordBatch))


def is_hf_dataset(obj) -> bool:
    """A Hugging Face ``datasets.Dataset`` (BEIR's and MTEB's qrels), told by its module:
    ``datasets`` is not imported. A streamed ``IterableDataset`` is read as rows."""
    return type(obj).__name__ == "Dataset" and hasattr(obj, "with_format") \
        and type(obj).__module__.split(".")[0] == "datasets"


def is_arrow_exporter(obj) -> bool:
    """Another library's table that exports itself as Arrow: the Arrow PyCapsule stream
    (polars, DuckDB, nanoarrow...) or a Hugging Face Dataset."""
    return hasattr(obj, "__arrow_c_stream__") or is_hf_dataset(obj)


def arrow_table(obj, source: str):
    """An Arrow Table or RecordBatch as is; an exporter's table as Arrow (a polars frame's
    columns through the PyCapsule stream, without a copy; a Hugging Face Dataset's Arrow view,
    its selection and order kept)."""
    if is_arrow_table(obj):
        return obj
    try:
        return obj.with_format("arrow")[:] if is_hf_dataset(obj) else pa.table(obj)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise InputError(source, None, f"not readable as an Arrow table ({exc})") from None


def _pick(names, wanted: tuple, what: str, source: str, frame=None) -> str:
    """The first of the wanted column names present. A DataFrame's index, where a ``groupby``
    or ``set_index`` leaves the ids, is not read but named in the error."""
    for name in wanted:
        if name in names:
            return name
    index = [] if frame is None else [n for n in frame.index.names if n is not None]
    hint = next((f"; {name} is the DataFrame's index: pass frame.reset_index()"
                 for name in wanted if name in index), "")
    raise InputError(source, None, f"no {what} column (one of {', '.join(wanted)}); "
                                   f"columns: {', '.join(map(str, names)) or 'none'}{hint}")


def _frame_values(frame, name):
    """A DataFrame column's values (a numpy or pandas extension array), without the Series
    pandas builds for ``frame[name]`` (10 us a column, most of a small frame's conversion):
    read from the frame's block manager where it has one (pandas 1.1 to 3), else the Series."""
    mgr = getattr(frame, "_mgr", None)
    loc = frame.columns.get_loc(name)
    if isinstance(loc, int) and hasattr(mgr, "iget_values"):
        return mgr.iget_values(loc)
    return frame[name]


def _from_pandas(frame, name, ids: str | None, source: str) -> pa.Array:
    """One column as Arrow, as ``pyarrow.Array.from_pandas`` reads it (NaN and None: null).
    ids: what the column holds when it is a topic or document column ("query id")."""
    try:
        return pa.array(_frame_values(frame, name), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError,
            OverflowError):  # mixed Python objects, complex numbers, or an int past 64 bits:
        # as text, which the column readers check
        return _as_text(list(frame[name]), ids, source)


def _as_text(values: list, ids: str | None, source: str) -> pa.Array:
    """Values of mixed types as text; ids by the rule of a dict's keys (formats.arrays.key_id:
    ``1.0`` is ``1``; a bool, ``1.5`` or undecodable bytes refused, naming the row), so that
    an id is one id through every door; missing values stay missing."""
    if ids is None:
        return pa.array([_text_or_none(v) for v in values], pa.string())
    out = []
    for i, value in enumerate(values):
        try:
            out.append(None if _missing(value) else key_id(value, source, ids))
        except InputError as exc:
            raise InputError(source, None, f"row {i}: {exc.message}") from None
    return pa.array(out, pa.string())


def _missing(value) -> bool:
    """None, NaN or pandas' NA: a missing value, which the column readers name."""
    return value is None or type(value).__name__ == "NAType" or (
        isinstance(value, (float, np.floating)) and value != value)


def _text_or_none(value):
    return None if _missing(value) else str(value)


def _first_null(arr: pa.Array) -> int:
    return int(np.flatnonzero(as_numpy(arr.is_null()))[0])


def id_column(arr, what: str, source: str) -> pa.Array:
    """A topic or document column as Arrow strings: text as is, integers as decimal text."""
    arr = one_chunk(arr)
    if arr.null_count:
        raise InputError(source, None, f"row {_first_null(arr)}: {what} is missing")
    typ = arr.type
    if pa.types.is_dictionary(typ):
        arr = one_chunk(arr.dictionary).take(arr.indices)  # decoded: its values plain first
        typ = arr.type
    if pa.types.is_floating(typ):  # ids that went through a float column (pandas with NaN)
        values = as_numpy(arr)
        bad = np.flatnonzero(values != np.trunc(values))
        if len(bad):
            i = int(bad[0])
            raise InputError(source, None, f"row {i}: {what} {values[i]!r} is not an id "
                                           "(text or an integer)")
        arr = arr.cast(pa.int64())
        typ = arr.type
    if pa.types.is_binary(typ) or pa.types.is_large_binary(typ):
        try:
            return arr.cast(pa.string())
        except pa.ArrowInvalid:
            raise InputError(source, None, f"{what} column is not UTF-8 text") from None
    if typ == pa.string():
        return arr
    if pa.types.is_large_string(typ):  # pandas 3's default text columns
        return _narrow(arr)
    if not pa.types.is_integer(typ):
        raise InputError(source, None, f"{what} column holds {typ}, not text or integers")
    return arr.cast(pa.string())


def _narrow(arr: pa.Array) -> pa.Array:
    """large_string as string, its text not copied: the 64-bit offsets narrowed by numpy
    (a third of the time of Arrow's cast on the small frames of a training loop)."""
    offsets = np.frombuffer(arr.buffers()[1], np.int64, len(arr) + 1, arr.offset * 8)
    if offsets[-1] >= 2 ** 31:
        return arr.cast(pa.string())
    return pa.Array.from_buffers(pa.string(), len(arr),
                                 [None, pa.py_buffer(offsets.astype(np.int32)),
                                  arr.buffers()[2]])


def score_column(arr, source: str) -> np.ndarray:
    """A run's scores as float64: numbers, or text that reads as a finite decimal number."""
    arr = one_chunk(arr)
    if arr.null_count:
        raise InputError(source, None, f"row {_first_null(arr)}: score is missing")
    typ = arr.type
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        texts = arr.to_pylist()  # only text scores (JSON "1.5"): checked one by one
        for i, text in enumerate(texts):
            if parse_score(text.strip()) is None:
                raise InputError(source, None, f"row {i}: score {text!r} is not a number")
        arr = arr.cast(pa.float64())
    elif not (pa.types.is_integer(typ) or pa.types.is_floating(typ)
              or pa.types.is_boolean(typ) or pa.types.is_decimal(typ)):
        raise InputError(source, None, f"score column holds {typ}, not numbers")
    score = np.array(as_numpy(arr if arr.type == pa.float64() else arr.cast(pa.float64())),
                     dtype=np.float64)
    finite = np.isfinite(score)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(source, None,
                         f"row {i}: score {float(score[i])!r} is not a finite number")
    return score


def grade_column(arr, source: str) -> np.ndarray:
    """Grades as int64; fractional ones truncated with one warning, as trec_eval's atol does."""
    arr = one_chunk(arr)
    if arr.null_count:
        raise InputError(source, None, f"row {_first_null(arr)}: relevance is missing")
    typ = arr.type
    if pa.types.is_boolean(typ):
        return as_numpy(arr).astype(np.int64)
    if pa.types.is_integer(typ):
        if pa.types.is_uint64(typ) and len(arr) and int(as_numpy(arr).max()) >= 1 << 63:
            raise InputError(source, None, "a grade is out of the 64-bit integer range")
        return np.array(as_numpy(arr if typ == pa.int64() else arr.cast(pa.int64())),
                        dtype=np.int64)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        grades, first, count = [], None, 0
        for i, text in enumerate(arr.to_pylist()):
            try:
                value, truncated = parse_grade(text.strip(), source, None)
            except InputError as e:  # named by its row, as the other columns' errors are
                raise InputError(source, None, f"row {i}: {e.message}") from None
            if truncated:
                count += 1
                first = first or (i, text, value)
            grades.append(value)
        if first:
            warn_truncated(f"{source}: row {first[0]}", None, first[1], first[2], count)
        return np.asarray(grades, dtype=np.int64)
    if not pa.types.is_floating(typ):
        raise InputError(source, None, f"relevance column holds {typ}, not integers")
    rel = np.asarray(as_numpy(arr.cast(pa.float64())))
    finite = np.isfinite(rel)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(source, None, f"row {i}: relevance {rel[i]!r} is not an integer")
    cut = np.trunc(rel)
    fractional = np.flatnonzero(cut != rel)
    if len(fractional):
        i = int(fractional[0])
        warn_truncated(f"{source}: row {i}", None, repr(float(rel[i])), int(cut[i]),
                       len(fractional))
    if len(cut) and (cut.min() < -2.0 ** 63 or cut.max() >= 2.0 ** 63):
        raise InputError(source, None, "a grade is out of the 64-bit integer range")
    return cut.astype(np.int64)


def _picked(obj, wanted: list, source: str) -> dict:
    """{role: column name} for roles (name, candidates, what) of a DataFrame or Arrow table."""
    names = obj.columns if is_frame(obj) else obj.schema.names  # a pandas Index: hashed look-ups
    frame = obj if is_frame(obj) else None
    return {role: _pick(names, cands, what, source, frame) for role, cands, what in wanted}


def _columns(obj, wanted: list, source: str):
    """{role: Arrow column} for roles (name, candidates, what) of a DataFrame or Arrow table."""
    picked = _picked(obj, wanted, source)
    if is_frame(obj):
        arrays = {}
        ids = {picked[role]: what for role, what in (("q", "query id"), ("d", "doc id"))
               if role in picked}
        for name in set(picked.values()):
            try:
                arrays[name] = _from_pandas(obj, name, ids.get(name), source)
            except UnicodeEncodeError:  # a lone surrogate, which no Arrow string holds
                raise not_utf8_among(obj[name], source) from None
        return {role: arrays[name] for role, name in picked.items()}
    return {role: obj.column(name) for role, name in picked.items()}


def _empty(n: int, source: str) -> None:
    if n == 0:
        raise InputError(source, None, "no rows")


RUN_ROLES = [("q", TOPIC, "topic"), ("d", DOCUMENT, "document"), ("s", SCORE, "score")]
QRELS_ROLES = [("q", TOPIC, "topic"), ("d", DOCUMENT, "document"), ("g", GRADE, "relevance")]


def _text(values) -> list | None:
    """A column's values when every one is a str: a numpy object column's, or a pandas text
    column's (``str`` in pandas 3, ``string``; a missing value is not a str)."""
    if isinstance(values, np.ndarray):
        if values.dtype != object:
            return None
        values = values.tolist()
    elif getattr(getattr(values, "dtype", None), "name", None) in ("str", "string"):
        # Arrow's view of the column (pandas' Arrow-backed text: no copy), read once
        values = pa.array(values, from_pandas=True).to_pylist()
    else:
        return None
    return values if set(map(type, values)) <= {str} else None


def listed_frame(topic, docno, value, kind: str, source: str, runid: str = "trecqr"):
    """A ListedRun (kind "run": ``value`` the scores) or ListedQrels ("qrels": the grades)
    of a DataFrame's column values, or None when they are not plainly text ids and float64
    scores (finite) or int64 grades, or are none (the caller keeps to small frames). Reading
    them straight into the lists the C pass's dicts are made from skips making Arrow columns
    and reading them back, most of a small call's time."""
    if not len(value) or not isinstance(value, np.ndarray):
        return None
    if kind == "run":
        if value.dtype != np.float64 or not np.isfinite(value).all():
            return None
    elif value.dtype != np.int64:
        return None
    qids = _text(topic)
    docnos = None if qids is None else _text(docno)
    if docnos is None:
        return None
    value = np.array(value, dtype=value.dtype)  # a copy: the frame may change later
    if kind == "run":
        return ListedRun.of_lists(qids, docnos, value, runid, source)
    return ListedQrels.of_lists(qids, docnos, value, source)


def _listed(obj, roles: list, kind: str, source: str, runid: str = "trecqr"):
    """A small DataFrame of text ids and plain numbers as lists (:func:`listed_frame`), or
    None."""
    if not is_frame(obj) or len(obj) > SMALL_ROWS:
        return None
    q, d, v = _picked(obj, roles, source).values()
    if len({q, d, v}) < 3:
        return None
    return listed_frame(_frame_values(obj, q), _frame_values(obj, d), _frame_values(obj, v),
                        kind, source, runid)


def run_from_table(obj, source: str = "<run table>", runid: str = "trecqr") -> Run:
    """A Run from a DataFrame or an Arrow Table / RecordBatch (see the module docstring)."""
    listed = _listed(obj, RUN_ROLES, "run", source, runid)
    if listed is not None:
        return listed
    cols = _columns(obj, RUN_ROLES, source)
    _empty(len(cols["s"]), source)
    return Run(id_column(cols["q"], "query id", source), id_column(cols["d"], "doc id", source),
               score_column(cols["s"], source), runid, source)


def qrels_from_table(obj, source: str = "<qrels table>") -> Qrels:
    """Qrels from a DataFrame or an Arrow Table / RecordBatch (see the module docstring)."""
    listed = _listed(obj, QRELS_ROLES, "qrels", source)
    if listed is not None:
        return listed
    cols = _columns(obj, QRELS_ROLES, source)
    _empty(len(cols["g"]), source)
    return Qrels(id_column(cols["q"], "query id", source),
                 id_column(cols["d"], "doc id", source), grade_column(cols["g"], source),
                 source)


def run_from_frame(frame, source: str = "<run DataFrame>", runid: str = "trecqr") -> Run:
    """A pandas DataFrame of a run, in either convention: :func:`run_from_table`."""
    return run_from_table(frame, source, runid)


def qrels_from_frame(frame, source: str = "<qrels DataFrame>") -> Qrels:
    """A pandas DataFrame of qrels, in either convention: :func:`qrels_from_table`."""
    return qrels_from_table(frame, source)


def rows_table(first, rest, source: str) -> pa.Table:
    """Rows of namedtuples (``first`` and the iterator of the others) as an Arrow table."""
    fields = getattr(first, "_fields", None)
    if fields is None:
        if isinstance(first, dict):
            rows = [first, *rest]
            try:
                return pa.Table.from_pylist(rows)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
                raise InputError(source, None, f"rows of dicts: {exc}") from None
        raise InputError(source, None, f"expected rows of namedtuples (query_id, doc_id, ...) "
                                       f"such as ir_datasets' and ir_measures', not "
                                       f"{type(first).__name__}")
    rows = [first, *rest]
    out = {}
    for i, name in enumerate(fields):
        values = list(map(itemgetter(i), rows))  # one C-level pass per field
        ids = "query id" if name in TOPIC else "doc id" if name in DOCUMENT else None
        out[name] = _column(values, first[i], ids, source)
    return pa.table(out)


def _column(values: list, example, ids: str | None, source: str) -> pa.Array:
    """Values of one field as an Arrow array, typed from the first row's value (Arrow's own
    type inference is ten times slower on text); mixed types are read as text. Integers
    followed by floats (``ScoredDoc(q, d, 1)``, then ``0.13``) are floats: Arrow would cut
    0.13 to 0 in an int64 column, without a word."""
    typ = pa.string() if isinstance(example, str) else pa.float64() \
        if isinstance(example, float) else pa.int64() \
        if isinstance(example, int) and not isinstance(example, bool) else None
    if typ == pa.int64():
        types = set(map(type, values))
        typ = typ if types <= {int} else pa.float64() if types <= {int, float} else None
    try:
        return pa.array(values, typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return _as_text(values, ids, source)
