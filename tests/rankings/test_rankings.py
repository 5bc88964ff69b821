"""The ranking rules trec_eval applies before any measure, checked on hand-made cases."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest

import trecqr
from trecqr.api.evaluation import load_qrels, load_run
from trecqr.errors import InputError
from trecqr.rankings.options import Options
from trecqr.rankings.build import NONPOOL, UNJUDGED, build_rankings


def rankings(qrels, run, **opts):
    return build_rankings(load_run(run), load_qrels(qrels), Options(**opts))


def ranked(rk, i=0):
    return rk.rel[rk.offsets[i]:rk.offsets[i + 1]].tolist()


def test_ties_broken_by_docno_descending_bytewise():
    qrels = {"q": {"B": 1, "a": 2, "A": 3}}
    run = {"q": {"A": 1.0, "a": 1.0, "B": 1.0, "z": 2.0}}
    # score desc, then docno desc by strcmp: z (2.0), then a > B > A ('a'=0x61 > 'B'=0x42 > 'A')
    assert ranked(rankings(qrels, run)) == [NONPOOL, 2, 1, 3]


@pytest.mark.parametrize("judgments", [2, 8])  # fewer than the documents, or more: both C lookups
@pytest.mark.parametrize("first", ["a\0c", "a\0b"])
def test_docnos_that_differ_after_a_nul_rank_alike_on_every_route(first, judgments):
    """Tied docnos equal up to a NUL: the C pass over dicts orders them by their whole UTF-8
    bytes, as the columns ranker does (strcmp, cut at the NUL, left them in the dict's
    order), so pytrec_eval's drop-in, evaluate on dicts, on small columns and on the columns
    ranker (-M is not the C pass's) give one value, whatever the dict's order."""
    other = "a\0b" if first == "a\0c" else "a\0c"
    qrels = {"q": {"a\0b": 1, **{f"j{i}": 0 for i in range(judgments - 1)}}}
    run = {"q": {first: 1.0, other: 1.0, "z": 2.0, "y": 2.0, "w": 0.5}}
    # z, y (2.0), then a\0c before a\0b (docno descending, byte-wise): the relevant one 4th
    assert ranked(rankings(qrels, run)) == [NONPOOL, NONPOOL, NONPOOL, 1, NONPOOL]
    assert trecqr.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run) == \
        {"q": {"recip_rank": 0.25}}
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    table = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                      "score": [r[2] for r in rows]})
    for given in (run, table):
        assert trecqr.evaluate(qrels, given, ["recip_rank"]).aggregate() == {"recip_rank": 0.25}
        assert trecqr.evaluate(qrels, given, ["recip_rank"], max_docs=10 ** 9).aggregate() == \
            {"recip_rank": 0.25}


def test_ids_without_a_utf8_form_are_refused_on_every_route():
    """A lone surrogate in a run dict's docno (tied with another, so the C pass compares
    their bytes) or query id: pytrec_eval 0.5 crashes the interpreter on both. The drop-in
    raises ValueError, as it does for a NaN score; evaluate names the id, whichever route its
    measures take (yaap is not in the C pass; no Arrow string can hold the id, so no route
    gives it a value)."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"a\udc80": 1.0, "a\udc81": 1.0, "a": 0.5}}
    with pytest.raises(ValueError, match=r"doc 'a\\udc80': the docno is not valid Unicode"):
        trecqr.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    for measures in (["recip_rank"], ["recip_rank", "yaap"], ["RR@3"]):
        with pytest.raises(InputError, match=r"<run dict>: id 'a\\udc80' is not valid"):
            trecqr.evaluate(qrels, run, measures)
    qrels, run = {"q\udc80": {"a": 1}}, {"q\udc80": {"a": 1.0, "b": 2.0}}
    with pytest.raises(ValueError, match=r"<qrels dict>: id 'q\\udc80' is not valid"):
        trecqr.RelevanceEvaluator(qrels, {"recip_rank"})  # the qrels are read first
    for measures in (["recip_rank"], ["recip_rank", "yaap"], ["RR@3"]):
        with pytest.raises(InputError, match=r"<qrels dict>: id 'q\\udc80' is not valid"):
            trecqr.evaluate(qrels, run, measures)
    qrels = {"q": {"a": 1}}  # only in the run
    with pytest.raises(ValueError, match=r"query 'q\\udc80': the query id is not valid"):
        trecqr.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    for measures in (["recip_rank"], ["recip_rank", "yaap"], ["RR@3"]):
        with pytest.raises(InputError, match=r"<run dict>: id 'q\\udc80' is not valid"):
            trecqr.evaluate(qrels, run, measures)


