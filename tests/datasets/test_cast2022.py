"""TREC CAsT 2022 topic trees (and the 2019-2021 files) through ``trecqr convert cast``.

Data: ../shared/data/cast2022/ (daltonj/treccastweb @ 3384661, qrels @ 1a501a9), cast2020/,
cast2021/. CAsT 2019's topic file is not in ../shared/data: its shape (turns with only ``number``
and ``raw_utterance``) is tested on a hand-made excerpt of its first conversation.
"""

from __future__ import annotations

import json

import pytest

import trecqr
from trecqr.datasets.cast.topics import (CONTEXT_SEP, detect_year, provenance_run, read_cast_topics,
                                  read_turn_ids)
from trecqr.errors import InputError

from conftest import data_path, run_cli

C22 = "cast2022"
TREE = "2022_evaluation_topics_tree_v1.0.json"
AUTO = "2022_automatic_evaluation_topics_tree_v1.0.json"
FLAT = "2022_evaluation_topics_flattened_duplicated_v1.0.json"
QRELS = "cast2022.qrel"

COP26 = ("I remember Glasgow hosting COP26 last year, but unfortunately I was out of the loop. "
         "What was it about?")
RESP_1_2 = ("The COP26 event is a global united Nations summit about climate change and how "
            "countries are planning to tackle it.")


@pytest.mark.parametrize("name", [TREE, AUTO, FLAT])
def test_every_2022_file_gives_the_205_evaluated_turns(name):
    topics = read_cast_topics(data_path(C22, name))
    assert topics.year == "2022"
    assert len(topics) == 205 and topics.conversations == 18
    evaluated = read_turn_ids(data_path(C22, "2022_evaluation_topics_turn_ids.json"))
    assert sorted(topics.qids) == sorted(evaluated)
    assert topics.qids[:3] == ["132_1-1", "132_1-3", "132_1-5"]
    raw = dict(topics.queries("raw"))
    assert raw["132_1-1"] == COP26
    field = "automatic" if name == AUTO else "manual"
    rewrites = dict(topics.queries(field))
    assert len(rewrites) == 205
    if name == AUTO:
        assert rewrites["132_1-3"] == "What are the effects of COP26?"
    else:
        assert rewrites["132_1-3"] == "Interesting. What are the effects of these climate changes?"


def test_context_is_the_branch_not_the_file_order():
    tree = read_cast_topics(data_path(C22, TREE))
    ctx = dict(tree.queries("context"))
    parts = ctx["132_1-3"].split(CONTEXT_SEP)
    assert len(parts) == 3
    assert parts[0] == COP26 and parts[1].startswith(RESP_1_2)
    assert parts[2] == "Interesting. What are the effects of these changes?"
    # 132_2-1's parent is 1-4: its branch is 1-1, 1-2, 1-3, 1-4 (not 1-5 ... 1-8 before it)
    assert len(ctx["132_2-1"].split(CONTEXT_SEP)) == 5
    # 133_3-2 hangs under the second System response of 1-5 (3-1), not under 1-6
    turns = {t.qid: t for t in tree.turns}
    doc = json.loads(data_path(C22, TREE).read_text())
    nodes = {t["number"]: t for t in doc[1]["turn"]}
    assert doc[1]["number"] == 133
    assert turns["133_3-2"].context[-1] == " ".join(nodes["3-1"]["response"].split())
    assert nodes["1-6"]["response"].split()[0] not in turns["133_3-2"].context[-1:]
    # the flattened paths give the same contexts, turn for turn
    flat = dict(read_cast_topics(data_path(C22, FLAT)).queries("context"))
    assert flat == ctx


def test_provenance_run_scores_against_the_official_qrels(tmp_path):
    out = tmp_path / "prov.run"
    res = run_cli(["convert", "cast", "--topics", data_path(C22, TREE), "--query-field", "raw",
                   "--topics-out", tmp_path / "raw.tsv", "--provenance-run", out])
    assert res.exit_code == 0, res.output
    assert ("cast: CAsT 2022 topic file (topic tree (participant, parent)): 205 of 205 user "
            "turns kept") in res.stderr
    assert "published: 205 turns in 18 topics" in res.stderr
    assert ("cast: provenance run: 295 passages for 193 turns (12 turns without provenance)"
            in res.stderr)
    # the tree files cite one passage with a blank inside its id
    assert ("2 passage ids had white space inside, removed (first: turn 149_1-4: passage id "
            "'MARCO_50_2268879788 -3' read as 'MARCO_50_2268879788-3')") in res.stderr
    lines = out.read_text().splitlines()
    assert lines[:3] == ["132_1-1 Q0 MARCO_26_222804180-1 1 3 cast-provenance",
                         "132_1-1 Q0 MARCO_26_222804180-2 2 2 cast-provenance",
                         "132_1-1 Q0 MARCO_33_1621342262-1 3 1 cast-provenance"]
    qrels = data_path(C22, QRELS)
    nist = dict(relevance_level=2, max_docs=1000, complete=True)
    measures = ["ndcg_cut.3,5,500", "map_cut.500", "recip_rank"]
    got = trecqr.evaluate(qrels, out, measures, **nist)
    agg = {k: round(v, 6) for k, v in got.aggregate().items()}
    assert agg == {"recip_rank": 0.529293, "ndcg_cut_3": 0.261366, "ndcg_cut_5": 0.193477,
                   "ndcg_cut_500": 0.064234, "map_cut_500": 0.027484}
    assert len(got.per_query()) == 155  # 165 judged turns; 10 of them have no provenance
    res = run_cli(["convert", "cast", "--topics", data_path(C22, TREE), "--meta-out",
                   tmp_path / "meta.jsonl"])
    assert res.exit_code == 0, res.output
    meta = json.loads((tmp_path / "meta.jsonl").read_text().splitlines()[0])
    assert meta == {"qid": "132_1-1", "conversation": "132", "turn": "1-1", "provenance": [
        "MARCO_26_222804180-1", "MARCO_26_222804180-2", "MARCO_33_1621342262-1"]}


