"""trecqr's fusion against ranx 0.3.21's ``fuse`` on the five CAsT 2021 organiser passage runs:
every algorithm under every normalisation (and none) gives, per topic, the same documents in
the same order, with scores equal to 1e-9; the trained ones are trained on one half of the
topics and applied to the other.

Where ranx's order is arbitrary, ranx is given trecqr's (the rules found in ranx's source):

- ranx sorts a run with ``np.argsort(-scores)``, a quicksort (not stable, compiled by numba or
  not): documents tied within a run (the BERT runs have 299 and 268 such pairs, the BM25 run
  67) come out in an order set by the partitioning, and rank-based methods read that order.
  trecqr ranks by trec_eval's order (score descending, docno descending); ranx gets its runs as
  typed dicts already in that order (``sorted`` set, so not sorted again).
- The candidates of a topic (BordaFuse, Condorcet, the borda normalisation) are a Python set
  in ranx, in an order that changes with PYTHONHASHSEED; it decides where the documents a run
  lacks are listed after borda normalisation and where Condorcet's sort starts. trecqr uses
  first appearance over the runs in turn; ranx's ``get_candidates`` is patched to the same.
- min-max-inverted sorts the normalised run again (``Run.sort``, the same quicksort): ranx's
  normalisation module is given a Run whose ``sort`` puts ties by docno descending, as trecqr
  ranks the inverted run.
- Training sorts a normalised run again before reading hit lists (``Run.to_typed_list``), and
  the borda normalisation's added documents all tie: ranx's normalised training runs are
  given in score order with ties by docno descending, as trecqr reads them.
- The fused run is sorted by ranx with the same quicksort, so tied fused scores are in an
  arbitrary order: lists are compared group by group of scores within 1e-9 of each other.

The organisers' judgments are of documents, the runs of passages (``DOC-N``): a passage is
judged as its document for training. The methods are compared on cuts of the runs (the first
20 topics, 10 for Condorcet, a Python sort; 40 trained on and 40 fused for the trained
methods) that still hold within-run ties in the three runs that have them
(test_cut_topics_keep_the_tied_documents), the case the order rules above are about. ranx's
side of those comparisons runs once, in a child process without numba's JIT
(ranx_fusion_oracle.py says why); the command line's test compares numba-compiled ranx on all
239 topics in this process.
"""


from __future__ import annotations

import collections
import inspect
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import data_path, run_cli

ranx = pytest.importorskip("ranx")

from ranx_fusion_oracle import (N_CONDORCET, N_TOPICS, NAMES, NORMS, TRAINED,  # noqa: E402
                                UNTRAINED, W, first_topics, halves, ranx_run, topic_count,
                                trained_params)
from trecqr.formats.objects import ranx_table  # noqa: E402
from trecqr.formats.qrels import qrels_from_dict  # noqa: E402
from trecqr.formats.run import Run, read_run  # noqa: E402
from trecqr.fusion import fuse  # noqa: E402
from trecqr.fusion.methods import METHODS, method as find_method  # noqa: E402
from trecqr.fusion.normalization import NORMS as TRECQR_NORMS, canonical  # noqa: E402

TOL = 1e-9
ORACLE = Path(__file__).with_name("ranx_fusion_oracle.py")
TRAINING_QRELS = "qrels-docs.2021.qrel"  # the organisers' document judgments


@pytest.fixture(scope="module")
def cast():
    return [read_run(data_path("cast2021", f"{n}.trec")) for n in NAMES]


@pytest.fixture(scope="module")
def ranx_fused(tmp_path_factory):
    """ranx's fused run of every (method, norm) the tests compare, computed once by
    ranx_fusion_oracle.py in a child process with numba's JIT off."""
    out = tmp_path_factory.mktemp("ranx-fused") / "fused.pickle"
    child = subprocess.run(
        [sys.executable, str(ORACLE), str(out), str(data_path("cast2021", TRAINING_QRELS)),
         *[str(data_path("cast2021", f"{n}.trec")) for n in NAMES]],
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, capture_output=True, text=True)
    assert child.returncode == 0, child.stderr[-4000:]
    return pickle.loads(out.read_bytes())


def _ranx_names(switch) -> list:
    """The names a ranx switch function accepts: the string literals it compares with."""
    return re.findall(r'"([a-z_-]+)"', inspect.getsource(switch))


def test_every_ranx_name_is_accepted():
    """Every normalisation and method name ranx's ``fuse`` accepts is accepted by trecqr (as
    itself or an alias), each normalisation is compared with ranx below, and no method or
    normalisation of ranx is missing from trecqr's."""
    from ranx.fusion import fusion_switch
    from ranx.normalization import norm_switch

    norms = set(_ranx_names(norm_switch))
    assert len(norms) == 9  # min-max and min-max-inverted have two spellings each
    assert {canonical(n) for n in norms} == set(TRECQR_NORMS) == set(NORMS) - {None}
    assert {canonical(n) for n in ("min_max", "min-max")} == {"min-max"}
    assert {canonical(n) for n in ("min_max_inverted", "min-max-inverted")} == {
        "min-max-inverted"}
    methods = set(_ranx_names(fusion_switch))
    assert len(methods) == 25 == len(METHODS)
    assert {find_method(n).ranx for n in methods} == methods
    assert {find_method(n).name for n in methods} == set(METHODS)
    assert methods == set(UNTRAINED) | set(TRAINED)


def _lists(run: Run) -> dict:
    out: dict = {}
    for q, d, s in zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()):
        out.setdefault(q, []).append((d, s))
    return out