@pytest.mark.parametrize("qrels, bad", [({"q": {"b0": 1, "x\udc80": 1}}, "x\\udc80"),
                                        ({"q\udc80": {"b0": 1}, "q": {"b0": 1}}, "q\\udc80")],
                         ids=["judged docno never retrieved", "topic not in the run"])
def test_qrels_ids_without_a_utf8_form_are_refused_where_no_ranking_reads_them(qrels, bad):
    """A qrels id the run never meets: the C pass reads only the run's topics and documents,
    so it gave map 0.25 where the columns' routes (RR@3, a DataFrame) refused the id; and
    pytrec_eval 0.5 crashes on such qrels. Every route now refuses it, as a dict, and as a
    DataFrame's object columns (pandas' default string columns cannot hold it at all)."""
    pd = pytest.importorskip("pandas")
    run = {"q": {"b0": 1.0, "b1": 2.0}}
    where = f"id '{bad}' is not valid Unicode text"
    with pytest.raises(ValueError, match=re.escape(f"<qrels dict>: {where}")):
        trecqr.RelevanceEvaluator(qrels, {"map"})
    rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    frame = pd.DataFrame({"query_id": pd.Series([r[0] for r in rows], dtype=object),
                          "doc_id": pd.Series([r[1] for r in rows], dtype=object),
                          "relevance": [r[2] for r in rows]})
    for given, source in ((qrels, "<qrels dict>"), (frame, "<qrels DataFrame>")):
        for measures in (["map"], ["map", "yaap"], ["RR@3"]):
            with pytest.raises(InputError, match=re.escape(f"{source}: {where}")):
                trecqr.evaluate(given, run, measures)


def test_frame_ids_and_scores_arrow_cannot_hold_are_named():
    """An object column with a lone surrogate (pyarrow's UnicodeEncodeError before) or a
    complex score (ArrowNotImplementedError), in a small frame (read into lists) and a large
    one (read by Arrow)."""
    pd = pytest.importorskip("pandas")
    qrels = {"q": {"b1": 1}}
    for n in (2, 10_000):
        docnos = ["a\udc80"] + [f"b{i}" for i in range(1, n)]
        run = pd.DataFrame({"query_id": ["q"] * n, "doc_id": pd.Series(docnos, dtype=object),
                            "score": np.arange(n, dtype=float)})
        for measures in (["map"], ["yaap"], ["RR@3"]):
            with pytest.raises(InputError, match=re.escape(
                    "<run DataFrame>: id 'a\\udc80' is not valid Unicode text")):
                trecqr.evaluate(qrels, run, measures)
        run = run.assign(doc_id=[f"b{i}" for i in range(n)],
                         score=pd.Series([1 + 0j] + [1.0] * (n - 1), dtype=object))
        with pytest.raises(InputError, match=re.escape(
                "<run DataFrame>: row 0: score '(1+0j)' is not a number")):
            trecqr.evaluate(qrels, run, ["map"])


BEYOND_INT64 = (2 ** 70, -2 ** 70, 2 ** 63)


