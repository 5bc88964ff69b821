"""`trecqr cqr` on the QReCC demo collection (fixtures/qrecc-demo): one call, three topics files,
one table; its numbers must equal `trecqr search` + `trecqr eval` on the same index and topics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import trecqr
from conftest import run_cli
from trecqr.cli.retrieval import cqr_command as command
from trecqr.workflows.cqr import COLUMNS, cqr

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
QRELS = DEMO / "qrels.txt"
FIELDS = ("raw", "human", "gpt")
EXPECTED = {  # trec_eval 4-decimal values of the fixed BM25 run (k1 0.82 b 0.68, depth 100)
    "raw": {"RR@3": 0.3585, "MRR": 0.3830, "NDCG@3": 0.3674, "R@10": 0.4917, "R@100": 0.6640},
    "human": {"RR@3": 0.7959, "MRR": 0.8072, "NDCG@3": 0.8090, "R@10": 0.9033, "R@100": 0.9439},
    "gpt": {"RR@3": 0.7395, "MRR": 0.7529, "NDCG@3": 0.7572, "R@10": 0.8758, "R@100": 0.9399},
}


def invoke(args):
    result = CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("cqr")


@pytest.fixture(scope="module")
def index(folder):
    """Built once by cqr itself (--collection + --index keeps it), with the preset's k1/b."""
    out = folder / "index"
    report = cqr(QRELS, [DEMO / "topics-raw.tsv"], collection=DEMO / "collection.jsonl",
                 index=out, preset="qrecc-test", runs_dir=folder / "first-runs")
    assert report.index_built and (report.k1, report.b) == (0.82, 0.68)
    return out


@pytest.fixture(scope="module")
def table_call(index, folder):
    args = ["--qrels", QRELS, "--index", index, "--preset", "qrecc-test", "--quiet",
            "--runs-dir", folder / "runs", "-o", folder / "report.txt"]
    for f in FIELDS:
        args += ["--topics", DEMO / f"topics-{f}.tsv"]
    return invoke(args)


@pytest.fixture(scope="module")
def json_report(index, folder):
    args = ["--qrels", QRELS, "--index", index, "--format", "json", "--quiet",
            "--runs-dir", folder / "json-runs"]
    for f in FIELDS:
        args += ["--topics", DEMO / f"topics-{f}.tsv"]
    args += ["--name", "raw", "--name", "human", "--name", "gpt"]
    return json.loads(invoke(args).stdout)


@pytest.fixture(scope="module")
def search_eval(index, folder):
    """The same topics through `trecqr search` + `trecqr eval` (+ trecqr.evaluate for RR@3)."""
    out = {}
    for f in FIELDS:
        run = folder / f"search-{f}.txt"
        r = run_cli(["search", index, DEMO / f"topics-{f}.tsv", "-o", run, "-k", "100", "--quiet"])
        assert r.exit_code == 0, r.stderr
        r = run_cli(["eval", "-m", "recip_rank", "-m", "ndcg_cut.3", "-m", "recall.10,100",
                     "--format", "json", "--quiet", QRELS, run])
        assert r.exit_code == 0, r.stderr
        summary = json.loads(r.stdout)["summary"]
        rr3 = trecqr.evaluate(QRELS, run, ["RR@3"]).aggregate()["RR@3"]
        out[f] = {"RR@3": rr3, "MRR": summary["recip_rank"], "NDCG@3": summary["ndcg_cut_3"],
                  "R@10": summary["recall_10"], "R@100": summary["recall_100"]}
    return out


def _parse_table(text):
    lines = text.splitlines()
    head, body = lines[0], []
    for line in lines[2:]:
        if not line.strip():
            break
        body.append(line.split())
    return head, body


