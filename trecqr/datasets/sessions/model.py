"""What every session source shares: the :class:`Session` and :class:`Instance` records, the
query key and the duplicate rule, candidate and aol-ia query ids, and how a session file is read.

:mod:`.sessions` (the readers of AOL, Webis-SMC-12, TREC Session, MS MARCO and HRED-qs candidate
files, instances, TREC files) and :mod:`.session_readers` (HRED-qs ``.ses`` files, ir_datasets'
aol-ia) both build on this module; the rules are described in :mod:`.sessions`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from trecqr.formats.textio import read_source

DEFAULT_GAP = 1800.0
CONTEXT_SEP = " ||| "
MISSING_ZERO = "zero"
MISSING_LAST = "last"
_WS = re.compile(r"\s+")


@dataclass
class Session:
    sid: str
    queries: list
    times: list | None = None  # seconds since the epoch (float) per query, or None
    user: str | None = None
    meta: dict = field(default_factory=dict)


@dataclass
class Instance:
    iid: str
    context: tuple
    target: str | None
    session: str | None = None
    candidates: tuple | None = None


def collapse_ws(text: str) -> str:
    return _WS.sub(" ", text).strip()


def query_key(text: str) -> str:
    """The duplicate/candidate-id key: lowercase, white-space runs -> one space, stripped."""
    return collapse_ws(text).lower()


def candidate_id(text: str) -> str:
    return "q" + hashlib.md5(query_key(text).encode("utf-8")).hexdigest()[:16]


def aolia_query_id(query: str) -> str:
    """The query id ir_datasets' ``aol-ia`` computes: MD5 of the ws_tok-normalised query, 14 hex.

    ws_tok: every character outside ``[A-Za-z0-9 ]`` becomes a space, then split on white
    space and join with one space (case kept)."""
    norm = " ".join(re.sub("[^A-Za-z0-9 ]", " ", query).split())
    return hashlib.md5(norm.encode()).hexdigest()[:14]


def dedup_queries(queries, times, dedup: bool):
    """Queries white-space collapsed, empty ones dropped, and (dedup) a query equal to the one
    before it (by :func:`query_key`) dropped; times follow their queries."""
    out_q, out_t, last = [], [], None
    for i, q in enumerate(queries):
        q = collapse_ws(q)
        if not q:
            continue
        k = q.lower()
        if dedup and k == last:
            continue
        last = k
        out_q.append(q)
        out_t.append(None if times is None else times[i])
    return out_q, (None if times is None else out_t)


def read_session_text(path) -> tuple[str, str]:
    """(name, text) of a session file: read as every trecqr input is (gzip, BOM, missing, empty,
    binary and corrupt files are one-line errors), decoded as UTF-8, or Latin-1 where it is not
    (old query logs)."""
    src = read_source(path)
    try:
        return src.name, src.data.decode("utf-8")
    except UnicodeDecodeError:
        return src.name, src.data.decode("latin-1")
