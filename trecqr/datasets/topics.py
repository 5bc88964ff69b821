"""Topic (query) files: classic TREC topics, TSV and JSONL, read and written.

:class:`Topics` holds ordered qids and their queries, and optional per-topic metadata (a dict
per qid, e.g. ``{"turn_type": "topic shift"}``) for breakdowns by turn type.

Formats (chosen from the file name, or given as ``format=``):

``trec`` (``.trec``, ``.txt``, ``.xml``, ``.topics``)
    ``<top>`` blocks with ``<num>`` and ``<title>`` fields::

        <top>
        <num> Number: 31_1
        <title> What is throat cancer?
        </top>

    Read tolerantly: ``<num> Number: 31_1``, ``<num> 31_1`` or ``<num>31_1</num>``; ``<title>``
    with or without ``Topic:``, with or without ``</title>``, over one or several lines;
    ``<desc>`` (``Description:``) and ``<narr>`` (``Narrative:``) are kept as metadata
    ``desc``/``narr``; a missing final ``</top>`` is accepted. White space inside a title is
    collapsed to single spaces, so writing a query with a tab, a newline or repeated spaces
    writes the collapsed text (counted in a warning). A query containing one of the field tags
    (``<top>``, ``</title>``, ...) cannot be written in this format (UsageError).
``tsv`` (``.tsv``, ``.tab``)
    ``qid<TAB>query`` per line. The query is everything after the first tab (a line without a
    tab is an error), a final ``\\r`` is dropped, blank lines are skipped, and a first line
    ``qid<TAB>query`` is taken as a header. Writing replaces each tab, carriage return or newline
    inside a query by one space (counted in a warning); other characters are written as they are.
``jsonl`` (``.jsonl``, ``.json``, ``.ndjson``)
    One ``{"qid": ..., "query": ...}`` object per line (UTF-8, not ASCII-escaped), exact for any
    text. Other keys become metadata on reading, and metadata is written back as extra keys. On
    reading, the id and query fields are found automatically (``QID_FIELDS`` in
    :mod:`trecqr.datasets.records`, ``QUERY_FIELDS`` here, or a pair of conversation and turn
    fields such as ``Conversation_no``/``Turn_no``, which
    gives the canonical id ``conv_turn``), or named with ``qid_field=`` and ``query_field=``.

Files may be gzipped (``name.tsv.gz``); ``-`` is stdin/stdout. Output is written atomically.
A qid that occurs twice is an error (InputError with its line).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from dataclasses import dataclass, field

from trecqr.errors import InputError, UsageError
from trecqr.formats.textio import decode_text, read_source
from trecqr.formats.writer import atomic_write_text
from trecqr.datasets.fields import check_named_fields, field_list, name_it
from trecqr.datasets.records import id_getter, json_records, record_id
from trecqr.datasets.turn_ids import convert_ids

FORMATS = ("trec", "tsv", "jsonl")
_EXTENSIONS = {
    ".trec": "trec", ".txt": "trec", ".xml": "trec", ".topics": "trec",
    ".tsv": "tsv", ".tab": "tsv",
    ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
}
QUERY_FIELDS = ("query", "text", "question", "utterance", "title", "raw_utterance", "Question")


@dataclass
class Topics:
    """Ordered topics: ``qids[i]`` asks ``queries[i]``; ``metadata`` maps a qid to a dict."""

    qids: list = field(default_factory=list)
    queries: list = field(default_factory=list)
    metadata: dict = field(default_factory=dict)
    source: str = "<topics>"

    def __post_init__(self):
        if len(self.qids) != len(self.queries):
            raise UsageError(f"{len(self.qids)} qids but {len(self.queries)} queries")
        self.qids = [str(q) for q in self.qids]
        self.queries = list(self.queries)
        seen = set()
        for q in self.qids:
            if q in seen:
                raise UsageError(f"duplicate qid {q!r} in topics")
            seen.add(q)

    def __len__(self) -> int:
        return len(self.qids)

    def __iter__(self):
        return iter(zip(self.qids, self.queries))

    def __contains__(self, qid) -> bool:
        return qid in self.as_dict()

    def __getitem__(self, qid):
        return self.as_dict()[qid]

    def as_dict(self) -> dict:
        """``{qid: query}`` in order."""
        return dict(zip(self.qids, self.queries))

    @classmethod
    def from_dict(cls, mapping: dict, metadata: dict | None = None, source: str = "<topics>"):
        return cls(list(mapping), list(mapping.values()), dict(metadata or {}), source)

    def restyle(self, style: str) -> Topics:
        """The same topics with qids written in another turn-id style (see turn_ids)."""
        new = convert_ids(self.qids, style, self.source).to_pylist()
        rename = dict(zip(self.qids, new))
        meta = {rename[q]: m for q, m in self.metadata.items() if q in rename}
        return Topics(new, list(self.queries), meta, self.source)

    def subset(self, qids) -> Topics:
        keep = set(qids)
        pairs = [(q, t) for q, t in self if q in keep]
        meta = {q: m for q, m in self.metadata.items() if q in keep}
        return Topics([q for q, _ in pairs], [t for _, t in pairs], meta, self.source)


def format_of(path, format: str | None = None) -> str:
    """The format named, or the one the file name implies (``.gz`` ignored)."""
    if format is not None:
        if format not in FORMATS:
            raise UsageError(f"unknown topics format {format!r}: use one of {', '.join(FORMATS)}")
        return format
    name = os.fspath(path) if not hasattr(path, "read") else getattr(path, "name", "")
    name = str(name).lower()
    name = name.removesuffix(".gz")
    ext = os.path.splitext(name)[1]
    if ext not in _EXTENSIONS:
        raise UsageError(f"cannot tell the topics format of {name or path!r} from its name: "
                         f"give the format ({', '.join(FORMATS)})")
    return _EXTENSIONS[ext]


def read_text_file(path) -> tuple[str, str]:
    src = read_source(path)
    return src.name, decode_text(src).decode("utf-8")


# ---------------------------------------------------------------- TREC
_TAG = re.compile(r"<(/?)(top|num|title|desc|narr)>", re.IGNORECASE)
_NUM_PREFIX = re.compile(r"^\s*Number\s*:\s*", re.IGNORECASE)
_TITLE_PREFIX = re.compile(r"^\s*Topic\s*:\s*", re.IGNORECASE)
_DESC_PREFIX = re.compile(r"^\s*Description\s*:\s*", re.IGNORECASE)
_NARR_PREFIX = re.compile(r"^\s*Narrative\s*:\s*", re.IGNORECASE)
_PREFIX = {"num": _NUM_PREFIX, "title": _TITLE_PREFIX, "desc": _DESC_PREFIX,
           "narr": _NARR_PREFIX}


def _parse_trec(name: str, text: str) -> Topics:
    qids, queries, meta = [], [], {}
    line_of = lambda pos: text.count("\n", 0, pos) + 1
    tags = list(_TAG.finditer(text))
    open_at = None  # position of the current <top>
    fields: dict = {}
    current = None  # (field name, content start)

    def close_field(end):
        nonlocal current
        if current is not None:
            key, start = current
            value = " ".join(_PREFIX[key].sub("", text[start:end], count=1).split())
            if key in fields:
                raise InputError(name, line_of(start), f"<{key}> given twice in one topic")
            fields[key] = value
            current = None

    def close_topic(pos):
        nonlocal open_at, fields
        if "num" not in fields or not fields["num"]:
            raise InputError(name, line_of(open_at), "topic without a <num>")
        qid = fields["num"].split()[0] if fields["num"].split() else ""
        if "title" not in fields:
            raise InputError(name, line_of(open_at), f"topic {qid} has no <title>")
        if qid in set_qids:
            raise InputError(name, line_of(open_at), f"duplicate topic {qid!r}")
        set_qids.add(qid)
        qids.append(qid)
        queries.append(fields["title"])
        extra = {k: fields[k] for k in ("desc", "narr") if k in fields}
        if extra:
            meta[qid] = extra
        open_at, fields = None, {}

    set_qids: set = set()
    for m in tags:
        closing, tag = m.group(1) == "/", m.group(2).lower()
        if tag == "top":
            if not closing:
                if open_at is not None:  # <top> without </top>
                    close_field(m.start())
                    close_topic(m.start())
                open_at = m.start()
            else:
                if open_at is None:
                    raise InputError(name, line_of(m.start()), "</top> without <top>")
                close_field(m.start())
                close_topic(m.start())
            continue
        if open_at is None:
            raise InputError(name, line_of(m.start()), f"<{tag}> outside <top> ... </top>")
        close_field(m.start())
        if not closing:
            current = (tag, m.end())
    if open_at is not None:  # missing final </top>
        close_field(len(text))
        close_topic(len(text))
    if not qids:
        raise InputError(name, None, "no <top> topics found")
    return Topics(qids, queries, meta, name)


def _trec_text(topics: Topics) -> tuple[str, int]:
    out, changed = [], 0
    for qid, query in topics:
        flat = " ".join(str(query).split())
        if flat != query:
            changed += 1
        if _TAG.search(flat) or _TAG.search(qid):
            raise UsageError(f"topic {qid!r}: a query containing a TREC topic tag "
                             "(<top>, <title>, ...) cannot be written as a TREC topic file")
        if not qid or qid != "".join(qid.split()):
            raise UsageError(f"qid {qid!r} is empty or contains white space")
        out.append(f"<top>\n<num> Number: {qid}\n<title> {flat}\n</top>\n\n")
    return "".join(out), changed


# ---------------------------------------------------------------- TSV
def parse_tsv(name: str, text: str, *, allow_empty: bool = False) -> Topics:
    qids, queries = [], []
    seen: dict = {}
    header_checked = False
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        qid, tab, query = line.partition("\t")
        if not header_checked:
            header_checked = True
            if qid.lower() in ("qid", "query_id") and query.lower() in ("query", "text", "rewrite"):
                continue  # a header line
        if not tab and not allow_empty:
            raise InputError(name, lineno, "expected qid<TAB>query")
        if not tab and len(qid.split()) > 1:  # "qid text" separated by spaces, not a tab
            raise InputError(name, lineno, "no tab between the qid and the text (an empty text "
                                           "is written qid<TAB>)")
        qid = qid.strip()
        if not qid:
            raise InputError(name, lineno, "empty qid")
        if qid in seen:
            raise InputError(name, lineno, f"duplicate qid {qid!r} (first on line {seen[qid]})")
        if not query.strip() and not allow_empty:
            raise InputError(name, lineno, f"topic {qid!r} has an empty query")
        seen[qid] = lineno
        qids.append(qid)
        queries.append(query)
    return Topics(qids, queries, {}, name)


def _tsv_text(topics: Topics) -> tuple[str, int]:
    out, changed = [], 0
    table = str.maketrans({"\t": " ", "\r": " ", "\n": " "})
    for qid, query in topics:
        query = str(query)
        flat = query.translate(table)
        if flat != query:
            changed += 1
        if not qid or any(c in qid for c in "\t\r\n"):
            raise UsageError(f"qid {qid!r} is empty or contains a tab or newline")
        out.append(f"{qid}\t{flat}\n")
    return "".join(out), changed


# ---------------------------------------------------------------- JSONL
def _parse_jsonl(name: str, text: str, qid_field=None, query_field=None,
                 options: dict | None = None) -> Topics:
    qids, queries, meta, seen = [], [], {}, {}
    get_id = used = qfield = None
    records = list(json_records(name, text))
    check_named_fields(name, {"qid_field": qid_field, "query_field": query_field},
                       dict.fromkeys(k for _, rec in records for k in rec))
    for lineno, rec in records:
        if get_id is None:
            get_id, _, used = id_getter(name, rec, qid_field, "qid_field", options)
            qfield = query_field or next((f for f in QUERY_FIELDS if f in rec), None)
            if qfield is None:
                raise name_it(UsageError(
                    f"{name}: no query field found (tried {', '.join(QUERY_FIELDS)}; the "
                    f"record's fields: {field_list(rec)})"), "query_field", options)
        qid = record_id(name, lineno, get_id, rec, seen, "qid")
        query = rec.get(qfield)
        if not isinstance(query, str):
            raise InputError(name, lineno, f"topic {qid!r}: field {qfield!r} is "
                             f"{'missing' if query is None else 'not a string'}")
        qids.append(qid)
        queries.append(query)
        extra = {k: v for k, v in rec.items() if k not in used and k != qfield}
        if extra:
            meta[qid] = extra
    if not qids:
        raise InputError(name, None, "no topics")
    return Topics(qids, queries, meta, name)


def _jsonl_text(topics: Topics) -> tuple[str, int]:
    out = []
    for qid, query in topics:
        rec = {"qid": qid, "query": query}
        for k, v in topics.metadata.get(qid, {}).items():
            if k not in rec:
                rec[k] = v
        out.append(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
    return "".join(out), 0


# ---------------------------------------------------------------- API
def read_topics(path, format: str | None = None, *, qid_field=None, query_field=None,
                options: dict | None = None) -> Topics:
    """Read a topics file (format from the name unless given); see the module docstring.
    A field named (qid_field, query_field) that no record has is a UsageError listing the
    file's fields. options: {keyword: (Python name, CLI option)} for the hints, when the
    caller's own arguments name these fields otherwise (``trecqr gen``'s ref_field)."""
    try:
        fmt = format_of(path, format)
    except UsageError:  # of a name that is no file: "no such file" (a typo), not the format
        if isinstance(path, (str, os.PathLike)) and str(path) != "-" and \
                not os.path.exists(path):
            read_text_file(path)
        raise
    name, text = read_text_file(path)
    if fmt == "trec":
        return _parse_trec(name, text)
    if fmt == "tsv":
        return parse_tsv(name, text)
    return _parse_jsonl(name, text, qid_field, query_field, options)


def topics_text(topics: Topics, format: str) -> tuple[str, int]:
    """The file text for topics in format, and how many queries had to be changed."""
    fmt = format_of("", format)
    return {"trec": _trec_text, "tsv": _tsv_text, "jsonl": _jsonl_text}[fmt](topics)


def write_topics(topics: Topics, path, format: str | None = None) -> int:
    """Write topics atomically; returns the number of queries whose white space had to be
    changed to fit the format (0 for JSONL), and warns when it is not 0."""
    fmt = format_of(path, format)
    text, changed = topics_text(topics, fmt)
    if changed:
        what = ("tabs/newlines replaced by spaces" if fmt == "tsv"
                else "white space collapsed to single spaces")
        warnings.warn(f"{changed} of {len(topics)} queries changed to fit the {fmt} format "
                      f"({what})")
    atomic_write_text(path, text)
    return changed
