"""Turn policies (--missing raw|drop|human|empty|error, --min-results) on real rewrites.

Data: ../shared/data/qrecc/dev-sampled2k_chatgpt_ICL.jsonl (2,000 real QReCC dev turns with
InfoCQR's ChatGPT rewrite GPT_rewrite and the human Truth_rewrite; smartyfh/InfoCQR @ 2953c46),
with some turns removed (ConvSearch-R1 writes no record for a generation it cannot parse), some
rewrites emptied and some made chat-completion objects without content; fixtures/qrecc-demo
(the 927 gold turns' demo BM25 collection).
"""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, data_path, run_cli

from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import read_topics
from trecqr.protocols.turn_policy import drop_short_rankings
from trecqr.errors import InputError
from trecqr.formats.run import read_run

DEMO = ROOT / "fixtures" / "qrecc-demo"


def _qid(rec) -> str:
    return f"{rec['Conversation_no']}_{rec['Turn_no']}"


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """The 2,000 records with 13 removed, 7 emptied, 5 made unreadable (no message content)."""
    recs = [json.loads(ln) for ln in data_path(
        "qrecc", "dev-sampled2k_chatgpt_ICL.jsonl").read_text().splitlines()]
    removed = {_qid(r) for r in recs[100:1400:100]}
    emptied = {_qid(r) for r in recs[55:405:50]}
    unreadable = {_qid(r) for r in recs[1503:1508]}
    out = []
    for r in recs:
        q = _qid(r)
        if q in removed:
            continue
        if q in emptied:
            r = dict(r, GPT_rewrite="  ")
        if q in unreadable:
            r = dict(r, GPT_rewrite={"choices": [{"message": {"role": "assistant"}}]})
        out.append(json.dumps(r))
    folder = tmp_path_factory.mktemp("rw")
    path = folder / "rewrites.jsonl"
    path.write_text("\n".join(out) + "\n")
    raw = folder / "raw.tsv"
    raw.write_text("".join(f"{_qid(r)}\t{r['Question']}\n" for r in recs))
    human = {_qid(r): r["Truth_rewrite"] for r in recs}
    gpt = {r: t for r, t in read_rewrites(data_path("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl"),
                                          rewrite_field="GPT_rewrite").topics}
    return dict(path=path, raw=raw, recs=recs, removed=removed, emptied=emptied,
                unreadable=unreadable, human=human, gpt=gpt)


def test_drop_removes_exactly_the_missing_empty_and_unreadable(broken):
    raw = read_topics(broken["raw"])
    res = read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="drop", raw=raw)
    bad = broken["removed"] | broken["emptied"] | broken["unreadable"]
    assert (len(broken["removed"]), len(broken["emptied"]), len(broken["unreadable"])) == \
        (13, 7, 5)
    assert set(res.topics.qids) == set(raw.qids) - bad
    assert len(res.topics) == 2000 - 25
    assert res.topics.as_dict() == {q: t for q, t in broken["gpt"].items() if q not in bad}
    rep = res.report
    assert (rep.dropped, len(rep.absent), len(rep.empty), len(rep.unparsable)) == (25, 13, 12, 5)
    assert rep.summary().endswith("policy --missing drop: 25 turns changed, 25 left the average")


def test_human_replaces_exactly_the_missing_ones(broken):
    raw = read_topics(broken["raw"])
    bad = broken["removed"] | broken["emptied"] | broken["unreadable"]
    res = read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="human", raw=raw,
                        human=broken["human"])
    want = {q: (broken["human"][q] if q in bad else broken["gpt"][q]) for q in raw.qids}
    assert res.topics.as_dict() == want
    assert (res.report.filled_human, res.report.dropped, res.report.changed) == (25, 0, 25)
    # without human=: each record's own Truth_rewrite; the removed records carry none
    with pytest.raises(InputError, match="turn '.*' has no rewrite and no human rewrite"):
        read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="human", raw=raw)
    inside = read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="human")
    assert inside.report.filled_human == 12
    assert {q: inside.topics[q] for q in broken["emptied"] | broken["unreadable"]} == \
        {q: broken["human"][q] for q in broken["emptied"] | broken["unreadable"]}
    # human topics in another id style match by (conversation, turn)
    dashed = {q.replace("_", "-"): t for q, t in broken["human"].items()}
    res2 = read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="human", raw=raw,
                         human=dashed)
    assert res2.topics.as_dict() == want


def test_empty_keeps_the_turns_with_an_empty_query(broken):
    raw = read_topics(broken["raw"])
    res = read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="empty", raw=raw)
    bad = broken["removed"] | broken["emptied"] | broken["unreadable"]
    assert res.topics.qids == raw.qids
    assert {q for q, t in res.topics if t == ""} == bad
    with pytest.raises(InputError, match="not text"):
        read_rewrites(broken["path"], rewrite_field="GPT_rewrite", missing="error", raw=raw)


def test_convert_rewrites_names_the_policy_and_its_counts(broken, tmp_path):
    res = run_cli(["convert", "rewrites", broken["path"], tmp_path / "t.tsv", "--raw",
                   broken["raw"], "--rewrite-field", "GPT_rewrite", "--missing", "drop"])
    assert res.exit_code == 0, res.stderr
    assert ("1987 records, 1975 rewrites; 12 empty or missing rewrites; 13 raw turns absent "
            "from the file; 5 of them not readable as text; 25 dropped; policy --missing drop: "
            "25 turns changed, 25 left the average") in res.stderr
    assert len((tmp_path / "t.tsv").read_text().splitlines()) == 1975