@pytest.mark.parametrize("grade", BEYOND_INT64, ids=["2**70", "-2**70", "2**63"])
def test_grades_beyond_64_bits_are_named_on_every_route(grade):
    """A grade no 64-bit integer holds (pytrec_eval 0.5 fails with a SystemError; trecqr's C
    pass raised a bare OverflowError, and the columns' routes numpy's or pyarrow's): the
    drop-in raises ValueError naming the judgment, evaluate an InputError naming it, for a
    few judgments (counted by Python), many (counted by numpy) and a DataFrame's object
    column. A grade just inside the range is scored as trec_eval's long holds it."""
    run = {"q": {"a": 1.0, "b": 2.0}}
    few = {"q": {"a": grade, "b": 0}}
    many = {f"q{i}": {f"d{j}": 1 for j in range(30)} for i in range(20)} | few
    where = f"query 'q' doc 'a': grade {grade} is out of the 64-bit integer range"
    for qrels in (few, many):
        for measures in ({"recip_rank"}, {"recip_rank", "11pt_avg.10,9"}):  # C pass, numpy
            with pytest.raises(ValueError, match=re.escape(where)):
                trecqr.RelevanceEvaluator(qrels, measures).evaluate(run)
        for measures in (["recip_rank"], ["recip_rank", "yaap"], ["RR@3"]):
            with pytest.raises(InputError, match=re.escape(f"<qrels dict>: {where}")):
                trecqr.evaluate(qrels, run, measures)
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"],
                          "relevance": pd.Series([0, grade], dtype=object)})
    for measures in (["recip_rank"], ["yaap"]):
        with pytest.raises(InputError, match=re.escape(
                f"<qrels DataFrame>: row 1: grade '{grade}' is out of range")):
            trecqr.evaluate(frame, run, measures)
    inside = {"q": {"a": 2 ** 63 - 1, "b": -2 ** 63}}
    assert trecqr.RelevanceEvaluator(inside, {"recip_rank"}).evaluate(run) \
        == {"q": {"recip_rank": 0.5}}
    assert trecqr.evaluate(inside, run, ["recip_rank"]).aggregate() == {"recip_rank": 0.5}


@pytest.mark.parametrize("score, shown", [(None, "None"), (float("nan"), "nan"),
                                          (10 ** 400, "10000000000000000000... (401 characters)")],
                         ids=["None", "nan", "int past a double"])
def test_run_dict_scores_that_are_not_finite_numbers_are_named(score, shown):
    """None (which numpy reads as NaN: it was called NaN) and an int past the largest double
    (a bare OverflowError before) are named with the value as given."""
    run = {"q": {"a": score, "b": 2.0}}
    for measures in (["recip_rank"], ["recip_rank", "yaap"], ["RR@3"]):
        with pytest.raises(InputError, match=re.escape(
                f"<run dict>: query 'q' doc 'a': score {shown} is not a finite number")):
            trecqr.evaluate({"q": {"a": 1}}, run, measures)


def test_rank_column_is_ignored(tmp_path):
    (tmp_path / "run").write_text("q Q0 d1 1 0.5 r\nq Q0 d2 2 0.9 r\n")
    rk = rankings({"q": {"d2": 1}}, tmp_path / "run")
    assert ranked(rk) == [1, NONPOOL]


def test_float32_near_ties_only_under_908():
    qrels = {"q": {"x": 1}}
    run = {"q": {"x": 1.0, "y": 1.0 + 1e-9}}
    # 9.0.8: both scores are 1.0f, tie broken by docno desc -> y first
    assert ranked(rankings(qrels, run)) == [NONPOOL, 1]
    # 10.0: doubles, y's larger score wins as well
    assert ranked(rankings(qrels, run, compat="10.0")) == [NONPOOL, 1]
    run = {"q": {"x": 1.0 + 1e-9, "y": 1.0}}
    assert ranked(rankings(qrels, run)) == [NONPOOL, 1]          # tie -> y (docno) first
    assert ranked(rankings(qrels, run, compat="10.0")) == [1, NONPOOL]  # x has the larger double


def test_negative_grades_are_unjudged_and_M_before_J():
    qrels = {"q": {"a": -1, "b": 0, "c": 1}}
    run = {"q": {"a": 5.0, "x": 4.0, "b": 3.0, "c": 2.0}}
    assert ranked(rankings(qrels, run)) == [UNJUDGED, NONPOOL, 0, 1]
    assert ranked(rankings(qrels, run, judged_only=True)) == [0, 1]
    # -M2 keeps a, x; -J then drops both
    rk = rankings(qrels, run, max_docs=2, judged_only=True)
    assert ranked(rk) == [] and rk.num_ret.tolist() == [0]


