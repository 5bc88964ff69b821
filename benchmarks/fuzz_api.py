"""Fuzz campaign of the Python doors: odd values in pytrec_eval dicts and DataFrames.

Usage (from the project root):

    nice python3 benchmarks/fuzz_api.py --cases 5000 --seed 1

Each case makes a qrels and a run of up to six topics (one in five: up to 360, enough rows for
the columns' routes), as a pipeline might hand them over:
most values plain, some odd (numpy scalars, None, bools, huge integers, NaN and infinities,
complex numbers, text numbers, bytes; int, None, bytes and tuple keys, empty, blank, control
and non-ASCII ids, lone surrogates; a topic mapped to something that is not a dict), and calls
one door: ``trecqr.evaluate`` (with its options, reading every view of the Results), on dicts
and on DataFrames of object columns, ``evaluate_many``, ``RelevanceEvaluator`` (with its
options), ``ir_measures.calc_aggregate`` / ``iter_calc`` through trecqr's provider,
``trecqr.compare`` of the run and a second one, ``trecqr.fuse`` of the two, scored,
``agree_labels`` / ``agree_rankings`` / ``agree_repro`` with relabelled qrels and the second
run, ``bounds``, and the intent-aware names on (topic, subtopic, docno, grade) records.

For ``evaluate`` on dicts, each measure asked alone and the same data as DataFrames, as
ir_measures' rows and as Arrow tables, in Arrow's view types and as polars frames (where
pyarrow and polars can make them; when no topic is empty: rows cannot hold one) must give the
same values
where they give any (a value does not depend on its neighbours or its door).
A case is *clean* when the door returns, or raises trecqr's own error (``TrecqrError``: an
``InputError`` names the object and the value); ``RelevanceEvaluator``, a drop-in for
pytrec_eval, may also raise pytrec_eval's ``TypeError`` and ``ValueError``. Anything else (a
bare ``OverflowError``, ``TypeError``, pyarrow's errors, ``KeyError``...) is printed with its
case and counted; a crash of the interpreter is one too (faulthandler prints where). Exit
status 1 when any case was unclean. The command line's own campaign is benchmarks/fuzz.py.
"""

from __future__ import annotations

import argparse
import faulthandler
import random
import sys
import traceback
import warnings

import numpy as np

SCORES = [1.0, 0.5, -1.0, 0, 1, 2 ** 70, -2 ** 70, 10 ** 400, float("nan"), float("inf"), None,
          "1.0", "x", True, np.float32(0.3), np.float64(0.7), np.int64(3), np.int8(1),
          np.float16(0.2), 1e308, -1e308, 5e-324, np.longdouble(1.5), b"1", [1.0], 1 + 0j]
GRADES = [0, 1, 2, 3, -1, -2, 2 ** 31, 2 ** 63 - 1, -2 ** 63, 2 ** 63, 2 ** 70, 1.5, 1.0,
          float("nan"), None, "1", True, np.int64(2), np.int32(1), np.uint64(2 ** 63),
          np.float64(2.0), b"1", 10 ** 400, float("inf")]
IDS = ["a", "b", "c", "d", "", " ", "a b", "é", "\x00", "a\udc80", 1, 2, 1.5, None, True, b"a",
       ("t",), "x" * 300, "\t", "\n", "0", "00"]
MEASURES = [["map"], ["recip_rank"], ["ndcg_cut.3"], ["P.5", "recall.10"], ["infAP"], ["bpref"],
            ["RR@3"], ["nDCG@3"], ["R@10"], ["map", "RR@3"], ["Rprec"], ["all_trec"], ["ERR@5"],
            ["Judged@5"], ["iprec_at_recall"], ["set_F"], ["P(rel=2)@5"], ["ndcg"],
            ["success.1"], ["recip_rank", "infAP"], ["official"], ["gm_map", "relative_P.3"]]
