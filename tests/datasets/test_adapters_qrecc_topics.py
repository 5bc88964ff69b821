"""QReCC conversations to topics (raw / human / context / supplied rewrite) and the extended
`trecqr convert qrecc` command, on InfoCQR's 2,000 real dev turns (../shared/data/qrecc)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from conftest import data_path
from trecqr.cli.convert import qrecc_command
from trecqr.datasets.qrecc import files as qrecc
from trecqr.datasets.topics import read_topics
from trecqr.errors import InputError, UsageError
from trecqr.formats import read_qrels

SAMPLED = "dev-sampled2k_chatgpt_ICL.jsonl"
MUSIAL = "What happened in 1954?"
MUSIAL_HUMAN = "What happened to Stan Musial in 1954?"
MUSIAL_GPT = ("What notable events occurred in Stan Musial's career besides his participation in "
              "the 1950 All-Star Game and his record for most All-Star Games played?")
FLEET_HUMAN = ("Are there any other interesting aspects about Fleet Foxes' second album besides "
               "drummer Tillman leaving?")


@pytest.fixture(scope="module")
def turns():
    return qrecc.read_qrecc_turns(data_path("qrecc", SAMPLED))


def test_read_sampled_turns(turns):
    assert len(turns) == 2000
    assert [t.qid for t in turns[:3]] == ["9467_1", "1490_4", "343_5"]
    assert turns[-1].qid == "7828_1"
    assert sum(not t.context for t in turns) == 367  # first turns
    assert len(turns[1].context) == 6 and len(turns[2].context) == 8  # 2 * (turn - 1)
    assert sum(t.human != t.question for t in turns) == 1593
    assert sum(bool(t.passages) for t in turns) == 927
    assert turns[1].conversation_source == "quac" and turns[0].conversation_source == "nq"


@pytest.mark.parametrize("field, text_1490_4, text_343_5", [
    ("raw", MUSIAL, "Are there any other interesting aspects about this article?"),
    ("human", MUSIAL_HUMAN, FLEET_HUMAN),
])
def test_topics_raw_and_human(turns, field, text_1490_4, text_343_5):
    topics, counts = qrecc.qrecc_topics(turns, field)
    assert len(topics) == 2000 and topics.qids[0] == "9467_1" and topics.qids[-1] == "7828_1"
    d = topics.as_dict()
    assert d["1490_4"] == text_1490_4 and d["343_5"] == text_343_5
    assert d["7828_1"] == "is yuma the hottest city in the us"
    assert (counts.turns_read, counts.turns_without_rewrite, counts.topics_written) == \
        (2000, 0, 2000)
    assert topics.metadata["1490_4"] == {"conversation_source": "quac"}


def test_topics_context(turns):
    topics, _ = qrecc.qrecc_topics(turns, "context")
    d = topics.as_dict()
    assert d["9467_1"] == "where was australia's first federal government formed"
    parts = d["1490_4"].split(" [SEP] ")
    assert len(parts) == 7 and parts[-1] == MUSIAL
    assert parts[0] == "What happened to Stan Musial in 1950?"  # NewContext holds rewrites
    assert parts[2] == "What sport did he play?"
    assert sum(q.count(" [SEP] ") for q in topics.queries) == 11882
    spaced, _ = qrecc.qrecc_topics(turns, "context", sep=" ")
    assert spaced.as_dict()["1490_4"] == " ".join(parts)


def test_topics_gpt_rewrite(turns):
    path = data_path("qrecc", SAMPLED)
    topics, counts = qrecc.qrecc_topics(turns, "rewrite", rewrites=path, source=str(path))
    d = topics.as_dict()
    assert len(topics) == 2000 and topics.qids[0] == "9467_1" and topics.qids[-1] == "7828_1"
    assert d["1490_4"] == MUSIAL_GPT
    assert d["343_5"] == ("What is the name of the person who replaced Tillman in Fleet Foxes, "
                          "as mentioned in this article?")
    assert sum(d[t.qid] != t.question for t in turns) == 1633
    assert counts.turns_without_rewrite == 0 and counts.filled_raw == 0


def test_rewrite_missing_policies(turns, tmp_path):
    # a ConvSearch-R1 style file in another id style: one empty rewrite, one turn absent
    path = tmp_path / "rw.jsonl"
    recs = [{"qid": f"QReCC-Test_{t.qid}", "rewrite": f"R {t.qid}"} for t in turns[:4]]
    recs[1]["rewrite"] = "  "
    path.write_text("".join(json.dumps(r) + "\n" for r in recs[:3]))
    sub = turns[:4]
    topics, counts = qrecc.qrecc_topics(sub, "rewrite", rewrites=path, missing="raw")
    assert topics.qids == ["9467_1", "1490_4", "343_5", turns[3].qid]
    assert topics.queries[:3] == ["R 9467_1", MUSIAL, "R 343_5"]
    assert topics.queries[3] == turns[3].question
    assert (counts.turns_without_rewrite, counts.filled_raw, counts.topics_written) == (2, 2, 4)
    topics, counts = qrecc.qrecc_topics(sub, "rewrite", rewrites=path, missing="drop")
    assert topics.qids == ["9467_1", "343_5"] and counts.dropped == 2
    with pytest.raises(InputError, match="1 empty or missing rewrites and 1 raw turns absent"):
        qrecc.qrecc_topics(sub, "rewrite", rewrites=path, missing="error")
    with pytest.raises(UsageError, match="--rewrites"):
        qrecc.qrecc_topics(sub, "rewrite")


def _original(tmp_path, rewrite2=""):
    """Three turns with the exact field names of the published QReCC JSON."""
    turns = [
        {"Context": [], "Question": "What is a physician's assistant?",
         "Rewrite": "What is a physician's assistant?",
         "Answer": "physician assistants are medical providers",
         "Answer_URL": "https://example.org/pa", "Conversation_no": 1, "Turn_no": 1,
         "Conversation_source": "trec"},
        {"Context": ["What is a physician's assistant?",
                     "physician assistants are medical providers"],
         "Question": "What are the educational requirements required to become one?",
         "Rewrite": rewrite2, "Answer": "a master's degree", "Answer_URL": "",
         "Conversation_no": 1, "Turn_no": 2, "Conversation_source": "trec"},
        {"Context": [], "Question": "what is the population of england",
         "Rewrite": "what is the population of england", "Answer": "56 million",
         "Answer_URL": "https://example.org/e", "Conversation_no": 2, "Turn_no": 1,
         "Conversation_source": "nq"},
    ]
    path = tmp_path / "qrecc_test.json"
    path.write_text(json.dumps(turns, indent=1))
    return path


def test_original_qrecc_json(tmp_path):
    path = _original(tmp_path, "What are the educational requirements required to become a "
                                "physician's assistant?")
    turns = qrecc.read_qrecc_turns(path)
    assert [t.qid for t in turns] == ["1_1", "1_2", "2_1"]
    assert all(t.passages is None for t in turns)
    human, _ = qrecc.qrecc_topics(turns, "human")
    assert human.queries[1] == ("What are the educational requirements required to become a "
                                "physician's assistant?")
    ctx, _ = qrecc.qrecc_topics(turns, "context")
    assert ctx.queries == [
        "What is a physician's assistant?",
        "What is a physician's assistant? [SEP] physician assistants are medical providers "
        "[SEP] What are the educational requirements required to become one?",
        "what is the population of england"]
    assert ctx.metadata == {"1_1": {"conversation_source": "trec"},
                            "1_2": {"conversation_source": "trec"},
                            "2_1": {"conversation_source": "nq"}}
    with pytest.raises(InputError, match="carry no Truth_passages"):
        qrecc.turns_qrels(turns, str(path))


def test_original_missing_human_rewrite(tmp_path):
    turns = qrecc.read_qrecc_turns(_original(tmp_path, rewrite2=""))
    topics, counts = qrecc.qrecc_topics(turns, "human")
    assert topics.queries[1] == "What are the educational requirements required to become one?"
    assert (counts.turns_without_rewrite, counts.filled_raw) == (1, 1)
    topics, counts = qrecc.qrecc_topics(turns, "human", missing="drop")
    assert topics.qids == ["1_1", "2_1"] and counts.dropped == 1
    with pytest.raises(InputError, match="1 turns without a human rewrite: 1_2"):
        qrecc.qrecc_topics(turns, "human", missing="error")


def test_scai_turns_have_no_question():
    turns = qrecc.read_qrecc_turns(data_path("qrecc", "scai-ground-truth.json"))
    assert [t.qid for t in turns] == ["1_1", "2774_1", "2775_1"]
    topics, _ = qrecc.qrecc_topics(turns, "human")
    assert topics.queries[2] == "england's involvement in the 30 years war"
    with pytest.raises(InputError, match="turn 1_1 has no Question"):
        qrecc.qrecc_topics(turns, "raw")
    qrels, counts = qrecc.turns_qrels(turns)
    assert (counts.turns_read, counts.turns_with_gold, counts.pairs) == (3, 1, 1)


def test_turn_file_errors(tmp_path):
    dup = tmp_path / "dup.jsonl"
    rec = {"Conversation_no": 3, "Turn_no": 1, "Question": "q"}
    dup.write_text(json.dumps(rec) + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(InputError) as err:
        qrecc.read_qrecc_turns(dup)
    assert err.value.line == 2 and "turn 3_1 occurs twice" in str(err.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"Conversation_no": "x", "Turn_no": 1}) + "\n")
    with pytest.raises(InputError, match="Conversation_no 'x' is not a number"):
        qrecc.read_qrecc_turns(bad)
    ctx = tmp_path / "ctx.json"
    ctx.write_text(json.dumps([{"Conversation_no": 1, "Turn_no": 2, "Context": "a b"}]))
    with pytest.raises(InputError, match="Context is not a list"):
        qrecc.read_qrecc_turns(ctx)


# ------------------------------------------------------------------ CLI
def _run(args):
    return CliRunner().invoke(qrecc_command, [str(a) for a in args], catch_exceptions=False)


def test_cli_topics_and_qrels_from_turns(tmp_path):
    src = data_path("qrecc", SAMPLED)
    topics_out, qrels_out = tmp_path / "t.tsv", tmp_path / "q.trec"
    result = _run(["--turns", src, "--topics-out", topics_out, "--qrels-out", qrels_out,
                   "--query-field", "human"])
    assert result.exit_code == 0, result.stderr
    assert "qrecc: 2000 turns read, 0 without rewrite; 2000 topics written" in result.stderr
    assert ("qrecc: 2000 turns read, 927 with gold, 1073 without gold left out; 1101 "
            "(turn, passage) pairs written") in result.stderr
    lines = topics_out.read_text().splitlines()
    assert len(lines) == 2000 and lines[0] == \
        "9467_1\twhere was australia's first federal government formed"
    assert lines[1] == f"1490_4\t{MUSIAL_HUMAN}"
    qrels = read_qrels(qrels_out)
    assert len(qrels) == 1101
    assert qrels_out.read_text().splitlines()[0] == (
        "9467_1 0 http://web.archive.org/web/20191011001635id_/https://en.wikipedia.org/wiki/"
        "1901_Australian_federal_election_p0 1")


def test_cli_rewrite_with_qid_style(tmp_path):
    src = data_path("qrecc", SAMPLED)
    topics_out, qrels_out = tmp_path / "t.jsonl", tmp_path / "q.trec"
    result = _run(["--turns", src, "--topics-out", topics_out, "--query-field", "rewrite",
                   "--rewrites", src, "--missing", "error", "--qid-style", "QReCC-Dev",
                   "--qrels-out", qrels_out])
    assert result.exit_code == 0, result.stderr
    topics = read_topics(topics_out)
    assert len(topics) == 2000 and topics.qids[-1] == "QReCC-Dev_7828_1"
    assert topics["QReCC-Dev_1490_4"] == MUSIAL_GPT
    assert topics.metadata["QReCC-Dev_1490_4"] == {"conversation_source": "quac"}
    assert qrels_out.read_text().startswith("QReCC-Dev_9467_1 0 http://web.archive.org/")


def test_cli_context_trec_topics(tmp_path):
    out = tmp_path / "t.trec"
    result = _run(["--turns", data_path("qrecc", SAMPLED), "--topics-out", out,
                   "--query-field", "context", "--qid-style", "dash"])
    assert result.exit_code == 0, result.stderr
    topics = read_topics(out)
    assert topics.qids[:2] == ["9467-1", "1490-4"]
    assert topics["1490-4"].startswith("What happened to Stan Musial in 1950? [SEP] Stan Musial")
    assert topics["1490-4"].endswith(" [SEP] " + MUSIAL)
    # no qrels written, gold still counted
    assert "927 turns with gold, 1101 (turn, passage) pairs (no qrels written)" in result.stderr


def test_cli_qrels_file_with_qid_style(tmp_path):
    out = tmp_path / "q.trec"
    result = _run(["--qrels", data_path("qrecc", "qrels_test.json"), "--qrels-out", out,
                   "--qid-style", "QReCC-Test"])
    assert result.exit_code == 0, result.stderr
    assert ("qrecc: 16451 turns read, 8209 with gold, 8242 without gold left out; 10507 "
            "(turn, passage) pairs written") in result.stderr
    qrels = read_qrels(out)
    assert len(qrels) == 10507 and qrels.qid[0].as_py().startswith("QReCC-Test_")


def test_cli_missing_rewrites_reported(tmp_path):
    path = _original(tmp_path, rewrite2="")
    out = tmp_path / "t.tsv"
    ok = _run(["--turns", path, "--topics-out", out, "--query-field", "human",
               "--missing", "drop"])
    assert ok.exit_code == 0, ok.stderr
    assert "qrecc: 3 turns read, 1 without rewrite (1 dropped); 2 topics written" in ok.stderr
    assert out.read_text().splitlines()[1] == "2_1\twhat is the population of england"
    bad = tmp_path / "t2.tsv"
    err = _run(["--turns", path, "--topics-out", bad, "--query-field", "human",
                "--missing", "error"])
    assert err.exit_code == 2 and "1 turns without a human rewrite" in err.stderr
    assert not bad.exists()


def test_cli_usage_errors(tmp_path):
    src = data_path("qrecc", SAMPLED)
    r = _run(["--turns", src, "--topics-out", tmp_path / "t.tsv", "--query-field", "rewrite"])
    assert r.exit_code == 2 and "--rewrites" in r.stderr
    r = _run(["--topics-out", tmp_path / "t.tsv"])
    assert r.exit_code == 2
    r = _run(["--turns", src, "--topics-out", tmp_path / "t.tsv", "--qid-style", "a b"])
    assert r.exit_code == 2 and "unknown query-id style" in r.stderr
    assert not (tmp_path / "t.tsv").exists()
    orig = _original(tmp_path)
    r = _run(["--turns", orig, "--qrels-out", tmp_path / "q.trec"])
    assert r.exit_code == 2 and "--qrels" in r.stderr
