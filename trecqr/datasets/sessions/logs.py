"""Session query logs to next-query instances, and instances to TREC topics, qrels and runs.

Readers (each returns a list of :class:`Session`):

``read_aol(path)``
    The AOL log (``AnonID  Query  QueryTime  ItemRank  ClickURL``, tab-separated, a header line;
    zero-click rows end in two empty fields). Every row is one query event (a click row repeats
    its query), so exact duplicate rows and click rows of the same query become consecutive
    duplicates and are dropped by the duplicate rule below. Rows are taken in file order (the log
    is grouped by user and sorted by time within a user).
``read_webis_smc(path, split="time"|"mission"|"block")``
    The Webis-SMC-12 mission corpus (``UserID  Query  TimeStamp  ClickRank  ClickDomain
    MissionID  Comment``; users separated by dashed lines; blank lines between blocks of a user;
    a comment may itself contain a tab, kept as part of the comment). ``split="time"``: the
    30-minute rule within each user; ``"mission"``: one session per (user, MissionID), queries in
    file order even when missions interleave; ``"block"``: the corpus' own blank-line blocks.
``read_trec_session(path)``
    TREC Session Track XML (``.gz`` accepted): one session per ``<session num>``, queries = the
    ``<query>`` of every ``<interaction>`` in order, then the ``<currentquery>`` if present.
    :func:`read_trec_session_details` keeps results (rank, ClueWeb id, url, title, snippet) and
    clicks per interaction.
``read_marco_sessions(path)``
    MS MARCO session samples: one query per line, a blank line between sessions; tabs are stray
    and removed (a line of only tabs/blanks is a session break).
``read_hredqs_candidates(ctx, rnk, tgt=None)``
    HRED-qs candidate-ranking files, aligned by line: ``ctx`` holds the context queries and
    ``rnk`` the candidate next queries, both tab-separated. Returns :class:`Instance` objects
    directly (id ``hredqs-<line>``, 1-based). The target is not in these files: give ``tgt``
    (a file with one target per line, or a list of strings) or leave it None (target ``None``).
``read_hredqs_sessions(path)``, ``read_aolia_qlogs(records)``, ``load_aolia_sessions(id)``
    HRED-qs ``.ses`` session files (one session per line, queries tab-separated; ids
    ``hredqs-<line>``) and ir_datasets' ``aol-ia`` query-log records (sessions identical to
    :func:`read_aol`'s on the same rows), read locally without downloading: see
    :mod:`.session_readers`, where they live (importable from here too). The records and the
    duplicate rule are in :mod:`.session_model`.

Sessions and the duplicate rule
    Sessions split where the time since the previous row of the same user is greater than
    ``gap`` seconds (default 1800 = 30 minutes; ``gap=None`` disables the time rule), measured
    on the raw rows before any duplicate is dropped; a new user always starts a new session.
    Then consecutive duplicate queries are dropped (HRED-qs keeps no immediate repetition):
    two queries are duplicates when their keys :func:`query_key` are equal, i.e. after
    lowercasing (``str.lower``), replacing every white-space run (tabs included) by one space
    and stripping the ends. Punctuation is kept (``staple.com`` != ``staple com``). The first
    spelling of a run of duplicates is the one kept. Query text kept in sessions is stripped and
    white-space collapsed, not lowercased. Empty queries are dropped. ``dedup=False`` keeps
    every row.

Instances
    For a session ``q1 .. qn`` (after the duplicate rule), one instance per position ``i`` from
    2 to ``n``: context ``(q1 .. q(i-1))``, target ``qi``, id ``<session id>_<i>``. Sessions
    of one query give none.

Session ids: AOL and aol-ia ``<AnonID>-<k>`` (k = 1, 2, ... per user); Webis
``<UserID>-<k>`` (time, block) or ``<UserID>-m<MissionID>`` (mission); TREC the session
``num``; MS MARCO ``marco-<k>``; HRED-qs ``.ses`` ``hredqs-<line>``.

Format names (``FORMATS``, for :func:`load_sessions_instances` and the CLIs): ``aol``,
``aol-ia`` (IN = the ir_datasets id), ``webis``, ``trec-session``, ``marco``, ``hredqs`` (the
ctx/rnk candidate files) and ``hredqs-ses`` (the session file).

To TREC files and candidate scores: :mod:`.session_trec`.
"""

