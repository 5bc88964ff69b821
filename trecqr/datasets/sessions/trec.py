"""Session instances as TREC files (topics, qrels, a run of candidate scores) and the readers
of candidate scores, for ``trecqr suggest`` and ``convert sessions`` (the sessions themselves:
:mod:`.sessions`).

To TREC files
    :func:`to_topics`: instance id -> the context queries joined with ``CONTEXT_SEP`` (`` ||| ``,
    a string that does not occur in the data; configurable). :func:`to_qrels`: instance id ->
    the target's candidate id, grade 1. :func:`to_run`: instance id, candidate id, score.
    Candidate id (:func:`candidate_id`): ``q`` + the first 16 hex digits of the MD5 of the
    candidate's :func:`query_key` (UTF-8) -- stable, free of white space, identical for two
    spellings that the duplicate rule treats as equal. Within an instance, a candidate whose id
    repeats is kept once (its first score).

    MRR over candidates is trec_eval's ``recip_rank`` on these qrels and run (ranking by score
    descending, ties by candidate id descending, as trec_eval). A target missing from the
    candidate list counts per ``missing=``:

    ``"zero"`` (``MISSING_ZERO``, trec_eval's reading, default)
        the instance scores 0 (no relevant candidate retrieved).
    ``"last"`` (``MISSING_LAST``, the HRED-qs evaluation code's reading)
        the instance scores ``1/len(list)``: HRED-qs' ``_get_ranks`` puts a missing target at
        position ``len(suggestions)``. In the run, the candidate ranked last (by trec_eval's
        order) is replaced by the target's id with score (lowest remaining score - 1), so it
        stays last and recip_rank gives exactly ``1/len``.

    An instance with no candidates is left out of the run (trec_eval then ignores it unless
    ``complete``/``-c`` is used, which scores it 0).

Candidate scores (:func:`read_candidate_scores`): TSV ``instance_id<TAB>candidate<TAB>score``
(a first line whose id field is ``id``, ``qid``, ``instance_id`` or ``instance`` is a header),
or JSONL with either
``{"id", "candidate", "score"}`` per line or ``{"id", "candidates": [...], "scores": [...]}``
(``qid``/``instance_id`` accepted for ``id``). Scores must be finite numbers (nan and inf
are errors, as a score trec_eval could not rank); the same candidate string twice for one
instance is an error. :func:`read_hredqs_scores`: the HRED-qs feature
file layout -- one line per candidate of the ``rnk`` file, in order, white-space separated
columns, an optional header of column names; ``column`` picks one (index or name, default the
last).
"""

from __future__ import annotations

import json
import math

import numpy as np

from trecqr.runtime.deferred import pa
from trecqr.errors import InputError, UsageError
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run
from trecqr.datasets.sessions.model import (CONTEXT_SEP, MISSING_LAST, MISSING_ZERO, candidate_id,
                            read_session_text)
from trecqr.datasets.topics import Topics


def to_topics(insts, sep: str = CONTEXT_SEP):
    return Topics(qids=[i.iid for i in insts], queries=[sep.join(i.context) for i in insts],
                  source="<sessions>")


def to_qrels(insts) -> Qrels:
    rows = [(i.iid, candidate_id(i.target)) for i in insts if i.target is not None]
    return Qrels(qid=pa.array([r[0] for r in rows], pa.string()),
                 docno=pa.array([r[1] for r in rows], pa.string()),
                 grade=np.ones(len(rows), dtype=np.int64), source="<sessions qrels>")


def to_run(insts, scores: dict, *, missing: str = MISSING_ZERO, runid: str = "trecqr") -> Run:
    """scores: {instance id: [(candidate text, score), ...]} (or {candidate: score}).
    missing: MISSING_ZERO or MISSING_LAST (see the module documentation)."""
    if missing not in (MISSING_ZERO, MISSING_LAST):
        raise UsageError(f"missing must be {MISSING_ZERO!r} or {MISSING_LAST!r}, not {missing!r}")
    targets = {i.iid: i.target for i in insts}
    qids, docnos, vals = [], [], []
    for iid, cands in scores.items():
        if isinstance(cands, dict):
            cands = list(cands.items())
        seen: dict = {}
        for text, score in cands:
            cid = candidate_id(text)
            if cid not in seen:
                seen[cid] = float(score)
        if not seen:
            continue
        tgt = targets.get(iid)
        if missing == MISSING_LAST and tgt is not None:
            tid = candidate_id(tgt)
            if tid not in seen:
                # trec_eval's order: score descending, docno descending; the last is the
                # lowest score, and among equal scores the smallest id.
                last = min(seen, key=lambda c: (seen[c], c))
                del seen[last]
                seen[tid] = min(seen.values(), default=0.0) - 1.0 if seen else 0.0
        for cid, s in seen.items():
            qids.append(iid)
            docnos.append(cid)
            vals.append(s)
    return Run(qid=pa.array(qids, pa.string()), docno=pa.array(docnos, pa.string()),
               score=np.asarray(vals, dtype=np.float64), runid=runid, source="<sessions run>")


