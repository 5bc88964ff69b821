"""Passage collections, streamed one line at a time.

``tsv`` (``.tsv``, ``.tab``)
    ``id<TAB>text<TAB>title`` with a header row (TopiOCQA's ``full_wiki_segments.tsv``). The
    header names the columns (``id``/``docid``/``pid``, ``text``/``contents``/``passage``,
    ``title``), in any order; a file whose first line is not such a header is read as
    ``id<TAB>text[<TAB>title]`` (MS MARCO's ``collection.tsv``). A TopiOCQA title
    ``Title [SEP] Section`` is indexed as ``Title Section`` (one space, as the papers join it);
    the indexed text is ``title text``.
``jsonl`` (``.jsonl``, ``.json``, ``.ndjson``)
    ``{"id": ..., "contents": ...}`` per line (Pyserini's layout); ``docid``/``_id`` and
    ``text`` (with an optional ``title``) are accepted too.

``irds:<dataset id>`` (or an ir_datasets dataset object)
    the dataset's ``docs_iter()``, streamed through ir_datasets' own parsers; each doc's text is
    ir_datasets' ``default_text()`` (title and body joined, for the types that have both), else
    its ``text``/``body`` field with a ``title`` in front. Nothing is downloaded: the dataset's
    files must be in ``IR_DATASETS_HOME`` already, else a UsageError names each missing file.

Files may be gzipped. A docid must be non-empty and hold no white space (it becomes a TREC
run's docno); problems are InputErrors with the file's line (the doc's position for irds).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import os
import re
import zlib
from dataclasses import dataclass

from trecqr.datasets import irds
from trecqr.datasets.records import json_records
from trecqr.errors import InputError, UsageError
from trecqr.formats.textio import unreadable

COLLECTION_FORMATS = ("tsv", "jsonl")
_EXT = {".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}
ID_COLUMNS = ("id", "docid", "doc_id", "pid", "_id")
TEXT_COLUMNS = ("text", "contents", "passage", "body")
TITLE_COLUMNS = ("title",)


@dataclass(frozen=True)
class Doc:
    docid: str
    text: str  # what is indexed: title and text joined
    line: int


IRDS_PREFIX = "irds:"


def is_irds(source) -> bool:
    """True for ``irds:<id>`` strings and ir_datasets dataset objects."""
    return (isinstance(source, str) and source.startswith(IRDS_PREFIX)) or \
        hasattr(source, "docs_iter")


def check_collection(source):
    """source itself, or an InputError when it is neither ``irds:<id>`` nor an existing file
    (checked before any index is built)."""
    if not is_irds(source) and not os.path.isfile(source):
        raise InputError(os.fspath(source), None,
                         "no such collection file (or give irds:<dataset id>)")
    return source


def collection_label(source) -> str:
    """How a collection is named in manifests: an absolute path, ``irds:<id>`` or a repr."""
    if isinstance(source, str) and source.startswith(IRDS_PREFIX):
        return source
    if hasattr(source, "docs_iter"):
        return f"irds:{getattr(source, 'dataset_id', lambda: '<dataset>')()}" \
            if callable(getattr(source, "dataset_id", None)) else "irds:<dataset object>"
    return os.path.abspath(os.fspath(source))


def collection_format(path, format: str | None = None) -> str:
    if format:
        if format not in COLLECTION_FORMATS:
            raise UsageError(f"unknown collection format {format!r} (use tsv or jsonl)")
        return format
    name = os.fspath(path)
    if name.endswith(".gz"):
        name = name[:-3]
    fmt = _EXT.get(os.path.splitext(name)[1].lower())
    if fmt is None:
        raise UsageError(f"{path}: cannot tell the collection format from the name; "
                         "give it (tsv or jsonl)")
    return fmt


def _open(path):
    name = os.fspath(path)
    try:
        raw = gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb")
    except OSError as exc:
        raise unreadable(name, exc) from None
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="strict", newline="\n")


_SEP = re.compile(r"\s*\[SEP\]\s*")


def _clean_title(title: str) -> str:
    """TopiOCQA's ``Title [SEP] Section`` as the papers index it, ``Title Section`` (one space:
    ConvSearch-R1, ConvGQR and AdaCQR write ``' '.join(title.split(' [SEP] '))``); a dense
    tokenizer would see the extra spaces of a plain replacement."""
    return _SEP.sub(" ", title).strip()


def _join(title: str, text: str) -> str:
    title = _clean_title(title)
    return f"{title} {text}" if title else text


_WHITE_SPACE = re.compile(r"\s").search  # re's \s is str.isspace, character for character
# a code point in D800-DFFF in a str is a lone surrogate (JSON's "\ud800"; a valid pair
# decodes to one character), which no UTF-8 file (docids.txt, a run) can hold
_SURROGATE = re.compile(r"[\ud800-\udfff]").search


def valid_docid(docid) -> bool:
    """A docid can be a TREC run's docno: a non-empty string of characters (no lone
    surrogate) without white space."""
    return isinstance(docid, str) and bool(docid) and _WHITE_SPACE(docid) is None \
        and _SURROGATE(docid) is None


def _check_id(name, lineno, docid) -> str:
    if not valid_docid(docid):
        what = "a lone surrogate (not a Unicode character)" \
            if isinstance(docid, str) and docid and not _WHITE_SPACE(docid) \
            else "empty or holds white space"
        raise InputError(name, lineno, f"bad docid {docid!r}: {what}")
    return docid


def _iter_tsv(name, fh):
    cols = None
    for lineno, line in enumerate(fh, 1):
        line = line.rstrip("\n").rstrip("\r")
        if not line.strip():
            continue
        parts = line.split("\t")
        if cols is None:
            low = [p.strip().lower() for p in parts]
            id_col = next((low.index(c) for c in ID_COLUMNS if c in low), None)
            text_col = next((low.index(c) for c in TEXT_COLUMNS if c in low), None)
            if id_col is not None and text_col is not None:
                title_col = next((low.index(c) for c in TITLE_COLUMNS if c in low), None)
                cols = (id_col, text_col, title_col)
                continue
            cols = (0, 1, 2)
        id_col, text_col, title_col = cols
        need = max(id_col, text_col) + 1
        if len(parts) < need:
            raise InputError(name, lineno, f"expected at least {need} tab-separated fields, "
                                           f"found {len(parts)}")
        title = parts[title_col] if title_col is not None and title_col < len(parts) else ""
        yield Doc(_check_id(name, lineno, parts[id_col].strip()),
                  _join(title, parts[text_col]), lineno)


def _iter_jsonl(name, fh, start: int = 1):
    for lineno, rec in json_records(name, fh, start):
        key = next((k for k in ID_COLUMNS if k in rec), None)
        if key is None:
            raise InputError(name, lineno, "no id field (id, docid, _id)")
        if "contents" in rec:
            text = rec["contents"]
        else:
            tkey = next((k for k in TEXT_COLUMNS if k in rec), None)
            if tkey is None:
                raise InputError(name, lineno, "no contents or text field")
            text = rec[tkey]
        if not isinstance(text, str):
            raise InputError(name, lineno, "the text field is not a string")
        if not text.isascii():
            text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates -> ?
        title = rec.get("title") if "contents" not in rec else ""
        yield Doc(_check_id(name, lineno, str(rec[key]).strip()),
                  _join(title if isinstance(title, str) else "", text), lineno)


def _doc_text(doc) -> str | None:
    if hasattr(doc, "default_text"):
        return doc.default_text()
    fields = doc._fields
    body = next((getattr(doc, f) for f in ("text", "body", "contents", "passage")
                 if f in fields), None)
    if body is None:
        return None
    title = getattr(doc, "title", "") if "title" in fields else ""
    return _join(title or "", body)


def _iter_irds(source):
    if isinstance(source, str):
        dataset_id = source[len(IRDS_PREFIX):]
        dataset = irds.load(dataset_id)
    else:
        dataset, dataset_id = source, collection_label(source)[len(IRDS_PREFIX):]
    name = f"{IRDS_PREFIX}{dataset_id}"
    if not dataset.has_docs():
        raise UsageError(f"ir_datasets {dataset_id!r} has no documents")
    handler = dataset.docs_handler()
    irds.check_local(dataset_id, handler, "documents")
    with irds.offline_guard(dataset_id, handler, "documents"):
        for i, doc in enumerate(dataset.docs_iter(), 1):
            text = _doc_text(doc)
            if not isinstance(text, str):
                raise InputError(name, i, f"document {doc[0]!r} has no text field "
                                          f"({', '.join(doc._fields)})")
            yield Doc(_check_id(name, i, str(doc[0]).strip()), text, i)


def iter_collection(path, format: str | None = None):
    """Yield each :class:`Doc` of a TSV or JSONL collection or an ir_datasets dataset,
    streaming it."""
    if is_irds(path):
        yield from _iter_irds(path)
        return
    fmt = collection_format(path, format)
    name = os.fspath(path)
    with _open(name) as fh, _read_errors(name):
        yield from (_iter_tsv if fmt == "tsv" else _iter_jsonl)(name, fh)


@contextlib.contextmanager
def _read_errors(name):
    try:
        yield
    except UnicodeDecodeError as exc:
        raise InputError(name, None, f"not UTF-8: {exc.reason}") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:  # a truncated or damaged .gz
        raise InputError(name, None, f"corrupt gzip data ({exc})") from None


def jsonl_line_blocks(path, size: int):
    """(number of the first line, lines) of a JSONL collection file, size lines at a time,
    unparsed: worker processes parse them (:func:`jsonl_docs`), so the reading process only
    decodes and splits lines."""
    name = os.fspath(path)
    with _open(name) as fh, _read_errors(name):
        first = 1
        while True:
            lines = list(itertools.islice(fh, size))
            if not lines:
                return
            yield first, lines
            first += len(lines)


def jsonl_docs(name: str, first: int, lines) -> tuple:
    """(docids, texts) of a block of JSONL lines numbered from first, read and checked as
    :func:`iter_collection` reads and checks them."""
    ids, texts = [], []
    for doc in _iter_jsonl(name, lines, first):
        ids.append(doc.docid)
        texts.append(doc.text)
    return ids, texts
