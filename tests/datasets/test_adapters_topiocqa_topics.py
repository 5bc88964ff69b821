"""TopiOCQA conversations (raw JSON, DPR retriever files) to topics and qrels, with turn types."""

from __future__ import annotations

import collections
import json

import pytest
from click.testing import CliRunner
from conftest import data_path

from trecqr.cli.convert import topiocqa_command
from trecqr.datasets import topiocqa
from trecqr.datasets.qrecc.files import QrelsCounts
from trecqr.datasets.topics import read_topics
from trecqr.datasets.topiocqa import (
    read_topiocqa_qrels,
    read_topiocqa_turns,
    read_turn_types,
    rewrite_topics,
    turns_to_qrels,
    turns_to_topics,
    with_turn_types,
)
from trecqr.errors import InputError, UsageError
from trecqr.formats import read_qrels

Q1 = "what was australia's contribution to the battle of normandy"
A1 = "the army, navy and air force"
Q2 = "was the battle fought in australia?"
A2 = "no"
Q3 = "who won the battle?"
A3 = "the allies"
Q4 = "what is throat cancer"


def _gold(pid, title="Battle of Normandy"):
    return {"id": pid, "title": title, "text": f"passage {pid}"}


RAW = [
    {"Conversation_no": 1, "Turn_no": 1, "Question": Q1, "Answer": A1,
     "Topic": "Australian contribution to the Battle of Normandy", "Topic_section": "Introduction",
     "Context": [], "Rationale": "army, navy and air force", "is_nq": True,
     "Gold_passage": _gold("5498209")},
    {"Conversation_no": 1, "Turn_no": 2, "Question": Q2, "Answer": A2,
     "Topic": "Australian contribution to the Battle of Normandy", "Topic_section": "Background",
     "Context": [Q1, A1], "Rationale": "", "is_nq": False, "Gold_passage": _gold("5498210")},
    {"Conversation_no": 1, "Turn_no": 3, "Question": Q3, "Answer": A3,
     "Topic": "Operation Overlord", "Topic_section": "Outcome",
     "Context": [Q1, A1, Q2, A2], "Rationale": "", "is_nq": False},  # no Gold_passage
    {"Conversation_no": 2, "Turn_no": 1, "Question": Q4, "Answer": "a cancer of the throat",
     "Topic": "Throat cancer", "Topic_section": "Introduction", "Context": [],
     "Rationale": "", "is_nq": True, "Gold_passage": _gold(14979903, "Throat cancer")},
]

DPR = [
    {"conv_id": 1, "turn_id": 1, "dataset": "topiocqa", "question": Q1, "answers": [A1],
     "positive_ctxs": [{"title": "Battle of Normandy", "text": "...", "score": 1000,
                        "title_score": 1, "passage_id": "5498209"}],
     "negative_ctxs": [], "hard_negative_ctxs": []},
    {"conv_id": 1, "turn_id": 2, "dataset": "topiocqa",
     "question": f"{Q1} [SEP] {A1} [SEP] {Q2}", "answers": [A2],
     "positive_ctxs": [{"title": "Battle of Normandy", "text": "...", "passage_id": "5498210"},
                       {"title": "x", "text": "...", "passage_id": "777"}],
     "negative_ctxs": [], "hard_negative_ctxs": []},
    {"conv_id": 1, "turn_id": 3, "dataset": "topiocqa",
     "question": f"{Q1} [SEP] {A1} [SEP] {Q2} [SEP] {A2} [SEP] {Q3}", "answers": [A3],
     "positive_ctxs": [], "negative_ctxs": [], "hard_negative_ctxs": []},
]


@pytest.fixture
def raw_file(tmp_path):
    path = tmp_path / "topiocqa_dev.json"
    path.write_text(json.dumps(RAW))
    return path


@pytest.fixture
def dpr_file(tmp_path):
    path = tmp_path / "dpr_dev.json"
    path.write_text(json.dumps(DPR))
    return path


