"""TREC CAsT adapters: the organisers' topic JSON (2020, 2021) and passage -> document runs.

Data: ../shared/data/cast2020/ and cast2021/ (daltonj/treccastweb @ 3384661).
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner
from conftest import data_path, run_cli

import trecqr
from trecqr.cli.convert import cast_command
from trecqr.cli.convert_files import collapse_command
from trecqr.datasets.cast.topics import (
    convert_cast_qrels,
    read_cast_topics,
    write_topics,
)
from trecqr.datasets.collapse import (
    collapse_file,
    collapse_run,
    document_ids,
)
from trecqr.errors import InputError
from trecqr.formats import Run, read_run
from trecqr.formats.order import trec_order

C20 = "cast2020"
C21 = "cast2021"
M20 = "2020_manual_evaluation_topics_v1.0.json"
A20 = "2020_automatic_evaluation_topics_v1.0.json"
M21 = "2021_manual_evaluation_topics_v1.0.json"
A21 = "2021_automatic_evaluation_topics_v1.0.json"
QRELS21 = "qrels-docs.2021.qrel"


# --------------------------------------------------------------------------- topics
@pytest.mark.parametrize("folder,name,convs,turns,fields", [
    (C20, M20, 25, 216, {"raw", "manual", "automatic"}),
    (C20, A20, 25, 216, {"raw", "automatic"}),
    (C21, M21, 26, 239, {"raw", "manual", "automatic"}),
    (C21, A21, 26, 239, {"raw", "automatic"}),
])
def test_turn_counts_and_fields(folder, name, convs, turns, fields):
    topics = read_cast_topics(data_path(folder, name))
    assert len(topics) == turns
    assert topics.conversations == convs
    assert topics.fields == fields
    assert len(set(topics.qids)) == turns
    assert all(re.fullmatch(r"[0-9]+_[0-9]+", q) for q in topics.qids)


def test_2021_rewrites_and_canonical_passages():
    topics = read_cast_topics(data_path(C21, M21))
    assert topics.qids[:3] == ["106_1", "106_2", "106_3"]
    manual = dict(topics.queries("manual"))
    auto = dict(topics.queries("automatic"))
    raw = dict(topics.queries("raw"))
    assert manual["106_1"] == ("I just had a breast biopsy for cancer. What are the most common "
                               "types of breast cancer?")
    assert manual["106_2"] == ("Once it breaks out, how likely is lobular carcinoma breast "
                               "cancer to spread?")
    assert auto["106_2"] == "Once the cancer breaks out, how likely is it to spread?"
    assert raw["106_2"] == "Once it breaks out, how likely is it to spread?"
    assert manual["131_10"] == "How is an AC system different from a heat pump?"
    assert auto["131_10"] == "How is an AC compressor different from a heat pump?"
    meta = topics.metadata()
    assert meta["106_1"] == {"qid": "106_1", "conversation": "106", "turn": 1,
                             "canonical_passage_id": "MARCO_D59865-7",
                             "canonical_document_id": "MARCO_D59865"}
    assert meta["131_10"]["canonical_passage_id"] == "MARCO_D981398-1"
    # the automatic file: same turns, same canonical passages, no manual rewrite
    a = read_cast_topics(data_path(C21, A21))
    assert a.metadata() == meta
    assert dict(a.queries("automatic")) == auto


def test_2020_canonical_results_differ_between_files():
    m = read_cast_topics(data_path(C20, M20))
    a = read_cast_topics(data_path(C20, A20))
    assert dict(m.queries("manual"))["81_2"] == "Now my garage door opener stopped working. Why?"
    assert dict(a.queries("automatic"))["81_2"] == "Why did garage door opener stop working?"
    assert dict(m.queries("raw"))["81_2"] == "Now it stopped working. Why?"
    mm, am = m.metadata(), a.metadata()
    assert mm["81_1"] == {"qid": "81_1", "conversation": "81", "turn": 1,
                          "canonical_passage_id": "MARCO_5498474", "canonical_source": "manual"}
    assert am["81_1"]["canonical_passage_id"] == "MARCO_8752370"
    assert am["81_1"]["canonical_source"] == "automatic"
    assert am["105_9"]["canonical_passage_id"] == "CAR_0ef5c6e5c7d53e4ca75dc690ced5488ada2cd521"
    assert sum(mm[q]["canonical_passage_id"] != am[q]["canonical_passage_id"] for q in mm) == 140


def test_missing_query_field_is_an_error():
    topics = read_cast_topics(data_path(C21, A21))
    with pytest.raises(InputError, match=r"turn 106_1 has no manual_rewritten_utterance.*"
                                         r"has: raw, automatic"):
        topics.queries("manual")


def test_bad_topic_files(tmp_path):
    bad = tmp_path / "t.json"
    bad.write_text('{"number": 1}')
    with pytest.raises(InputError, match="expected a JSON list"):
        read_cast_topics(bad)
    bad.write_text('[{"number": 1, "turn": [{"number": 1, "raw_utterance": "a"},'
                   ' {"number": 1, "raw_utterance": "b"}]}]')
    with pytest.raises(InputError, match="turn id 1_1 occurs twice"):
        read_cast_topics(bad)
    bad.write_text('[{"number": 1, "turn": [\n{"number": 1,}]}]')
    with pytest.raises(InputError) as exc:
        read_cast_topics(bad)
    assert exc.value.line == 2


def test_topic_writers(tmp_path):
    trec = tmp_path / "t.txt"
    assert write_topics([("106_1", "a b")], trec) == "trec"
    assert "<num> Number: 106_1" in trec.read_text() and "a b" in trec.read_text()
    noext = tmp_path / "topics"
    assert write_topics([("106_2", "b")], noext) == "trec"  # no known extension: TREC
    topics = read_cast_topics(data_path(C21, M21))
    out = tmp_path / "t.tsv"
    assert write_topics(topics.queries("raw"), out) == "tsv"
    lines = out.read_text().splitlines()
    assert len(lines) == 239
    assert lines[0] == ("106_1\tI just had a breast biopsy for cancer. What are the most "
                        "common types?")


# --------------------------------------------------------------------------- cast command
def test_cast_command_tsv_and_trec(tmp_path):
    runner = CliRunner()
    out = tmp_path / "manual.tsv"
    res = runner.invoke(cast_command, ["--topics", str(data_path(C21, M21)), "--query-field",
                                       "manual", "--topics-out", str(out),
                                       "--meta-out", str(tmp_path / "meta.jsonl")])
    assert res.exit_code == 0, res.output
    assert ("cast: 239 turns in 26 conversations, query field manual "
            "(manual_rewritten_utterance), 239 with a canonical passage") in res.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 239
    assert lines[1] == ("106_2\tOnce it breaks out, how likely is lobular carcinoma breast "
                        "cancer to spread?")
    meta = (tmp_path / "meta.jsonl").read_text().splitlines()
    assert meta[0] == ('{"qid": "106_1", "conversation": "106", "turn": 1, "canonical_passage_id":'
                       ' "MARCO_D59865-7", "canonical_document_id": "MARCO_D59865"}')

    trec = tmp_path / "auto.trec"
    res = runner.invoke(cast_command, ["--topics", str(data_path(C20, A20)), "--query-field",
                                       "automatic", "--topics-out", str(trec)])
    assert res.exit_code == 0, res.output
    text = trec.read_text()
    assert text.count("<top>\n") == 216
    assert text.startswith("<top>\n<num> Number: 81_1\n<title> How do you know when your garage "
                           "door opener is going bad?\n</top>\n\n<top>\n<num> Number: 81_2\n"
                           "<title> Why did garage door opener stop working?\n</top>\n")


def test_cast_command_errors(tmp_path):
    runner = CliRunner()
    out = tmp_path / "x.tsv"
    res = runner.invoke(cast_command, ["--topics", str(data_path(C21, A21)), "--query-field",
                                       "manual", "--topics-out", str(out)])
    assert res.exit_code == 2
    assert "turn 106_1 has no manual_rewritten_utterance" in res.stderr
    assert not out.exists()
    # 2020 qrels against 2021 topics: ids of another year are refused, by name
    res = runner.invoke(cast_command, ["--topics", str(data_path(C21, M21)), "--query-field",
                                       "raw", "--topics-out", str(out), "--qrels",
                                       str(data_path(C20, "2020qrels.txt")), "--qrels-out",
                                       str(tmp_path / "q")])
    assert res.exit_code == 2
    assert "208 qids are not turns of" in res.stderr and "'81_1'" in res.stderr
    res = runner.invoke(cast_command, ["--topics", str(data_path(C21, M21)), "--query-field",
                                       "raw", "--topics-out", str(out), "--qrels", "q"])
    assert res.exit_code == 2
    assert res.stderr == "trecqr: --qrels needs --qrels-out OUT (where the checked qrels go)\n"


def test_converted_qrels_score_like_the_original(tmp_path):
    """The issue's check: convert CAsT 2021 manual rewrites (and its qrels), score
    docrun_org_manual_bm25.run against the converted qrels: same numbers as the original."""
    runner = CliRunner()
    qrels_out = tmp_path / "qrels.txt"
    res = runner.invoke(cast_command, ["--topics", str(data_path(C21, M21)), "--query-field",
                                       "manual", "--topics-out", str(tmp_path / "t.tsv"),
                                       "--qrels", str(data_path(C21, QRELS21)),
                                       "--qrels-out", str(qrels_out)])
    assert res.exit_code == 0, res.output
    assert ("cast: qrels 19334 pairs (5505 relevant) for 158 turns; 81 turns without "
            "judgments") in res.stderr
    run = data_path(C21, "docrun_org_manual_bm25.run")
    measures = ["map", "ndcg_cut.3", "recip_rank", "P.10", "num_rel_ret"]
    ours = trecqr.evaluate(qrels_out, run, measures).aggregate()
    orig = trecqr.evaluate(data_path(C21, QRELS21), run, measures).aggregate()
    assert ours == orig
    assert ours["num_rel_ret"] == 2059.0
    # the evaluated topics are exactly the judged turns, all of them turns of the topic file
    counts = convert_cast_qrels(data_path(C21, QRELS21), read_cast_topics(data_path(C21, M21)),
                                tmp_path / "q2")
    assert (counts.turns_judged, counts.turns_unjudged) == (158, 81)


# --------------------------------------------------------------------------- collapse
RUNS = {  # name: (documents after collapsing, WAPO UUID rows the organisers truncated)
    "org_convdr": (15898, 665), "org_convdr_bert": (15898, 665),
    "org_manual_ance": (15373, 532), "org_manual_ance_bert": (15373, 532),
    "org_manual_bm25": (18570, 386),
}
_UUID = re.compile(r"^(WAPO_[0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _ranked(run: Run, rename=lambda d: d) -> dict:
    """{qid: [(docno, score as %.8f)]} in trec_eval's ranking order."""
    order, _, _ = trec_order(run, float32=False)
    out: dict = {}
    qids = run.qid.take(pa.array(order)).to_pylist()
    docs = run.docno.take(pa.array(order)).to_pylist()
    for q, d, s in zip(qids, docs, run.score[order]):
        out.setdefault(q, []).append((rename(d), f"{s:.8f}"))
    return out