def ranx_lists(run) -> dict:
    """A ranx Run as {qid: [(docno, score), ...]} in its dicts' order, read by trecqr's compiled
    reader of ranx objects (its ``to_dict`` makes a numba call per document); that reader is
    checked on its own against the TREC files' values (tests/api/test_oracle_matrix.py)."""
    flat = ranx_table(run.run, "score")
    out: dict = {q: [] for q in run.run.keys()}
    for q, d, s in zip(flat["query_id"].to_pylist(), flat["doc_id"].to_pylist(),
                       flat["score"].to_pylist()):
        out[q].append((d, s))
    return out


def assert_same(theirs, mine: Run):
    """Same documents per topic, scores within TOL, same order up to groups of tied scores.
    theirs: a ranx Run, or its {qid: [(docno, score), ...]} in ranx's order."""
    expected = theirs if isinstance(theirs, dict) else ranx_lists(theirs)
    assert all(expected.values())  # no topic of ranx's left empty
    got = _lists(mine)
    assert set(got) == set(expected)
    for qid, ranked in expected.items():
        docs = dict(ranked)
        ours = got[qid]
        assert len(ours) == len(ranked) == len(docs), qid
        i = 0
        while i < len(ranked):
            j = i
            while j + 1 < len(ranked) and abs(ranked[j + 1][1] - ranked[i][1]) <= TOL:
                j += 1
            assert {d for d, _ in ranked[i:j + 1]} == {d for d, _ in ours[i:j + 1]}, (qid, i)
            for d, s in ours[i:j + 1]:
                assert abs(docs[d] - s) <= TOL, (qid, d)
            i = j + 1


def test_cut_topics_keep_the_tied_documents(cast):
    """The topics the untrained methods fuse still hold documents tied within a run (BERT
    reranked runs and BM25), so the tie rules ranx is given are exercised, Condorcet's too."""
    for n in (N_TOPICS, N_CONDORCET):
        tied = {}
        for name, run in zip(NAMES, first_topics(cast, n)):
            seen = collections.Counter(zip(run.qid.to_pylist(), run.score.tolist()))
            tied[name] = sum(c * (c - 1) // 2 for c in seen.values())
        assert tied["org_convdr_bert"] >= 30 and tied["org_manual_ance_bert"] >= 30, (n, tied)
        assert tied["org_manual_bm25"] >= 1, (n, tied)


@pytest.fixture(scope="module")
def cuts(cast):
    """The runs cut to the first n topics, made once for every untrained method."""
    made: dict = {}

    def cut(n):
        if n not in made:
            made[n] = first_topics(cast, n)
        return made[n]
    return cut


@pytest.mark.parametrize("method", list(UNTRAINED))
def test_untrained_methods_match_ranx(cuts, ranx_fused, method):
    mine = cuts(topic_count(method))
    for norm in NORMS:
        assert_same(ranx_fused[method, norm],
                    fuse(mine, method=method, norm=norm, params=UNTRAINED[method]))


@pytest.fixture(scope="module")
def training(cast):
    qrels, train, test = halves(cast, data_path("cast2021", TRAINING_QRELS))
    return qrels_from_dict(qrels), train, test


@pytest.mark.parametrize("method", TRAINED)
def test_trained_methods_match_ranx(training, ranx_fused, method):
    qrels, train, test = training
    for norm in NORMS:
        got = fuse(test, method=method, norm=norm, params=trained_params(method),
                   train_qrels=qrels, train_runs=train)
        assert_same(ranx_fused[method, norm], got)


def test_cli_writes_ranx_order(cast, tmp_path):
    """The command line end to end: files in, a TREC run out, read back equal to ranx's
    (numba-compiled, in this process, on all 239 topics)."""
    expected = ranx.fuse([ranx_run(r) for r in cast], norm="zmuv", method="wmnz",
                         params={"weights": W})
    out = tmp_path / "fused.run"
    res = run_cli(["fuse", *[data_path("cast2021", f"{n}.trec") for n in NAMES], "-o", out,
                   "--method", "WMNZ", "--norm", "zmuv", "--weights", ",".join(map(str, W))])
    assert res.exit_code == 0, res.stderr
    assert "wmnz (norm zmuv) of 5 runs: 239 topics" in res.stderr
    written = read_run(out)
    assert written.runid == "wmnz-zmuv-ance+openmatch+ance+openmatch+bm25"
    assert_same(expected, written)
    ranks = [int(line.split()[3]) for line in out.read_text().splitlines()[:3]]
    assert ranks == [1, 2, 3]


def test_cli_takes_ranx_spelling_of_min_max_inverted(cast, ranx_fused, tmp_path):
    """``--norm min_max_inverted`` (ranx's spelling) on the command line: the runs ranked
    again, lowest score first, fused as ranx fuses them."""
    paths = []
    for i, sub in enumerate(first_topics(cast[:2], N_TOPICS)):
        paths.append(tmp_path / f"r{i}.trec")
        paths[-1].write_text("".join(f"{q} Q0 {d} {k + 1} {s!r} r{i}\n" for k, (q, d, s) in
                                     enumerate(zip(sub.qid.to_pylist(), sub.docno.to_pylist(),
                                                   sub.score.tolist()))))
    out = tmp_path / "fused.run"
    res = run_cli(["fuse", *paths, "-o", out, "--norm", "min_max_inverted"])
    assert res.exit_code == 0, res.stderr
    assert f"rrf (norm min-max-inverted) of 2 runs: {N_TOPICS} topics" in res.stderr
    written = read_run(out)
    assert_same(ranx_fused["rrf-cli", "min-max-inverted"], written)
    # the bottom of each run is now its top: the fused top-1 is not the one min-max gives
    plain = fuse(paths, method="rrf", norm="min-max")
    assert written.docno[0].as_py() != plain.docno[0].as_py()
