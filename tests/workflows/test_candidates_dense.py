"""``trecqr cqr --candidates mean|sc`` on a dense index of the QReCC demo (packaged MiniLM,
offline): LLM4CS' aggregations reached through the cqr path (the vectors themselves are checked
by hand in tests/retrieval/test_candidate_vectors.py). Three real candidates per turn, so that SC
has a choice (two unit-length candidates are always equally near their mean): InfoCQR's rewriter
(``GPT_rewrite``), its editor (``Editor_rewrite``) and the raw ``Question``, for the demo's
first 100 turns with gold."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import trecqr
from conftest import data_path, run_cli
from trecqr.datasets.rewrites.candidates import read_candidates
from trecqr.datasets.topics import read_topics
from trecqr.retrieval import dense
from trecqr.workflows.cqr import COLUMNS
from trecqr.workflows.cqr_candidates import dense_lists

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "qrecc-demo"
QRELS = DEMO / "qrels.txt"
FIELDS = ["GPT_rewrite", "Editor_rewrite", "Question"]
N_TURNS = 100
EXPECTED = {  # RR@3, MRR, NDCG@3, R@10, R@100 (MiniLM, cosine, depth 100), 4 places
    "ed.c1": (0.8717, 0.8826, 0.8874, 0.98, 1.0),
    "ed.c2": (0.8367, 0.8466, 0.8511, 0.93, 0.95),
    "ed.c3": (0.3483, 0.3790, 0.3687, 0.5467, 0.81),
    "ed.mean": (0.8983, 0.9049, 0.9124, 0.99, 1.0),
    "ed.sc": (0.8817, 0.8933, 0.8922, 0.97, 1.0),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The editor file's records of the first N_TURNS demo turns, with a response each (the
    conversation's previous answer, as a generated response would be: no gold passage text),
    and the qrels of those turns."""
    folder = tmp_path_factory.mktemp("cand-dense")
    keep = read_topics(DEMO / "topics-raw.tsv").qids[:N_TURNS]
    recs = {}
    for line in open(data_path("qrecc", "dev-sampled2k_chatgpt_ICL_editor.jsonl"),
                     encoding="utf-8"):
        r = json.loads(line)
        qid = f"{r['Conversation_no']}_{r['Turn_no']}"
        if qid in keep:
            context = r["NewContext"]
            r["predicted_response"] = [context[-1] if context else ""] * len(FIELDS)
            recs[qid] = r
    rewrites = folder / "editor-100.jsonl"
    rewrites.write_text("".join(json.dumps(recs[q]) + "\n" for q in keep), encoding="utf-8")
    qrels = folder / "qrels-100.txt"
    qrels.write_text("".join(line for line in open(QRELS, encoding="utf-8")
                             if line.split()[0] in set(keep)), encoding="utf-8")
    return rewrites, qrels


@pytest.fixture(scope="module")
def index(qrecc_demo_dense_index):
    return qrecc_demo_dense_index


ENCODED: list = []  # the number of texts of each encoder call while `report` is made


@pytest.fixture(scope="module")
def report(files, index, tmp_path_factory):
    rewrites, qrels = files
    real = dense._encode

    def counting(model, texts, *a, **kw):
        ENCODED.append(len(texts))
        return real(model, texts, *a, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dense, "_encode", counting)
        return trecqr.cqr(qrels, rewrites=[rewrites], index=index, names=["ed"],
                          rewrite_field=FIELDS, candidates=["each", "mean", "sc"],
                          runs_dir=tmp_path_factory.mktemp("cand-dense-runs"))


def test_mean_and_sc_encode_the_candidates_once(report):
    """each: a search per candidate (100 queries each); mean and sc: the 300 candidates
    encoded once, for both."""
    assert ENCODED == [100, 100, 100, 3 * N_TURNS]


def test_mean_and_sc_rows(report):
    rows = {r.name: r for r in report.rows}
    assert list(rows) == list(EXPECTED)
    for name, want in EXPECTED.items():
        assert tuple(rows[name].scores[k] for k in COLUMNS) == pytest.approx(want, abs=5e-5)
    assert rows["ed.sc"].candidates["chosen"] == {"c1": 81, "c2": 18, "c3": 1}
    for r in rows.values():
        assert r.coverage["evaluated"] == N_TURNS
    sc = rows["ed.sc"].candidates
    assert sc["policy"] == "sc" and not sc["upper_bound"]
    assert sum(sc["chosen"].values()) == N_TURNS
    assert rows["ed.mean"].candidates["chosen"] is None
    assert any("LLM4CS Mean" in n for n in rows["ed.mean"].notes)


