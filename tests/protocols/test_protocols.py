"""Official evaluation protocols as presets: trecqr eval --protocol NAME.

Data: ../shared/data/cast2021/, cast2022/, ikat/ (see their README); fixtures/cast2021/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import data_path, run_cli

import trecqr
from trecqr.datasets.cast.topics import provenance_run, read_cast_topics
from trecqr.datasets.ikat.topics import read_ikat_topics, topics_ptkb_run
from trecqr.protocols.presets import protocol, protocol_evaluation, protocol_names
from trecqr.errors import UsageError

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "cast2021"


def test_every_protocol_names_its_settings_and_source():
    assert protocol_names() == ["scai-qrecc21", "cast2021-nist", "cast2022-nist", "ikat2023",
                                "ikat2024", "ikat2023-ptkb", "convsearch-r1-qrecc",
                                "convsearch-r1-topiocqa", "cast2019", "llm4cs-cast2019",
                                "llm4cs-cast2020", "llm4cs-cast2021", "chatty-goose-cast2019",
                                "cqe-cast2019", "qrecc-official", "topiocqa-official"]
    for name in protocol_names():
        p = protocol(name)
        assert p.source and p.turns and p.dedup and p.measures
    p = protocol("cast2022-nist")
    assert p.flags() == "-c -M1000 -l2 -m ndcg_cut.3,5,500 -m map_cut.500"
    assert protocol("cast2021-nist").dedup.startswith("passage run to documents")
    with pytest.raises(UsageError, match="unknown protocol 'x'"):
        protocol("x")


@pytest.fixture(scope="module")
def cast22_run(tmp_path_factory):
    import warnings

    path = tmp_path_factory.mktemp("c22") / "prov.run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topics = read_cast_topics(data_path("cast2022", "2022_evaluation_topics_tree_v1.0.json"))
    path.write_text("".join(provenance_run(topics)))
    return path


def test_cast2022_nist_is_trec_eval_c_M1000_l2(cast22_run):
    qrels = data_path("cast2022", "cast2022.qrel")
    res = run_cli(["eval", "--protocol", "cast2022-nist", qrels, cast22_run])
    assert res.exit_code == 0, res.output
    assert res.stdout == ("ndcg_cut_3            \tall\t0.2614\n"
                          "ndcg_cut_5            \tall\t0.1935\n"
                          "ndcg_cut_500          \tall\t0.0642\n"
                          "map_cut_500           \tall\t0.0275\n")
    assert res.stderr.rstrip().endswith(
        "; protocol cast2022-nist (-c -M1000 -l2 -m ndcg_cut.3,5,500 -m map_cut.500)")
    plain = run_cli(["eval", "-c", "-M1000", "-l2", "-m", "ndcg_cut.3,5,500", "-m",
                     "map_cut.500", qrels, cast22_run])
    assert plain.stdout == res.stdout
    # without -c (the default) and at -l 1 the numbers move: the protocol matters
    loose = trecqr.evaluate(qrels, cast22_run, ["map_cut.500"]).aggregate()["map_cut_500"]
    assert round(loose, 4) != 0.0275
    res = run_cli(["eval", "--protocol", "cast2022-nist", "-c", "-m", "map", qrels, cast22_run])
    assert res.exit_code == 2
    assert "--protocol cast2022-nist fixes -m, -c: leave them out" in res.stderr
    res = run_cli(["eval", "--eval-missing-truth", qrels, cast22_run])
    assert res.exit_code == 2 and "goes with --protocol scai-qrecc21" in res.stderr


def test_cast2021_nist_collapses_passages_to_documents_first(tmp_path):
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    run = data_path("cast2021", "org_manual_bm25.trec")
    ev, note = protocol_evaluation("cast2021-nist", qrels, run)
    got = {c.name: round(float(c.summary), 4) for c in ev.columns}
    assert got == {"ndcg_cut_3": 0.4069, "ndcg_cut_5": 0.3981, "ndcg_cut_500": 0.4001,
                   "map_cut_500": 0.2130}
    # the same as collapsing with trecqr collapse, then trec_eval -c -M1000 -l2
    res = run_cli(["collapse", run, "-o", tmp_path / "docs.run"])
    assert res.exit_code == 0, res.output
    ref = trecqr.evaluate(qrels, tmp_path / "docs.run", ["ndcg_cut.3,5,500", "map_cut.500"],
                          relevance_level=2, max_docs=1000, complete=True).aggregate()
    assert {k: round(v, 4) for k, v in ref.items()} == got
    # scoring the passage run directly against document qrels matches nothing
    res = run_cli(["eval", "--protocol", "cast2022-nist", qrels, run])
    assert res.exit_code == 0
    assert res.stdout.splitlines()[0] == "ndcg_cut_3            \tall\t0.0000"


def test_ikat2023_ptkb_on_both_qrels(tmp_path):
    topics = read_ikat_topics(data_path("ikat", "2023_test_topics.json"))
    run = tmp_path / "ptkb.run"
    run.write_text("".join(topics_ptkb_run(topics)))
    out = {}
    for who in ("org", "nist"):
        res = run_cli(["eval", "--protocol", "ikat2023-ptkb", "--format", "json",
                       data_path("ikat", f"2023_ptkb_qrels_{who}.txt"), run])
        assert res.exit_code == 0, res.output
        assert "protocol ikat2023-ptkb (-l1 -m P.3 -m recall.3" in res.stderr
        out[who] = {k: round(v, 4) for k, v in json.loads(res.stdout)["summary"].items()}
    assert out["org"] == {"P_3": 0.5238, "recall_3": 0.9875, "ndcg_cut_3": 1.0,
                          "recip_rank": 1.0, "map": 1.0}
    assert out["nist"] == {"P_3": 0.3248, "recall_3": 0.5151, "ndcg_cut_3": 0.5921,
                           "recip_rank": 0.7821, "map": 0.4869}


def test_convsearch_r1_setting_is_the_papers_pytrec_eval_call():
    qrels, run = FIX / "qrels.txt", FIX / "manual_bm25.run"
    res = run_cli(["eval", "--protocol", "convsearch-r1-qrecc", qrels, run])
    assert res.exit_code == 0, res.output
    plain = run_cli(["eval", "-M100", "-m", "recip_rank", "-m", "ndcg_cut.3", "-m",
                     "recall.10,100", qrels, run])
    assert res.stdout == plain.stdout
    assert "protocol convsearch-r1-qrecc (-M100 -l1" in res.stderr


def test_cqr_protocol_scores_every_row_again(tmp_path):
    demo = FIX.parent / "cast2021-demo"
    res = run_cli(["cqr", "--qrels", demo / "qrels.txt", "--collection",
                   demo / "collection.jsonl", "--topics", demo / "topics-raw.tsv", "--topics",
                   demo / "topics-manual.tsv", "--protocol", "convsearch-r1-qrecc", "--quiet",
                   "--runs-dir", tmp_path / "runs"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    at = lines.index("protocol convsearch-r1-qrecc (-M100 -l1 -m recip_rank -m ndcg_cut.3 -m "
                     "recall.10,100; de-duplication: none)")
    assert lines[at + 1].split() == ["run", "recip_rank", "recall_10", "recall_100",
                                     "ndcg_cut_3", "evaluated"]
    # the protocol's numbers are the cqr table's own MRR, R@10, R@100, NDCG@3
    table = {ln.split()[0]: ln.split() for ln in lines[2:4]}
    for ln in lines[at + 2:at + 4]:
        name, rr, r10, r100, ndcg, n = ln.split()
        assert [rr, ndcg, r10, r100, n] == table[name][2:7]
    res = run_cli(["cqr", "--qrels", demo / "qrels.txt", "--collection",
                   demo / "collection.jsonl", "--topics", demo / "topics-raw.tsv",
                   "--protocol", "scai-qrecc21"])
    assert res.exit_code == 2 and "scores the SCAI-QReCC-21 evaluator's JSON files" in res.stderr


def test_cqr_dataset_cast_reads_2022_trees():
    from trecqr.datasets.dataset_topics import dataset_topics

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = data_path("cast2022", "2022_evaluation_topics_tree_v1.0.json")
        for field in ("raw", "manual", "context"):
            t = dataset_topics("cast", path, field)
            assert len(t) == 205 and t.qids[1] == "132_1-3"
        assert dataset_topics("cast", path, "context")["132_1-3"].count(" [SEP] ") == 2


@pytest.mark.parametrize("name", ["ikat2023", "ikat2024"])
def test_ikat_protocols_are_their_trec_eval_options(tmp_path, name):
    """No iKAT passage qrels are public: a converted official run (the 2024 sample) against
    hand-made graded qrels shows each protocol is trec_eval with its fixed options."""
    run = tmp_path / "sample.run"
    res = run_cli(["convert", "ikat", "--run", data_path("ikat", "2024_sample_run.json"),
                   "--run-out", run])
    assert res.exit_code == 0, res.output
    lines = run.read_text().splitlines()
    qrels = tmp_path / "qrels.txt"
    # grades 0-4 on the first five passages of two turns, one judged turn the run lacks
    qrels.write_text("".join(f"{ln.split()[0]} 0 {ln.split()[2]} {g}\n"
                             for ln, g in zip(lines[:5] + lines[10:15], [0, 1, 2, 3, 4] * 2))
                     + "99_1 0 clueweb22-en0000-00-00000:0 3\n")
    p = protocol(name)
    res = run_cli(["eval", "--protocol", name, qrels, run])
    assert res.exit_code == 0, res.output
    assert f"protocol {name} ({p.flags()})" in res.stderr
    args = ["eval", "-c", "-M1000", "-l2"] + [x for m in p.measures for x in ("-m", m)]
    assert run_cli(args + [qrels, run]).stdout == res.stdout
    # -c: the judged turn missing from the run counts 0 in every average
    got = dict(ln.split()[0::2] for ln in res.stdout.splitlines())
    assert float(got["recip_rank"]) == pytest.approx((1 / 3 + 1 / 3) / 3, abs=1e-4)
