"""Field options checked before any work, outputs never silently empty, candidates read as
candidates, and the cqr paths around them (oracle, presets, --min-results, --protocol, the dense
backend's temporary files).

Data: ../shared/data/qrecc/dev-sampled2k_chatgpt_ICL.jsonl (InfoCQR's 2,000 QReCC dev turns with
``GPT_rewrite``), ../shared/data/cast2019/llm4cs-rew-rewrites.jsonl (LLM4CS' REW samples),
../shared/data/sessions/hredqs-test.*; fixtures/llm4cs/cast19-cot-rew-47.jsonl (LLM4CS' COT-REW
samples of conversation 47, one of them an empty string) and fixtures/cast2021-demo.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import data_path, run_cli

import trecqr
from trecqr.datasets.rewrites.candidates import read_candidates
from trecqr.protocols.presets import preset_names
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import read_topics
from trecqr.errors import InputError, UsageError
from trecqr.retrieval.backends import build_index
from trecqr.workflows.cqr import cqr

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "cast2021-demo"
COT = ROOT / "fixtures" / "llm4cs" / "cast19-cot-rew-47.jsonl"
ICL = ("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl")
REW = ("cast2019", "llm4cs-rew-rewrites.jsonl")


def one_line(res) -> str:
    """The stderr of a refused command: one line, exit 2."""
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


def write_jsonl(path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def records(path) -> list:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    """A bm25s index of the CAsT 2021 demo collection (234 passages), built once."""
    folder = tmp_path_factory.mktemp("fields") / "index"
    build_index(DEMO / "collection.jsonl", folder, "bm25s", show_progress=False)
    return folder


@pytest.fixture(scope="module")
def demo_turns():
    return read_topics(DEMO / "topics-raw.tsv").qids[:20]


# ------------------------------------------------------------------ field options
def test_cqr_rewrite_field_typo_is_refused_before_the_index_is_built(tmp_path):
    """A rewrite field no record has lists the file's fields in one line; no index is built
    (the row would otherwise be the raw questions under the model's name, exit 0)."""
    icl = data_path(*ICL)
    res = run_cli(["cqr", "--qrels", ROOT / "fixtures" / "qrecc-demo" / "qrels.txt",
                   "--collection", ROOT / "fixtures" / "qrecc-demo" / "collection.jsonl",
                   "--index", tmp_path / "index", "--dataset", "qrecc", "--dataset-file", icl,
                   "--rewrites", icl, "--rewrite-field", "GPT_rewirte", "--quiet"])
    line = one_line(res)
    assert "no record has the field 'GPT_rewirte'" in line
    assert "Truth_rewrite" in line and "GPT_rewrite" in line  # the file's fields
    assert not (tmp_path / "index").exists()


def test_convert_rewrites_field_typo_writes_nothing(tmp_path):
    """convert rewrites with the typo, with and without --missing drop: one line listing the
    fields, exit 2, no output file (it used to advise --missing drop, which wrote an empty
    file with exit 0)."""
    out = tmp_path / "out.tsv"
    for extra in ([], ["--missing", "drop"]):
        res = run_cli(["convert", "rewrites", data_path(*ICL), out, "--rewrite-field",
                       "GPT_rewirte", *extra])
        assert "no record has the field 'GPT_rewirte'" in one_line(res)
        assert not out.exists()


def test_a_file_without_any_usable_rewrite_is_refused(tmp_path):
    """A field that is there but empty in every record is no rewrite at all: refused with the
    counts of what it holds, instead of a topics file of raw questions (or an empty one)."""
    src = tmp_path / "empty.jsonl"
    write_jsonl(src, [dict(r, GPT_rewrite="") for r in records(data_path(*ICL))[:50]])
    out = tmp_path / "out.tsv"
    res = run_cli(["convert", "rewrites", src, out, "--missing", "drop"])
    line = one_line(res)
    assert "none of the 50 records has a usable rewrite in GPT_rewrite (50 empty string)" in line
    assert not out.exists()


def test_id_field_typo_lists_the_record_fields(tmp_path):
    res = run_cli(["convert", "rewrites", data_path(*REW), tmp_path / "o.tsv",
                   "--id-field", "sampleid"])
    line = one_line(res)
    assert "sampleid" in line and "sample_id, predicted_rewrite" in line


def test_topics_query_field_typo_lists_the_fields(tmp_path):
    src = write_jsonl(tmp_path / "t.jsonl", [{"qid": q, "query": t} for q, t in
                                             read_topics(DEMO / "topics-raw.tsv")][:5])
    res = run_cli(["convert", "topics", src, tmp_path / "t.tsv", "--query-field", "qurey"])
    assert "no record has the field 'qurey'; the file's fields: qid, query" in one_line(res)
    with pytest.raises(UsageError, match="no record has the field 'qurey'"):
        read_topics(src, query_field="qurey")


def test_response_field_typo_is_refused_before_any_work(tmp_path):
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--collection",
                   DEMO / "collection.jsonl", "--backend", "dense", "--index", tmp_path / "idx",
                   "--rewrites", data_path(*REW), "--candidates", "mean", "--with-response",
                   "--response-field", "predicted_respons"])
    assert "no record has the field 'predicted_respons'" in one_line(res)
    assert not (tmp_path / "idx").exists()


