"""trecqr's fusion against ranx 0.3.21's ``fuse`` on the five CAsT 2021 organiser passage runs:
every algorithm under every normalisation (and none) gives, per topic, the same documents in
the same order, with scores equal to 1e-9; the trained ones are trained on one half of the
topics and applied to the other.

Where ranx's order is arbitrary, ranx is given trecqr's (the rules found in ranx's source):

- ranx sorts a run with numba's ``np.argsort(-scores)``, a quicksort (not stable): documents
  tied within a run (the BERT runs have 299 and 268 such pairs, the BM25 run 67) come out in
  an order set by the partitioning, and rank-based methods read that order. trecqr ranks by
  trec_eval's order (score descending, docno descending); ranx gets its runs as typed dicts
  already in that order (``sorted`` set, so not sorted again).
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
judged as its document for training. ranx's numba functions compile on first use (cached
after); topics are cut to keep the run time down (Condorcet, a Python sort, fewer still): the
first 20 topics (10 for Condorcet) still hold within-run ties in the three runs that have them
(test_cut_topics_keep_the_tied_documents), the case the order rules above are about.
"""

from __future__ import annotations

import collections
import inspect
import re
import sys

import numpy as np
import pyarrow as pa
import pytest

from conftest import data_path, run_cli

ranx = pytest.importorskip("ranx")
numba_typed = pytest.importorskip("numba.typed")
numba_types = pytest.importorskip("numba.types")

from trecqr.formats.objects import ranx_table  # noqa: E402
from trecqr.formats.order import trec_order  # noqa: E402
from trecqr.formats.qrels import qrels_from_dict  # noqa: E402
from trecqr.formats.run import Run, read_run  # noqa: E402
from trecqr.fusion import fuse  # noqa: E402
from trecqr.fusion.methods import METHODS, method as find_method  # noqa: E402
from trecqr.fusion.normalization import NORMS as TRECQR_NORMS, canonical  # noqa: E402

NAMES = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
         "org_manual_bm25"]
NORMS = [None, "min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"]
W = [0.3, 0.2, 0.2, 0.2, 0.1]
UNTRAINED = {"min": {}, "max": {}, "med": {}, "sum": {}, "anz": {}, "mnz": {},
             "gmnz": {"gamma": 0.5}, "isr": {}, "log_isr": {}, "logn_isr": {}, "rrf": {},
             "rbc": {"phi": 0.8}, "bordafuse": {}, "w_bordafuse": {"weights": W},
             "wsum": {"weights": W}, "wmnz": {"weights": W}, "mixed": {"weights": W},
             "condorcet": {}, "w_condorcet": {"weights": W}}
TRAINED = ["posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse", "bayesfuse"]
N_TOPICS, N_CONDORCET, N_TRAINED = 20, 10, 80
TOL = 1e-9


def _subset(run: Run, keep: set) -> Run:
    mask = pa.array([q in keep for q in run.qid.to_pylist()])
    return Run(run.qid.filter(mask), run.docno.filter(mask),
               run.score[np.asarray(mask.to_numpy(zero_copy_only=False))], run.runid)


def _typed_dicts(py: dict, value_type):
    """numba's typed dicts holding py ({qid: {docno: value}}) in its inner dicts' order."""
    Dict, T = numba_typed.Dict, numba_types
    outer = Dict.empty(key_type=T.unicode_type, value_type=T.DictType(T.unicode_type, value_type))
    for qid in sorted(py):
        inner = Dict.empty(key_type=T.unicode_type, value_type=value_type)
        for doc, value in py[qid].items():
            inner[doc] = value
        outer[qid] = inner
    return outer


def _typed(py: dict):
    """A ranx Run holding py ({qid: {docno: score}}, inner dicts in the wanted order) as is."""
    out = ranx.Run()
    out.run, out.sorted = _typed_dicts(py, numba_types.float64), True
    return out


def _typed_qrels(qrels: dict):
    """ranx's Qrels of qrels as ``ranx.Qrels(qrels)`` orders them (topics by id, each topic's
    documents by grade descending), typed as ranx types its empty Qrels: ``Qrels(dict)`` types
    them by the longest document id (numpy's string width), and each width compiles ranx's
    readers again (about 10 s on a fresh venv) for no other difference. Made once (halves)."""
    ordered = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])) for q, docs in qrels.items()}
    out = ranx.Qrels()
    out.qrels, out.sorted = _typed_dicts(ordered, numba_types.int64), True
    return out


def _ranx_run(run: Run):
    order, _, _ = trec_order(run, float32=False)
    py: dict = {}
    for q, d, s in zip(run.qid.take(order).to_pylist(), run.docno.take(order).to_pylist(),
                       run.score[order].tolist()):
        py.setdefault(q, {})[d] = s
    return _typed(py)