def test_topics_in_strcmp_order_and_coverage():
    qrels = {"10": {"a": 1}, "9": {"a": 1}, "2": {"a": 1}}
    run = {"9": {"a": 1.0}, "10": {"a": 1.0}, "7": {"a": 1.0}}
    rk = rankings(qrels, run)
    assert rk.qids == ["10", "9"]
    assert rk.qrels_only == ["2"] and rk.run_only == ["7"]
    assert rk.num_qrels_topics == 3


def test_v10_complete_adds_bogus_ranking_for_missing_topics():
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    run = {"1": {"a": 1.0}}
    rk = rankings(qrels, run, compat="10.0", complete=True)
    assert rk.qids == ["1", "2"]
    assert rk.bogus.tolist() == [False, True]
    assert ranked(rk, 1) == [NONPOOL]
    rk = rankings(qrels, run, complete=True)  # 9.0.8: no rows for missing topics
    assert rk.qids == ["1"]


def test_unsorted_interleaved_run_is_sorted(tmp_path):
    lines = ["2 Q0 c 1 0.1 r", "1 Q0 a 1 0.2 r", "2 Q0 d 1 0.9 r", "1 Q0 b 1 0.7 r"]
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    rk = rankings({"1": {"a": 1}, "2": {"c": 2}}, tmp_path / "run")
    assert rk.qids == ["1", "2"]
    assert ranked(rk, 0) == [NONPOOL, 1] and ranked(rk, 1) == [NONPOOL, 2]


def test_level_counts_and_num_rel_follow_relevance_level():
    qrels = {"q": {"a": 0, "b": 1, "c": 2, "d": 2, "e": -1}}
    rk = rankings(qrels, {"q": {"a": 1.0}}, relevance_level=2)
    assert rk.levels.tolist() == [0, 1, 2]
    assert rk.level_counts.tolist() == [[1, 1, 2]]
    assert rk.num_rel.tolist() == [2]


@pytest.mark.parametrize("seed", range(3))
def test_batches_cover_every_topic_once(seed):
    rng = np.random.default_rng(seed)
    run = {str(q): {f"d{i}": float(rng.random()) for i in range(int(rng.integers(1, 40)))}
           for q in range(25)}
    qrels = {str(q): {"d1": 1} for q in range(25)}
    rk = rankings(qrels, run)
    seen = np.concatenate([idx for idx, _ in rk.batches()])
    assert sorted(seen.tolist()) == list(range(25))
    for idx, b in rk.batches():
        assert (b.num_ret == rk.num_ret[idx]).all()
        assert b.depth >= b.num_ret.max()