def test_gen_and_suggest_field_typos_list_the_fields(tmp_path):
    icl = data_path(*ICL)
    res = run_cli(["gen", icl, icl, "--pred-field", "GPT_rewirte", "--metric", "bleu"])
    assert "no record has the field 'GPT_rewirte'" in one_line(res)
    res = run_cli(["gen", icl, icl, "--ref-field", "Truth_rewirte", "--metric", "bleu"])
    assert "no record has the field 'Truth_rewirte'" in one_line(res)
    s = data_path("sessions")
    gen = write_jsonl(tmp_path / "g.jsonl", [{"id": "hredqs-1", "text": "a query"}])
    res = run_cli(["suggest", "hredqs", s / "hredqs-test.ctx", "--rnk", s / "hredqs-test.rnk",
                   "--tgt", s / "hredqs-test.rnk", "--generated", gen, "--gen-field", "txt"])
    assert "no record has the field 'txt'; the file's fields: id, text" in one_line(res)


def test_hints_name_options_in_the_callers_own_terms(tmp_path):
    """A hint names the command line's options on the command line and Python's keywords in
    Python, never both, and only options that exist."""
    src = write_jsonl(tmp_path / "r.jsonl", [{"qid": "1_1", "query_text": "a"}])
    res = run_cli(["convert", "rewrites", src, tmp_path / "o.tsv"])
    line = one_line(res)
    assert "name it with --rewrite-field" in line and "query_text" in line
    with pytest.raises(UsageError) as exc:
        read_rewrites(src)
    assert "name it with rewrite_field=" in str(exc.value) and "--" not in str(exc.value)
    res = run_cli(["gen", src, src, "--metric", "bleu"])
    assert "name it with --pred-field" in one_line(res)
    topics = write_jsonl(tmp_path / "t.jsonl", [{"qid": "1_1", "utterence": "a"}])
    res = run_cli(["convert", "topics", topics, tmp_path / "t.tsv"])
    assert "name it with --query-field" in one_line(res)
    with pytest.raises(UsageError, match="name it with query_field="):
        read_topics(topics)

    # a turn without any rewrite and no raw questions
    rows = records(data_path(*ICL))[:3]
    rows[1]["GPT_rewrite"] = None
    src = write_jsonl(tmp_path / "gap.jsonl", rows)
    line = one_line(run_cli(["convert", "rewrites", src, tmp_path / "o.tsv"]))
    assert "--missing drop" in line and "--raw FILE" in line
    assert "missing='drop'" not in line and "raw=" not in line
    with pytest.raises(UsageError) as exc:
        read_rewrites(src)
    assert "missing='drop'" in str(exc.value) and "--missing" not in str(exc.value)