# --------------------------------------------------------------------------- reading
def test_raw_json_topics(raw_file):
    turns = read_topiocqa_turns(raw_file)
    assert turns.kind == "raw" and len(turns) == 4
    raw = turns_to_topics(turns, "raw")
    assert raw.qids == ["1_1", "1_2", "1_3", "2_1"]
    assert raw.queries == [Q1, Q2, Q3, Q4]
    assert raw.metadata["1_3"] == {"Topic": "Operation Overlord", "Topic_section": "Outcome",
                                   "is_nq": False}
    hist = turns_to_topics(turns, "history").as_dict()
    assert hist["1_1"] == Q1
    assert hist["1_2"] == f"{Q1} [SEP] {A1} [SEP] {Q2}"
    assert hist["1_3"] == f"{Q1} [SEP] {A1} [SEP] {Q2} [SEP] {A2} [SEP] {Q3}"
    last1 = turns_to_topics(turns, "last-k", k=1).as_dict()
    assert last1["1_3"] == f"{Q2} [SEP] {A2} [SEP] {Q3}" and last1["1_1"] == Q1
    assert turns_to_topics(turns, "last-k", k=0).queries == [Q1, Q2, Q3, Q4]
    assert turns_to_topics(turns, "last-k", k=9).as_dict() == hist
    with pytest.raises(UsageError, match="k must be"):
        turns_to_topics(turns, "last-k", k=-1)
    with pytest.raises(UsageError, match="unknown query field"):
        turns_to_topics(turns, "rewrite")


def test_raw_json_qrels(raw_file):
    qrels, counts = turns_to_qrels(read_topiocqa_turns(raw_file))
    assert counts == QrelsCounts(turns_read=4, turns_with_gold=3, pairs=3)
    assert qrels.qid.to_pylist() == ["1_1", "1_2", "2_1"]
    assert qrels.docno.to_pylist() == ["5498209", "5498210", "14979903"]  # int id kept as text
    assert qrels.grade.tolist() == [1, 1, 1]


def test_dpr_file(dpr_file):
    turns = read_topiocqa_turns(dpr_file)
    assert turns.kind == "dpr" and len(turns) == 3
    assert turns_to_topics(turns, "raw").queries == [Q1, Q2, Q3]
    hist = turns_to_topics(turns, "history").queries
    assert hist == [Q1, f"{Q1} [SEP] {A1} [SEP] {Q2}", DPR[2]["question"]]
    assert turns_to_topics(turns, "last-k", k=1).queries[2] == f"{Q2} [SEP] {A2} [SEP] {Q3}"
    qrels, counts = turns_to_qrels(turns)
    # positive_ctxs[0] only; the turn with no positive is left out and counted
    assert counts == QrelsCounts(turns_read=3, turns_with_gold=2, pairs=2)
    assert list(zip(qrels.qid.to_pylist(), qrels.docno.to_pylist())) == [
        ("1_1", "5498209"), ("1_2", "5498210")]


def test_turns_errors(tmp_path):
    def bad(doc, match):
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(InputError, match=match):
            read_topiocqa_turns(path)

    bad({"1-1": {"5": 1}}, "expected a JSON list of turns")
    bad([{"id": 1, "text": "x"}], "neither")
    bad([RAW[0], RAW[0]], "record 1: turn 1_1 occurs twice")
    bad([dict(RAW[0], Turn_no="x")], "Turn_no 'x' is not a number")
    bad([dict(RAW[0], Question=None)], r"record 0 \(turn 1_1\): Question is missing")
    bad([dict(RAW[1], Context="q1 a1")], "Context is not a list")
    bad([dict(RAW[0], Gold_passage={"id": "a b"})], "contains white space")
    bad([dict(DPR[0], positive_ctxs=[{"passage_id": [1]}])], "is not a passage id")


