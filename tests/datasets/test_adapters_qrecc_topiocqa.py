"""QReCC and TopiOCQA qrels adapters on the published files (../shared/data/qrecc, topiocqa)."""

from __future__ import annotations

import collections
import gzip
import json

import pytest
from click.testing import CliRunner
from conftest import data_path

from trecqr.cli.convert import qrecc_command, topiocqa_command
from trecqr.datasets import topiocqa
from trecqr.datasets.qrecc import files as qrecc
from trecqr.datasets.qrecc.files import QrelsCounts, canonical_turn_id, read_qrecc_qrels
from trecqr.datasets.topiocqa import read_topiocqa_qrels, read_turn_types, turn_type_coverage
from trecqr.errors import InputError
from trecqr.formats import read_qrels

FIRST_URL = ("http://web.archive.org/web/20200524095112id_/https://www.geteducated.com/careers/"
             "how-to-become-a-physician-assistant/_p0")
LAST_URL = ("http://web.archive.org/web/20150114053507id_/http://forums.studentdoctor.net:80/"
            "threads/pi-vs-pka.480670/_p5")


@pytest.fixture(scope="module")
def qrecc_json():
    return read_qrecc_qrels(data_path("qrecc", "qrels_test.json"))


@pytest.fixture(scope="module")
def qrecc_tsv():
    return read_qrecc_qrels(data_path("qrecc", "qrecc_qrel.tsv"))


# --------------------------------------------------------------------------- turn ids
@pytest.mark.parametrize("qid,canon", [
    ("1_2", "1_2"), ("1-2", "1_2"), ("QReCC-Test_1_2", "1_2"), ("dev-1-1", "1_1"),
    ("topiocqa-dev_1_1", "1_1"), ("TopiOCQA-Dev_12_10", "12_10"),
    ("2773_05", "2773_05"),  # numbers stay as written (turn_ids): ids are compared as strings
])
def test_canonical_turn_id(qid, canon):
    assert canonical_turn_id(qid) == canon


@pytest.mark.parametrize("qid", ["1", "a_b", "1_2_3", "QReCC-Test-x_1", "", "1_2 "])
def test_canonical_turn_id_rejects(qid):
    with pytest.raises(InputError, match="not <conv>_<turn>"):
        canonical_turn_id(qid)


# --------------------------------------------------------------------------- QReCC
def test_qrecc_json_test_split(qrecc_json):
    qrels, counts = qrecc_json
    assert counts == QrelsCounts(turns_read=16451, turns_with_gold=8209, pairs=10507)
    assert counts.turns_without_gold == 8242
    assert len(qrels) == 10507
    assert len(set(qrels.qid.to_pylist())) == 8209
    assert qrels.qid[0].as_py() == "1_2" and qrels.docno[0].as_py() == FIRST_URL
    assert qrels.qid[-1].as_py() == "2774_1" and qrels.docno[-1].as_py() == LAST_URL
    assert "" not in set(qrels.docno.to_pylist())
    assert set(qrels.grade.tolist()) == {1}
    # turns marked {"": 1} are left out: 1_1 is one, 1_2 is not
    qids = set(qrels.qid.to_pylist())
    assert "1_1" not in qids and "1_4" not in qids and "1_7" in qids
    # up to 81 gold passages for one turn
    assert max(collections.Counter(qrels.qid.to_pylist()).values()) == 81


def test_qrecc_tsv_agrees_with_json(qrecc_json, qrecc_tsv):
    (jq, _), (tq, tc) = qrecc_json, qrecc_tsv
    assert tc == QrelsCounts(turns_read=8209, turns_with_gold=8209, pairs=10507)
    assert tq.qid.to_pylist() == jq.qid.to_pylist()  # same turns, same order, same pair counts
    # passage ids kept as published (integers as strings, not renumbered)
    assert tq.docno[:3].to_pylist() == ["54355562", "54312465", "54367470"]
    assert tq.docno[-1].as_py() == "54550382"
    assert qrecc.integer_passage_ids(tq) and not qrecc.integer_passage_ids(jq)
    # the renumbering is one-to-one, row for row: 6,762 distinct passages on both sides
    mapping = collections.defaultdict(set)
    for url, num in zip(jq.docno.to_pylist(), tq.docno.to_pylist()):
        mapping[url].add(num)
    assert len(mapping) == 6762 and all(len(v) == 1 for v in mapping.values())
    assert len({next(iter(v)) for v in mapping.values()}) == 6762