def test_hredqs_without_targets_writes_no_empty_qrels(tmp_path):
    """hredqs without --tgt has no target to judge: refused, and no file at all (the topics
    asked for in the same call are not written either)."""
    s = data_path("sessions")
    out, topics = tmp_path / "q.txt", tmp_path / "t.tsv"
    res = run_cli(["convert", "sessions", "hredqs", s / "hredqs-test.ctx", "--rnk",
                   s / "hredqs-test.rnk", "--qrels", out, "--topics", topics])
    line = one_line(res)
    assert "the qrels would be empty" in line and "--tgt FILE" in line
    assert not out.exists() and not topics.exists()


# ------------------------------------------------------------------ candidates
def test_llm4cs_empty_sample_leaves_the_turn_its_other_candidates(tmp_path):
    """LLM4CS' COT-REW file has an empty fifth sample for 47_5: the turn keeps its four
    others (candidate 5 of 47_5 is its first), nothing asks for raw questions, and the counts
    line says what the 35 samples were."""
    out = tmp_path / "cot.tsv"
    res = run_cli(["convert", "rewrites", COT, out, "--candidates", "each"])
    assert res.exit_code == 0, res.stderr
    assert "written as 34 strings, 1 empty string (1 unusable in turns that have usable " \
           "ones: those turns keep their others)" in res.stderr
    assert "1 turn with candidate 5 empty, null or unreadable took its first usable " \
           "candidate" in res.stderr
    c5 = dict(line.split("\t") for line in (tmp_path / "cot.c5.tsv").read_text().splitlines())
    first = records(COT)[4]["predicted_rewrite"]
    assert first[4] == "" and c5["47_5"] == first[0]
    assert len(c5) == 7


@pytest.mark.parametrize("sample, kind", [
    (None, "1 null"),
    ({"choices": [{"message": {"role": "assistant", "content": "What is Boise?"}}]},
     "1 chat-completion object"),
    ({"choices": [{"message": {"role": "assistant", "content": ""}}]},
     "1 chat-completion object"),
])
def test_five_sample_files_read_whatever_their_samples_hold(tmp_path, sample, kind):
    rows = records(COT)
    rows[2]["predicted_rewrite"][1] = sample
    src = write_jsonl(tmp_path / "c.jsonl", rows)
    cands = read_candidates(src)
    assert kind in cands.stats.summary() and "33 strings, 1 empty string" in \
        cands.stats.summary()
    assert [len(s.topics) for s in cands.sets] == [7] * 5
    text = cands.sets[1].topics.as_dict()[rows[2]["sample_id"]]
    assert text == ("What is Boise?" if sample and sample["choices"][0]["message"]["content"]
                    else rows[2]["predicted_rewrite"][0])


def test_missing_decides_only_for_a_turn_without_any_usable_candidate(tmp_path):
    rows = records(COT)
    rows[3]["predicted_rewrite"] = ["", None, " ", "", ""]
    src = write_jsonl(tmp_path / "c.jsonl", rows)
    cands = read_candidates(src, missing="drop")
    assert [len(s.topics) for s in cands.sets] == [6] * 5
    assert all(s.report.dropped == 1 for s in cands.sets)
    with pytest.raises(InputError, match="1 empty or missing rewrites: '47_4'"):
        read_candidates(src, missing="error")
    raw = {r["sample_id"]: f"raw {r['sample_id']}" for r in rows}
    assert read_candidates(src, raw=raw).sets[0].topics.as_dict()["47_4"] == "raw 47_4"


# ------------------------------------------------------------------ cqr
def _two_candidate_file(tmp_path, turns) -> Path:
    auto = read_topics(DEMO / "topics-automatic.tsv").as_dict()
    manual = read_topics(DEMO / "topics-manual.tsv").as_dict()
    return write_jsonl(tmp_path / "two.jsonl", [
        {"qid": q, "predicted_rewrite": [auto[q], manual[q]]} for q in turns])