PYTREC = [{"map"}, {"recip_rank"}, {"ndcg_cut.3"}, {"P.5", "recall.10"}, {"bpref"}, {"ndcg"},
          {"map", "infAP"}, {"ndcg_cut"}, {"set_F"}, {"Rprec"}, {"official"},
          {"success.1,3", "gm_bpref", "Rprec_mult.0.5", "set_map"}]
# trec_eval prints no per-topic line for these; RelevanceEvaluator gives pytrec_eval's values
SUMMARY_ONLY = frozenset({"runid", "num_q", "gm_map", "gm_bpref"})
IRM = [["RR@3"], ["nDCG@3", "AP"], ["R@10", "P@5"], ["Judged@5"], ["ERR@5"], ["AP(rel=2)"]]


def _pick(rng, plain: list, odd: list, p: float):
    return rng.choice(odd) if rng.random() < p else rng.choice(plain)


def make_case(rng):
    """(qrels, run) dicts: topics q0.., some values and keys odd with probability p."""
    p = rng.choice([0.0, 0.02, 0.1, 0.3])
    # now and then enough rows for the columns' routes (the C pass over dicts takes up to
    # 1,536 rows, a frame up to 8,192 is read into lists), with fewer odd values
    scale = rng.choice([1, 1, 1, 1, 60])
    p /= scale
    qrels, run = {}, {}
    for q in (f"q{i}" for i in range(rng.randint(0, 6) * scale)):
        key = _pick(rng, [q], IDS, p)
        if rng.random() < 0.8:
            qrels[key] = {_pick(rng, [f"d{j}"], IDS, p): _pick(rng, [0, 1, 2], GRADES, p)
                          for j in rng.sample(range(20), rng.randint(0, 6))}
        if rng.random() < 0.8:
            run_key = key if rng.random() < 0.8 else _pick(rng, [q], IDS, p)
            run[run_key] = {_pick(rng, [f"d{j}"], IDS, p):
                            _pick(rng, [round(rng.random(), 2), rng.random()], SCORES, p)
                            for j in rng.sample(range(30), rng.randint(0, 12))}
    for given in (run, qrels):
        if rng.random() < 0.05:  # a topic mapped to something that is not a dict
            given[_pick(rng, ["q0"], IDS, 1)] = rng.choice([None, [], 1, "x"])
    return qrels, run


def _frames(qrels, run):
    import pandas as pd  # object columns: pandas' default text columns refuse a surrogate

    def rows(d):
        return [(q, doc, v) for q, docs in d.items() if isinstance(docs, dict)
                for doc, v in docs.items()]
    return (pd.DataFrame(rows(qrels), columns=["query_id", "doc_id", "relevance"], dtype=object),
            pd.DataFrame(rows(run), columns=["query_id", "doc_id", "score"], dtype=object))


class Disagreement(Exception):
    """Two doors (or one measure alone and in a batch) gave different values."""


def _same_through_every_door(qrels, run, measures):
    """evaluate's means on the dicts; where each measure alone, and the same data as
    DataFrames, also give values, they must be the same (NaN equal to NaN)."""
    import trecqr
    from trecqr.errors import TrecqrError

    got = trecqr.evaluate(qrels, run, measures).aggregate()
    others = {"alone": lambda: {k: v for m in measures
                                for k, v in trecqr.evaluate(qrels, run, [m]).aggregate().items()},
              "DataFrame": lambda: trecqr.evaluate(*_frames(qrels, run), measures).aggregate(),
              "rows": lambda: trecqr.evaluate(*_rows(qrels, run), measures).aggregate()}
    tables = _tables(qrels, run)
    if tables is not None:
        others["Arrow tables"] = lambda: trecqr.evaluate(*tables, measures).aggregate()
        others["Arrow views"] = lambda: trecqr.evaluate(*map(_views, tables),
                                                        measures).aggregate()
        frames = _polars(tables)
        if frames is not None:
            others["polars"] = lambda: trecqr.evaluate(*frames, measures).aggregate()
    others["trecqr columns"] = lambda: trecqr.evaluate(
        trecqr.load_qrels(qrels), trecqr.load_run(run), measures).aggregate()
    if any(d == {} for d in (*qrels.values(), *run.values())):  # no rows for an empty topic
        others = {k: v for k, v in others.items() if k == "alone"}
    for door, call in others.items():
        try:
            other = call()
        except TrecqrError:
            continue  # the frames' readers are stricter on some values; refusing is clean
        if other.keys() != got.keys() or any(
                not (a == b or (a != a and b != b)) for a, b in
                ((got[k], other[k]) for k in got)):
            raise Disagreement(f"dicts {got} but {door} {other}")
    return got


