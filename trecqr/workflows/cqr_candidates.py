"""``trecqr cqr --candidates``: the rows of a rewrites input with several candidates per turn.

What each policy (:mod:`trecqr.datasets.rewrites.candidates`) makes, and how its row is named
(NAME is the input's row name; with the one policy ``first``, the row keeps NAME, as before
candidates):

``first``        NAME.first: candidate 1's run;
``each``         NAME.c1 ... NAME.cN: one run per candidate;
``fuse:METHOD``  NAME.fuse-METHOD: the candidates' runs fused with :func:`trecqr.fuse` (its
                 default min-max normalisation; RRF, the default method, reads only ranks);
``mean``, ``sc`` NAME.mean, NAME.sc: LLM4CS' dense aggregations (dense indexes only);
``oracle``       NAME.oracle: per turn, the ranking of the candidate with the best first measure
                 of the report (RR@3), ties broken by the next measures in the report's order,
                 then by the first candidate. It is chosen with the gold labels: an upper bound,
                 labelled so in the row's note and its JSON (``upper_bound``), never a default.
                 A turn without gold, or absent from every candidate's evaluation, takes
                 candidate 1.

A candidate run is searched once, however many policies read it. Coverage: ``no rewrite`` of a
combined row (fuse, oracle, mean, sc) counts the turns without any usable candidate. A turn's
unusable candidate (an empty sample) stands in as its first usable one in NAME.first and
NAME.cI; the combined rows leave such stand-ins out, so they count each real candidate once.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import numpy as np

from trecqr.runtime.deferred import pa, pc
from trecqr.datasets.rewrites.candidates import Policy, first_note, parse_policy
from trecqr.datasets.topics import Topics
from trecqr.errors import UsageError
from trecqr.formats.run import Run
from trecqr.fusion.entry import fuse
from trecqr.runtime.progress import info as say

DENSE = ("mean", "sc")


def check_policies(specs, backend: str | None) -> list:
    """The parsed policies (default: first), refused before any work when one cannot run:
    mean and sc on an index that is not dense. backend None: not known yet."""
    specs = [specs] if isinstance(specs, str) else list(specs or ())
    policies = [parse_policy(s) for s in specs] or [Policy("first")]
    seen = set()
    for p in policies:
        if p.label in seen:
            raise UsageError(f"--candidates {p.label} given twice")
        seen.add(p.label)
        if p.name in DENSE and backend is not None and backend != "dense":
            raise UsageError(f"--candidates {p.name} averages the candidates' dense embeddings "
                             f"(LLM4CS): it needs a dense index, not {backend}")
    return policies


def row_names(name: str, policies: list, n: int) -> list:
    """[(row name, policy, candidate index or None)] of one input with n candidates."""
    if len(policies) == 1 and policies[0].name == "first":
        return [(name, policies[0], 0)]
    out = []
    for p in policies:
        if p.name == "first":
            out.append((f"{name}.first", p, 0))
        elif p.name == "each":
            out += [(f"{name}.c{i + 1}", p, i) for i in range(n)]
        else:
            out.append((f"{name}.{p.label}", p, None))
    return out


def merged_topics(sets: list, choice: dict | None = None) -> Topics:
    """The turns of any candidate, each with its chosen candidate's query (choice: {qid:
    index}; default the first candidate that has the turn)."""
    maps = [s.topics.as_dict() for s in sets]
    qids = list(dict.fromkeys(q for s in sets for q in s.topics.qids))
    texts = []
    for q in qids:
        i = (choice or {}).get(q)
        if i is None or q not in maps[i]:
            i = next(j for j, m in enumerate(maps) if q in m)
        texts.append(maps[i][q])
    return Topics(qids, texts, {}, sets[0].topics.source)


def dense_lists(sets: list, responses: list | None = None) -> tuple:
    """What mean and sc encode: (qids, per turn its candidates' texts, per turn the responses
    beside them or None, per turn the candidate numbers present), every turn of any
    candidate; a turn left out of candidate i (--missing drop) has one candidate fewer."""
    maps = [s.topics.as_dict() for s in sets]
    qids = list(dict.fromkeys(q for s in sets for q in s.topics.qids))
    others = [set(s.report.from_other) for s in sets]
    present = [[i for i, m in enumerate(maps) if q in m and q not in others[i]] for q in qids]
    texts = [[maps[i][q] for i in idx] for q, idx in zip(qids, present)]
    replies = None
    if responses is not None:
        rmaps = [r.topics.as_dict() for r in responses]
        replies = [[rmaps[i].get(q, "") for i in idx] for q, idx in zip(qids, present)]
    return qids, texts, replies, present


def without_any(sets: list) -> int:
    """Turns missing a usable rewrite in every candidate."""
    missing = [set(s.report.missing) for s in sets]
    return len(set.intersection(*missing)) if missing else 0


def own_turns(run: Run, s) -> Run:
    """A candidate's run without the turns where it only stands in for the first usable
    candidate (:attr:`RewriteReport.from_other`): what the combined policies read."""
    if not s.report.from_other:
        return run
    drop = pa.array(s.report.from_other, pa.string())
    idx = np.flatnonzero(pc.invert(pc.is_in(run.qid, value_set=drop)).to_numpy(
        zero_copy_only=False))
    return Run(run.qid.take(idx), run.docno.take(idx), run.score[idx], run.runid, run.source)


def oracle_choice(per_query: list, qids) -> dict:
    """{qid: candidate index}: the best tuple of measures (first measure first), ties to the
    lower index; per_query: one {qid: tuple} per candidate."""
    choice = {}
    for q in qids:
        best, best_i = None, 0
        for i, scores in enumerate(per_query):
            s = scores.get(q)
            if s is not None and (best is None or s > best):
                best, best_i = s, i
        choice[q] = best_i
    return choice


def cqr_runid(name: str) -> str:
    """The runid of a row's run: ``cqr-`` and the row's name, its white space (a file name's,
    ``--name "raw question"``) as ``_``, so that the run file keeps six fields a line."""
    return "cqr-" + re.sub(r"[\s\0]+", "_", name)


def chosen_run(runs: list, choice: dict, runid: str) -> Run:
    """Each turn's ranking from its chosen candidate's run."""
    parts = []
    for i, run in enumerate(runs):
        keep = pa.array([q for q, c in choice.items() if c == i], pa.string())
        mask = pc.is_in(run.qid, value_set=keep)
        idx = np.flatnonzero(mask.to_numpy(zero_copy_only=False))
        parts.append((run.qid.take(idx), run.docno.take(idx), run.score[idx]))
    qid = pa.concat_arrays([p[0] for p in parts])
    docno = pa.concat_arrays([p[1] for p in parts])
    return Run(qid, docno, np.concatenate([p[2] for p in parts]), runid, f"<{runid}>")


def chosen_counts(choice: dict, n: int) -> dict:
    """{"c1": turns, ...}: how often each candidate was chosen."""
    counts = Counter(choice.values())
    return {f"c{i + 1}": counts.get(i, 0) for i in range(n)}


def policy_note(p: Policy, n: int, index, measures: list, chosen: dict | None) -> str:
    """The row's line under the table: which candidates it is, and how it was made."""
    if p.name in ("first", "each"):
        return f"candidates: candidate {index + 1} of {n} (--candidates {p.name})"
    if p.name == "fuse":
        return f"candidates: the {n} candidates' runs fused with {p.method} (trecqr fuse)"
    shown = ", ".join(f"{k} {v}" for k, v in (chosen or {}).items())
    if p.name == "oracle":
        return (f"candidates: ORACLE, an upper bound chosen with the gold labels: per turn the "
                f"best of {n} candidates by {measures[0]} (then {', '.join(measures[1:])}; "
                f"ties: the first); chosen on the evaluated turns {shown}")
    if p.name == "sc":
        return (f"candidates: sc (LLM4CS self-consistency), per turn the candidate nearest the "
                f"mean of the {n} candidates' embeddings; chosen {shown}")
    return f"candidates: mean of the {n} candidates' embeddings (LLM4CS Mean)"


