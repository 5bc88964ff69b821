"""TREC iKAT: topics with PTKBs, official JSON runs to TREC runs, PTKB rankings, validation.

Data: ../shared/data/ikat/ (irlabamsterdam/iKAT @ 0539930).
"""

from __future__ import annotations

import json

import pytest
from conftest import data_path, run_cli

import trecqr
from trecqr.datasets.ikat.topics import CONTEXT_SEP, read_ikat_topics, topics_ptkb_run
from trecqr.datasets.ikat.runs import passage_run, validate_run

IK = "ikat"
SAMPLE = "2024_sample_run.json"
INVALID = "2024_sample_run_invalid_scores.json"


@pytest.mark.parametrize("year,topics,turns,statements,with_ptkb", [
    ("2023", 25, 332, 262, 112), ("2024", 17, 218, 288, 95), ("2025", 17, 188, 337, 64)])
def test_topics_counts(tmp_path, year, topics, turns, statements, with_ptkb):
    out = tmp_path / "t.tsv"
    res = run_cli(["convert", "ikat", "--topics", data_path(IK, f"{year}_test_topics.json"),
                   "--query-field", "raw", "--topics-out", out, "--meta-out",
                   tmp_path / "m.jsonl"])
    assert res.exit_code == 0, res.output
    assert (f"ikat: {turns} turns in {topics} topics (") in res.stderr
    assert (f"{statements} PTKB statements, {with_ptkb} turns with relevant PTKB "
            "statements") in res.stderr
    assert len(out.read_text().splitlines()) == turns
    meta = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert len(meta) == turns and all(m["ptkb"] for m in meta)


def test_topic_ids_fields_and_ptkb_metadata():
    t23 = read_ikat_topics(data_path(IK, "2023_test_topics.json"))
    assert t23.qids[:2] == ["9-1_1", "9-1_2"]
    raw, resolved = dict(t23.queries("raw")), dict(t23.queries("resolved"))
    assert raw["9-1_1"] == "Can you help me find a diet for myself?"
    assert resolved["9-1_1"].startswith("Can you help me find a diet for myself considering "
                                        "that I'm vegetarian")
    ctx = dict(t23.queries("context"))
    assert ctx["9-1_1"] == raw["9-1_1"]
    parts = ctx["9-1_2"].split(CONTEXT_SEP)
    assert len(parts) == 3 and parts[0] == raw["9-1_1"] and parts[1].startswith("Sure, these diets")
    turn = {t.qid: t for t in t23.turns}["9-1_3"]
    meta = t23.metadata(turn)
    assert meta["relevant_ptkb"] == ["5"] and meta["ptkb"]["3"] == "I'm going to change my phone."
    # 2023's 12-1_12 has an empty resolved_utterance: it takes its raw utterance, with a warning
    with pytest.warns(UserWarning, match=r"1 turns without a resolved_utterance .*12-1_12"):
        assert dict(t23.queries("resolved"))["12-1_12"] == raw["12-1_12"]
    # 2025: a PTKB list, numbered from 1; turns under "responses", user_utterance
    t25 = read_ikat_topics(data_path(IK, "2025_test_topics.json"))
    assert t25.shape == "2025 (ptkb list, responses)"
    assert t25.qids[0] == "1-1_1" and t25.ptkb["1-1"]["1"] == "I want to stop doom scrolling."
    # 2024: numeric topic numbers 0..16
    t24 = read_ikat_topics(data_path(IK, "2024_test_topics.json"))
    assert t24.qids[0] == "0_1" and len(t24.ptkb) == 17


def test_sample_run_to_trec_run(tmp_path):
    out, ptkb = tmp_path / "s.run", tmp_path / "s.ptkb"
    res = run_cli(["convert", "ikat", "--run", data_path(IK, SAMPLE), "--run-out", out,
                   "--ptkb-run-out", ptkb])
    assert res.exit_code == 0, res.output
    assert ("ikat: run 'sample_run': 218 turns, 218 responses, 2180 passage provenances; 0 "
            "repeats of a passage in its turn dropped (best score kept); 2180 passages written"
            ) in res.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 2180
    assert lines[0] == "0_1 Q0 clueweb22-en0025-76-08262:14 1 3.160177230834961 sample_run"
    assert ptkb.read_text().splitlines()[:3] == ["0_1 Q0 13 1 1.0 sample_run",
                                                 "0_2 Q0 19 1 2.0 sample_run",
                                                 "0_2 Q0 12 2 1.0 sample_run"]


def _repaired_2023_run(tmp_path):
    """The validator's rejected sample (2023 format: PTKB objects with scores, three
    responses per turn) with its two 'abcdef' scores replaced by 1.0."""
    doc = json.loads(data_path(IK, INVALID).read_text())
    first = doc["turns"][0]["responses"][0]
    assert first["passage_provenance"][0]["score"] == "abcdef"
    first["passage_provenance"][0]["score"] = 1.0
    first["ptkb_provenance"][0]["score"] = 1.0
    path = tmp_path / "repaired.json"
    path.write_text(json.dumps(doc))
    return doc, path