from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ET

import numpy as np

from trecqr.errors import InputError, UsageError, hinted
from trecqr.formats.qrels import write_qrels
from trecqr.formats.run import write_run
from trecqr.formats.writer import atomic_write_text
from trecqr.datasets.sessions.model import (
    CONTEXT_SEP,
    DEFAULT_GAP,
    MISSING_LAST,
    MISSING_ZERO,
    Instance,
    Session,
    aolia_query_id,
    candidate_id,
    collapse_ws,
    query_key,
)
from trecqr.datasets.sessions.model import dedup_queries as _dedup
from trecqr.datasets.sessions.model import read_session_text as _read_text
# the readers of HRED-qs .ses files and aol-ia, public here too
from trecqr.datasets.sessions.readers import (
    iter_qlogs,
    load_aolia_sessions,
    read_aolia_qlogs,
    read_hredqs_sessions,
)
# instances as TREC files, and candidate scores: public here too
from trecqr.datasets.sessions.trec import (
    line_records,
    read_candidate_scores,
    read_hredqs_scores,
    to_qrels,
    to_run,
    to_topics,
)
from trecqr.datasets.topics import write_topics


def _split_times(users: list, secs: np.ndarray, gap) -> np.ndarray:
    """Boolean per row: True where a new session starts (new user, or gap exceeded)."""
    n = len(users)
    start = np.ones(n, dtype=bool)
    if n > 1:
        u = np.asarray(users, dtype=object)
        same = u[1:] == u[:-1]
        brk = ~same
        if gap is not None:
            brk |= (secs[1:] - secs[:-1]) > gap
        start[1:] = brk
    return start


def _parse_time(text: str, name: str, line: int) -> float:
    try:
        return np.datetime64(text.strip().replace(" ", "T"), "s").astype(np.int64).item() * 1.0
    except ValueError:
        raise InputError(name, line, f"bad time {text!r}") from None


def _sessions_from_rows(users, queries, secs, starts, sid_of, dedup) -> list:
    sessions = []
    idx = np.flatnonzero(starts).tolist() + [len(users)]
    count: dict = {}
    for a, b in itertools.pairwise(idx):
        user = users[a]
        count[user] = count.get(user, 0) + 1
        q, t = _dedup(queries[a:b], secs[a:b].tolist(), dedup)
        if q:
            sessions.append(Session(sid_of(user, count[user]), q, t, user))
    return sessions


def read_aol(path, *, gap: float | None = DEFAULT_GAP, dedup: bool = True) -> list:
    name, text = _read_text(path)
    lines = text.split("\n")
    users, queries, times = [], [], []
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if not line:
            continue
        cols = line.split("\t")
        if n == 1 and cols[0] == "AnonID":
            continue
        if len(cols) not in (3, 5):
            raise InputError(name, n, f"expected 5 tab-separated fields, found {len(cols)}")
        users.append(cols[0])
        queries.append(cols[1])
        times.append(_parse_time(cols[2], name, n))
    secs = np.asarray(times, dtype=np.float64)
    starts = _split_times(users, secs, gap)
    return _sessions_from_rows(users, queries, secs, starts, lambda u, k: f"{u}-{k}", dedup)


def read_webis_smc(path, *, split: str = "time", gap: float | None = DEFAULT_GAP,
                   dedup: bool = True) -> list:
    if split not in ("time", "mission", "block"):
        raise UsageError(f"split must be time, mission or block, not {split!r}")
    name, text = _read_text(path)
    users, queries, times, missions, blocks = [], [], [], [], []
    block = 0
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or set(line.strip()) == {"-"}:
            block += 1
            continue
        cols = line.split("\t")
        if n == 1 and cols[0] == "UserID":
            continue
        if len(cols) < 6:
            raise InputError(name, n,
                             f"expected at least 6 tab-separated fields, found {len(cols)}")
        users.append(cols[0])
        queries.append(cols[1])
        times.append(_parse_time(cols[2], name, n))
        missions.append(cols[5].strip())
        blocks.append(block)
    secs = np.asarray(times, dtype=np.float64)
    if split == "time":
        starts = _split_times(users, secs, gap)
        return _sessions_from_rows(users, queries, secs, starts, lambda u, k: f"{u}-{k}", dedup)
    if split == "block":
        b = np.asarray(blocks)
        starts = np.ones(len(b), dtype=bool)
        starts[1:] = b[1:] != b[:-1]
        return _sessions_from_rows(users, queries, secs, starts, lambda u, k: f"{u}-{k}", dedup)
    groups: dict = {}
    for i, key in enumerate(zip(users, missions)):
        groups.setdefault(key, []).append(i)
    sessions = []
    for (user, mission), rows in groups.items():
        q, t = _dedup([queries[i] for i in rows], [times[i] for i in rows], dedup)
        if q:
            sessions.append(Session(f"{user}-m{mission}", q, t, user, {"mission": mission}))
    return sessions