def _resorted(run):
    """A normalised ranx run in score order, ties by docno descending (trecqr's reading)."""
    py = {}
    for qid in run.keys():
        items = sorted(run[qid].items(), key=lambda kv: (-kv[1], [-b for b in kv[0].encode()]))
        py[qid] = dict(items)
    return _typed(py)


class _TrecSortedRun(ranx.Run):
    """ranx's Run, sorted again (min-max-inverted) with ties by docno descending."""

    def sort(self):
        self.run, self.sorted = _resorted(self).run, True


def _first_appearance(runs):
    List = numba_typed.List
    out = List()
    for qid in runs[0].keys():
        seen = {}
        for run in runs:
            for doc in run[qid].keys():
                seen.setdefault(doc, None)
        out.append(List(list(seen)) if seen else List.empty_list(numba_types.unicode_type))
    return out


@pytest.fixture(scope="module")
def cast():
    for name in ("ranx.fusion.bordafuse", "ranx.fusion.weighted_bordafuse",
                 "ranx.fusion.condorcet", "ranx.fusion.weighted_condorcet",
                 "ranx.normalization.borda_norm"):
        __import__(name)
    saved = {n: sys.modules[n].get_candidates for n in (
        "ranx.fusion.bordafuse", "ranx.fusion.weighted_bordafuse", "ranx.fusion.condorcet",
        "ranx.fusion.weighted_condorcet", "ranx.normalization.borda_norm")}
    for name in saved:
        sys.modules[name].get_candidates = _first_appearance
    inverting = sys.modules["ranx.normalization.min_max_norm"]
    inverting.Run = _TrecSortedRun
    runs = [read_run(data_path("cast2021", f"{n}.trec")) for n in NAMES]
    topics = sorted(set(runs[0].qid.to_pylist()))
    yield runs, topics
    inverting.Run = ranx.Run
    for name, fn in saved.items():
        sys.modules[name].get_candidates = fn


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


def assert_same(theirs, mine: Run):
    """Same documents per topic, scores within TOL, same order up to groups of tied scores.
    ranx's run is read in its dicts' order by trecqr's compiled reader of ranx objects (its
    ``to_dict`` makes a numba call per document, most of this file's time); that reader is
    checked on its own against the TREC files' values (tests/api/test_oracle_matrix.py)."""
    flat = ranx_table(theirs.run, "score")
    expected: dict = {}
    for q, d, s in zip(flat["query_id"].to_pylist(), flat["doc_id"].to_pylist(),
                       flat["score"].to_pylist()):
        expected.setdefault(q, {})[d] = s
    assert len(expected) == len(theirs.run)  # no topic of ranx's left empty
    got = _lists(mine)
    assert set(got) == set(expected)
    for qid, docs in expected.items():
        ranked = list(docs.items())  # ranx's order
        ours = got[qid]
        assert len(ours) == len(ranked), qid
        i = 0
        while i < len(ranked):
            j = i
            while j + 1 < len(ranked) and abs(ranked[j + 1][1] - ranked[i][1]) <= TOL:
                j += 1
            assert {d for d, _ in ranked[i:j + 1]} == {d for d, _ in ours[i:j + 1]}, (qid, i)
            for d, s in ours[i:j + 1]:
                assert abs(docs[d] - s) <= TOL, (qid, d)
            i = j + 1


@pytest.fixture(scope="module")
def first_topics(cast):
    """{n: (the runs cut to the first n topics, ranx's copies of them)}, made once for every
    untrained method: converting them is much of a method's time, and fusing leaves ranx's
    runs as they are (each test already fuses the same ones under all eight normalisations)."""
    runs, topics = cast
    made: dict = {}

    def cut(n):
        if n not in made:
            mine = [_subset(r, set(topics[:n])) for r in runs]
            made[n] = mine, [_ranx_run(r) for r in mine]
        return made[n]
    return cut