def test_duplicates_kept_once_at_best_score_with_trec_eval_ties(tmp_path):
    doc, _ = _repaired_2023_run(tmp_path)
    run, counts = passage_run(doc, "x")
    # 6 turns of 3 responses, 10 passages each; repeats within a turn dropped
    assert (counts.turns, counts.responses, counts.provenances) == (6, 18, 180)
    assert counts.passages + counts.duplicates == 180
    # a hand-made run: a passage cited twice (best score kept), and a tie broken by docno
    doc = {"run_name": "r", "run_type": "manual", "turns": [{"turn_id": "1_1", "responses": [
        {"rank": 1, "text": "a", "ptkb_provenance": [1], "passage_provenance": [
            {"id": "clueweb22-en0000-00-00001:1", "score": 2.0, "used": True},
            {"id": "clueweb22-en0000-00-00002:1", "score": 1.0, "used": True}]},
        {"rank": 2, "text": "b", "ptkb_provenance": [1], "passage_provenance": [
            {"id": "clueweb22-en0000-00-00001:1", "score": 3.0, "used": True},
            {"id": "clueweb22-en0000-00-00003:1", "score": 1.0, "used": False}]}]}]}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    res = run_cli(["convert", "ikat", "--run", path, "--run-out", tmp_path / "r.run"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.run").read_text().splitlines() == [
        "1_1 Q0 clueweb22-en0000-00-00001:1 1 3.0 r",
        "1_1 Q0 clueweb22-en0000-00-00003:1 2 1.0 r",  # tie: docno descending, as trec_eval
        "1_1 Q0 clueweb22-en0000-00-00002:1 3 1.0 r"]
    assert "4 passage provenances; 1 repeats of a passage in its turn dropped" in res.stderr


def test_ptkb_runs_score_against_both_2023_ptkb_qrels(tmp_path):
    topics = read_ikat_topics(data_path(IK, "2023_test_topics.json"))
    path = tmp_path / "t.ptkb"
    path.write_text("".join(topics_ptkb_run(topics)))
    m = ["map", "recip_rank", "P.1", "ndcg_cut.3"]
    org = trecqr.evaluate(data_path(IK, "2023_ptkb_qrels_org.txt"), path, m)
    nist = trecqr.evaluate(data_path(IK, "2023_ptkb_qrels_nist.txt"), path, m)
    # the organisers' qrels are the topics' own ptkb_provenance (112 turns, 182 statements)
    assert org.aggregate() == {"map": 1.0, "recip_rank": 1.0, "P_1": 1.0, "ndcg_cut_3": 1.0}
    assert len(org.per_query()) == 112
    # NIST judged other turns: 98 judged, 39 of them annotated by the organisers
    assert len(nist.per_query()) == 39
    assert {k: round(v, 4) for k, v in nist.aggregate().items()} == {
        "map": 0.4869, "recip_rank": 0.7821, "P_1": 0.7436, "ndcg_cut_3": 0.5921}
    # a run file's PTKB provenance (2023 objects, ranked by their scores) through the command
    _, repaired = _repaired_2023_run(tmp_path)
    out = tmp_path / "r.ptkb"
    res = run_cli(["convert", "ikat", "--run", repaired, "--ptkb-run-out", out])
    assert res.exit_code == 0, res.output
    assert "ikat: PTKB run: 18 statements for 6 turns" in res.stderr
    assert out.read_text().splitlines()[:2] == ["9-1_1 Q0 1 1 1.0 generated_run",
                                                "9-1_1 Q0 2 2 0.5 generated_run"]
    got_org = trecqr.evaluate(data_path(IK, "2023_ptkb_qrels_org.txt"), out, m).aggregate()
    got_nist = trecqr.evaluate(data_path(IK, "2023_ptkb_qrels_nist.txt"), out, m).aggregate()
    assert {k: round(v, 4) for k, v in got_org.items()} == {
        "map": 0.1111, "recip_rank": 0.3333, "P_1": 0.0, "ndcg_cut_3": 0.1974}
    assert {k: round(v, 4) for k, v in got_nist.items()} == {
        "map": 0.1, "recip_rank": 0.5, "P_1": 0.0, "ndcg_cut_3": 0.2961}


def test_validate_accepts_the_sample_and_rejects_the_invalid_one(tmp_path):
    res = run_cli(["validate", "ikat", data_path(IK, SAMPLE)])
    assert res.exit_code == 0, res.output
    assert ("valid iKAT run 'sample_run': 218 turns, 218 responses, 2180 passage provenances; "
            "0 warnings") in res.stderr
    # the sample's ids 0_1 ... are the 2024 topics' own turns (topic numbers 0-16)
    res = run_cli(["validate", "ikat", data_path(IK, SAMPLE), "--topics",
                   data_path(IK, "2024_test_topics.json")])
    assert res.exit_code == 0, res.output
    bad = data_path(IK, INVALID)
    res = run_cli(["validate", "ikat", bad])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        f"{bad}: turn 9-1_1: response 1, passage 1: score 'abcdef' is not a number",
        f"{bad}: turn 9-1_1: response 1: PTKB statement '1': score 'abcdef' is not a number"]
    # converting a rejected run is the same error, and writes nothing
    res = run_cli(["convert", "ikat", "--run", bad, "--run-out", tmp_path / "x.run"])
    assert res.exit_code == 2 and "turn 9-1_1: response 1, passage 1: score 'abcdef'" in res.stderr
    assert not (tmp_path / "x.run").exists()
    # with topics of another year: every run turn is reported, and the topics' turns missing
    res = run_cli(["validate", "ikat", data_path(IK, SAMPLE), "--topics",
                   data_path(IK, "2023_test_topics.json")])
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 219
    assert lines[0] == f"{data_path(IK, SAMPLE)}: turn 0_1: not a turn of the topics"
    assert lines[-1] == (f"{data_path(IK, SAMPLE)}: 332 turns of the topics are not in the run "
                         "(e.g. 9-1_1)")
    # a turn given twice: with the topics, a problem (the validator counts each topic's turns)
    doc = json.loads(data_path(IK, SAMPLE).read_text())
    doc["turns"].append(doc["turns"][0])
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(doc))
    res = run_cli(["validate", "ikat", twice, "--topics", data_path(IK, "2024_test_topics.json")])
    assert res.exit_code == 2
    assert res.stderr == f"{twice}: turn 0_1: given 2 times (each turn of the topics once)\n"
    assert run_cli(["validate", "ikat", twice]).exit_code == 0