def test_passage_suffix_rule():
    ids = pa.array(["MARCO_D2706327-1", "KILT_70547-50", "WAPO_cfb7b4f465bc204c17358382c78e3de5-1",
                    "WAPO_627b180c-85ae-11e1-abb4-839961045500-3",
                    "WAPO_6FWRCMAU44I6TEFICNX2IS4AXI",
                    "CAR_abc"])
    assert document_ids(ids).to_pylist() == [
        "MARCO_D2706327", "KILT_70547", "WAPO_cfb7b4f465bc204c17358382c78e3de5",
        "WAPO_627b180c-85ae-11e1-abb4-839961045500", "WAPO_6FWRCMAU44I6TEFICNX2IS4AXI", "CAR_abc"]


def test_collapse_keeps_best_passage_in_trec_order():
    # file order is not score order; D1's best passage is its second line; ties by docno desc
    run = Run(pa.array(["1", "1", "1", "1", "2", "2"]),
              pa.array(["D1-1", "D2-4", "D1-2", "D3-1", "D9-1", "D9-2"]),
              np.array([1.0, 2.0, 3.0, 2.0, 5.0, 5.0]), "myrun")
    out, counts = collapse_run(run)
    assert (counts.passages, counts.documents, counts.topics, counts.no_suffix) == (6, 4, 2, 0)
    assert out.runid == "myrun"
    assert _ranked(out) == {"1": [("D1", "3.00000000"), ("D3", "2.00000000"),
                                  ("D2", "2.00000000")],
                            "2": [("D9", "5.00000000")]}