def test_one_table_three_rows_equal_to_search_plus_eval(table_call, search_eval):
    head, body = _parse_table(table_call.stdout)
    assert head.split()[:6] == ["run", "RR@3", "recip_rank", "ndcg_cut_3", "recall_10",
                                "recall_100"]  # each column labelled with the name it shows
    assert [row[0] for row in body] == [f"topics-{f}" for f in FIELDS]
    for row, f in zip(body, FIELDS):
        values = dict(zip(COLUMNS, map(float, row[1:6])))
        for key, value in values.items():
            assert value == round(search_eval[f][key], 4), (f, key)
            assert value == EXPECTED[f][key], (f, key)
        assert row[6:] == ["927", "0", "0", "0", "-"]
    assert "BM25 k1=0.82 b=0.68 (bm25s, Lucene-style English analysis), depth 100" \
        in table_call.stdout


def test_runs_kept_and_report_written(table_call, folder, search_eval):
    for f in FIELDS:
        run = folder / "runs" / f"topics-{f}.run"
        assert run.exists()
        # the kept run is the run `trecqr search` writes (same rows, same scores)
        ours = [line.split()[:5] for line in run.read_text().splitlines()]
        theirs = [line.split()[:5]
                  for line in (folder / f"search-{f}.txt").read_text().splitlines()]
        assert ours == theirs
    assert (folder / "report.txt").read_text() == table_call.stdout


def test_json_full_precision_identical(json_report, search_eval):
    rows = json_report["rows"]
    assert [r["name"] for r in rows] == list(FIELDS)
    for r in rows:
        assert r["scores"] == search_eval[r["name"]]  # identical doubles, not just 4 places
        assert r["coverage"] == {"evaluated": 927, "qrels_without_topic": 0,
                                 "qrels_without_result": 0, "topics_without_gold": 0,
                                 "without_rewrite": None}
    assert json_report["measures"] == {"MRR": "recip_rank", "NDCG@3": "ndcg_cut.3",
                                       "R@10": "recall.10", "R@100": "recall.100",
                                       "RR@3": "RR@3"}
    assert json_report["depth"] == 100 and json_report["k1"] == 0.82


def test_rewrites_beat_raw_on_every_measure(json_report):
    by = {r["name"]: r["scores"] for r in json_report["rows"]}
    for key in COLUMNS:
        assert by["human"][key] > by["raw"][key], key
        assert by["gpt"][key] > by["raw"][key], key
    # true RR@3 is below the papers' full-run "MRR" (it drops first hits below rank 3)
    for name in FIELDS:
        assert by[name]["RR@3"] < by[name]["MRR"]


@pytest.fixture(scope="module")
def partial_rewrites(folder):
    """topics-gpt.tsv without 5 turns and with 2 empty rewrites; the expected topics after
    --missing raw (those 7 turns take the raw question)."""
    gpt = (DEMO / "topics-gpt.tsv").read_text().splitlines()
    raw = dict(line.split("\t", 1) for line in (DEMO / "topics-raw.tsv").read_text().splitlines())
    absent = {i for i in (3, 100, 400, 700, 926)}
    empty = {10, 500}
    lines, filled = [], []
    for i, line in enumerate(gpt):
        qid, text = line.split("\t", 1)
        if i in absent:
            filled.append(f"{qid}\t{raw[qid]}")
            continue
        if i in empty:
            lines.append(f"{qid}\t")
            filled.append(f"{qid}\t{raw[qid]}")
            continue
        lines.append(line)
        filled.append(line)
    path = folder / "gpt-partial.tsv"
    path.write_text("\n".join(lines) + "\n")
    expected = folder / "gpt-filled.tsv"
    expected.write_text("\n".join(filled) + "\n")
    return path, expected


def test_missing_rewrites_counted_and_filled_with_raw(index, folder, partial_rewrites):
    path, filled = partial_rewrites
    result = invoke(["--qrels", QRELS, "--index", index, "--quiet", "--runs-dir", folder / "rw",
                     "--rewrites", path, "--raw", DEMO / "topics-raw.tsv", "--missing", "raw",
                     "--topics", filled, "--format", "json"])
    rows = {r["name"]: r for r in json.loads(result.stdout)["rows"]}
    rw, ref = rows["gpt-partial"], rows["gpt-filled"]
    assert rw["kind"] == "rewrites"
    assert rw["coverage"]["without_rewrite"] == 7
    assert rw["coverage"]["evaluated"] == 927
    assert rw["rewrites"]["empty"] == 2 and rw["rewrites"]["absent"] == 5
    assert rw["rewrites"]["filled_raw"] == 7 and rw["rewrites"]["rewritten"] == 920
    # filling with the raw question gives exactly the run of the hand-filled topics
    assert rw["scores"] == ref["scores"]
    full_gpt = EXPECTED["gpt"]
    assert round(rw["scores"]["MRR"], 4) != full_gpt["MRR"] or \
        round(rw["scores"]["R@10"], 4) != full_gpt["R@10"]


