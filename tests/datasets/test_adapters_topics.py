"""Topics files (TREC, TSV, JSONL), turn-id styles, and model rewrites with missing turns."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from click.testing import CliRunner
from conftest import data_path

from trecqr.datasets import turn_ids as T
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import Topics, read_topics, write_topics
from trecqr.cli.convert_files import rewrites_command, topics_command
from trecqr.errors import InputError, UsageError
from trecqr.formats import read_qrels

TRICKY = Topics(
    ["31_1", "31_2", "31_3", "31_4", "31_5"],
    ["What is throat cancer?",
     'Is it "treatable"? It\'s <b>bold</b> & more',
     "Ünïcödé: 東京 — naïve café 🙂",
     "tab\there and\nnewline  double  space",
     "  padded  "],
)


# ------------------------------------------------------------------ topics
def test_jsonl_round_trip_is_exact(tmp_path):
    meta = Topics(TRICKY.qids, TRICKY.queries, {"31_2": {"turn_type": "topic shift", "k": [1, 2]}})
    path = tmp_path / "t.jsonl"
    assert write_topics(meta, path) == 0
    back = read_topics(path)
    assert back.qids == TRICKY.qids
    assert back.queries == TRICKY.queries
    assert back.metadata == {"31_2": {"turn_type": "topic shift", "k": [1, 2]}}
    assert "東京" in path.read_text("utf-8")  # not ASCII-escaped


def test_tsv_round_trip_replaces_tab_and_newline_by_space(tmp_path):
    path = tmp_path / "t.tsv"
    with pytest.warns(UserWarning, match="1 of 5 queries changed"):
        assert write_topics(TRICKY, path) == 1
    lines = path.read_text("utf-8").split("\n")
    assert len(lines) == 6 and lines[-1] == ""
    assert lines[3] == "31_4\ttab here and newline  double  space"
    back = read_topics(path)
    assert back.qids == TRICKY.qids
    expect = list(TRICKY.queries)
    expect[3] = "tab here and newline  double  space"  # each tab/newline -> one space
    assert back.queries == expect  # quotes, unicode, padding kept as written
    assert back.queries[4] == "  padded  "


def test_trec_round_trip_collapses_white_space(tmp_path):
    path = tmp_path / "t.trec"
    with pytest.warns(UserWarning, match="2 of 5 queries changed"):
        assert write_topics(TRICKY, path) == 2
    text = path.read_text("utf-8")
    assert text.startswith("<top>\n<num> Number: 31_1\n<title> What is throat cancer?\n</top>\n")
    back = read_topics(path)
    assert back.qids == TRICKY.qids
    assert back.queries == [" ".join(q.split()) for q in TRICKY.queries]
    assert back.queries[1] == 'Is it "treatable"? It\'s <b>bold</b> & more'


def test_trec_variants(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text(
        "<top>\n<num> Number: 301\n<title> International Organized Crime\n\n"
        "<desc> Description:\nIdentify organizations\n\n<narr> Narrative:\nA relevant doc\n</top>\n"
        "<top>\n<num> 31_4\n<title> Topic: what about\n   its   treatment?\n</top>\n"
        "<top><num>QReCC-Test_1_2</num><title>one line</title></top>\n"
        "<TOP>\n<NUM> Number: 7\n<TITLE> upper case tags\n",  # no </top> at the end
        "utf-8")
    t = read_topics(path)
    assert t.qids == ["301", "31_4", "QReCC-Test_1_2", "7"]
    assert t.queries == ["International Organized Crime", "what about its treatment?",
                         "one line", "upper case tags"]
    assert t.metadata == {"301": {"desc": "Identify organizations", "narr": "A relevant doc"}}


def test_trec_errors(tmp_path):
    bad = tmp_path / "b.trec"
    bad.write_text("<top>\n<num> 1\n<title> a\n</top>\n\n<top>\n<num> 1\n<title> b\n</top>\n")
    with pytest.raises(InputError, match="duplicate topic '1'") as exc:
        read_topics(bad)
    assert exc.value.line == 6
    bad.write_text("<top>\n<num> 1\n</top>\n")
    with pytest.raises(InputError, match="has no <title>"):
        read_topics(bad)
    with pytest.raises(UsageError, match="TREC topic tag"):
        write_topics(Topics(["1"], ["a </title> b"]), tmp_path / "x.trec")
    assert not (tmp_path / "x.trec").exists()


def test_tsv_errors_and_header(tmp_path):
    path = tmp_path / "h.tsv"
    path.write_bytes(b"qid\tquery\r\n1_1\tfirst\r\n\r\n1_2\tsecond\twith tab\r\n")
    t = read_topics(path)
    assert t.qids == ["1_1", "1_2"] and t.queries == ["first", "second\twith tab"]
    path.write_text("1_1\tfirst\n1_2 no tab\n")
    with pytest.raises(InputError, match="expected qid<TAB>query") as exc:
        read_topics(path)
    assert exc.value.line == 2
    path.write_text("1_1\tfirst\n1_1\tagain\n")
    with pytest.raises(InputError, match="duplicate qid '1_1' \\(first on line 1\\)"):
        read_topics(path)


def test_format_choice(tmp_path):
    path = tmp_path / "t.csv"
    with pytest.raises(InputError, match="^.*t.csv: no such file$"):  # a mistyped name first
        read_topics(path)
    write_topics(TRICKY.subset(["31_1", "31_3"]), path, "jsonl")
    with pytest.raises(UsageError, match="cannot tell the topics format"):
        read_topics(path)
    assert read_topics(path, "jsonl").queries == [TRICKY.queries[0], TRICKY.queries[2]]


def test_topics_command_converts_and_restyles(tmp_path):
    src = tmp_path / "in.tsv"
    src.write_text("1-1\twhat is a PA\n1-2\thow much does it cost\n")
    out = tmp_path / "out.trec"
    res = CliRunner().invoke(topics_command, [str(src), str(out), "--qid-style", "QReCC-Test"])
    assert res.exit_code == 0, res.output
    assert read_topics(out).qids == ["QReCC-Test_1_1", "QReCC-Test_1_2"]
    src.write_text("1-1\ta\n1_2\tb\n")
    res = CliRunner().invoke(topics_command, [str(src), str(out), "--qid-style", "canonical"])
    assert res.exit_code == 2
    assert "mix two styles: '1-1' (dash) and '1_2' (canonical)" in res.output


# ------------------------------------------------------------------ turn ids
STYLES = {
    "canonical": "205_11", "dash": "205-11", "topiocqa-dev": "topiocqa-dev_205_11",
    "TopiOCQA-Dev": "TopiOCQA-Dev_205_11", "QReCC-Test": "QReCC-Test_205_11",
    "dev-dash": "dev-205-11",
}


def test_single_ids_every_style():
    for style, qid in STYLES.items():
        assert T.split_id(qid) == ("205", "11", style)
        assert T.format_id("205", "11", style) == qid
        assert T.canonical_id(qid) == "205_11"
    assert T.split_id("QReCC-Train_3_07") == ("3", "07", "QReCC-Train")
    assert T.split_id("train-3-7") == ("3", "7", "train-dash")
    with pytest.raises(UsageError, match="not a conversational turn id"):
        T.split_id("MARCO_D1-2")
    with pytest.raises(UsageError, match="unknown query-id style"):
        T.format_id("1", "2", "has space")


def test_topiocqa_ids_round_trip_every_style():
    qrels = read_qrels(data_path("topiocqa", "dev_gold.trec"))
    ids = qrels.qid
    assert len(ids) == 2514
    parsed = T.parse_ids(ids, "dev_gold.trec")
    assert parsed.style == "dash"
    assert parsed.turn_numbers().max() == 16 and len(set(parsed.conv_numbers())) == 205
    for style, example in STYLES.items():
        out = T.convert_ids(ids, style)
        assert out[0].as_py() == T.format_id("1", "1", style)
        assert out[-1].as_py() == example  # last line: 205-11
        assert T.detect_style(out) == style
        back = T.convert_ids(out, "dash")
        assert back.equals(ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids)


def test_qrecc_keys_round_trip_every_style():
    keys = list(json.loads(data_path("qrecc", "qrels_test.json").read_text()))
    assert len(keys) == 16451 and keys[0] == "1_1" and keys[-1] == "2775_1"
    assert T.detect_style(keys) == "canonical"
    for style in STYLES:
        out = T.convert_ids(keys, style)
        assert out[0].as_py() == T.format_id("1", "1", style)
        assert out[-1].as_py() == T.format_id("2775", "1", style)
        assert T.to_canonical(out).to_pylist() == keys


def test_mixing_styles_raises():
    with pytest.raises(UsageError, match="'1-1' \\(dash\\) and '1_2' \\(canonical\\)"):
        T.parse_ids(["1-1", "1-3", "1_2"])
    with pytest.raises(InputError, match="run.txt: .*'topiocqa-dev_1_1' \\(topiocqa-dev\\) and "
                                         "'TopiOCQA-Dev_1_2' \\(TopiOCQA-Dev\\)"):
        T.parse_ids(["topiocqa-dev_1_1", "TopiOCQA-Dev_1_2"], "run.txt")
    with pytest.raises(UsageError, match="'dev-1-1' \\(dev-dash\\) and '1-2' \\(dash\\)"):
        T.convert_ids(["dev-1-1", "1-2"], "canonical")
    with pytest.raises(UsageError, match="not a conversational turn id: 'abc'"):
        T.parse_ids(["1_1", "abc"])


def test_restyle_qrels_and_topics():
    qrels = read_qrels(data_path("topiocqa", "dev_gold.trec"))
    q2 = T.restyle(qrels, "TopiOCQA-Dev")
    assert q2.qid[0].as_py() == "TopiOCQA-Dev_1_1" and q2.qid[-1].as_py() == "TopiOCQA-Dev_205_11"
    assert qrels.qid[0].as_py() == "1-1"  # the original is untouched
    assert q2.docno.equals(qrels.docno) and (q2.grade == qrels.grade).all()
    t = Topics(["1-1", "1-2"], ["a", "b"], {"1-2": {"turn_type": "no shift"}}).restyle("canonical")
    assert t.qids == ["1_1", "1_2"] and t.metadata == {"1_2": {"turn_type": "no shift"}}


# ------------------------------------------------------------------ rewrites
ICL = ("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl")


def test_chatgpt_rewrites_read():
    res = read_rewrites(data_path(*ICL))
    rep = res.report
    assert (rep.records, rep.rewritten, rep.missing) == (2000, 2000, [])
    assert rep.id_field == "Conversation_no_Turn_no" and rep.rewrite_field == "GPT_rewrite"
    t = res.topics
    assert len(t) == 2000 and t.qids[:3] == ["9467_1", "1490_4", "343_5"]
    # first turns store the question as a string; later turns a chat-completion object
    assert t.queries[0] == "where was australia's first federal government formed"
    assert t.queries[1] == ("What notable events occurred in Stan Musial's career besides his "
                            "participation in the 1950 All-Star Game and his record for most "
                            "All-Star Games played?")
    human = read_rewrites(data_path(*ICL), rewrite_field="Truth_rewrite").topics
    assert human.queries[1] == "What happened to Stan Musial in 1954?"


@pytest.fixture
def blanked(tmp_path):
    """A copy of the ChatGPT rewrites: 3 empty, 2 null, 1 field removed, 4 records removed."""
    rows = [json.loads(line) for line in data_path(*ICL).read_text("utf-8").splitlines()]
    for i in (10, 11, 12):
        rows[i]["GPT_rewrite"] = "  "
    for i in (20, 21):
        rows[i]["GPT_rewrite"] = None
    del rows[30]["GPT_rewrite"]
    gone = [f"{r['Conversation_no']}_{r['Turn_no']}" for r in rows[40:44]]
    kept = rows[:40] + rows[44:]
    path = tmp_path / "blanked.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept), "utf-8")
    raw = read_topics(data_path(*ICL), query_field="Question")
    empty = [f"{rows[i]['Conversation_no']}_{rows[i]['Turn_no']}" for i in (10, 11, 12, 20, 21, 30)]
    return path, raw, empty, gone


def test_missing_raw_policy(blanked):
    path, raw, empty, gone = blanked
    res = read_rewrites(path, raw=raw, missing="raw")
    rep = res.report
    assert (rep.records, rep.rewritten) == (1996, 1990)
    assert rep.empty == empty and rep.absent == gone and rep.extra == []
    assert (rep.filled_raw, rep.dropped) == (10, 0)
    assert res.topics.qids == raw.qids  # every turn, in the raw order
    d = res.topics.as_dict()
    assert d[empty[0]] == raw[empty[0]] and d[gone[-1]] == raw[gone[-1]]
    assert "1996 records, 1990 rewrites; 6 empty or missing rewrites; 4 raw turns absent " \
           "from the file; 10 fell back to the raw question" in rep.summary()
    # without raw topics only the file's own empty rewrites are seen, and raw cannot be applied
    with pytest.raises(UsageError, match="no raw question was given"):
        read_rewrites(path)


def test_missing_drop_and_error_policies(blanked):
    path, raw, empty, gone = blanked
    res = read_rewrites(path, raw=raw, missing="drop")
    assert len(res.topics) == 1990 and res.report.dropped == 10
    assert not set(empty + gone) & set(res.topics.qids)
    alone = read_rewrites(path, missing="drop")
    assert (len(alone.topics), alone.report.dropped, alone.report.absent) == (1990, 6, [])
    with pytest.raises(InputError, match="6 empty or missing rewrites and 4 raw turns absent "
                                         "from the file: '.*' \\(and 5 more\\)") as exc:
        read_rewrites(path, raw=raw, missing="error")
    assert exc.value.line == 11
    with pytest.raises(UsageError, match="unknown missing-rewrite policy"):
        read_rewrites(path, missing="skip")


def test_convsearch_style_jsonl_and_tsv_match_raw_across_styles(tmp_path):
    raw = Topics(["1_1", "1_2", "1_3"], ["q one", "q two", "q three"],
                 {"1_2": {"turn_type": "topic shift"}})
    jl = tmp_path / "r1.jsonl"
    jl.write_text("".join(json.dumps(r) + "\n" for r in [
        {"qid": "QReCC-Test_1_1", "rewrite": "r one\n", "reasoning_content": "<think>..."},
        {"qid": "QReCC-Test_1_2", "rewrite": ""},
        {"qid": "QReCC-Test_1_3", "rewrite": ["r three", "alt"]},
        {"qid": "QReCC-Test_1_4", "rewrite": "r four"}]))
    res = read_rewrites(jl, raw=raw)
    assert res.topics.qids == ["1_1", "1_2", "1_3", "1_4"]  # raw's style
    assert res.topics.queries == ["r one", "q two", "r three", "r four"]
    assert res.topics.metadata == {"1_2": {"turn_type": "topic shift"}}
    assert res.report.empty == ["1_2"] and res.report.extra == ["QReCC-Test_1_4"]
    styled = read_rewrites(jl, raw=raw, missing="drop", qid_style="dev-dash")
    assert styled.topics.qids == ["dev-1-1", "dev-1-3", "dev-1-4"]

    tsv = tmp_path / "r.tsv"
    tsv.write_text("1_1\tr one\n1_2\t\n1_3\n")
    res = read_rewrites(tsv, raw=raw)
    assert res.topics.queries == ["r one", "q two", "q three"]
    assert res.report.empty == ["1_2", "1_3"] and res.report.filled_raw == 2

    out = tmp_path / "out.tsv"
    rawf = tmp_path / "raw.tsv"
    write_topics(raw, rawf)
    r = CliRunner().invoke(rewrites_command, [str(jl), str(out), "--raw", str(rawf),
                                              "--missing", "drop"])
    assert r.exit_code == 0, r.output
    assert out.read_text() == "1_1\tr one\n1_3\tr three\n1_4\tr four\n"
    assert "4 records, 3 rewrites; 1 empty or missing rewrites" in r.output
    r = CliRunner().invoke(rewrites_command, [str(jl), str(out), "--missing", "error"])
    assert r.exit_code == 2 and "1 empty or missing rewrites: 'QReCC-Test_1_2'" in r.output