def test_qrecc_dev_split():
    qrels, counts = read_qrecc_qrels(data_path("qrecc", "qrels_dev.json"))
    assert counts == QrelsCounts(turns_read=11573, turns_with_gold=5313, pairs=6132)
    assert qrels.qid[0].as_py() == "4_1"
    assert qrels.docno[0].as_py().endswith("/wiki/Sean_Combs_p0")


def test_qrecc_scai_ground_truth():
    qrels, counts = read_qrecc_qrels(data_path("qrecc", "scai-ground-truth.json"))
    assert counts == QrelsCounts(turns_read=3, turns_with_gold=1, pairs=1)
    assert qrels.qid.to_pylist() == ["2774_1"] and qrels.docno.to_pylist() == [LAST_URL]
    rewrites = qrecc.read_scai_rewrites(data_path("qrecc", "scai-ground-truth.json"))
    assert rewrites == {"1_1": "What is a physician's assistant?",
                        "2774_1": "What is the difference between pka and pi",
                        "2775_1": "england's involvement in the 30 years war"}
    answers = qrecc.read_scai_rewrites(data_path("qrecc", "scai-run.json"), "Model_answer")
    assert list(answers) == ["1_1", "2775_1"]
    assert qrecc.read_scai_rewrites(data_path("qrecc", "scai-run.json"),
                                    "Transformer_rewrite") == {}


def test_qrecc_gzip_and_json_variants(tmp_path):
    path = tmp_path / "q.json.gz"
    path.write_bytes(gzip.compress(json.dumps(
        {"QReCC-Test_3_1": {"": 1}, "QReCC-Test_3_2": {"u_p1": 1, "u_p2": 0}}).encode()))
    qrels, counts = read_qrecc_qrels(path)
    # a grade-0 pair is kept as published but does not make a turn "with gold"
    assert counts == QrelsCounts(turns_read=2, turns_with_gold=1, pairs=2)
    assert qrels.qid.to_pylist() == ["3_2", "3_2"] and qrels.grade.tolist() == [1, 0]


def test_qrecc_errors(tmp_path):
    mixed = tmp_path / "mixed.tsv"
    mixed.write_text("QReCC-Test_1_2\t0\t5\t1\n1_3\t0\t6\t1\n")
    with pytest.raises(InputError, match=r"mixes with") as exc:
        read_qrecc_qrels(mixed)
    assert exc.value.line is not None
    dup = tmp_path / "dup.tsv"
    dup.write_text("1_2 0 5 1\n1_3 0 6 1\n1_2 0 5 1\n")
    with pytest.raises(InputError, match=r"turn 1_2 lists passage '5' twice") as exc:
        read_qrecc_qrels(dup)
    assert exc.value.line == 3
    bad = tmp_path / "bad.tsv"
    bad.write_text("1_2 0 5 1\nturn7 0 6 1\n")
    with pytest.raises(InputError, match="turn7") as exc:
        read_qrecc_qrels(bad)
    assert exc.value.line == 2
    same = tmp_path / "same.json"
    same.write_text('{"1_2": {"a": 1}, "1-2": {"b": 1}}')
    with pytest.raises(InputError):  # two styles, and two ids for one turn
        read_qrecc_qrels(same)
    space = tmp_path / "space.json"
    space.write_text('{"1_2": {"a b": 1}}')
    with pytest.raises(InputError, match="white space"):
        read_qrecc_qrels(space)
    broken = tmp_path / "broken.json"
    broken.write_text('{"1_2": {"a": 1},\n')
    with pytest.raises(InputError, match="invalid JSON"):
        read_qrecc_qrels(broken)


# --------------------------------------------------------------------------- TopiOCQA
def test_topiocqa_gold():
    qrels, counts = read_topiocqa_qrels(data_path("topiocqa", "dev_gold.trec"))
    assert counts == QrelsCounts(turns_read=2514, turns_with_gold=2514, pairs=2514)
    assert qrels.qid[:2].to_pylist() == ["1_1", "1_2"]
    assert qrels.docno[:2].to_pylist() == ["14979903", "14979882"]
    assert qrels.qid[-1].as_py() == "205_11" and qrels.docno[-1].as_py() == "20195946"


