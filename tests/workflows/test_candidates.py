"""Several candidate rewrites per turn: LLM4CS' 5 sampled rewrites of CAsT
2019 and InfoCQR's rewrite-then-edit pair of QReCC, read as candidates 1..n, counted, written one
topics file each, and searched, fused and oracle-chosen by ``trecqr cqr --candidates`` on the
QReCC demo collection (BM25, QReCC's preset)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import trecqr
from conftest import data_path, run_cli
from trecqr.datasets.rewrites.candidates import candidate_paths, parse_policy, read_candidates
from trecqr.datasets.topics import read_topics
from trecqr.errors import UsageError
from trecqr.workflows.cqr import COLUMNS

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
QRELS = DEMO / "qrels.txt"
LLM4CS = ("cast2019", "llm4cs-rew-rewrites.jsonl")
EDITOR = ("qrecc", "dev-sampled2k_chatgpt_ICL_editor.jsonl")
FIELDS = ["GPT_rewrite", "Editor_rewrite"]
POLICIES = ["first", "each", "fuse:rrf", "oracle"]
EXPECTED = {  # trec_eval values of the BM25 runs (k1 0.82 b 0.68, depth 100), 927 turns with gold
    "editor.first": (0.7405609492988137, 0.7542190724213249, 0.7579450229107998,
                     0.8768447920626743, 0.9431859043509528),
    "editor.c1": (0.7405609492988137, 0.7542190724213249, 0.7579450229107998,
                  0.8768447920626743, 0.9431859043509528),
    "editor.c2": (0.7303128371089536, 0.7450051820088998, 0.7482732024186995,
                  0.8652670594418167, 0.9302409205321825),
    "editor.fuse-rrf": (0.7304926285508813, 0.7495105104047256, 0.7508936122015688,
                        0.8792757396053852, 0.9475008989572096),
    "editor.oracle": (0.768428622797555, 0.7817825766319084, 0.7860294052234459,
                      0.8957228934650475, 0.9518158935634663),
}


def test_llm4cs_counts_and_each_writes_five_topic_files(tmp_path):
    out = tmp_path / "llm4cs.tsv"
    res = run_cli(["convert", "rewrites", data_path(*LLM4CS), out, "--candidates", "each"])
    assert res.exit_code == 0, res.stderr
    assert ("479 turns x 5 candidates (predicted_rewrite); 2395 candidates, 885 distinct within "
            "their turn (1.85 per turn); 247 turns with all candidates identical, 232 with "
            "several distinct (distinct per turn: 247 with 1, 119 with 2, 65 with 3, 35 with 4, "
            "13 with 5)") in res.stderr
    paths = [tmp_path / f"llm4cs.c{i}.tsv" for i in range(1, 6)]
    assert sorted(tmp_path.iterdir()) == paths  # OUT itself is not written
    records = [json.loads(line) for line in open(data_path(*LLM4CS), encoding="utf-8")]
    for i, path in enumerate(paths):
        topics = read_topics(path)
        assert len(topics) == 479
        assert topics.as_dict() == {r["sample_id"]: r["predicted_rewrite"][i].strip()
                                    for r in records}
    assert res.stderr.count("479 records, 479 rewrites -> ") == 5


def test_llm4cs_first_says_it_took_candidate_one(tmp_path):
    out = tmp_path / "first.tsv"
    res = run_cli(["convert", "rewrites", data_path(*LLM4CS), out,
                   "--rewrite-field", "predicted_rewrite"])
    assert res.exit_code == 0, res.stderr
    assert "--candidates first: candidate 1 of 5 taken for every turn" in res.stderr
    assert read_topics(out).as_dict()["31_7"] == "What is the first sign of throat cancer?"
    assert sorted(tmp_path.iterdir()) == [out]


def test_editor_file_two_fields_are_two_candidates():
    cands = read_candidates(data_path(*EDITOR), rewrite_field=FIELDS, missing="drop")
    s = cands.stats
    assert (s.turns, s.n, dict(s.per_turn), dict(s.distinct)) == (2000, 2, {2: 2000},
                                                                  {1: 849, 2: 1151})
    first, edited = (c.topics.as_dict() for c in cands.sets)
    assert sum(first[q] != edited[q] for q in first) == 1151
    # turn 1490_4: the editor's chat-completion object is read as its message content
    assert edited["1490_4"].endswith("specifically in 1954?")
    assert first["1490_4"].startswith("What notable events occurred in Stan Musial's career")


def test_candidate_paths_and_policies():
    assert candidate_paths("out/rw.tsv", 2) == ["out/rw.c1.tsv", "out/rw.c2.tsv"]
    assert candidate_paths("out.d/rw", 1) == ["out.d/rw.c1"]
    assert parse_policy("fuse").method == "rrf"
    assert parse_policy("fuse:CombMNZ").label == "fuse-combmnz"
    for bad in ("fuse:nope", "fuse:", "fuse:wsum", "first:1", "best"):
        with pytest.raises(UsageError):
            parse_policy(bad)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """The demo index as docs/cqr.md builds it (trecqr index --preset qrecc-test)."""
    out = tmp_path_factory.mktemp("cand") / "qrecc-demo.index"
    res = run_cli(["index", DEMO / "collection.jsonl", "-o", out, "--preset", "qrecc-test"])
    assert res.exit_code == 0, res.stderr
    return out


def cqr_args(index, *extra):
    return ["cqr", "--qrels", QRELS, "--index", index, "--preset", "qrecc-test",
            "--raw", DEMO / "topics-raw.tsv", "--rewrites", data_path(*EDITOR), "--name", "editor",
            "--rewrite-field", FIELDS[0], "--rewrite-field", FIELDS[1], *extra]


@pytest.fixture(scope="module")
def report(index, tmp_path_factory):
    runs = tmp_path_factory.mktemp("cand-runs")
    args = cqr_args(index, "--format", "json", "--runs-dir", runs)
    for p in POLICIES:
        args += ["--candidates", p]
    res = run_cli(args)
    assert res.exit_code == 0, res.stderr
    assert "editor: " in res.stderr and "2000 turns x 2 candidates" in res.stderr
    return json.loads(res.stdout)


def test_cqr_candidates_table_numbers(report):
    rows = {r["name"]: r for r in report["rows"]}
    assert list(rows) == list(EXPECTED)
    for name, want in EXPECTED.items():
        assert tuple(rows[name]["scores"][k] for k in COLUMNS) == pytest.approx(want, abs=1e-12)
        assert rows[name]["coverage"]["evaluated"] == 927
        assert rows[name]["candidates"]["policy"] == name.split(".")[1].replace("c1", "each") \
            .replace("c2", "each")
    assert rows["editor.oracle"]["candidates"]["upper_bound"] is True
    assert rows["editor.oracle"]["candidates"]["chosen"] == {"c1": 867, "c2": 60}
    assert not rows["editor.fuse-rrf"]["candidates"]["upper_bound"]
    assert any("ORACLE, an upper bound chosen with the gold labels" in n
               for n in rows["editor.oracle"]["notes"])


def test_oracle_is_at_least_each_candidate_on_every_measure(report):
    rows = {r["name"]: r["scores"] for r in report["rows"]}
    for k in COLUMNS:
        assert rows["editor.oracle"][k] >= max(rows["editor.c1"][k], rows["editor.c2"][k])
    assert rows["editor.oracle"]["RR@3"] > max(rows["editor.c1"]["RR@3"],
                                               rows["editor.c2"]["RR@3"])


def test_oracle_run_takes_each_turns_best_candidate(report):
    """Per turn, the oracle's RR@3 is the better candidate's, and its ranking is that run's."""
    rows = {r["name"]: r for r in report["rows"]}
    per = {name: trecqr.evaluate(QRELS, rows[name]["run"], ["RR@3", "recip_rank"]).per_query()
           for name in ("editor.c1", "editor.c2", "editor.oracle")}
    runs = {name: trecqr.load_run(rows[name]["run"]) for name in per}
    for qid, got in per["editor.oracle"].items():
        a, b = per["editor.c1"][qid], per["editor.c2"][qid]
        pick = "editor.c2" if (b["RR@3"], b["recip_rank"]) > (a["RR@3"], a["recip_rank"]) \
            else "editor.c1"
        assert got == per[pick][qid]
    qid = "1490_4"  # the editor's rewrite names the year: better RR@3 than the rewriter's
    assert per["editor.c2"][qid]["RR@3"] > per["editor.c1"][qid]["RR@3"]

    def ranking(run):
        keep = [i for i, q in enumerate(run.qid.to_pylist()) if q == qid]
        return [run.docno[i].as_py() for i in keep]
    assert ranking(runs["editor.oracle"]) == ranking(runs["editor.c2"])


