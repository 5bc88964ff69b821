"""Two more session sources for :mod:`trecqr.datasets.sessions.logs`: HRED-qs ``.ses`` files and
ir_datasets' ``aol-ia`` query logs.

Kept apart from :mod:`.sessions` only for size; :mod:`.sessions` imports them (they are
importable from there too), and both readers follow the session, duplicate and instance rules
of :mod:`.session_model` exactly.

``read_hredqs_sessions(path)``
    The HRED-qs session file (``data.ses`` in sordonia/hred-qs): one session per line, its
    queries tab-separated (``convert-text2dict.py`` splits each line on ``\\t``). Session id
    ``hredqs-<line>``, the 1-based line number in the file, so ids stay aligned with the
    companion ``.rnk`` file even when a line yields no session (a blank line, or only empty
    queries, gives none and its number is skipped). Queries: white space collapsed, empty ones
    dropped, then the duplicate rule of :mod:`.sessions` (``dedup=False`` keeps every query).
    No time rule: the file's lines already are sessions.

``read_aolia_qlogs(records)``
    Records as ir_datasets yields them for ``aol-ia``
    (``ir_datasets.load("aol-ia").qlogs_iter()``: ``AolQlog(user_id, query_id, query,
    query_orig, time, items)``, one per row of the AOL log, in log order). ir_datasets builds
    each record from one log row: ``query_orig`` is the row's Query field unchanged, ``query``
    its ``ws_tok`` normalisation (punctuation -> space), ``time`` ``datetime.fromisoformat`` of
    QueryTime (naive). The session text is taken from ``query_orig`` -- *not* ``query``, which
    would merge ``staple.com`` with ``staple com`` -- and treated exactly as
    :func:`~.sessions.read_aol` treats the Query column: the 30-minute rule on the raw rows (a
    naive time is read as UTC, as read_aol reads the log's times), a new user starts a new
    session, then the duplicate rule. Session ids ``<user_id>-<k>``, instance ids
    ``<user_id>-<k>_<i>``: on the same rows the result equals read_aol's. A kept query's aol-ia
    ``query_id`` is :func:`~.sessions.aolia_query_id` of its text (white space does not change
    it). Records are consumed as a stream, one user at a time.

``load_aolia_sessions(dataset_id="aol-ia")``
    Reads the dataset's qlogs through ir_datasets, never downloading (:mod:`.irds`). aol-ia's
    qlogs are a file ir_datasets builds (``<IR_DATASETS_HOME>/aol-ia/log.pkl.lz4``, marked by
    ``_built_logs``) from the AOL log archive (``aol-data.tar.gz``). If the built file is there
    it is read; else, if the archive is there, ir_datasets builds the log from it (local work,
    no network); else a one-line UsageError names the built file and the archive (with the
    URL ir_datasets would fetch it from). Reading runs under :func:`.irds.offline`, so a fetch
    ir_datasets still attempts is refused and reported the same way.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timezone
from pathlib import Path

from trecqr.errors import UsageError
from trecqr.datasets import irds
from trecqr.datasets.sessions.model import DEFAULT_GAP, Session
from trecqr.datasets.sessions.model import dedup_queries as _dedup
from trecqr.datasets.sessions.model import read_session_text as _read_text

_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=timezone.utc)
_BUILT_FROM = "which ir_datasets builds from"


def read_hredqs_sessions(path, *, dedup: bool = True) -> list:
    _, text = _read_text(path)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    sessions = []
    for n, line in enumerate(lines, 1):
        q, _ = _dedup(line.rstrip("\r").split("\t"), None, dedup)
        if q:
            sessions.append(Session(f"hredqs-{n}", q))
    return sessions


def _seconds(t) -> float:
    """Seconds since the epoch; a naive datetime is read as UTC (as read_aol reads the log)."""
    if isinstance(t, datetime):
        return (t - (_EPOCH if t.tzinfo is None else _EPOCH_UTC)).total_seconds()
    return float(t)


def _field(rec, name):
    try:
        return getattr(rec, name)
    except AttributeError:
        raise UsageError(f"query-log record {type(rec).__name__} has no field {name!r} "
                         "(expected ir_datasets' AolQlog)") from None


def read_aolia_qlogs(records, *, gap: float | None = DEFAULT_GAP, dedup: bool = True) -> list:
    """Sessions from ir_datasets aol-ia qlogs records (see the module docstring); ``gap``
    seconds of inactivity end a session (None: no time rule)."""
    sessions: list = []
    count: dict = {}
    for user, rows in itertools.groupby(records, key=lambda r: str(_field(r, "user_id"))):
        queries, times, prev = [], [], None
        for rec in rows:
            t = _seconds(_field(rec, "time"))
            if queries and gap is not None and t - prev > gap:
                _close(sessions, count, user, queries, times, dedup)
                queries, times = [], []
            queries.append(str(_field(rec, "query_orig")))
            times.append(t)
            prev = t
        _close(sessions, count, user, queries, times, dedup)
    return sessions


def _close(sessions, count, user, queries, times, dedup) -> None:
    count[user] = count.get(user, 0) + 1
    q, t = _dedup(queries, times, dedup)
    if q:
        sessions.append(Session(f"{user}-{count[user]}", q, t, user))


# ---------------------------------------------------------------- through ir_datasets

def _qlogs_dataset(dataset_id: str, dataset=None):
    ds = dataset if dataset is not None else irds.load(dataset_id)
    if not hasattr(ds, "has_qlogs") or not ds.has_qlogs():
        raise UsageError(f"ir_datasets {dataset_id!r} has no query logs (qlogs)")
    return ds


def _dedup_files(files) -> list:
    seen, out = set(), []
    for f in files:
        if f[0] not in seen:
            seen.add(f[0])
            out.append(f)
    return out


def missing_files(handler) -> list:
    """(path, notes) of the files reading handler's qlogs needs and that are absent; notes:
    the URLs ir_datasets knows for the file, or how it is made.

    aol-ia: the built log (``_ManagedDlc``) is enough when present; otherwise the archives
    ir_datasets builds it from. Any other dataset: every Download reachable from the handler.
    """
    dlc = getattr(handler, "dlc", None)
    manager = getattr(dlc, "_manager", None)
    built = getattr(dlc, "_path", None)
    if manager is not None and built is not None:
        base = Path(getattr(manager, "_base_path", Path(built).parent))
        if (base / "_built_logs").exists() and Path(built).exists():
            return []
        sources = _dedup_files(irds.required_files(getattr(manager, "_log_dlcs", [])))
        absent = [(p, urls) for p, ok, urls in sources if not ok]
        return [(str(built), [_BUILT_FROM])] + absent if absent else []
    return [(p, urls) for p, ok, urls in _dedup_files(irds.required_files(handler)) if not ok]


def _missing_line(dataset_id: str, missing) -> str:
    text = ""
    for path, notes in missing:
        url = next((u for u in notes if "://" in u), None)
        sep = "" if not text else " " if text.endswith(_BUILT_FROM) else ", "
        text += sep + path + (f" (from {url})" if url else "")
        if _BUILT_FROM in notes:
            text += ", " + _BUILT_FROM
    return (f"ir_datasets {dataset_id!r}: query logs not available locally (trecqr never "
            f"downloads); missing: {text}")


def iter_qlogs(dataset_id: str = "aol-ia", dataset=None):
    """The dataset's qlogs records, after the local-files check, under irds.offline().

    A generator (the check runs on the first ``next``): consume it whole."""
    ds = _qlogs_dataset(dataset_id, dataset)
    handler = ds.qlogs_handler()
    missing = missing_files(handler)
    if missing:
        raise UsageError(_missing_line(dataset_id, missing))
    try:
        with irds.offline():
            yield from ds.qlogs_iter()
    except irds.OfflineDownload as e:
        raise UsageError(f"ir_datasets {dataset_id!r}: query logs not available locally "
                         f"(trecqr never downloads): {e}") from None


def load_aolia_sessions(dataset_id: str = "aol-ia", *, dataset=None,
                        gap: float | None = DEFAULT_GAP, dedup: bool = True) -> list:
    """Sessions of an ir_datasets aol-ia-style dataset read locally (see module docstring)."""
    return read_aolia_qlogs(iter_qlogs(dataset_id, dataset), gap=gap, dedup=dedup)