def test_flattened_provenance_differs_from_the_tree_in_two_turns():
    """The flattened file orders 142_1-3's two responses by path (2-1's first) and cites
    MARCO_23_183358734-3 where the trees cite -31 (149_4-1): both are facts of the files."""
    tree = {t.qid: t.provenance for t in read_cast_topics(data_path(C22, TREE)).turns}
    flat = {t.qid: t.provenance for t in read_cast_topics(data_path(C22, FLAT)).turns}
    differ = sorted(q for q in tree if tree[q] != flat[q])
    assert differ == ["142_1-3", "149_4-1"]
    assert tree["142_1-3"] == tuple(reversed(flat["142_1-3"]))
    assert tree["149_4-1"][-1] == "MARCO_23_183358734-31"
    assert flat["149_4-1"][-1] == "MARCO_23_183358734-3"


def test_2020_and_2021_files_with_their_published_counts(tmp_path):
    for folder, name, year, convs, turns in [
        ("cast2020", "2020_manual_evaluation_topics_v1.0.json", "2020", 25, 216),
        ("cast2020", "2020_automatic_evaluation_topics_v1.0.json", "2020", 25, 216),
        ("cast2021", "2021_manual_evaluation_topics_v1.0.json", "2021", 26, 239),
        ("cast2021", "2021_automatic_evaluation_topics_v1.0.json", "2021", 26, 239),
    ]:
        res = run_cli(["convert", "cast", "--topics", data_path(folder, name), "--query-field",
                       "context", "--topics-out", tmp_path / "t.tsv"])
        assert res.exit_code == 0, res.output
        assert (f"cast: CAsT {year} topic file" in res.stderr
                and f": {turns} turns in {convs} topics; published: {turns} turns in {convs} "
                    "topics" in res.stderr)
    # a linear year's context: earlier raw utterances and the canonical passages given
    t21 = read_cast_topics(data_path("cast2021", "2021_manual_evaluation_topics_v1.0.json"))
    ctx = dict(t21.queries("context"))
    assert ctx["106_1"] == dict(t21.queries("raw"))["106_1"]
    assert len(ctx["106_2"].split(CONTEXT_SEP)) == 3  # utterance 1, its passage, utterance 2


def test_2019_shape_on_a_hand_made_excerpt(tmp_path):
    """The first conversation of CAsT 2019's evaluation_topics_v1.0.json (its first two turns):
    conversations with title and description, turns with only number and raw_utterance."""
    excerpt = [{"number": "31", "title": "head and neck cancer",
                "description": "A person is trying to compare and contrast types of cancer.",
                "turn": [{"number": 1, "raw_utterance": "What is throat cancer?"},
                         {"number": 2, "raw_utterance": "Is it treatable?"}]}]
    path = tmp_path / "evaluation_topics_v1.0.json"
    path.write_text(json.dumps(excerpt))
    assert detect_year(excerpt) == ("2019", "turns with only number and raw_utterance")
    res = run_cli(["convert", "cast", "--topics", path, "--query-field", "raw",
                   "--topics-out", tmp_path / "t.tsv"])
    assert res.exit_code == 0, res.output
    assert ("cast: CAsT 2019 topic file (turns with only number and raw_utterance): 2 turns in "
            "1 topics; published: 479 turns in 50 topics") in res.stderr
    assert (tmp_path / "t.tsv").read_text() == ("31_1\tWhat is throat cancer?\n"
                                                 "31_2\tIs it treatable?\n")
    res = run_cli(["convert", "cast", "--topics", path, "--query-field", "manual",
                   "--topics-out", tmp_path / "m.tsv"])
    assert res.exit_code == 2 and "has no manual_rewritten_utterance" in res.stderr
    assert not (tmp_path / "m.tsv").exists()
    res = run_cli(["convert", "cast", "--topics", path, "--provenance-run", tmp_path / "p.run"])
    assert res.exit_code == 2 and "only CAsT 2022 topic files carry" in res.stderr


def test_2022_errors(tmp_path):
    doc = json.loads(data_path(C22, TREE).read_text())[:1]
    doc[0]["turn"][2]["parent"] = "9-9"
    bad = tmp_path / "tree.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"turn 132_1-3: parent '9-9' is not a turn"):
        read_cast_topics(bad)
    # evaluated turns that the file does not have
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps({"132": ["1-1", "1-99"]}))
    good = tmp_path / "one.json"
    good.write_text(json.dumps(json.loads(data_path(C22, TREE).read_text())[:1]))
    with pytest.raises(InputError, match=r"1 evaluated turns are not user turns .*'132_1-99'"):
        read_cast_topics(good, ids)
    ids.write_text(json.dumps({"132": ["1-1", "2-1"]}))
    topics = read_cast_topics(good, ids)
    assert topics.qids == ["132_1-1", "132_2-1"] and topics.user_turns == 15
    assert [ln.split()[2] for ln in provenance_run(topics)][:1] == ["MARCO_26_222804180-1"]