def test_min_results_drops_the_turns_with_fewer_hits(tmp_path):
    """RetPO's rule on a real search: the demo index, GPT rewrites, 100 per turn."""
    index = tmp_path / "demo.index"
    assert run_cli(["index", DEMO / "collection.jsonl", "-o", index, "--quiet"]).exit_code == 0
    res = run_cli(["search", index, DEMO / "topics-gpt.tsv", "-o", tmp_path / "all.run",
                   "-k", "100", "--quiet"])
    full = read_run(tmp_path / "all.run")
    counts = {}
    for q in full.qid.to_pylist():
        counts[q] = counts.get(q, 0) + 1
    short = sorted(q for q, n in counts.items() if n < 100)
    assert short  # the demo collection is small: some rewrites match fewer than 100 passages
    res = run_cli(["search", index, DEMO / "topics-gpt.tsv", "-o", tmp_path / "min.run",
                   "-k", "100", "--quiet", "--min-results", "100"])
    assert res.exit_code == 0, res.stderr
    assert f"--min-results 100: {len(short)} turns with fewer results left out" in res.stderr
    kept = read_run(tmp_path / "min.run")
    assert set(kept.qid.to_pylist()) == set(counts) - set(short)
    assert len(kept) == len(full) - sum(counts[q] for q in short)
    run, dropped = drop_short_rankings(full, 100)
    assert sorted(dropped) == short and len(run) == len(kept)


def test_cqr_empty_counts_zero_and_drop_leaves_the_average(broken, tmp_path):
    """cqr on the demo collection: --missing empty scores as trec_eval -c does (the empty
    queries' turns count 0); drop evaluates the others only; --min-results is noted."""
    import trecqr
    from trecqr.workflows.cqr import cqr

    qrels, raw = DEMO / "qrels.txt", DEMO / "topics-raw.tsv"
    gold = set(read_topics(raw).qids)
    bad = (broken["removed"] | broken["emptied"] | broken["unreadable"]) & gold
    assert len(bad) == 9
    index = tmp_path / "ix"
    kw = dict(rewrites=broken["path"], raw=raw, runs_dir=None)
    empty = cqr(qrels, collection=DEMO / "collection.jsonl", index=index, missing="empty",
                **dict(kw, runs_dir=tmp_path / "e"))
    row = empty.rows[0]
    assert row.coverage["evaluated"] == 927
    assert row.notes == ["--missing empty: 9 gold turns with an empty query count 0"]
    c = trecqr.evaluate(qrels, row.run, ["recip_rank", "ndcg_cut.3"], complete=True).aggregate()
    assert row.scores["MRR"] == c["recip_rank"] and row.scores["NDCG@3"] == c["ndcg_cut_3"]
    drop = cqr(qrels, index=index, missing="drop", **dict(kw, runs_dir=tmp_path / "d"))
    assert drop.rows[0].coverage["evaluated"] == 927 - 9
    plain = trecqr.evaluate(qrels, drop.rows[0].run, ["recip_rank"]).aggregate()["recip_rank"]
    assert drop.rows[0].scores["MRR"] == plain > row.scores["MRR"]
    short = cqr(qrels, index=index, missing="drop", min_results=100, **kw)
    note = short.rows[0].notes[0]
    assert note.startswith("--min-results 100: ") and "turns with fewer results left out" in note
    cov = short.rows[0].coverage
    assert (cov["evaluated"], cov["qrels_without_result"]) == (504, 414)
    assert cov["evaluated"] + cov["qrels_without_result"] == 927 - 9
    assert "; 17 dropped; policy --missing drop: 17 turns changed, 17 left the average" \
        in short.table()


def test_search_preset_takes_retpos_min_results(tmp_path):
    """search --preset retpo-topiocqa: RetPO's 100-passage rule without --min-results."""
    index = tmp_path / "demo.index"
    assert run_cli(["index", DEMO / "collection.jsonl", "-o", index, "--quiet"]).exit_code == 0
    res = run_cli(["search", index, DEMO / "topics-gpt.tsv", "-o", tmp_path / "p.run",
                   "-k", "100", "--quiet", "--preset", "retpo-topiocqa"])
    assert res.exit_code == 0, res.stderr
    assert "--min-results 100: " in res.stderr
    full = run_cli(["search", index, DEMO / "topics-gpt.tsv", "-o", tmp_path / "f.run",
                    "-k", "100", "--quiet", "--preset", "retpo-topiocqa", "--min-results", "0"])
    assert full.exit_code == 0 and "--min-results" not in full.stderr
    assert len(read_run(tmp_path / "p.run")) < len(read_run(tmp_path / "f.run"))


def test_human_falls_back_on_the_datasets_human_rewrite(broken, tmp_path):
    """search/cqr --dataset qrecc --missing human: a rewrites file without Truth_rewrite of its
    own takes the dataset's (the 13 removed turns and the 12 emptied/unreadable ones)."""
    from trecqr.datasets.qrecc.files import qrecc_topics, read_qrecc_turns

    bare = tmp_path / "bare.jsonl"  # ids and GPT rewrites only, as a model writes them
    bare.write_text("".join(json.dumps({"qid": q, "rewrite": r.get("GPT_rewrite")}) + "\n"
                            for q, r in ((_qid(r), r) for r in
                                         map(json.loads, broken["path"].read_text().splitlines()))))
    turns = read_qrecc_turns(data_path("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl"))
    topics, counts = qrecc_topics(turns, "rewrite", rewrites=bare, missing="human")
    bad = broken["removed"] | broken["emptied"] | broken["unreadable"]
    assert (len(topics), counts.turns_without_rewrite) == (2000, 25)
    assert {q: topics[q] for q in bad} == {q: broken["human"][q] for q in bad}
    assert {q: topics[q] for q in topics.qids if q not in bad} == \
        {q: t for q, t in broken["gpt"].items() if q not in bad}