def test_oracle_on_a_topic_subset(tmp_path, demo_index, demo_turns):
    """The qrels judge 239 turns, the rewrites cover 20: oracle chooses among the 20 (it used
    to fail with an internal KeyError on the qrels-only turns)."""
    src = _two_candidate_file(tmp_path, demo_turns)
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--index", demo_index, "--rewrites", src,
                   "--candidates", "oracle", "--candidates", "each", "--format", "json",
                   "--quiet"])
    assert res.exit_code == 0, res.stderr
    rows = {r["name"]: r for r in json.loads(res.stdout)["rows"]}
    oracle = rows["two.oracle"]
    assert oracle["coverage"]["evaluated"] == 20
    assert sum(oracle["candidates"]["chosen"].values()) == 20
    for key in ("MRR", "NDCG@3", "R@10"):  # the best per turn is at least either candidate
        assert oracle["scores"][key] >= max(rows["two.c1"]["scores"][key],
                                            rows["two.c2"]["scores"][key]) - 1e-12


def test_oracle_without_anything_to_choose_from_is_refused(tmp_path):
    """--candidates with only --topics (it used to be ignored), and oracle over one candidate
    per turn: one line before any index is built."""
    common = ["cqr", "--qrels", DEMO / "qrels.txt", "--collection", DEMO / "collection.jsonl",
              "--index", tmp_path / "idx", "--candidates", "oracle"]
    line = one_line(run_cli(common + ["--topics", DEMO / "topics-raw.tsv"]))
    assert "give --rewrites" in line and "rewrites=" not in line
    with pytest.raises(UsageError, match="give rewrites="):
        cqr(DEMO / "qrels.txt", [DEMO / "topics-raw.tsv"], index=tmp_path / "idx",
            collection=DEMO / "collection.jsonl", candidates=["oracle"])
    one = write_jsonl(tmp_path / "one.jsonl", [{"qid": "106_1", "rewrite": "breast cancer"}])
    assert "oracle has nothing to choose from" in one_line(run_cli(common + ["--rewrites", one]))
    assert not (tmp_path / "idx").exists()


def test_every_preset_runs(tmp_path, demo_index):
    """Each documented preset (the threshold-2 ones included) goes through cqr's whole path on
    four turns."""
    topics = tmp_path / "t.tsv"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in
                              list(read_topics(DEMO / "topics-raw.tsv"))[:4]))
    for name in preset_names():
        report = cqr(DEMO / "qrels.txt", [topics], index=demo_index, preset=name)
        assert len(report.rows) == 1, name


def test_threshold_two_preset_scores_at_level_two(tmp_path, demo_index):
    qrels = tmp_path / "qrels.txt"
    lines = (DEMO / "qrels.txt").read_text().splitlines()
    qrels.write_text("".join(ln.rsplit(" ", 1)[0] + (" 2\n" if i % 2 else " 1\n")
                             for i, ln in enumerate(lines)))
    report = cqr(qrels, [DEMO / "topics-raw.tsv"], index=demo_index, preset="cast2021",
                 runs_dir=tmp_path / "runs")
    run = report.rows[0].run
    want = trecqr.evaluate(qrels, run, ["recip_rank", "ndcg_cut.3", "recall.10"],
                           relevance_level=2).aggregate()
    got = report.rows[0].scores
    assert (got["MRR"], got["NDCG@3"], got["R@10"]) == \
        (want["recip_rank"], want["ndcg_cut_3"], want["recall_10"])
    assert 0 < got["MRR"] < 1
    assert report.measures["RR@3"] == "RR(rel=2)@3"


def test_min_results_above_the_depth_names_the_options(demo_index):
    line = one_line(run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--index", demo_index,
                             "--topics", DEMO / "topics-raw.tsv", "-k", "20",
                             "--min-results", "21"]))
    assert "--min-results 21 is above the depth -k 20" in line and ".run" not in line


@pytest.mark.parametrize("name", ["qrecc-official", "scai-qrecc21"])
def test_protocols_cqr_cannot_apply_say_what_they_score(name, demo_index):
    line = one_line(run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--index", demo_index,
                             "--topics", DEMO / "topics-raw.tsv", "--protocol", name]))
    assert f"trecqr eval --protocol {name}" in line
    if name == "qrecc-official":
        assert "SCAI" not in line and "answers" in line