# ----------------------------------------------------------------------------- scanner modes
def _sorted_run_with_ties(tmp_path, seed):
    """A run as retrievers write it: topics 1..12 in numeric (not strcmp) order, ranks by score,
    coarse scores so ties are common, tie order random, near-ties below float32 precision."""
    rng = np.random.default_rng(seed)
    lines, qrels = [], []
    for t in range(1, 13):
        depth = int(rng.integers(1, 60))
        docs = rng.choice(500, depth, replace=False)
        scores = np.sort(np.round(rng.random(depth) * 5, 1))[::-1]
        scores[: depth // 3] += rng.choice([0.0, 1e-9], depth // 3)  # float32 near-ties
        scores = np.sort(scores)[::-1]
        for r, (d, sc) in enumerate(zip(docs, scores), 1):
            lines.append(f"{t} Q0 D{d} {r} {float(sc)!r} run\n")
        if t % 5:  # topics 5 and 10 unjudged
            for d in rng.choice(500, 40, replace=False):
                qrels.append(f"{t} 0 D{d} {int(rng.integers(-1, 4))}\n")
    qrels.append("99 0 D1 1\n")  # a judged topic the run lacks
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("".join(qrels))
    return tmp_path / "qrels", tmp_path / "run"


@pytest.mark.parametrize("opts", [[], ["-M", "7"], ["-J"], ["-M", "5", "-J"], ["-c"],
                                  ["-c", "-M", "3"], ["-l", "2"], ["-M", "0"]],
                         ids=lambda o: "".join(o) or "plain")
@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
@pytest.mark.parametrize("seed", [1, 2])
def test_scanner_block_mode_equals_general_path(tmp_path, monkeypatch, seed, compat, opts):
    """The scanner's block mode (topic blocks, tie fix-ups, judged hits) against the general
    readers (the same run gzipped, which the scanner leaves to them), byte for byte, with -M,
    -J, -c, -l and both trec_eval versions."""
    from conftest import run_cli
    from trecqr.formats import run as run_module

    qrels, run = _sorted_run_with_ties(tmp_path, seed)
    # a file this small is scanned whole (the dicts' path reads its docnos): block mode here
    monkeypatch.setattr(run_module, "SMALL_FILE", 0)
    if compat == "10.0" and "-c" not in opts:
        opts = [*opts, "-c"]  # 10.0 stops on a judged topic without results otherwise
    args = ["eval", "--quiet", "--compat", compat, "-q", "-m", "all_trec", *opts, qrels, run]
    scanned = load_run(run)
    assert type(scanned).__name__ == "ScannedRun"
    from trecqr.formats.run import read_run
    blocky = read_run(run, judged=load_qrels(qrels).docno.unique(),
                      float32=compat == "9.0.8")
    assert blocky.codes.block_start is not None and len(blocky.codes.tie_dst) > 0
    fast = run_cli(args)
    slow = run_cli([*args[:-1], _gzipped(run)])
    assert fast.exit_code == slow.exit_code == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout


def _gzipped(path):
    """The file gzipped beside it: the same run, which the scanner leaves to the general
    readers (they decompress it)."""
    import gzip

    out = path.with_name(path.name + ".gz")
    out.write_bytes(gzip.compress(path.read_bytes(), compresslevel=1))
    assert type(load_run(out)).__name__ != "ScannedRun"
    return out


@pytest.mark.parametrize("compat", ["9.0.8", "10.0"])
def test_two_thread_scan_of_a_large_run_equals_general_path(tmp_path, compat):
    """Runs over 8 MiB are scanned in two halves split at a topic boundary, then merged:
    topic codes, blocks, tie fix-ups, qrels hits and scores must come out as the general
    readers' (the same run gzipped)."""
    from conftest import run_cli
    from trecqr.formats.run import read_run

    rng = np.random.default_rng(11)
    lines, qrels = [], []
    for t in range(500):
        docs = rng.choice(100_000, 600, replace=False)
        scores = np.sort(np.round(rng.random(600) * 20, 2))[::-1]  # many ties
        lines += [f"q{t:03d}\tQ0\tdoc{d}\t{r}\t{float(s)!r}\trun-{t}\n"
                  for r, (d, s) in enumerate(zip(docs, scores), 1)]
        qrels += [f"q{t:03d} 0 doc{d} {int(g)}\n"
                  for d, g in zip(rng.choice(docs, 30, replace=False), rng.integers(0, 3, 30))]
    path, qpath = tmp_path / "run", tmp_path / "qrels"
    path.write_text("".join(lines))
    qpath.write_text("".join(qrels))
    assert path.stat().st_size > (8 << 20)
    from trecqr.formats import _scan
    raw = _scan.scan_run(str(path), compat == "10.0", None, False, compat == "9.0.8")
    assert raw["threads"] == 2
    scanned = read_run(path, judged=load_qrels(qpath).docno.unique(), float32=compat == "9.0.8")
    assert scanned.codes.block_start is not None and len(scanned.codes.block_start) == 500
    assert scanned.runid == "run-499" and len(scanned) == 300_000
    args = ["eval", "--quiet", "--compat", compat, "-q", "-m", "all_trec", qpath, path]
    fast = run_cli(args)
    slow = run_cli([*args[:-1], _gzipped(path)])
    assert fast.exit_code == slow.exit_code == 0, fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout
