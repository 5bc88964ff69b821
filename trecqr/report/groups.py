"""Overlapping groups of turns for breakdowns (``trecqr breakdown --groups FILE.json``).

InfoCQR and RetPO report QReCC test by question type from ``test_question_types.json``:
``{"trec": [ids], "quac": [...], "nq": [...], "no-switch": [...], "switch": [...],
"first": [...]}``. The groups overlap (a first turn is also trec, quac or nq), so they cannot be
one label per turn (``--by labels``). Here a turn belongs to every group that lists it, and an
``all`` group holds every evaluated turn, as InfoCQR's ``cs-shortcut/eval_breakdown.py``
(smartyfh/InfoCQR @ 2953c46) adds it. Groups count the turns that are evaluated (a listed id
without gold is not in the qrels, so it is not counted: InfoCQR drops ``{"": 1}`` turns).

Ids are matched as written, else by conversation and turn (``QReCC-Test_1_2`` finds ``1_2``,
``topiocqa-dev_31_4`` finds ``31-4``), as ``--by type`` matches them.
"""

from __future__ import annotations

import os

from trecqr.datasets.cast.topics import load_json
from trecqr.datasets.turn_ids import split_id
from trecqr.errors import InputError, UsageError

ALL = "all"


def read_groups(source, *, labels: bool = True) -> dict:
    """{group: [turn id, ...]}, in the file's order, from a JSON file or a mapping of either
    shape: ``{group: [turn ids]}`` (groups may overlap, as QReCC's question types do) or, with
    ``labels``, ``{turn id: group}`` (one label per turn). The one reader of groups for
    ``breakdown --groups`` (lists only: its one-label-per-turn form is ``--by labels``) and the
    HTML report (both shapes)."""
    name = "<groups>"
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        source = load_json(name)
    if not isinstance(source, dict) or not source:
        raise InputError(name, None, "expected a JSON object {group: [turn ids]} or "
                                     "{turn id: group}")
    out: dict[str, list] = {}
    for key, value in source.items():
        if isinstance(value, list):
            if not all(isinstance(i, (str, int)) for i in value):
                raise InputError(name, None, f"group {key!r}: expected a list of turn ids")
            group, ids = str(key), [str(i) for i in value]
        elif labels and isinstance(value, (str, int)):
            group, ids = str(value), [str(key)]
        elif labels:
            raise InputError(name, None, f"{key!r}: expected a list of turn ids or a group name")
        else:
            raise InputError(name, None, f"group {key!r}: expected a list of turn ids")
        if group == ALL:
            raise InputError(name, None, f"group {ALL!r} is every evaluated turn; rename it")
        members = out.setdefault(group, [])
        members += [i for i in ids if i not in members]
    return out


def groups_by_turn(groups: dict) -> dict:
    """{turn id: [its groups, in group order]} of :func:`read_groups`' {group: [turn ids]}."""
    out: dict[str, list] = {}
    for group, ids in groups.items():
        for qid in ids:
            out.setdefault(qid, []).append(group)
    return out


def _keys(qid: str) -> list:
    try:
        conv, turn, _ = split_id(qid)
    except UsageError:
        return [qid]
    return [qid, f"{conv}_{turn}", f"{conv}-{turn}"]


def memberships(qids, groups: dict) -> dict:
    """{qid: [groups it belongs to, in group order, then 'all']} for every qid given."""
    where: dict = {}
    for g, ids in groups.items():
        for i in ids:
            where.setdefault(i, []).append(g)
    out = {}
    for q in qids:
        found: list = []
        for key in _keys(q):
            if key in where:
                found = where[key]
                break
        out[q] = list(dict.fromkeys(found)) + [ALL]
    return out


def group_order(groups: dict) -> list:
    return list(groups) + [ALL]
