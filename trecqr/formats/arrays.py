"""Arrow arrays to numpy without pyarrow's ``to_numpy``.

pyarrow's ``to_numpy`` imports pandas on first use (0.2 s, more than scoring a large run takes
once the file is read), so the scorer's hot path reads the buffers of primitive arrays itself:
zero-copy for one chunk without nulls, one concatenation for several chunks.

The two set operations a run's scoring needs on string columns (:func:`distinct`,
:func:`positions`) use ``pyarrow.compute`` on large columns only: its import (40-70 ms, the
functions it builds from Arrow's registry) is more than a small run's whole scoring (the
console script loads it on first use: :mod:`trecqr.runtime.launch`).
"""

from __future__ import annotations

from itertools import groupby

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.errors import InputError

IDX = np.int32  # row indices and codes: runs of up to 2**31 lines


def fits_int64(value: int) -> bool:
    """Whether an integer (a grade) fits the int64 every route reads grades as."""
    return -(1 << 63) <= value < (1 << 63)

# numpy's type of each Arrow number type, by the type's name (Arrow itself loads on first use)
_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
          "float": np.float32, "double": np.float64}


def _chunk(arr: pa.Array) -> np.ndarray:
    if arr.null_count:
        raise ValueError("array has nulls")
    if pa.types.is_boolean(arr.type):
        arr = arr.cast(pa.int8())
        return _chunk(arr).astype(bool)
    dtype = _NUMPY.get(str(arr.type))
    if dtype is None:
        raise TypeError(f"no numpy view of Arrow type {arr.type}")
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=dtype, count=len(arr),
                         offset=arr.offset * np.dtype(dtype).itemsize)


def as_numpy(arr) -> np.ndarray:
    """A numeric or boolean Arrow Array or ChunkedArray without nulls, as a numpy array (a
    numpy array as it is)."""
    if isinstance(arr, np.ndarray):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        if arr.num_chunks == 1:
            return _chunk(arr.chunk(0))
        if arr.num_chunks == 0:
            return np.zeros(0, _NUMPY.get(str(arr.type), np.int64))
        return np.concatenate([_chunk(c) for c in arr.chunks])
    return _chunk(arr)


def string_array(values: list) -> pa.Array:
    """A list of str as an Arrow string array, made from its two buffers: ``pa.array``
    imports pandas on first use (0.2 s, most of a small command's time)."""
    try:
        encoded = [v.encode("utf-8") for v in values]
    except (AttributeError, UnicodeEncodeError):  # not all str: Arrow's own conversion
        return pa.array(values, pa.string())
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    if lengths.sum() >= 2 ** 31:
        return pa.array(values, pa.string())
    return utf8_array(b"".join(encoded), lengths)


def id_array(values: list, source: str) -> pa.Array:
    """:func:`string_array` of the ids of a caller's object (a dict's keys, a small frame's
    column): an id with no UTF-8 form (a lone surrogate, which no Arrow string holds) is an
    InputError quoting it."""
    try:
        return string_array(values)
    except UnicodeEncodeError:
        raise not_utf8_among(values, source) from None


def key_id(key, source: str, what: str = "id") -> str:
    """A caller's key (a dict's, a record's) as the id it names, by the rule a DataFrame's id
    column follows (formats.tables.id_column), so that one topic is one topic through every
    door: text as it is, an integer (numpy's too) or an integral float as decimal text, bytes
    as UTF-8 text; anything else (None, a bool, 1.5, a tuple) is refused."""
    if isinstance(key, str):
        return key if type(key) is str else str.__str__(key)
    if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
        return str(int(key))
    if isinstance(key, (float, np.floating)) and float(key).is_integer():
        return str(int(key))
    if isinstance(key, bytes):
        try:
            return key.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(source, None, f"{what} {key!r} is not UTF-8 text") from None
    raise InputError(source, None, f"{what} {key!r} is not an id (text or an integer)")


def key_ids(keys, source: str, what: str = "id") -> list:
    """:func:`key_id` of each key; keys that are all text are taken as they are."""
    keys = list(keys)
    if all(type(k) is str for k in keys):
        return keys
    return [key_id(k, source, what) for k in keys]