def test_fuse_row_is_trecqr_fuse_of_the_candidate_runs(report):
    rows = {r["name"]: r for r in report["rows"]}
    fused = trecqr.fuse([rows["editor.c1"]["run"], rows["editor.c2"]["run"]], method="rrf")
    want = trecqr.evaluate(QRELS, fused, ["recip_rank", "recall.100"]).aggregate()
    assert rows["editor.fuse-rrf"]["scores"]["MRR"] == pytest.approx(want["recip_rank"], abs=1e-12)
    assert rows["editor.fuse-rrf"]["scores"]["R@100"] == pytest.approx(want["recall_100"],
                                                                       abs=1e-12)


def test_python_cqr_candidates(index):
    r = trecqr.cqr(QRELS, rewrites=[data_path(*EDITOR)], raw=DEMO / "topics-raw.tsv",
                   index=index, preset="qrecc-test", names=["editor"], rewrite_field=FIELDS,
                   candidates="oracle")
    assert [row.name for row in r.rows] == ["editor.oracle"]
    assert r.rows[0].scores["RR@3"] == pytest.approx(EXPECTED["editor.oracle"][0], abs=1e-12)


def test_first_alone_keeps_the_row_name(index):
    res = run_cli(cqr_args(index, "--format", "json"))
    assert res.exit_code == 0, res.stderr
    rows = json.loads(res.stdout)["rows"]
    assert [r["name"] for r in rows] == ["editor"]
    assert rows[0]["scores"]["RR@3"] == pytest.approx(EXPECTED["editor.first"][0], abs=1e-12)
    assert "editor: --candidates first: candidate 1 of 2 taken for every turn" in res.stderr


@pytest.mark.parametrize("spec, message", [
    ("fuse:nope", "unknown fusion method 'nope'"),
    ("mean", "--candidates mean averages the candidates' dense embeddings (LLM4CS): it needs a "
             "dense index, not bm25s"),
    ("sc", "--candidates sc averages the candidates' dense embeddings (LLM4CS): it needs a "
           "dense index, not bm25s"),
    ("oracle:2", "candidates policy oracle takes no argument"),
])
def test_bad_candidates_spec_is_one_line_before_any_work(index, tmp_path, spec, message):
    runs = tmp_path / "runs"
    res = run_cli(cqr_args(index, "--candidates", spec, "--runs-dir", runs))
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and message in res.stderr, res.stderr
    assert res.stdout == "" and not runs.exists()


@pytest.mark.parametrize("spec", ["oracle", "fuse", "mean", "nope"])
def test_convert_rewrites_refuses_what_needs_retrieval(tmp_path, spec):
    res = run_cli(["convert", "rewrites", data_path(*LLM4CS), tmp_path / "x.tsv",
                   "--candidates", spec])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert list(tmp_path.iterdir()) == []