def test_topiocqa_turn_types():
    types = read_turn_types(data_path("topiocqa", "dev_type.json"))
    assert collections.Counter(types.values()) == {"first_turn": 205, "topic_shift": 672,
                                                   "no_shift": 1637}
    assert types["1_1"] == "first_turn" and types["1_2"] == "no_shift"
    assert types["1_5"] == "topic_shift" and types["205_10"] == "topic_shift"
    assert types["205_11"] == "no_shift"
    # the first turns are exactly turn 1 of each of the 205 conversations
    firsts = sorted(int(q.split("_")[0]) for q, t in types.items() if t == "first_turn")
    assert firsts == list(range(1, 206))
    assert all(q.endswith("_1") == (t == "first_turn") for q, t in types.items())
    qrels, _ = read_topiocqa_qrels(data_path("topiocqa", "dev_gold.trec"))
    assert turn_type_coverage(types, qrels) == ([], [])
    # coverage names the turns that do not match
    del types["7_3"]
    types["999_1"] = "first_turn"
    assert turn_type_coverage(types, qrels) == (["7_3"], ["999_1"])


def test_topiocqa_turn_types_errors(tmp_path):
    twice = tmp_path / "t.json"
    twice.write_text('{"1st": ["1-1"], "tc": ["1-2", "1-1"]}')
    with pytest.raises(InputError, match="both group '1st' and 'tc'"):
        read_turn_types(twice)
    unknown = tmp_path / "u.json"
    unknown.write_text('{"1st": ["1-1"], "xx": ["1-2"]}')
    with pytest.raises(InputError, match="unknown turn type group 'xx'"):
        read_turn_types(unknown)
    spelled = tmp_path / "s.json"
    spelled.write_text('{"first turn": ["1-1"], "topic return": ["1-3"], "no shift": ["1-2"]}')
    assert read_turn_types(spelled) == {"1_1": "first_turn", "1_3": "topic_return",
                                        "1_2": "no_shift"}


# --------------------------------------------------------------------------- CLI
def _convert(command, src, out):
    result = CliRunner().invoke(command, ["--qrels", str(src), "--qrels-out", str(out)],
                                catch_exceptions=False)
    return result


def _lines(path):
    return path.read_text().splitlines()


@pytest.mark.parametrize("name,read,first,last", [
    ("qrels_test.json", 16451, f"1_2 0 {FIRST_URL} 1", f"2774_1 0 {LAST_URL} 1"),
    ("qrecc_qrel.tsv", 8209, "1_2 0 54355562 1", "2774_1 0 54550382 1"),
])
def test_cli_qrecc(tmp_path, name, read, first, last):
    out = tmp_path / "out.qrels"
    result = _convert(qrecc_command, data_path("qrecc", name), out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert (f"qrecc: {read} turns read, 8209 with gold, {read - 8209} without gold left out; "
            "10507 (turn, passage) pairs written") in result.stderr
    assert ("integers" in result.stderr) == name.endswith(".tsv")
    lines = _lines(out)
    assert len(lines) == 10507 and lines[0] == first and lines[-1] == last
    back = read_qrels(out)
    assert len(back) == 10507 and len(set(back.qid.to_pylist())) == 8209


def test_cli_topiocqa(tmp_path):
    out = tmp_path / "gold.qrels"
    out.write_text("old\n")
    result = _convert(topiocqa_command, data_path("topiocqa", "dev_gold.trec"), out)
    assert result.exit_code == 0, result.stderr
    assert ("topiocqa: 2514 turns read, 2514 with gold, 0 without gold left out; "
            "2514 (turn, passage) pairs written") in result.stderr
    lines = _lines(out)
    assert len(lines) == 2514
    assert lines[0] == "1_1 0 14979903 1" and lines[-1] == "205_11 0 20195946 1"


def test_cli_bad_input_leaves_no_output(tmp_path):
    bad = tmp_path / "bad.trec"
    bad.write_text("1-1 Q0 5 1\nfoo Q0 6 1\n")
    out = tmp_path / "out.qrels"
    result = _convert(topiocqa_command, bad, out)
    assert result.exit_code == 2
    assert f"{bad}:2: turn id 'foo'" in result.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [bad]
    missing = _convert(qrecc_command, tmp_path / "nope.json", out)
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    usage = CliRunner().invoke(qrecc_command, ["--qrels", str(bad)])
    assert usage.exit_code == 2 and "--qrels-out" in usage.stderr


def test_cli_wrong_file_kind(tmp_path):
    result = _convert(qrecc_command, data_path("topiocqa", "dev_type.json"), tmp_path / "o")
    assert result.exit_code == 2
    assert "turn '1st': expected a dict of passage -> grade" in result.stderr
    assert not (tmp_path / "o").exists()