@pytest.mark.parametrize("name", list(RUNS))
def test_collapse_matches_organisers_docruns(name, tmp_path):
    """Same documents, order and scores as docrun_*.run, except that the organisers cut every
    dashed WAPO UUID at its first dash (WAPO_1cf6896e-67be-...-a3ce76ec4751 -> WAPO_1cf6896e)."""
    docs, truncated = RUNS[name]
    out = tmp_path / "doc.run"
    counts = collapse_file(data_path(C21, f"{name}.trec"), out)
    assert (counts.passages, counts.documents, counts.topics) == (23900, docs, 239)
    ours = read_run(out)
    assert ours.runid == read_run(data_path(C21, f"{name}.trec")).runid
    lines = out.read_text().splitlines()
    assert lines[0].split()[3] == "1" and len(lines) == docs
    ref = _ranked(read_run(data_path(C21, f"docrun_{name}.run")))
    cut = [0]

    def organisers(d):
        m = _UUID.match(d)
        cut[0] += m is not None
        return m.group(1) if m else d

    assert _ranked(ours, organisers) == ref
    assert cut[0] == truncated


def test_collapsed_bm25_scores_like_docrun_with_organisers_ids(tmp_path):
    """trec_eval output (-q -c -m all_trec) of our collapse, with the organisers' WAPO cut
    applied, is byte-identical to that of docrun_org_manual_bm25.run (runid line aside); the
    correct ids find 31 more relevant documents."""
    out = tmp_path / "doc.run"
    collapse_file(data_path(C21, "org_manual_bm25.trec"), out)
    cut = tmp_path / "cut.run"
    cut.write_text("".join(re.sub(r" (WAPO_[0-9a-f]{8})-[0-9a-f-]{27} ", r" \1 ", line)
                           for line in out.open()))
    args = ["eval", "--quiet", "-q", "-c", "-m", "all_trec", str(data_path(C21, QRELS21))]
    a = run_cli(args + [str(cut)])
    b = run_cli(args + [str(data_path(C21, "docrun_org_manual_bm25.run"))])
    assert a.exit_code == 0 and b.exit_code == 0

    def strip(text):
        return [line for line in text.splitlines() if not line.startswith("runid")]

    assert strip(a.stdout) == strip(b.stdout)
    assert "runid                 \tall\tbm25" in a.stdout
    fixed = trecqr.evaluate(data_path(C21, QRELS21), out, ["num_rel_ret", "map"]).aggregate()
    official = trecqr.evaluate(data_path(C21, QRELS21),
                               data_path(C21, "docrun_org_manual_bm25.run"),
                               ["num_rel_ret", "map"]).aggregate()
    assert (fixed["num_rel_ret"], official["num_rel_ret"]) == (2090.0, 2059.0)
    assert fixed["map"] > official["map"]


def test_collapse_command(tmp_path):
    out = tmp_path / "doc.run"
    res = CliRunner().invoke(collapse_command, [str(data_path(C21, "org_manual_bm25.trec")),
                                                "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith("collapse: 23900 passages -> 18570 documents over 239 topics "
                                 "(5330 lower-ranked passages of an already ranked document "
                                 "dropped); wrote ")
    assert out.read_text().splitlines()[:2] == [
        "106_1 Q0 MARCO_D2706327 1 30.534299850463867 bm25",
        "106_1 Q0 MARCO_D118916 2 30.145299911499023 bm25"]
    bad = tmp_path / "bad.trec"
    bad.write_text("1 Q0 D1-1 1 x r\n")
    res = CliRunner().invoke(collapse_command, [str(bad), "-o", str(tmp_path / "o.run")])
    assert res.exit_code == 2
    assert "bad.trec:1: score 'x' is not a finite number" in res.stderr
    assert not (tmp_path / "o.run").exists()