def test_cut_topics_keep_the_tied_documents(cast):
    """The topics the untrained methods fuse still hold documents tied within a run (BERT
    reranked runs and BM25), so the tie rules ranx is given are exercised, Condorcet's too."""
    runs, topics = cast
    for n in (N_TOPICS, N_CONDORCET):
        keep = set(topics[:n])
        tied = {}
        for name, run in zip(NAMES, runs):
            seen = collections.Counter((q, s) for q, s in zip(run.qid.to_pylist(),
                                                               run.score.tolist()) if q in keep)
            tied[name] = sum(c * (c - 1) // 2 for c in seen.values())
        assert tied["org_convdr_bert"] >= 30 and tied["org_manual_ance_bert"] >= 30, (n, tied)
        assert tied["org_manual_bm25"] >= 1, (n, tied)


@pytest.mark.parametrize("method", list(UNTRAINED))
def test_untrained_methods_match_ranx(first_topics, method):
    mine, theirs = first_topics(N_CONDORCET if "condorcet" in method else N_TOPICS)
    for norm in NORMS:
        expected = ranx.fuse(theirs, norm=norm, method=method, params=UNTRAINED[method])
        assert_same(expected, fuse(mine, method=method, norm=norm, params=UNTRAINED[method]))


@pytest.fixture(scope="module")
def halves(cast):
    runs, topics = cast
    judged: dict = {}
    for line in data_path("cast2021", "qrels-docs.2021.qrel").read_text().splitlines():
        q, _, d, g = line.split()
        judged.setdefault(q, {})[d] = int(g)
    train_topics = set(topics[:N_TRAINED // 2])
    passages: dict = {}
    for run in runs:
        for q, d in zip(run.qid.to_pylist(), run.docno.to_pylist()):
            grade = judged.get(q, {}).get(d.rsplit("-", 1)[0])
            if grade is not None and q in train_topics:
                passages.setdefault(q, {})[d] = grade
    qrels = {q: passages[q] for q in sorted(passages)}
    train = [_subset(r, set(qrels)) for r in runs]
    test = [_subset(r, set(topics[:N_TRAINED]) - train_topics) for r in runs]
    ranx_train = [_ranx_run(r) for r in train]
    normed = {}
    from ranx.normalization import norm_switch

    for norm in NORMS:
        if norm is None:
            runs_n = ranx_train
        elif norm == "borda":
            runs_n = norm_switch(norm)([_ranx_run(r) for r in train])
        else:
            runs_n = [norm_switch(norm)(_ranx_run(r)) for r in train]
        normed[norm] = [_resorted(r) for r in runs_n]
    return (qrels, _typed_qrels(qrels), train, test, ranx_train, normed,
            [_ranx_run(r) for r in test])


@pytest.mark.parametrize("method", TRAINED)
def test_trained_methods_match_ranx(halves, method):
    import ranx.fusion as rf

    qrels, ranx_qrels, train, test, ranx_train, normed_runs, ranx_test = halves
    assert list(ranx_qrels.keys()) == list(ranx_train[0].keys())
    extra = {"probfuse": {"n_segments": 10}, "slidefuse": {"w": 5}}.get(method, {})
    for norm in NORMS:
        normed = normed_runs[norm]
        if method == "probfuse":
            params = {"probs": rf.probfuse_train(ranx_qrels, normed, 10)}
        elif method == "slidefuse":
            params = {"probs": rf.slidefuse_train(ranx_qrels, normed), "w": 5}
        elif method == "mapfuse":
            params = {"map_scores": rf.mapfuse_train(ranx_qrels, normed)}
        elif method == "bayesfuse":
            params = {"log_odds": rf.bayesfuse_train(ranx_qrels, normed)}
        else:
            params = {"probs": getattr(rf, method + "_train")(ranx_qrels, normed)}
        expected = ranx.fuse(ranx_test, norm=norm, method=method, params=params)
        got = fuse(test, method=method, norm=norm, params=extra,
                   train_qrels=qrels_from_dict(qrels), train_runs=train)
        assert_same(expected, got)


def test_cli_writes_ranx_order(cast, tmp_path):
    """The command line end to end: files in, a TREC run out, read back equal to ranx's."""
    runs, topics = cast
    expected = ranx.fuse([_ranx_run(r) for r in runs], norm="zmuv", method="wmnz",
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


def test_cli_takes_ranx_spelling_of_min_max_inverted(cast, tmp_path):
    """``--norm min_max_inverted`` (ranx's spelling) on the command line: the runs ranked
    again, lowest score first, fused as ranx fuses them."""
    runs, topics = cast
    keep = set(topics[:N_TOPICS])
    paths = []
    for i, run in enumerate(runs[:2]):
        sub = _subset(run, keep)
        paths.append(tmp_path / f"r{i}.trec")
        paths[-1].write_text("".join(f"{q} Q0 {d} {k + 1} {s!r} r{i}\n" for k, (q, d, s) in
                                     enumerate(zip(sub.qid.to_pylist(), sub.docno.to_pylist(),
                                                   sub.score.tolist()))))
    expected = ranx.fuse([_ranx_run(read_run(p)) for p in paths], norm="min_max_inverted",
                         method="rrf")
    out = tmp_path / "fused.run"
    res = run_cli(["fuse", *paths, "-o", out, "--norm", "min_max_inverted"])
    assert res.exit_code == 0, res.stderr
    assert f"rrf (norm min-max-inverted) of 2 runs: {N_TOPICS} topics" in res.stderr
    written = read_run(out)
    assert_same(expected, written)
    # the bottom of each run is now its top: the fused top-1 is not the one min-max gives
    plain = fuse(paths, method="rrf", norm="min-max")
    assert written.docno[0].as_py() != plain.docno[0].as_py()