def test_sc_searches_each_turns_chosen_candidate(report):
    """The SC run of a turn is the run of the candidate it chose (the same encoder and index:
    the same top 10), and that choice is the candidate nearest the mean."""
    rows = {r.name: r for r in report.rows}
    runs = {n: trecqr.load_run(r.run) for n, r in rows.items()}

    def top(run, qid):
        return [d for q, d in zip(run.qid.to_pylist(), run.docno.to_pylist()) if q == qid][:10]
    cands = read_candidates(rows["ed.c1"].source, rewrite_field=FIELDS)
    qids, texts, _, _ = dense_lists(cands.sets)
    hand = dense_choice(qids[:20], texts[:20], report.index)
    counts = {f"c{i + 1}": 0 for i in range(3)}
    for qid, pick in hand.items():
        assert top(runs["ed.sc"], qid) == top(runs[f"ed.c{pick + 1}"], qid)
        counts[f"c{pick + 1}"] += 1
    assert len(set(hand.values())) > 1, counts


def dense_choice(qids, texts, index) -> dict:
    """{qid: 0-based candidate nearest the mean of the turn's unit candidate vectors}."""
    handle = dense.load_index(index)
    out = {}
    for qid, cands in zip(qids, texts):
        emb = dense.encode_texts(handle, cands, 32, queries=True).astype(np.float64)
        out[qid] = int(np.argmax((emb @ emb.T).sum(axis=1)))
    return out


def test_with_response_changes_mean(files, index, report):
    rewrites, qrels = files
    r = trecqr.cqr(qrels, rewrites=[rewrites], index=index, names=["ed"],
                   rewrite_field=FIELDS, candidates=["mean"], with_response=True)
    plain = {row.name: row for row in report.rows}["ed.mean"].scores
    assert r.rows[0].scores != plain


def test_responses_are_read_beside_their_candidates(files):
    rewrites, _ = files
    cands = read_candidates(rewrites, rewrite_field=FIELDS, responses=True)
    qids, texts, replies, present = dense_lists(cands.sets, cands.responses)
    assert len(qids) == N_TURNS and all(len(t) == 3 for t in texts)
    assert [len(r) for r in replies] == [3] * N_TURNS and present[0] == [0, 1, 2]


def test_mean_on_bm25_is_refused_before_any_work(files, tmp_path):
    rewrites, qrels = files
    res = run_cli(["cqr", "--qrels", qrels, "--collection", DEMO / "collection.jsonl",
                   "--rewrites", rewrites, "--candidates", "mean", "--runs-dir", tmp_path / "r"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert "needs a dense index, not bm25s" in res.stderr
    assert not (tmp_path / "r").exists()


def test_response_field_names_the_responses(files, tmp_path):
    """--response-field (response_field=) reads the responses from another field: the same
    responses as the default field's, moved; without --with-response it is refused."""
    rewrites, qrels = files
    moved = tmp_path / "answer.jsonl"
    with open(rewrites, encoding="utf-8") as src:
        recs = [json.loads(line) for line in src]
    for r in recs:
        r["answer"] = r.pop("predicted_response")
    moved.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    want = read_candidates(rewrites, rewrite_field=FIELDS, responses=True).responses
    got = read_candidates(moved, rewrite_field=FIELDS, responses=True,
                          response_field="answer").responses
    assert [s.topics.as_dict() for s in got] == [s.topics.as_dict() for s in want]
    assert any(t for t in want[0].topics.as_dict().values())
    res = run_cli(["cqr", "--qrels", qrels, "--collection", DEMO / "collection.jsonl",
                   "--rewrites", moved, "--response-field", "answer", "--runs-dir",
                   tmp_path / "r"])
    assert res.exit_code == 2 and res.stderr == \
        "trecqr: --response-field goes with --with-response\n"
    assert not (tmp_path / "r").exists()