def line_records(name: str, text: str, jsonl: bool):
    """(line number, record) of the non-blank lines of a JSONL or TSV text: a dict for JSONL,
    the line itself for TSV (the caller splits it). Bad JSON is an InputError at its line."""
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        if not jsonl:
            yield n, line
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise InputError(name, n, f"bad JSON: {e}") from None
        if not isinstance(rec, dict):
            raise InputError(name, n, "expected a JSON object")
        yield n, rec


_HEADER_IDS = ("id", "qid", "instance_id", "instance")


def _score(name, n, value) -> float:
    """A finite float score, or an InputError naming the line (trec_eval reads no nan/inf)."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise InputError(name, n, f"bad score {value!r}") from None
    if not math.isfinite(score):
        raise InputError(name, n, f"score {value!r} is not a finite number")
    return score


def read_candidate_scores(path) -> dict:
    """{instance id: [(candidate, score), ...]} from TSV or JSONL (see the module docs).

    Scores must be finite numbers; a candidate given twice for one instance is an error (a run
    holds a document once per topic); a first TSV line whose id column is a header word (id,
    qid, instance_id) is skipped."""
    name, text = read_session_text(path)
    out: dict = {}
    seen: dict = {}

    def add(iid, cand, score, n):
        key = (iid, cand)
        if key in seen:
            raise InputError(name, n, f"candidate {cand!r} of {iid!r} given twice (first on "
                                      f"line {seen[key]})")
        seen[key] = n
        out.setdefault(iid, []).append((cand, score))

    jsonl = name.endswith((".jsonl", ".json", ".ndjson", ".jsonl.gz")) or text.lstrip()[:1] == "{"
    for n, rec in line_records(name, text, jsonl):
        if jsonl:
            iid = next((str(rec[k]) for k in ("id", "qid", "instance_id") if k in rec), None)
            if iid is None:
                raise InputError(name, n, "no id/qid/instance_id field")
            if "candidates" in rec:
                c, s = rec["candidates"], rec.get("scores")
                if not isinstance(c, list) or not isinstance(s, list) or len(s) != len(c):
                    raise InputError(name, n, "candidates and scores differ in length")
                for cand, score in zip(c, s):
                    add(iid, str(cand), _score(name, n, score), n)
            elif "candidate" in rec and "score" in rec:
                add(iid, str(rec["candidate"]), _score(name, n, rec["score"]), n)
            else:
                raise InputError(name, n, "needs candidate+score or candidates+scores")
            continue
        cols = rec.split("\t")
        if len(cols) != 3:
            raise InputError(name, n, f"expected 3 tab-separated fields, found {len(cols)}")
        if n == 1 and cols[0].strip().lower() in _HEADER_IDS:
            continue
        add(cols[0], cols[1], _score(name, n, cols[2]), n)
    return out


def read_hredqs_scores(insts, score_path, column=None) -> dict:
    """Scores for HRED-qs candidates: one line per candidate, in rnk order (see module docs)."""
    name, text = read_session_text(score_path)
    lines = [(n, l.split()) for n, l in enumerate(text.split("\n"), 1) if l.strip()]
    header = None
    if lines:
        try:
            [float(x) for x in lines[0][1]]
        except ValueError:
            header = lines.pop(0)[1]
    col = -1
    if column is not None:
        if isinstance(column, str) and not column.lstrip("-").isdigit():
            if header is None or column not in header:
                raise UsageError(f"no column {column!r} in {name}")
            col = header.index(column)
        else:
            col = int(column)
    total = sum(len(i.candidates or ()) for i in insts)
    if len(lines) != total:
        raise InputError(name, None, f"{len(lines)} score lines for {total} candidates")
    out, k = {}, 0
    for inst in insts:
        pairs = []
        for c in inst.candidates or ():
            n, vals = lines[k]
            k += 1
            if not -len(vals) <= col < len(vals):
                raise InputError(name, n, f"no score in column {col}")
            pairs.append((c, _score(name, n, vals[col])))
        out[inst.iid] = pairs
    return out