def test_missing_rewrites_dropped(index, folder, partial_rewrites):
    path, _ = partial_rewrites
    report = cqr(QRELS, rewrites=[path], raw=DEMO / "topics-raw.tsv", missing="drop",
                 index=index, runs_dir=folder / "drop")
    row = report.rows[0]
    assert row.coverage == {"evaluated": 920, "qrels_without_topic": 7,
                            "qrels_without_result": 0, "topics_without_gold": 0,
                            "without_rewrite": 7}
    assert row.rewrites["dropped"] == 7


def test_runs_folder_refused_before_the_index_is_built(tmp_path):
    (tmp_path / "afile").write_text("")
    with pytest.raises(trecqr.InputError, match="cannot create folder: Not a directory"):
        cqr(QRELS, [DEMO / "topics-raw.tsv"], collection=DEMO / "collection.jsonl",
            index=tmp_path / "index", runs_dir=tmp_path / "afile" / "runs")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no index was built


def test_a_row_named_with_spaces_keeps_six_fields_a_line(index, tmp_path):
    """A topics file named with a space (or --name "raw question") names its row, and the
    row's runid was "cqr-raw question": seven fields a line, read back with the runid cut.
    The runid now has "_" for the space; the row and its run file keep the name."""
    topics = tmp_path / "raw question.tsv"
    topics.write_bytes((DEMO / "topics-raw.tsv").read_bytes())
    report = cqr(QRELS, [topics], index=index, preset="qrecc-test", runs_dir=tmp_path / "runs")
    assert [row.name for row in report.rows] == ["raw question"]
    lines = (tmp_path / "runs" / "raw question.run").read_text().splitlines()
    assert {len(line.split()) for line in lines} == {6}
    assert {line.split()[5] for line in lines} == {"cqr-raw_question"}
    assert round(report.rows[0].scores["MRR"], 4) == EXPECTED["raw"]["MRR"]


def test_index_params_without_a_collection_are_refused(tmp_path):
    """index_params say how collection='s index is built: beside an index already built (its
    passages encoded then) they are refused, not ignored, as cqr's --model and
    --max-seq-length are on the command line."""
    from trecqr.errors import UsageError

    with pytest.raises(UsageError, match=r"^index parameters say how a collection is indexed; "
                                         r"an index already built keeps its own; index_params "
                                         r"\(max_seq_length\) need collection=$"):
        cqr(QRELS, DEMO / "topics-raw.tsv", index=tmp_path / "idx",
            index_params={"max_seq_length": 128})
    assert list(tmp_path.iterdir()) == []


def test_a_backend_beside_an_index_must_be_its_own(index, tmp_path):
    """--backend chooses how --collection is indexed; an --index alone knows its own, so a
    backend given beside it that is not that one is refused before any search (it was
    ignored), and its own is taken as given."""
    res = run_cli(["cqr", "--qrels", QRELS, "--index", index, "--backend", "dense", "--topics",
                   DEMO / "topics-raw.tsv", "--runs-dir", tmp_path / "runs"])
    assert res.exit_code == 2 and res.stderr == (
        f"trecqr: {index}: a bm25s index, not dense (the backend is chosen when a collection "
        "is indexed; an index knows its own)\n")
    assert list(tmp_path.iterdir()) == []
    report = cqr(QRELS, [DEMO / "topics-raw.tsv"], index=index, backend="bm25s",
                 preset="qrecc-test")
    assert report.backend == "bm25s"
    assert round(report.rows[0].scores["MRR"], 4) == EXPECTED["raw"]["MRR"]