# --------------------------------------------------------------------------- rewrites
def _rewrites(tmp_path):
    path = tmp_path / "rw.jsonl"
    rows = [{"qid": "TopiOCQA-Dev_1_1", "rewrite": "australia contribution normandy",
             "reasoning_content": "..."},
            {"qid": "TopiOCQA-Dev_1_2", "rewrite": ""},
            {"qid": "TopiOCQA-Dev_2_1", "rewrite": "throat cancer definition"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_rewrite_topics(tmp_path, raw_file):
    turns = read_topiocqa_turns(raw_file)
    path = _rewrites(tmp_path)
    topics, report = rewrite_topics(path, turns, "raw")
    # 1_2 is empty and 1_3 absent: both fall back to the raw question
    assert topics.as_dict() == {"1_1": "australia contribution normandy", "1_2": Q2, "1_3": Q3,
                                "2_1": "throat cancer definition"}
    assert report.rewritten == 2 and report.filled_raw == 2
    assert report.empty == ["1_2"] and report.absent == ["1_3"]
    assert topics.metadata["2_1"]["Topic"] == "Throat cancer"
    dropped, report = rewrite_topics(path, turns, "drop")
    assert dropped.qids == ["1_1", "2_1"] and report.dropped == 2
    with pytest.raises(InputError, match="1 empty or missing rewrites and 1 raw turns absent"):
        rewrite_topics(path, turns, "error")
    alone, _ = rewrite_topics(path, None, "drop")  # no turn set: ids made canonical
    assert alone.qids == ["1_1", "2_1"]


# --------------------------------------------------------------------------- types
def test_with_turn_types(raw_file):
    topics = turns_to_topics(read_topiocqa_turns(raw_file), "raw")
    types = read_turn_types(data_path("topiocqa", "dev_type.json"))
    typed, counts, untyped = with_turn_types(topics.restyle("dash"), types)
    assert typed.qids == ["1-1", "1-2", "1-3", "2-1"]
    # the real dev file: 1-1, 2-1 first turns; 1-2, 1-3 no shift
    assert [typed.metadata[q]["turn_type"] for q in typed.qids] == [
        "first_turn", "no_shift", "no_shift", "first_turn"]
    assert counts == {"first_turn": 2, "no_shift": 2} and untyped == []
    assert topics.metadata["1_1"].get("turn_type") is None  # input not modified
    partial, counts, untyped = with_turn_types(topics, {"1_1": "first_turn"})
    assert counts == {"first_turn": 1} and untyped == ["1_2", "1_3", "2_1"]
    assert "turn_type" not in partial.metadata["1_2"]


# --------------------------------------------------------------------------- CLI
def _run(args):
    return CliRunner().invoke(topiocqa_command, [str(a) for a in args], catch_exceptions=False)


def test_cli_turns_history_jsonl(tmp_path, raw_file):
    topics_out, qrels_out = tmp_path / "t.jsonl", tmp_path / "q.qrels"
    result = _run(["--turns", raw_file, "--topics-out", topics_out, "--query-field", "history",
                   "--qrels-out", qrels_out])
    assert result.exit_code == 0, result.stderr
    assert "topiocqa: 4 turns read from" in result.stderr and "(raw JSON), 3 with a gold" \
        in result.stderr
    assert ("topiocqa: 4 turns read, 3 with gold, 1 without gold left out; 3 (turn, passage) "
            "pairs written") in result.stderr
    assert ("topiocqa: 4 topics written (query: context + question joined with ' [SEP] ')"
            in result.stderr)
    recs = [json.loads(x) for x in topics_out.read_text().splitlines()]
    assert recs[1] == {"qid": "1_2", "query": f"{Q1} [SEP] {A1} [SEP] {Q2}",
                       "Topic": "Australian contribution to the Battle of Normandy",
                       "Topic_section": "Background", "is_nq": False}
    assert qrels_out.read_text() == "1_1 0 5498209 1\n1_2 0 5498210 1\n2_1 0 14979903 1\n"


def test_cli_dpr_last_k_style(tmp_path, dpr_file):
    topics_out, qrels_out = tmp_path / "t.tsv", tmp_path / "q.qrels"
    result = _run(["--turns", dpr_file, "--topics-out", topics_out, "--query-field", "last-k",
                   "--k", 1, "--qrels-out", qrels_out, "--qid-style", "topiocqa-dev"])
    assert result.exit_code == 0, result.stderr
    assert "(DPR file), 2 with a gold passage" in result.stderr
    assert topics_out.read_text().splitlines() == [
        f"topiocqa-dev_1_1\t{Q1}", f"topiocqa-dev_1_2\t{Q1} [SEP] {A1} [SEP] {Q2}",
        f"topiocqa-dev_1_3\t{Q2} [SEP] {A2} [SEP] {Q3}"]
    assert qrels_out.read_text().splitlines() == ["topiocqa-dev_1_1 0 5498209 1",
                                                  "topiocqa-dev_1_2 0 5498210 1"]


def test_cli_rewrites_types_trec(tmp_path, raw_file):
    out = tmp_path / "t.trec"
    result = _run(["--turns", raw_file, "--rewrites", _rewrites(tmp_path), "--missing", "drop",
                   "--types", data_path("topiocqa", "dev_type.json"), "--topics-out", out])
    assert result.exit_code == 0, result.stderr
    assert "3 records, 2 rewrites; 1 empty or missing rewrites; 1 raw turns absent" \
        in result.stderr and "2 dropped" in result.stderr
    assert "turn types for 2 of 2 topics: 2 first_turn" in result.stderr
    back = read_topics(out)
    assert back.as_dict() == {"1_1": "australia contribution normandy",
                              "2_1": "throat cancer definition"}
    error = _run(["--turns", raw_file, "--rewrites", _rewrites(tmp_path), "--missing", "error",
                  "--topics-out", tmp_path / "e.tsv"])
    assert error.exit_code == 2 and "empty or missing rewrites" in error.stderr
    assert not (tmp_path / "e.tsv").exists()


def test_cli_real_gold_and_types(tmp_path):
    """All 2,514 dev turns (ids from dev_gold.trec) as a raw JSON: metadata counts and qrels
    from Gold_passage equal the published gold."""
    gold = read_qrels(data_path("topiocqa", "dev_gold.trec"))
    recs = []
    for qid, doc in zip(gold.qid.to_pylist(), gold.docno.to_pylist()):
        conv, turn = qid.split("-")
        recs.append({"Conversation_no": int(conv), "Turn_no": int(turn), "Question": f"q{qid}",
                     "Answer": "a", "Topic": "t", "Topic_section": "s", "Context": [],
                     "Rationale": "", "is_nq": False, "Gold_passage": _gold(doc)})
    turns_in = tmp_path / "dev.json"
    turns_in.write_text(json.dumps(recs))
    topics_out, qrels_out, pub_out = (tmp_path / "t.jsonl", tmp_path / "q.qrels",
                                      tmp_path / "p.qrels")
    result = _run(["--turns", turns_in, "--types", data_path("topiocqa", "dev_type.json"),
                   "--topics-out", topics_out, "--qrels-out", qrels_out,
                   "--qid-style", "TopiOCQA-Dev"])
    assert result.exit_code == 0, result.stderr
    assert ("turn types for 2514 of 2514 topics: 205 first_turn, 672 topic_shift, "
            "1637 no_shift") in result.stderr
    recs = [json.loads(x) for x in topics_out.read_text().splitlines()]
    assert len(recs) == 2514 and recs[0]["qid"] == "TopiOCQA-Dev_1_1"
    assert collections.Counter(r["turn_type"] for r in recs) == {
        "first_turn": 205, "topic_shift": 672, "no_shift": 1637}
    by = {r["qid"]: r["turn_type"] for r in recs}
    assert by["TopiOCQA-Dev_1_5"] == "topic_shift" and by["TopiOCQA-Dev_205_11"] == "no_shift"
    # qrels from the turns' Gold_passage == the published qrels (restyled)
    pub = _run(["--qrels", data_path("topiocqa", "dev_gold.trec"), "--qrels-out", pub_out,
                "--qid-style", "TopiOCQA-Dev"])
    assert pub.exit_code == 0, pub.stderr
    assert qrels_out.read_text() == pub_out.read_text()
    lines = pub_out.read_text().splitlines()
    assert len(lines) == 2514 and lines[0] == "TopiOCQA-Dev_1_1 0 14979903 1"
    assert read_topiocqa_qrels(qrels_out)[1] == QrelsCounts(2514, 2514, 2514)


def test_cli_usage_errors(tmp_path, raw_file):
    cases = [
        ([], "nothing to write"),
        (["--qrels", raw_file, "--topics-out", tmp_path / "t.tsv", "--turns", raw_file],
         "--qrels needs --qrels-out"),
        (["--qrels-out", tmp_path / "q"], "--qrels-out needs --qrels or --turns"),
        (["--topics-out", tmp_path / "t.tsv"], "--topics-out needs --turns"),
        (["--turns", raw_file, "--topics-out", tmp_path / "t.tsv", "--query-field", "rewrite"],
         "--query-field rewrite needs --rewrites"),
        (["--turns", raw_file, "--topics-out", tmp_path / "t.tsv", "--qid-style", "no such"],
         "unknown query-id style"),
    ]
    for args, message in cases:
        result = _run(args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.stderr)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([RAW[0], RAW[0]]))
    result = _run(["--turns", bad, "--topics-out", tmp_path / "t.tsv"])
    assert result.exit_code == 2 and f"{bad}: record 1: turn 1_1 occurs twice" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json", "topiocqa_dev.json"]


def test_cli_qrels_with_types_coverage(tmp_path, raw_file):
    out = tmp_path / "q.qrels"
    result = _run(["--qrels", data_path("topiocqa", "dev_gold.trec"), "--qrels-out", out,
                   "--types", data_path("topiocqa", "dev_type.json")])
    assert result.exit_code == 0, result.stderr
    assert ("turn types cover 2514 qrels turns; 0 without a type, 0 typed turns not in the "
            "qrels") in result.stderr
    small = _run(["--turns", raw_file, "--qrels-out", out,
                  "--types", data_path("topiocqa", "dev_type.json")])
    assert small.exit_code == 0, small.stderr
    assert ("turn types cover 3 qrels turns; 0 without a type, 2511 typed turns not in the "
            "qrels") in small.stderr