def candidate_rows(name: str, cands, policies: list, search, score, per_query, measures: list,
                   dense=None) -> list:
    """The rows of one rewrites input: search(topics, run name) -> (topics, run, n cut);
    score(row name, topics, run, n cut, report, without rewrite, notes, info) -> CqrRow;
    per_query(run) -> {qid: tuple of the report's measures}; dense(how, runid, cands) ->
    (run, {qid: chosen candidate} or None) for mean and sc."""
    sets, n = cands.sets, max(cands.stats.n, 1)
    runs: dict = {}

    def run_of(i):
        if i not in runs:
            runs[i] = search(sets[i].topics, f"{name}.c{i + 1}")
        return runs[i]

    rows = []
    plan = row_names(name, policies, n)
    if n > 1:  # on stderr too: what a single-rewrite reader used to take silently
        say(f"{name}: {cands.stats.summary()}")
        if plan == [(name, policies[0], 0)]:
            say(f"{name}: {first_note(cands.stats)}")
    for k, (row, p, index) in enumerate(plan):
        info = {"policy": p.label, "candidates": n, "candidate": None if index is None else
                index + 1, "upper_bound": p.name == "oracle", "chosen": None}
        if k == 0:
            info["stats"] = cands.stats.to_dict()
        notes = [cands.stats.summary()] if k == 0 and n > 1 else []
        if index is not None:
            t, run, n_cut = run_of(index)
            if n > 1:
                notes.append(policy_note(p, n, index, measures, None))
            report = sets[index].report
            rows.append(score(row, t, replace(run, runid=cqr_runid(row)), n_cut, report,
                              len(report.missing), notes, info))
            continue
        chosen = None
        if p.name == "fuse":
            run = fuse([own_turns(run_of(i)[1], sets[i]) for i in range(n)], method=p.method,
                       runid=cqr_runid(row))
            t, n_cut = merged_topics(sets), run_of(0)[2]
        elif p.name == "oracle":
            qids = list(dict.fromkeys(q for i in range(n) for q in run_of(i)[0].qids))
            scored = [per_query(own_turns(run_of(i)[1], sets[i])) for i in range(n)]
            choice = oracle_choice(scored, qids)
            t = merged_topics(sets, choice)
            run = chosen_run([run_of(i)[1] for i in range(n)], choice, cqr_runid(row))
            judged = set().union(*scored)  # the turns it chose among: evaluated ones
            chosen = chosen_counts({q: c for q, c in choice.items() if q in judged}, n)
            n_cut = run_of(0)[2]
        else:
            if dense is None:
                raise UsageError(f"--candidates {p.name} needs a dense index")
            run, choice = dense(p.name, cqr_runid(row), cands)
            t, n_cut = merged_topics(sets, choice), None
            chosen = chosen_counts(choice, n) if choice else None
        info["chosen"] = chosen
        notes.append(policy_note(p, n, None, measures, chosen))
        rows.append(score(row, t, run, n_cut, sets[0].report, without_any(sets), notes, info))
    return rows