def require_utf8(qrels: dict, source: str) -> None:
    """Refuse a ``{qid: {docno: ...}}`` dict holding an id with no UTF-8 form (a lone
    surrogate), quoting it: the routes that read Arrow columns cannot hold it, so no route
    may give it a value (pytrec_eval crashes on one). ASCII ids cost one C call a topic."""
    for qid, docs in qrels.items():
        if not (qid.isascii() and all(map(str.isascii, docs))):
            ids = [qid, *docs]
            if not all(map(_encodes, ids)):
                raise not_utf8_among(ids, source)


def not_utf8_among(values, source: str) -> InputError:
    """:func:`not_utf8_id` quoting the first str of ``values`` with no UTF-8 form."""
    return not_utf8_id(source, next((v for v in values if isinstance(v, str)
                                     and not _encodes(v)), None))


def not_utf8_id(source: str, text: str | None = None) -> InputError:
    """The error for an id with no UTF-8 form (quoted when known), for every reader of ids."""
    what = "an id" if text is None else f"id {text!r}"
    return InputError(source, None, f"{what} is not valid Unicode text (a lone surrogate); "
                                    "give ids that encode as UTF-8")


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def utf8_array(data: bytes, lengths: np.ndarray) -> pa.Array:
    """The strings whose UTF-8 byte lengths are ``lengths``, back to back in ``data``, as an
    Arrow string array made from the two buffers (large_string past 2 GiB of text)."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] >= 2 ** 31:
        return pa.Array.from_buffers(pa.large_string(), len(lengths),
                                     [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.Array.from_buffers(pa.string(), len(lengths),
                                 [None, pa.py_buffer(offsets.astype(np.int32)),
                                  pa.py_buffer(data)])


SMALL_SET = 1 << 16  # strings up to which a Python dict does a set operation: at 65,536 it
# takes about as long as importing pyarrow.compute


def distinct(arr) -> pa.Array:
    """The distinct strings of an Arrow string column, in first-seen order (``pc.unique``'s)."""
    if len(arr) > SMALL_SET:
        return pc.unique(arr)
    return string_array(list(dict.fromkeys(arr.to_pylist())))


def positions(arr, value_set) -> np.ndarray:
    """Each string's position in value_set (int32, ``pc.index_in``'s); every string is in it."""
    if len(arr) > SMALL_SET or len(value_set) > SMALL_SET:
        return as_numpy(pc.index_in(arr, value_set=value_set))
    index = {v: i for i, v in enumerate(value_set.to_pylist())}
    return np.fromiter(map(index.__getitem__, arr.to_pylist()), dtype=np.int32, count=len(arr))


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` without its import of ``numpy.ma`` (10 ms of a small run)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


# Arrow's view types (pyarrow 16; polars' and DuckDB's text) as the plain types the readers take
_PLAIN = {"string_view": "string", "binary_view": "binary"}


def one_chunk(arr) -> pa.Array:
    """An Array, or a ChunkedArray's chunks as one Array; text and bytes in Arrow's view
    types as plain ``string`` and ``binary`` (a copy, as polars' ``to_arrow`` makes them)."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    plain = _PLAIN.get(str(arr.type))
    return arr if plain is None else arr.cast(getattr(pa, plain)())


def filled(arr, fill) -> np.ndarray:
    """A numeric Arrow Array or ChunkedArray as numpy, its nulls replaced by ``fill``
    (``fill_null`` converts its scalar through pandas, imported on first use)."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = []
    for chunk in chunks:
        if not chunk.null_count:
            parts.append(_chunk(chunk))
            continue
        dtype = _NUMPY[str(chunk.type)]
        values = np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk),
                               offset=chunk.offset * np.dtype(dtype).itemsize)
        bits = np.unpackbits(np.frombuffer(chunk.buffers()[0], dtype=np.uint8),
                             bitorder="little")
        valid = bits[chunk.offset:chunk.offset + len(chunk)].astype(bool)
        parts.append(np.where(valid, values, fill).astype(dtype))
    if not parts:
        return np.zeros(0, _NUMPY.get(str(arr.type), np.int64))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def arrow_indices(values: np.ndarray) -> pa.Array:
    """A numpy integer array as an Arrow int64 array (for ``take``), without ``pa.array``,
    which imports pandas on first use."""
    return arrow_numbers(np.asarray(values, dtype=np.int64))


def arrow_numbers(values: np.ndarray) -> pa.Array:
    """A numpy numeric array as the Arrow array of its dtype, from its buffer (zero-copy
    when contiguous; no pandas)."""
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values),
                                 [None, pa.py_buffer(values)])


def arrow_mask(keep: np.ndarray) -> pa.Array:
    """A numpy boolean array as an Arrow boolean array (for ``filter``; no pandas)."""
    keep = np.asarray(keep, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(keep),
                                 [None, pa.py_buffer(np.packbits(keep, bitorder="little"))])


def _listed_column(name: str) -> property:
    """``qid`` or ``docno``: Arrow from the list ``_<name>s`` on first read; set, it replaces
    the list (the dataclass's __init__ sets None)."""
    arrow, values = f"_{name}", f"_{name}s"

    def get(self):
        if getattr(self, arrow) is None:
            setattr(self, arrow, id_array(getattr(self, values), self.source))
        return getattr(self, arrow)

    def put(self, value):
        setattr(self, arrow, value)
        if value is not None:
            setattr(self, values, None)

    return property(get, put)


class Listed:
    """Mixin for a Run or Qrels held as Python lists (``_qids``, ``_docnos``): a small
    DataFrame's or a small qrels file's. The ranking step takes the smallest inputs through
    the C pass over dicts made from these lists (:func:`trecqr.engine.rankings.rank`); their
    Arrow columns are made only when something reads them (the same values, by
    :func:`id_array`)."""

    qid = _listed_column("qid")
    docno = _listed_column("docno")

    def qid_list(self) -> list:
        return self._qids if self._qids is not None else self.qid.to_pylist()

    def docno_list(self) -> list:
        return self._docnos if self._docnos is not None else self.docno.to_pylist()

    @classmethod
    def of_lists(cls, qids: list, docnos: list, *args, **kwargs):
        """The object of these lists (the other fields as the dataclass takes them)."""
        obj = cls(None, None, *args, **kwargs)
        obj._qids, obj._docnos = qids, docnos
        return obj


SMALL_ROWS = 8192  # a DataFrame up to this many rows is read straight into Python lists
# (Listed): pandas' and Arrow's per-column costs would be most of a small frame's reading


def grouped_dicts(qid, docno, values) -> dict | None:
    """{qid: {docno: value}} of small columns, topics in first-seen order and each topic's
    documents in row order; None when a (qid, docno) repeats (the columnar path names the
    line). qid, docno: Arrow arrays or lists. Each topic's dict is made by one ``dict(zip(...))``
    over its consecutive rows (``itertools.groupby``): a statement per topic, none per row;
    rows of interleaved topics are first grouped by numpy."""
    if len(values) == 0:
        return {}
    qids = qid if isinstance(qid, list) else qid.to_pylist()
    docnos = docno if isinstance(docno, list) else docno.to_pylist()
    vals = values.tolist()
    out: dict = {}
    start = 0
    for topic, rows in groupby(qids):
        stop = start + len(list(rows))
        if topic in out:  # a topic's rows are not consecutive
            return _interleaved(qid, docnos, values)
        out[topic] = dict(zip(docnos[start:stop], vals[start:stop]))
        start = stop
    return out if sum(map(len, out.values())) == len(vals) else None


def _interleaved(qid, docnos: list, values) -> dict | None:
    """:func:`grouped_dicts` of rows whose topics interleave: grouped by a stable sort of
    the topics' first-seen codes."""
    qid = string_array(qid) if isinstance(qid, list) else qid
    encoded = qid.dictionary_encode()
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = as_numpy(encoded.indices)
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    docnos = np.array(docnos, dtype=object)[order].tolist()
    vals = np.asarray(values)[order].tolist()
    bounds = np.flatnonzero(np.diff(codes)) + 1
    starts = [0, *bounds.tolist()]
    stops = [*bounds.tolist(), len(codes)]
    topics = encoded.dictionary.to_pylist()
    out = {topics[codes[a]]: dict(zip(docnos[a:b], vals[a:b])) for a, b in zip(starts, stops)}
    return out if sum(map(len, out.values())) == len(vals) else None