def _trec_root(path):
    name, text = _read_text(path)
    try:
        return name, ET.fromstring(text)
    except ET.ParseError as e:
        raise InputError(name, e.position[0], f"XML error: {e}") from None


def read_trec_session_details(path) -> list:
    """Per session: {"num", "topic", "interactions": [{"query", "results": [...], "clicks":
    [ranks]}], "currentquery"} -- the results carry rank, clueweb12id, url, title, snippet."""
    _, root = _trec_root(path)
    out = []
    for s in root.iter("session"):
        inter = []
        for it in s.findall("interaction"):
            results = [{"rank": r.get("rank"),
                        **{f: (r.findtext(f) or "") for f in ("clueweb12id", "url", "title",
                                                               "snippet")}}
                       for r in it.iter("result")]
            clicks = [c.findtext("rank") for c in it.iter("click")]
            inter.append({"query": it.findtext("query") or "", "results": results,
                          "clicks": clicks})
        cq = s.find("currentquery")
        topic = s.find("topic")
        out.append({"num": s.get("num"), "topic": None if topic is None else topic.get("num"),
                    "interactions": inter,
                    "currentquery": None if cq is None else (cq.findtext("query") or "")})
    return out


def trec_session_results(path) -> dict:
    """{ClueWeb id: "title snippet"} of every result shown in a TREC Session XML, first
    occurrence kept: the real retrieval collection for sim_ret on those sessions."""
    passages = {}
    for d in read_trec_session_details(path):
        for it in d["interactions"]:
            for r in it["results"]:
                passages.setdefault(r["clueweb12id"], f"{r['title']} {r['snippet']}")
    return passages


def write_results_collection(path, out) -> int:
    """Write :func:`trec_session_results` as a Pyserini JSONL collection; returns its size."""
    passages = trec_session_results(path)
    atomic_write_text(out, "".join(json.dumps({"id": d, "contents": t})
                                   + "\n" for d, t in passages.items()))
    return len(passages)


def read_trec_session(path, *, dedup: bool = True, current: bool = True) -> list:
    sessions = []
    for d in read_trec_session_details(path):
        qs = [i["query"] for i in d["interactions"]]
        if current and d["currentquery"] is not None:
            qs.append(d["currentquery"])
        q, _ = _dedup(qs, None, dedup)
        sessions.append(Session(d["num"], q, None, None, {"topic": d["topic"]}))
    return sessions


def read_marco_sessions(path, *, dedup: bool = True) -> list:
    _, text = _read_text(path)
    sessions, cur = [], []
    for line in text.split("\n") + [""]:
        q = line.replace("\t", " ").strip()
        if q:
            cur.append(q)
        elif cur:
            qs, _ = _dedup(cur, None, dedup)
            sessions.append(Session(f"marco-{len(sessions) + 1}", qs))
            cur = []
    return sessions


def instances(sessions) -> list:
    out = []
    for s in sessions:
        for i in range(1, len(s.queries)):
            out.append(Instance(f"{s.sid}_{i + 1}", tuple(s.queries[:i]), s.queries[i], s.sid))
    return out


def _fields(line: str) -> list:
    return [f for f in (collapse_ws(x) for x in line.rstrip("\r").split("\t")) if f]