def _drop_in_as_evaluate(qrels, run, names, kw):
    """RelevanceEvaluator's values; where evaluate on the same dicts gives values too, its
    per-topic values must be the same (pytrec_eval's topics: the run's judged ones)."""
    import trecqr
    from trecqr.errors import TrecqrError

    from trecqr.engine.pytrec_values import c_int

    got = trecqr.RelevanceEvaluator(qrels, names, **kw).evaluate(run)
    # pytrec_eval reads the level into 32 bits: -1 is 2**32 - 1 (trecqr/api/pytrec.py)
    options = {"relevance_level": c_int(kw.get("relevance_level", 1)),
               "judged_only": kw.get("judged_docs_only_flag", False)}
    try:
        other = trecqr.evaluate(qrels, run, sorted(names), **options).per_query()
    except TrecqrError:
        return got
    for qid, values in got.items():
        for key, value in values.items():
            if key in SUMMARY_ONLY:  # evaluate shows these as a summary only
                continue
            theirs = other.get(qid, {}).get(key)
            if not (theirs == value or (theirs != theirs and value != value)):
                raise Disagreement(f"RelevanceEvaluator {qid} {key} {value} but evaluate "
                                   f"{theirs}")
    return got


def _tables(qrels, run):
    """The dicts as Arrow tables, or None where pyarrow cannot make them (mixed types: the
    caller's side, before trecqr)."""
    import pyarrow as pa

    rows = {n: [(q, d, v) for q, docs in given.items() if isinstance(docs, dict)
                for d, v in docs.items()] for n, given in (("relevance", qrels), ("score", run))}
    try:
        return tuple(pa.table({"query_id": [r[0] for r in rows[n]],
                               "doc_id": [r[1] for r in rows[n]],
                               n: [r[2] for r in rows[n]]}) for n in ("relevance", "score"))
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def _views(table):
    """A table's text columns in Arrow's view type (polars' and DuckDB's text)."""
    import pyarrow as pa

    return table.cast(pa.schema([(f.name, pa.string_view() if f.type == pa.string() else f.type)
                                 for f in table.schema]))


def _polars(tables):
    """The Arrow tables as polars frames (read by trecqr through Arrow's PyCapsule stream), or
    None without polars or where polars refuses the values (the caller's side)."""
    try:
        import polars as pl

        return tuple(pl.from_arrow(t) for t in tables)
    except Exception:  # noqa: BLE001 (polars' own errors: not what is fuzzed here)
        return None


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(a[k] == b[k] or (a[k] != a[k] and b[k] != b[k])
                                        for k in a)


def _many_is_evaluate(qrels, runs, measures):
    """evaluate_many's Results are evaluate's, run by run."""
    import trecqr

    named = trecqr.evaluate_many(qrels, dict(zip(("a", "b"), runs)), measures)
    for run, res in zip(runs, trecqr.evaluate_many(qrels, runs, measures)):
        got = trecqr.evaluate(qrels, run, measures)
        if not _same(res.aggregate(), named["a" if run is runs[0] else "b"].aggregate()):
            raise Disagreement("evaluate_many of {name: run} is not of [run]")
        if not (_same(res.aggregate(), got.aggregate()) and res.n == got.n):
            raise Disagreement(f"evaluate_many {res.aggregate()} but evaluate "
                               f"{got.aggregate()}")


