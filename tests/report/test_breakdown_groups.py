"""breakdown --groups: overlapping groups with an 'all' row (InfoCQR's QReCC question types).

Data: ../shared/data/qrecc/test_question_types.json and qrecc_qrel.tsv (the 8,209 QReCC test
turns with gold; smartyfh/InfoCQR @ 2953c46, dmis-lab/RetPO @ 80192ff). No QReCC test run is
published with the data, so the run is made from the qrels: each turn's first gold passage at a
rank drawn from a hash of its id (1-20, or not retrieved), so every group's RR differs.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from conftest import data_path, run_cli

from trecqr.report.breakdown import breakdown
from trecqr.report.groups import memberships, read_groups

COUNTS = {"trec": 371, "quac": 6396, "nq": 1442, "no-switch": 279, "switch": 573, "first": 267,
          "all": 8209}


def _rank(qid: str):
    h = int(hashlib.sha1(qid.encode()).hexdigest(), 16)
    return None if h % 7 == 0 else h % 20 + 1


@pytest.fixture(scope="module")
def qrecc_run(tmp_path_factory):
    gold: dict = {}
    for line in data_path("qrecc", "qrecc_qrel.tsv").read_text().splitlines():
        q, _, d, _ = line.split("\t")
        gold.setdefault(q, []).append(d)
    lines = []
    for q, docs in gold.items():
        r = _rank(q)
        ranking = [f"filler-{q}-{i}" for i in range(20)]
        if r is not None:
            ranking[r - 1:r - 1] = docs
        lines += [f"{q} Q0 {d} {i + 1} {100 - i} made-from-qrels\n"
                  for i, d in enumerate(ranking[:20 + len(docs)])]
    # turns the groups list without gold are answered too: only in the run, never counted
    types = json.loads(data_path("qrecc", "test_question_types.json").read_text())
    extra = [f"QReCC-Test_{i}" for i in types["quac"][:50] if f"QReCC-Test_{i}" not in gold]
    lines += [f"{q} Q0 filler-{q} 1 1 made-from-qrels\n" for q in extra]
    path = tmp_path_factory.mktemp("qrecc") / "qrels.run"
    path.write_text("".join(lines))
    return path, gold


def test_question_type_groups_counted_over_the_evaluated_turns(qrecc_run):
    run, gold = qrecc_run
    groups_file = data_path("qrecc", "test_question_types.json")
    bd = breakdown(data_path("qrecc", "qrecc_qrel.tsv"), [run], ["recip_rank"],
                   groups=groups_file)
    assert bd.groups == ["trec", "quac", "nq", "no-switch", "switch", "first", "all"]
    assert bd.counts == COUNTS
    assert bd.unlabelled == []
    # each group's RR by hand: 1 / rank of the first gold passage, 0 when not retrieved
    groups = read_groups(groups_file)
    for g, ids in list(groups.items()) + [("all", None)]:
        members = [q for q in gold if ids is None or q.removeprefix("QReCC-Test_") in set(ids)]
        rr = [1 / _rank(q) if _rank(q) else 0.0 for q in members]
        row = bd.get(g, bd.runs[0], "recip_rank")
        assert row.n == COUNTS[g] == len(members)
        assert row.mean == pytest.approx(sum(rr) / len(rr), abs=1e-12), g
    means = {g: round(bd.get(g, bd.runs[0], "recip_rank").mean, 4) for g in bd.groups}
    assert len(set(means.values())) == len(means)  # a wrong membership would show


def test_breakdown_groups_command(qrecc_run, tmp_path):
    run, _ = qrecc_run
    res = run_cli(["breakdown", data_path("qrecc", "qrecc_qrel.tsv"), run, "-m", "recip_rank",
                   "--groups", data_path("qrecc", "test_question_types.json")])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("breakdown by group (groups overlap; 'all': every topic)")
    rows = {ln.split()[0]: ln.split()[1] for ln in res.stdout.splitlines()
            if ln.split() and ln.split()[0] in COUNTS}
    assert rows == {g: str(n) for g, n in COUNTS.items()}
    bad = tmp_path / "g.json"
    bad.write_text('{"a": "1_1"}')
    res = run_cli(["breakdown", data_path("qrecc", "qrecc_qrel.tsv"), run, "-m", "recip_rank",
                   "--groups", bad])
    assert res.exit_code == 2 and "group 'a': expected a list of turn ids" in res.stderr


def test_memberships_overlap_and_match_id_styles():
    m = memberships(["QReCC-Test_1_1", "1_3", "31-4", "9_9"],
                    {"trec": ["1_1", "1_3"], "first": ["1_1"], "x": ["31_4"]})
    assert m == {"QReCC-Test_1_1": ["trec", "first", "all"], "1_3": ["trec", "all"],
                 "31-4": ["x", "all"], "9_9": ["all"]}


def test_cqr_groups(tmp_path):
    """cqr --groups: the rows' runs broken down by overlapping groups, 'all' = every turn."""
    from conftest import ROOT

    demo = ROOT / "fixtures" / "qrecc-demo"
    qids = [ln.split("\t")[0] for ln in (demo / "topics-human.tsv").read_text().splitlines()]
    first = [q for q in qids if q.endswith("_2")]
    groups = {"second": first, "short-conv": [q for q in qids if int(q.split("_")[1]) <= 3]}
    gfile = tmp_path / "g.json"
    gfile.write_text(json.dumps(groups))
    res = run_cli(["cqr", "--qrels", demo / "qrels.txt", "--collection",
                   demo / "collection.jsonl", "--topics", demo / "topics-human.tsv",
                   "--groups", gfile, "--quiet"])
    assert res.exit_code == 0, res.stderr
    text = res.stdout
    assert "breakdown by group (groups overlap; 'all': every topic)" in text
    rows = {ln.split()[0]: ln.split()[1] for ln in text.splitlines()
            if ln.split() and ln.split()[0] in ("second", "short-conv", "all")}
    assert rows == {"second": str(len(first)), "short-conv": str(len(groups["short-conv"])),
                    "all": "927"}