# ------------------------------------------------------------------ dense: no leftovers
def test_dense_cqr_leaves_no_torch_cache_in_tmpdir(tmp_path):
    """Importing torch's compiler used to leave $TMPDIR/torchinductor_<user>; after dense cqr,
    on success and on failure, TMPDIR is empty (packaged MiniLM, 30 passages)."""
    small = tmp_path / "small.jsonl"
    lines = (DEMO / "collection.jsonl").read_text(encoding="utf-8").splitlines()[:30]
    small.write_text("\n".join(lines) + "\n", encoding="utf-8")
    broken = tmp_path / "dup.jsonl"  # a duplicated passage id: fails after the encoding
    broken.write_text("\n".join(lines[:3] + lines[:1]) + "\n", encoding="utf-8")
    topics = tmp_path / "t.tsv"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in
                              list(read_topics(DEMO / "topics-raw.tsv"))[:3]))
    for collection, code in ((small, 0), (broken, 2)):
        tmp = tmp_path / f"tmp-{code}"
        tmp.mkdir()
        env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT))
        env.pop("TORCHINDUCTOR_CACHE_DIR", None)
        proc = subprocess.run([sys.executable, "-m", "trecqr", "cqr", "--qrels",
                               str(DEMO / "qrels.txt"), "--collection", str(collection),
                               "--backend", "dense", "--topics", str(topics), "--threads", "1",
                               "--quiet"], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == code, proc.stderr
        assert os.listdir(tmp) == [], proc.stderr


def test_search_writes_no_empty_run(tmp_path, demo_index):
    """Topics none of which retrieves anything (or all left out by --min-results): refused,
    no run file, instead of an empty run with exit 0."""
    topics = tmp_path / "t.tsv"
    topics.write_text("1\tzzqqxx\n2\tqqzzyy\n")
    out = tmp_path / "r.run"
    assert "topics retrieved anything from" in one_line(run_cli(["search", demo_index, topics,
                                                              "-o", out]))
    line = one_line(run_cli(["search", demo_index, DEMO / "topics-raw.tsv", "-o", out, "-k",
                             "10", "--min-results", "11"]))
    assert "--min-results 11 leaves out every turn" in line
    assert not out.exists()


def test_irds_queries_all_without_text_write_no_topics(tmp_path, monkeypatch):
    """A query field that is empty in every query of an ir_datasets dataset: refused, no
    topics file (a stand-in dataset: no registered dataset has such a field)."""
    from collections import namedtuple

    from trecqr.datasets import irds

    Query = namedtuple("Query", ["query_id", "text", "note"])

    class Dataset:
        def has_queries(self):
            return True

        def queries_cls(self):
            return Query

        def queries_handler(self):
            return None

        def queries_iter(self):
            return iter([Query("1", "a question", ""), Query("2", "another", " ")])

    monkeypatch.setattr(irds, "guarded_read", lambda dataset_id, handler, what, fn: fn())
    out = tmp_path / "t.tsv"
    with pytest.raises(UsageError, match="all 2 queries have an empty note; no topics written"):
        irds.convert("stand-in", topics_out=out, query_field="note", dataset=Dataset())
    assert not out.exists()
    assert len(irds.convert("stand-in", topics_out=out, dataset=Dataset()).topics) == 2


def test_threshold_two_preset_with_html_and_groups(tmp_path, demo_index):
    """--html and --groups under a threshold-2 preset: the page scores its trec_eval measures
    at level 2 (it used to refuse the preset's RR(rel=2)@3 beside -l 2)."""
    topics = []
    for name in ("raw", "manual"):
        path = tmp_path / f"{name}.tsv"
        path.write_text("".join(f"{q}\t{t}\n" for q, t in
                                list(read_topics(DEMO / f"topics-{name}.tsv"))[:6]))
        topics += ["--topics", path]
    groups = tmp_path / "g.json"
    groups.write_text('{"first": ["106_1", "107_1"]}')
    page = tmp_path / "p.html"
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--index", demo_index, *topics,
                   "--preset", "cast2021", "--html", page, "--groups", groups, "--quiet"])
    assert res.exit_code == 0, res.stderr
    assert page.stat().st_size > 0