def _compare_means_are_evaluate(qrels, runs, measures, kw):
    """compare's means are evaluate's, with the same topics rule (-c)."""
    import trecqr

    cmp = trecqr.compare(qrels, runs, measures, **kw)
    cmp.to_dataframe(), cmp.to_latex(), cmp.to_markdown(), cmp._repr_html_(), str(cmp)
    table = cmp.to_dict()
    for name, run in zip(("run1", "run2"), runs):
        got = trecqr.evaluate(qrels, run, measures, complete=kw["complete"]).aggregate()
        means = {k: float("nan") if v is None else v  # to_dict's JSON: NaN as None
                 for k, v in table["means"][name].items()}
        if not _same({k: got[k] for k in means}, means):
            raise Disagreement(f"compare {name} {table['means'][name]} but evaluate {got}")
    return table


def _bounds_lower_is_evaluate(qrels, run, measures):
    """bounds' lower values are evaluate's means (its docstring's promise)."""
    import trecqr

    b = trecqr.bounds(qrels, run, measures)
    got = trecqr.evaluate(qrels, run, measures).aggregate()
    lower = {m: v["lower"] for m, v in b.summary.items()}
    if lower.keys() != got.keys() or any(not (lower[k] == got[k] or (lower[k] != lower[k] and
                                                                     got[k] != got[k]))
                                         for k in got):
        raise Disagreement(f"bounds' lower {lower} but evaluate {got}")
    return b


def _rows(qrels, run):
    """ir_measures' Qrel and ScoredDoc rows of the dicts (what ir_datasets' iterators give)."""
    from ir_measures import Qrel, ScoredDoc

    return ([Qrel(q, d, g) for q, docs in qrels.items() if isinstance(docs, dict)
             for d, g in docs.items()],
            [ScoredDoc(q, d, v) for q, docs in run.items() if isinstance(docs, dict)
             for d, v in docs.items()])