def read_hredqs_candidates(ctx, rnk, tgt=None) -> list:
    cname, ctext = _read_text(ctx)
    rname, rtext = _read_text(rnk)
    clines = ctext.rstrip("\n").split("\n") if ctext.strip() else []
    rlines = rtext.rstrip("\n").split("\n") if rtext.strip() else []
    if len(clines) != len(rlines):
        raise InputError(rname, None, f"{len(rlines)} lines, but {cname} has {len(clines)}")
    if tgt is None:
        targets = [None] * len(clines)
    elif isinstance(tgt, (list, tuple)):
        targets = [collapse_ws(t) for t in tgt]
    else:
        tname, ttext = _read_text(tgt)
        targets = [collapse_ws(t) for t in ttext.rstrip("\n").split("\n")]
        if len(targets) != len(clines):
            raise InputError(tname, None, f"{len(targets)} lines, but {cname} has {len(clines)}")
    if len(targets) != len(clines):
        raise UsageError(f"{len(targets)} targets for {len(clines)} instances")
    return [Instance(f"hredqs-{i + 1}", tuple(_fields(c)), t, None, tuple(_fields(r)))
            for i, (c, r, t) in enumerate(zip(clines, rlines, targets))]


# ---------------------------------------------------------------- files

FORMATS = ("aol", "aol-ia", "webis", "trec-session", "marco", "hredqs", "hredqs-ses")


def load_sessions(fmt: str, path, *, split: str = "time", gap=DEFAULT_GAP,
                  dedup: bool = True) -> list:
    """Sessions from a session source of format fmt (every format of FORMATS except
    ``hredqs``, whose ctx/rnk files hold instances, not sessions). For ``aol-ia``, path is the
    ir_datasets dataset id (``aol-ia``), read locally only."""
    if fmt == "aol":
        return read_aol(path, gap=gap, dedup=dedup)
    if fmt == "aol-ia":
        return load_aolia_sessions(str(path), gap=gap, dedup=dedup)
    if fmt == "webis":
        return read_webis_smc(path, split=split, gap=gap, dedup=dedup)
    if fmt == "trec-session":
        return read_trec_session(path, dedup=dedup)
    if fmt == "marco":
        return read_marco_sessions(path, dedup=dedup)
    if fmt == "hredqs-ses":
        return read_hredqs_sessions(path, dedup=dedup)
    if fmt == "hredqs":
        raise UsageError("hredqs ctx/rnk files hold instances, not sessions")
    raise UsageError(f"unknown session format {fmt!r} (one of {', '.join(FORMATS)})")


def load_sessions_instances(fmt: str, path, *, split: str = "time", gap=DEFAULT_GAP,
                            dedup: bool = True, rnk=None, tgt=None) -> list:
    """Instances from a session file of format fmt (one of FORMATS)."""
    if fmt == "hredqs":
        if rnk is None:
            raise UsageError("hredqs needs the rnk file (--rnk)")
        return read_hredqs_candidates(path, rnk, tgt)
    if rnk is not None or tgt is not None:
        raise UsageError(f"--rnk and --tgt are for the hredqs ctx/rnk format, not {fmt}")
    return instances(load_sessions(fmt, path, split=split, gap=gap, dedup=dedup))


def write_trec_files(insts, *, topics_out=None, qrels_out=None, run_out=None, scores=None,
                     missing: str = MISSING_ZERO, sep: str = CONTEXT_SEP,
                     runid: str = "trecqr") -> dict:
    """Write whichever of topics (TSV/JSONL/TREC by extension), qrels and run are asked for;
    returns counts {"instances", "qrels", "run_lines"}. Everything is made before anything is
    written, and an output that would be empty is refused (UsageError): nothing is written."""
    counts = {"instances": len(insts)}
    if not insts and any(o is not None for o in (topics_out, qrels_out, run_out)):
        raise UsageError("no next-query instance in the input (a session needs two queries): "
                         "nothing to write")
    topics = to_topics(insts, sep) if topics_out is not None else None
    q = to_qrels(insts) if qrels_out is not None else None
    if q is not None and len(q) == 0:
        raise hinted(UsageError(f"none of the {len(insts)} instances has a target (the next "
                                "query), so the qrels would be empty"),
                     "hredqs reads the targets from tgt=", "hredqs reads them from --tgt FILE")
    r = None
    if run_out is not None:
        if scores is None:
            raise UsageError("a run needs candidate scores")
        r = to_run(insts, scores, missing=missing, runid=runid)
        if len(r) == 0:
            raise UsageError(f"no candidate score belongs to any of the {len(insts)} instances, "
                             "so the run would be empty")
    if topics is not None:
        write_topics(topics, topics_out)
    if q is not None:
        write_qrels(q, qrels_out)
        counts["qrels"] = len(q)
    if r is not None:
        write_run(r, run_out)
        counts["run_lines"] = len(r)
    return counts