def test_validator_rules_one_by_one():
    topics = read_ikat_topics(data_path(IK, "2024_test_topics.json"))
    good = {"rank": 1, "text": "t", "ptkb_provenance": [1], "passage_provenance": [
        {"id": "clueweb22-en0000-00-00001:1", "score": 2.0, "used": True}]}

    def problems(**changes):
        resp = {**good, **changes.pop("resp", {})}
        doc = {"run_name": "r", "run_type": "automatic",
               "turns": [{"turn_id": "0_1", "responses": [resp]}], **changes}
        return [(p.turn, p.what, p.warning) for p in validate_run(doc, topics)
                if "turns of the topics are not in the run" not in p.what]

    assert problems() == []
    assert problems(resp={"passage_provenance": [
        {"id": "clueweb22-en0000-00-00001:1", "score": 1.0, "used": True},
        {"id": "clueweb22-en0000-00-00002:1", "score": 2.0, "used": True}]}) == [
        ("0_1", "response 1, passage 2: score 2.0 is above the score before it (1.0): scores "
                "must not increase with rank", False)]
    assert problems(resp={"passage_provenance": [
        {"id": "clueweb22-en0000-00-00001", "score": 1.0, "used": True}]})[0][1] == (
        "response 1, passage 1: passage id 'clueweb22-en0000-00-00001' is not a ClueWeb22 "
        "passage id (clueweb22-enDDDD-DD-DDDDD:N)")
    assert problems(resp={"ptkb_provenance": [99]}) == [
        ("0_1", "response 1: PTKB statement 99 is not in the topic's PTKB (1-21)", False)]
    assert problems(resp={"rank": 0}) == [
        ("0_1", "response 1: rank 0 is not an integer >= 1", False)]
    assert problems(resp={"extra": 1}) == [("0_1", "response 1: unknown field 'extra'", False)]
    assert problems(run_type="semi") == [
        (None, "run_type 'semi' is not one of automatic, manual, only_response", True)]
    assert problems(resp={"ptkb_provenance": []}) == [
        ("0_1", "response 1: no PTKB provenance", True)]
    doc = {"run_type": "manual", "turns": [{"turn_id": "0-1", "responses": []}]}
    assert [(p.turn, p.what) for p in validate_run(doc)] == [
        (None, "required field 'run_name' is missing"),
        ("0-1", "turn_id '0-1' is not TOPIC_TURN (e.g. 9-1_1)")]


def test_bad_runs_are_one_line_errors(tmp_path):
    jsonl = tmp_path / "r25.jsonl"
    jsonl.write_text('{"metadata": {"run_id": "x"}}\n{"metadata": {"run_id": "y"}}\n')
    res = run_cli(["validate", "ikat", jsonl])
    assert res.exit_code == 2
    assert res.stderr == (f"{jsonl}:2: one JSON object per line (iKAT 2025's run format?): "
                          "trecqr reads the 2023/2024 run format, one JSON object\n")
    bad = tmp_path / "b.json"
    bad.write_text('{"run_name": 1, "turns": 5}')
    res = run_cli(["validate", "ikat", bad])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [f"{bad}: required field 'run_type' is missing",
                                       f"{bad}: run_name is not a string",
                                       f"{bad}: turns is not a list"]
    res = run_cli(["convert", "ikat", "--run", bad, "--run-out", tmp_path / "x.run"])
    assert res.exit_code == 2 and "(and 2 more problems: trecqr validate ikat)" in res.stderr
    assert not (tmp_path / "x.run").exists()