def make_call(rng, qrels, run):
    """(door, call) for one case."""
    import trecqr

    door = rng.choice(["evaluate", "evaluate options", "DataFrame", "evaluate_many",
                       "RelevanceEvaluator", "RelevanceEvaluator options", "provider",
                       "compare", "fuse", "agree", "bounds", "diversity"])
    measures = rng.choice(MEASURES)
    other = {q: {d: rng.random() for d in docs} if isinstance(docs, dict) and rng.random() < 0.9
             else docs for q, docs in run.items()}  # a second run: the same documents
    if door == "compare":
        kw = dict(test=rng.choice(["t", "wilcoxon", "randomization", "tukey-hsd"]),
                  permutations=200, bootstrap=200, complete=rng.random() < 0.3,
                  all_pairs=rng.random() < 0.3, anova=rng.random() < 0.2,
                  correction=rng.choice([None, "holm", "bonferroni", "bh", "by", "none"]))
        return door, lambda: _compare_means_are_evaluate(qrels, [run, other], measures, kw)
    if door == "agree":
        relabelled = {q: {d: (g + 1 if isinstance(g, int) and not isinstance(g, bool) and
                              rng.random() < 0.3 else g) for d, g in docs.items()}
                      if isinstance(docs, dict) else docs for q, docs in qrels.items()}
        which = rng.choice(["labels", "rankings", "repro"])
        if which == "labels":
            return door, lambda: trecqr.agree_labels(qrels, relabelled).to_dict()
        if which == "rankings":
            return door, lambda: trecqr.agree_rankings(qrels, relabelled, [run, other, run],
                                                       measures).to_dict()
        return door, lambda: trecqr.agree_repro(run, other, qrels=qrels,
                                                measures=measures).to_dict()
    if door == "diversity":  # (topic, subtopic, docno, grade) records: intent-aware names
        records = [(q, rng.choice(["1", "2", "3"]), d, g) for q, docs in qrels.items()
                   if isinstance(docs, dict) for d, g in docs.items()]
        names = rng.choice([["alpha_nDCG@5"], ["ERR_IA@5", "nERR_IA@5"], ["P_IA@5", "ST-recall@5"],
                            ["alpha_nDCG(alpha=0.9)@10", "AP_IA"]])
        return door, lambda: trecqr.evaluate(records, run, names, diversity=True).aggregate()
    if door == "bounds":
        return door, lambda: _bounds_lower_is_evaluate(qrels, run, measures)
    if door == "fuse":
        method = rng.choice(["rrf", "combsum", "combmnz", "wsum", "isr", "log_isr", "bordafuse"])
        norm = rng.choice(["min-max", "max", "sum", "zmuv", "rank", None])
        return door, lambda: trecqr.evaluate(qrels, trecqr.fuse([run, other], method=method,
                                                                norm=norm), measures)
    if door == "evaluate":
        return door, lambda: _same_through_every_door(qrels, run, measures)
    if door == "evaluate options":
        kw = dict(complete=rng.random() < 0.5, relevance_level=rng.choice([0, 1, 2, -1, 2 ** 40]),
                  judged_only=rng.random() < 0.3, max_docs=rng.choice([None, 0, 1, 3, 2 ** 62]),
                  compat=rng.choice(["9.0.8", "10.0"]))

        def views():
            res = trecqr.evaluate(qrels, run, measures, **kw)
            res.aggregate(), res.per_query(), res.populations(), repr(res), res._repr_html_()
            res.to_dataframe(), res.to_dataframe(wide=True), res.to_dataframe(means=True)
        return door, views
    if door == "DataFrame":
        return door, lambda: trecqr.evaluate(*_frames(qrels, run), measures).aggregate()
    if door == "evaluate_many":
        return door, lambda: _many_is_evaluate(qrels, [run, other], measures)
    if door.startswith("RelevanceEvaluator"):
        names = rng.choice(PYTREC)
        kw = {} if door == "RelevanceEvaluator" else dict(
            relevance_level=rng.choice([0, 1, 2, -1]), judged_docs_only_flag=rng.random() < 0.3)
        return door, lambda: _drop_in_as_evaluate(qrels, run, names, kw)
    import ir_measures

    trecqr.register_ir_measures()
    names = [ir_measures.parse_measure(n) for n in rng.choice(IRM)]

    def both():
        means = ir_measures.calc_aggregate(names, qrels, run)
        list(ir_measures.iter_calc(names, qrels, run))
        got = trecqr.evaluate(qrels, run, [str(n) for n in names]).aggregate()
        if not _same({str(k): v for k, v in means.items()}, got):
            raise Disagreement(f"provider {means} but evaluate {got}")
    return door, both


def clean(door: str, exc: BaseException) -> bool:
    from trecqr.errors import TrecqrError

    if isinstance(exc, TrecqrError):
        return True
    return door.startswith("RelevanceEvaluator") and isinstance(exc, (TypeError, ValueError))


def run_cases(cases: int, seed: int) -> int:
    """Run the cases; print each unclean one; return how many were unclean."""
    unclean = 0
    for i in range(cases):
        rng = random.Random(f"{seed}/{i}")  # a case replays alone from its seed and index
        qrels, run = make_case(rng)
        door, call = make_call(rng, qrels, run)
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - classifying every exception is the point
            if not clean(door, exc):
                unclean += 1
                print(f"case {seed}/{i} {door}: {type(exc).__name__}: {str(exc)[:300]}")
                print(f"  qrels {qrels!r:.400}\n  run {run!r:.400}")
                print("  " + traceback.format_exc().splitlines()[-3].strip())
    return unclean


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    import ir_measures

    registered = list(ir_measures.DefaultPipeline.providers)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            unclean = run_cases(args.cases, args.seed)
        finally:  # the provider door registers trecqr's provider: leave the pipeline as found
            ir_measures.DefaultPipeline.providers[:] = registered
    print(f"{args.cases} cases (seed {args.seed}); {unclean} unclean")
    return 1 if unclean else 0


if __name__ == "__main__":
    faulthandler.enable()  # a crash of the interpreter prints where it happened
    sys.exit(main())
