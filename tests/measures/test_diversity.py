"""ndeval's intent-aware (diversity) family: diversity qrels, the native measures against
ir_measures' pyndeval provider (NIST ndeval) on the TREC Tasks 2016 suggestion runs, per topic
and aggregate, cases worked by hand from ndeval.c's definitions, ``trecqr eval -R diversity``
and ``trecqr suggest tasks``."""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pyarrow as pa
import pytest

from conftest import ROOT, data_path, run_cli
from trecqr.errors import InputError
from trecqr.formats.diversity import (detect_diversity, diversity_from_frame,
                                      diversity_from_records, read_diversity_qrels, topic_qrels)
from trecqr.formats.run import Run, read_run
from trecqr.measures.irm_native import native

ir_measures = pytest.importorskip("ir_measures")

QRELS = data_path("sessions", "tasks2016-qrels-suggestions.txt")
RUNS = {"QS": data_path("sessions", "tasks2016-run-QS.txt"),
        "WD": data_path("sessions", "tasks2016-run-WD.txt")}

# TREC Tasks 2016 suggestion runs as the track scored them (ndeval), pinned; ir_measures'
# pyndeval provider gives these same numbers (test_provider_values_on_tasks2016). RANK_ORDER:
# the same runs ranked by their rank column, as the ndeval program ranks without -traditional
# (their tied scores are ranked otherwise than pyndeval's docno-ascending rule)
PINNED = {
    "QS": {"alpha_nDCG@10": 0.5188593785076385, "alpha_nDCG@20": 0.534352243510435,
           "ERR_IA@10": 0.41172884407583704, "ERR_IA@20": 0.41804371967955795},
    "WD": {"alpha_nDCG@10": 0.27257996722840777, "alpha_nDCG@20": 0.289212420649085,
           "ERR_IA@10": 0.23041829835948507, "ERR_IA@20": 0.23535742433574125},
}

RANK_ORDER = {
    "QS": {"alpha_nDCG@10": 0.5137, "alpha_nDCG@20": 0.5281, "ERR_IA@10": 0.4056,
           "ERR_IA@20": 0.4112},
    "WD": {"alpha_nDCG@10": 0.2732, "alpha_nDCG@20": 0.2882, "ERR_IA@10": 0.2294,
           "ERR_IA@20": 0.2338},
}

FAMILY = ["alpha_nDCG@10", "alpha_nDCG@5", "alpha_nDCG@20", "alpha_nDCG@1", "α_nDCG@3",
          "alpha_nDCG(alpha=0.3)@20", "alpha_nDCG(rel=2)@10", "alpha_nDCG(alpha=1.0)@10",
          "alpha_nDCG(alpha=0.0)@10", "alpha_DCG@10", "alpha_DCG@1", "α_DCG(alpha=0.8)@7",
          "ERR_IA@10", "ERR_IA@20", "ERR_IA@1", "ERR_IA(rel=2)@20", "nERR_IA@10", "nERR_IA@5",
          "NRBP", "NRBP(alpha=0.2,beta=0.8)", "nNRBP", "nNRBP(alpha=0.9,beta=0.3)",
          "nNRBP(alpha=1.0)", "P_IA@10", "P_IA@5", "P_IA(rel=2)@20", "AP_IA", "MAP_IA(rel=2)",
          "StRecall@10", "StRecall@5", "StRecall(rel=2)@20"]


def _quiet(fn, *args):
    with contextlib.redirect_stderr(io.StringIO()):  # the provider's subtopic warning
        return fn(*args)


def _invocation(m):
    """The pyndeval invocation ir_measures' provider puts a measure in (rel, alpha, beta)."""
    alpha = m["alpha"] if m.NAME in ("alpha_DCG", "alpha_nDCG", "NRBP", "nNRBP") else 0.5
    beta = m["beta"] if m.NAME in ("NRBP", "nNRBP") else 0.5
    return m["rel"], alpha, beta


def _provider_values(names, qrels, runs):
    """{run: {name: ({topic: value}, aggregate)}} from ir_measures' pyndeval provider, one
    evaluator per pyndeval invocation (measures of several invocations in one call share one
    run iterator in ir_measures 0.4.3: all but the first invocation yield nothing)."""
    groups: dict = {}
    for name in names:
        m = ir_measures.parse_measure(name)
        groups.setdefault(_invocation(m), []).append((name, m))
    out = {key: {} for key in runs}
    for items in groups.values():
        ev = _quiet(ir_measures.pyndeval.evaluator, [m for _, m in items], qrels)
        for key, run in runs.items():
            per = {}
            for r in ev.iter_calc(run):
                per.setdefault(r.measure, {})[r.query_id] = r.value
            agg = ev.calc_aggregate(run)
            for name, m in items:
                out[key][name] = (per[m], agg[m])
    return out


def _native(name, run, qrels, topics):
    m = ir_measures.parse_measure(name)
    return native(m).function(run, qrels, topics, m)


@pytest.fixture(scope="module")
def tasks():
    pytest.importorskip("pyndeval")
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    runs = {k: list(ir_measures.read_trec_run(str(p))) for k, p in RUNS.items()}
    return (qrels, runs, read_diversity_qrels(QRELS), {k: read_run(p) for k, p in RUNS.items()},
            _provider_values(FAMILY, qrels, runs))


# ------------------------------------------------------------------------------ qrels
def test_reader_and_detection(tmp_path):
    q = read_diversity_qrels(QRELS)
    assert len(q) == 47689 and len(set(q.qid.to_pylist())) == 50
    assert q.subtopic[:3].to_pylist() == ["1", "2", "3"] and int(q.grade.max()) == 2
    assert detect_diversity(str(QRELS)) is not None
    assert detect_diversity(str(ROOT / "fixtures" / "cast2021" / "qrels.txt")) is None
    # one row per judged (topic, docno), its highest grade
    tq = topic_qrels(q)
    assert len(tq) == len(set(zip(q.qid.to_pylist(), q.docno.to_pylist())))
    plain = tmp_path / "plain.txt"
    plain.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    assert detect_diversity(str(plain)) is None
    div = tmp_path / "div.txt"
    div.write_text("1 1 a 1\n1 2 a 0\n1 2 b 1\n")
    got = detect_diversity(str(div))
    assert got.subtopic.to_pylist() == ["1", "2", "2"] and got.grade.tolist() == [1, 0, 1]


def test_reader_errors(tmp_path):
    dup = tmp_path / "dup.txt"
    dup.write_text("1 1 a 1\n1 2 a 0\n1 1 a 0\n")
    with pytest.raises(InputError, match=r"dup.txt:3: duplicate judgment for topic '1', "
                                         r"subtopic '1' and docno 'a' \(first at line 1\)"):
        read_diversity_qrels(dup)
    frac = tmp_path / "frac.txt"
    frac.write_text("1 1 a 1\n1 2 a 1.5\n")
    with pytest.raises(InputError, match=r"frac.txt:2: grade '1.5' is not an integer"):
        read_diversity_qrels(frac)
    short = tmp_path / "short.txt"
    short.write_text("1 1 a 1\n1 a 1\n")
    with pytest.raises(InputError, match=r"short.txt:2: expected 4 fields"):
        read_diversity_qrels(short)


def test_frame_and_records():
    pd = pytest.importorskip("pandas")
    rows = [("1", "x", "a", 1), ("1", "y", "a", 0), ("1", "y", "b", 2)]
    frame = pd.DataFrame(rows, columns=["query_id", "iteration", "doc_id", "relevance"])
    a, b = detect_diversity(frame), diversity_from_records(rows)
    for q in (a, b, diversity_from_frame(frame),
              diversity_from_records([ir_measures.Qrel(t, d, g, s) for t, s, d, g in rows])):
        assert q.qid.to_pylist() == ["1"] * 3 and q.subtopic.to_pylist() == ["x", "y", "y"]
        assert q.docno.to_pylist() == ["a", "a", "b"] and q.grade.tolist() == [1, 0, 2]
    assert detect_diversity(frame.drop(columns="iteration")) is None


# ------------------------------------------------------------------------------ provider
@pytest.mark.parametrize("name", FAMILY)
def test_provider_values_on_tasks2016(tasks, name):
    """Every measure of the family equals ir_measures' pyndeval provider per topic, bit for bit,
    and its mean over the qrels topics equals the provider's aggregate, on both runs."""
    qrels, runs, dq, truns, provider = tasks
    m = ir_measures.parse_measure(name)
    for key in RUNS:
        topics = list(dict.fromkeys(truns[key].qid.to_pylist()))
        got = native(m).function(truns[key], dq, topics, m)
        ref, agg = provider[key][name]
        assert sorted(ref) == sorted(topics)
        np.testing.assert_array_equal(got, np.array([ref[t] for t in topics]))
        assert math.isclose(float(np.cumsum(got)[-1]) / 50, agg, rel_tol=1e-15, abs_tol=1e-15)


def test_pinned_tasks2016_values(tasks):
    qrels, runs, dq, truns, provider = tasks
    for key, values in PINNED.items():
        topics = list(dict.fromkeys(truns[key].qid.to_pylist()))
        for name, value in values.items():
            assert float(np.cumsum(_native(name, truns[key], dq, topics))[-1]) / 50 == \
                pytest.approx(value, rel=1e-15)
            assert provider[key][name][1] == pytest.approx(value, rel=1e-15)


def test_judged_only_as_the_provider_on_the_judged_run(tasks):
    """judged_only drops unjudged suggestions before ranking (ir_measures 0.4.3's provider means
    this, but fails with a TypeError): equal to the provider on a run filtered beforehand."""
    qrels, runs, dq, truns, _ = tasks
    judged = {(q.query_id, q.doc_id) for q in qrels}
    filtered = {k: [r for r in run if (r.query_id, r.doc_id) in judged]
                for k, run in runs.items()}
    names = ["alpha_nDCG@10", "ERR_IA@20", "nERR_IA@5", "AP_IA", "P_IA@5"]
    provider = _provider_values(names, qrels, filtered)
    for key in RUNS:
        topics = list(dict.fromkeys(truns[key].qid.to_pylist()))
        for name in names:
            ref = provider[key][name][0]
            jo = name.replace("@", "(judged_only=True)@") if "@" in name \
                else name + "(judged_only=True)"
            got = _native(jo, truns[key], dq, topics)
            np.testing.assert_array_equal(got, [ref.get(t, 0.0) for t in topics])


def _reference(judgments, ranking, alpha, depth):
    """alpha-DCG, alpha-nDCG, ERR-IA, nERR-IA at ranks 1..depth for one topic, written out
    loop by loop from ndeval.c's definitions with its DEPTH set to ``depth`` (judgments:
    {docno: set of relevant subtopics}; ranking: docnos in rank order)."""
    subs = sorted({s for v in judgments.values() for s in v})
    m = len(subs)
    disc = [1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, depth)]

    def cumulative(docs):
        gain = {s: 1.0 for s in subs}
        dcg, err = [0.0] * depth, [0.0] * depth
        for i, d in enumerate(docs[:depth]):
            score = 0.0
            for s in subs:
                if s in judgments.get(d, ()):
                    score += gain[s]
                    gain[s] *= 1.0 - alpha
            dcg[i], err[i] = score * disc[i], score / (i + 1.0)
        ideal_dcg, ideal_err, g = [0.0] * depth, [0.0] * depth, float(m)
        for i in range(depth):
            ideal_dcg[i], ideal_err[i] = g * disc[i], g / (i + 1.0)
            g *= 1.0 - alpha
        for i in range(1, depth):
            dcg[i] += dcg[i - 1]
            err[i] += err[i - 1]
            ideal_dcg[i] += ideal_dcg[i - 1]
            ideal_err[i] += ideal_err[i - 1]
        for i in range(1, depth):
            dcg[i] /= ideal_dcg[i]
            err[i] /= ideal_err[i]
        return dcg, err

    gain, left, ideal = {s: 1.0 for s in subs}, sorted(judgments), []
    while left:  # greedy: highest gain, ties to the larger docno
        best, where = None, None
        for d in left:
            score = 0.0
            for s in subs:
                if s in judgments[d]:
                    score += gain[s]
            if where is None or score > best or (score == best and d > where):
                best, where = score, d
        ideal.append(where)
        left.remove(where)
        for s in judgments[where]:
            gain[s] *= 1.0 - alpha
    dcg, err = cumulative(ranking)
    idcg, ierr = cumulative(ideal)
    ndcg = [a / b if a else 0.0 for a, b in zip(dcg, idcg)]
    nerr = [a / b if a else 0.0 for a, b in zip(err, ierr)]
    return dcg, ndcg, err, nerr


def test_beyond_the_provider(tasks):
    """A cutoff above 20 (pyndeval stops at ndeval's DEPTH 20) is ndeval with a larger DEPTH
    (checked against ndeval's loops written out); no cutoff means the whole ranking (the Tasks
    runs rank 20 suggestions per task)."""
    _, _, dq, truns, _ = tasks
    run = truns["QS"]
    topics = list(dict.fromkeys(run.qid.to_pylist()))
    for name in ("alpha_nDCG", "nERR_IA", "StRecall", "P_IA"):
        np.testing.assert_array_equal(_native(name, run, dq, topics),
                                      _native(f"{name}@20", run, dq, topics))
    np.testing.assert_array_equal(_native("StRecall@25", run, dq, topics),
                                  _native("StRecall@20", run, dq, topics))
    rng = np.random.default_rng(7)
    judgments = {f"d{i:02d}": {s for s in "ABCDE" if rng.random() < 0.3} for i in range(45)}
    rows = [("t", s, d, 1) for d, v in judgments.items() for s in sorted(v)]
    rows += [("t", "A", d, 0) for d, v in judgments.items() if not v]
    qrels = diversity_from_records(rows)
    ranking = [f"d{i:02d}" for i in rng.permutation(60)]  # d45.. unjudged
    r = Run(pa.array(["t"] * 60), pa.array(ranking), np.arange(60, 0, -1, dtype=float))
    for alpha in (0.5, 0.2):
        dcg, ndcg, err, nerr = _reference(judgments, ranking, alpha, 40)
        for k in (1, 5, 20, 25, 40):
            a = f"(alpha={alpha})@{k}"
            assert _native(f"alpha_DCG{a}", r, qrels, ["t"])[0] == dcg[k - 1]
            assert _native(f"alpha_nDCG{a}", r, qrels, ["t"])[0] == ndcg[k - 1]
            if alpha == 0.5:
                assert _native(f"ERR_IA@{k}", r, qrels, ["t"])[0] == err[k - 1]
                assert _native(f"nERR_IA@{k}", r, qrels, ["t"])[0] == nerr[k - 1]


# ------------------------------------------------------------------------------ by hand
def _hand():
    """Topic 1: subtopics A, B. d1 relevant to A and B, d2 to A, d3 to B, d4 judged not
    relevant, u1 unjudged; d1 and u1 tie at 0.8 (docno ascending: d1 first). Topic 2: judged,
    nothing relevant."""
    qrels = diversity_from_records([
        ("1", "A", "d1", 1), ("1", "B", "d1", 2), ("1", "A", "d2", 1), ("1", "B", "d2", 0),
        ("1", "B", "d3", 1), ("1", "A", "d4", 0), ("2", "A", "e1", 0)])
    rows = [("1", "d2", 0.9), ("1", "u1", 0.8), ("1", "d1", 0.8), ("1", "d3", 0.1),
            ("2", "e1", 1.0)]
    run = Run(pa.array([r[0] for r in rows]), pa.array([r[1] for r in rows]),
              np.array([r[2] for r in rows]))
    return qrels, run, rows


def test_hand_worked_ndeval_definitions():
    qrels, run, _ = _hand()
    v = lambda name: _native(name, run, qrels, ["1", "2"])  # noqa: E731
    d1, d2, d3 = math.log(2) / math.log(3), 0.5, math.log(2) / math.log(5)
    # ranking d2, d1, u1, d3; novelty gains (alpha 0.5): 1, 0.5 + 1, 0, 0.5
    dcg = [1, 1 + 1.5 * d1, 1 + 1.5 * d1, 1 + 1.5 * d1 + 0.5 * d3]
    ii = [2, 2 + 1 * d1, 2 + d1 + 0.5 * d2, 2 + d1 + 0.5 * d2 + 0.25 * d3]  # m (1-a)^i d(i)
    # greedy ideal: d1 (gain 2), then d2/d3 tie at 0.5 -> larger docno d3, then d2 (0.5)
    ideal = [2, 2 + 0.5 * d1, 2 + 0.5 * d1 + 0.5 * d2, 2 + 0.5 * d1 + 0.5 * d2]
    assert v("alpha_DCG@1").tolist() == [1.0, 0.0]  # rank 1 left raw, as in ndeval
    assert v("alpha_DCG@2")[0] == pytest.approx(dcg[1] / ii[1], rel=1e-14)
    assert v("alpha_DCG@4")[0] == pytest.approx(dcg[3] / ii[3], rel=1e-14)
    assert v("alpha_nDCG@2")[0] == pytest.approx(dcg[1] / ideal[1], rel=1e-14)
    assert v("alpha_nDCG@4")[0] == pytest.approx(dcg[3] / ideal[3], rel=1e-14)
    assert v("alpha_nDCG@1")[0] == pytest.approx(1 / 2, rel=1e-14)
    # ERR-IA: gain / rank, ideal ideal m (1-a)^i / (i + 1)
    err, iie = 1 + 1.5 / 2 + 0.5 / 4, 2 + 1 / 2 + 0.5 / 3 + 0.25 / 4
    assert v("ERR_IA@4")[0] == pytest.approx(err / iie, rel=1e-14)
    assert v("ERR_IA@1").tolist() == [1.0, 0.0]
    assert v("nERR_IA@4")[0] == pytest.approx(err / (2 + 0.5 / 2 + 0.5 / 3), rel=1e-14)
    # P-IA: relevant (doc, subtopic) pairs / (k m); StRecall: subtopics covered / m
    assert v("P_IA@2").tolist() == [3 / 4, 0.0]
    assert v("P_IA@4").tolist() == [4 / 8, 0.0]
    assert v("P_IA@10").tolist() == [4 / 20, 0.0]  # k, not the documents ranked
    assert v("StRecall@1").tolist() == [0.5, 0.0] and v("StRecall@2").tolist() == [1.0, 0.0]
    # AP-IA: A (d1, d2 relevant) AP 1; B (d1, d3) (1/2 + 2/4) / 2
    assert v("AP_IA").tolist() == [(1 + 0.5) / 2, 0.0]
    # NRBP: (1 - (1-a) b) / m * sum gain b^i; nNRBP over the ideal's; 0/0 without relevance
    nrbp = (1 - 0.5 * 0.5) / 2 * (1 + 1.5 * 0.5 + 0.5 * 0.125)
    assert v("NRBP").tolist() == [nrbp, 0.0]
    got = v("nNRBP")
    assert got[0] == pytest.approx(nrbp / ((1 - 0.25) / 2 * (2 + 0.5 * 0.5 + 0.5 * 0.25)),
                                   rel=1e-14) and math.isnan(got[1])
    # judged_only: u1 leaves the ranking, d3 moves to rank 3
    assert v("alpha_DCG(judged_only=True)@3")[0] == pytest.approx(
        (1 + 1.5 * d1 + 0.5 * d2) / ii[2], rel=1e-14)
    # rel=2: only d1's B judgment counts; one subtopic
    assert v("P_IA(rel=2)@2").tolist() == [1 / 2, 0.0]
    assert v("alpha_nDCG(rel=2)@2")[0] == pytest.approx(d1, rel=1e-14)  # ideal: d1 first


def test_hand_case_equals_pyndeval():
    pyndeval = pytest.importorskip("pyndeval")
    qrels, run, rows = _hand()
    tuples = list(zip(qrels.qid.to_pylist(), qrels.subtopic.to_pylist(),
                      qrels.docno.to_pylist(), qrels.grade.tolist()))
    names = {"alpha-nDCG@4": "alpha_nDCG@4", "ERR-IA@4": "ERR_IA@4", "nERR-IA@2": "nERR_IA@2",
             "NRBP": "NRBP", "nNRBP": "nNRBP", "MAP-IA": "AP_IA", "P-IA@3": "P_IA@3",
             "strec@1": "StRecall@1", "alpha-DCG@1": "alpha_DCG@1"}
    ref = pyndeval.RelevanceEvaluator(tuples, list(names)).evaluate(rows)
    for nd, irm in names.items():
        got = _native(irm, run, qrels, ["1", "2"])
        np.testing.assert_array_equal(got, [ref["1"][nd], ref["2"][nd]])


def test_parameters_checked():
    from trecqr.errors import UsageError

    qrels, run, _ = _hand()
    with pytest.raises(UsageError, match="alpha must be between 0 and 1"):
        _native("alpha_nDCG(alpha=1.5)@5", run, qrels, ["1"])
    with pytest.raises(UsageError, match="needs diversity qrels"):
        _native("alpha_nDCG@5", run, topic_qrels(qrels), ["1"])


# ------------------------------------------------------------------------------ commands
def test_eval_R_diversity():
    res = run_cli(["eval", "-R", "diversity", "-m", "alpha_nDCG@10", "-m", "ERR_IA@20",
                   "-m", "alpha_nDCG@20", "-m", "ERR_IA@10", str(QRELS), str(RUNS["QS"])])
    assert res.exit_code == 0, res.output
    lines = {ln.split()[0]: ln.split()[2] for ln in res.stdout.splitlines()}
    for name, value in PINNED["QS"].items():
        assert lines[name] == f"{value:.4f}"
    res = run_cli(["eval", "-R", "diversity", "-m", "alpha_nDCG@10", "--format", "json",
                   str(QRELS), str(RUNS["WD"])])
    assert res.exit_code == 0, res.output
    assert str(PINNED["WD"]["alpha_nDCG@10"])[:12] in res.stdout
    both = run_cli(["eval", "-R", "diversity", "-m", "ERR_IA@10", "-j", "1", str(QRELS),
                    str(RUNS["QS"]), str(RUNS["WD"])])  # several runs: the qrels read once
    assert both.exit_code == 0, both.output
    assert [ln.split()[2] for ln in both.stdout.splitlines()] == \
        [f"{PINNED[k]['ERR_IA@10']:.4f}" for k in ("QS", "WD")]
    bad = run_cli(["eval", "-R", "diversity", "-m", "map", str(QRELS), str(RUNS["QS"])])
    assert bad.exit_code == 2 and "-R diversity computes the intent-aware measures" in bad.stderr


def test_suggest_tasks():
    import json

    for key, values in PINNED.items():
        res = run_cli(["suggest", "tasks", str(RUNS[key]), "--qrels", str(QRELS),
                       "--format", "json"])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert out["metrics"] == pytest.approx(values, rel=1e-15)
        assert out["counts"]["tasks"] == 50 and out["counts"]["suggestions"] == 1000
    res = run_cli(["suggest", "tasks", str(RUNS["QS"]), "--qrels", str(QRELS),
                   "--measure", "nNRBP"])
    assert res.exit_code == 0 and "nNRBP" in res.stdout
    res = run_cli(["suggest", "tasks", str(RUNS["QS"])])
    assert res.exit_code == 2 and "--qrels" in res.stderr


def test_eval_json_equals_the_provider(tasks):
    """The whole family through ``trecqr eval -R diversity`` (the ir_measures-name path: per
    topic and ir_measures' mean over the qrels topics) equals the provider, both runs."""
    import json

    provider = tasks[4]
    args = [a for name in FAMILY for a in ("-m", name)]
    for key in RUNS:
        res = run_cli(["eval", "-q", "-R", "diversity", "--format", "json", *args, str(QRELS),
                       str(RUNS[key])])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        for name in FAMILY:
            ref, agg = provider[key][name]
            assert {q: v[name] for q, v in out["per_query"].items()} == ref, name
            assert out["summary"][name] == agg, name


def test_ir_measures_own_pyndeval_case():
    """The case of ir_measures 0.4.3's tests/test_pyndeval.py: ERR_IA@20 per topic and mean."""
    qrels = diversity_from_records([
        ("0", "0", "D0", 0), ("0", "0", "D1", 1), ("0", "0", "D2", 1), ("0", "1", "D2", 1),
        ("0", "1", "D3", 2), ("0", "0", "D4", 0), ("1", "0", "D0", 1), ("1", "0", "D3", 2),
        ("1", "1", "D5", 2)])
    rows = [("0", "D0", 0.8), ("0", "D2", 0.7), ("0", "D1", 0.3), ("0", "D3", 0.4),
            ("0", "D4", 0.1), ("1", "D1", 0.8), ("1", "D3", 0.7), ("1", "D4", 0.3),
            ("1", "D2", 0.4)]
    run = Run(pa.array([r[0] for r in rows]), pa.array([r[1] for r in rows]),
              np.array([r[2] for r in rows]))
    got = _native("ERR_IA@20", run, qrels, ["0", "1"])
    assert got.round(4).tolist() == [0.4659, 0.1803] and round(got.mean(), 4) == 0.3231


def test_suggest_tasks_in_rank_order(tasks):
    """--order rank: ndeval's default ranking (the rank column) equals the provider given the
    same runs with minus the rank as score."""
    import json

    from trecqr.formats.diversity import run_in_rank_order

    qrels, _, dq, _, _ = tasks
    for key, values in RANK_ORDER.items():
        res = run_cli(["suggest", "tasks", str(RUNS[key]), "--qrels", str(QRELS), "--order",
                       "rank", "--format", "json"])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        by_rank = [ir_measures.ScoredDoc(ln.split()[0], ln.split()[2], -float(ln.split()[3]))
                   for ln in open(RUNS[key])]
        provider = _provider_values(list(values), qrels, {key: by_rank})[key]
        for name, value in values.items():
            assert out["metrics"][name] == provider[name][1]
            assert round(out["metrics"][name], 4) == value
        assert out["parameters"]["order"] == "rank"
    run = run_in_rank_order(RUNS["QS"])
    assert run.score[:3].tolist() == [-1.0, -2.0, -3.0] and len(run) == 1000


def test_rank_order_errors(tmp_path):
    from trecqr.formats.diversity import run_in_rank_order

    for text, message in (("1 Q0 a 1 1 r\n1 Q0 b 1 2 r\n", r":2: duplicate rank 1 for topic '1'"),
                          ("1 Q0 a 1 1 r\n1 Q0 a 2 2 r\n", r":2: duplicate docno 'a'"),
                          ("1 Q0 a 1 1 r\n1 Q0 b x 2 r\n", r":2: rank 'x' is not a natural"),
                          ("1 Q0 a 1 1\n", r":1: expected 6 fields")):
        path = tmp_path / "run.txt"
        path.write_text(text)
        with pytest.raises(InputError, match=message):
            run_in_rank_order(path)



def test_eval_R_diversity_default_is_ndevals_columns():
    """Without -m, -R diversity prints ndeval's 21 columns; pyndeval's defaults (the same 21)
    give the same values per topic."""
    import json

    pyndeval = pytest.importorskip("pyndeval")
    res = run_cli(["eval", "-q", "-R", "diversity", "--format", "json", str(QRELS),
                   str(RUNS["WD"])])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    rows = [ln.split() for ln in open(QRELS)]
    ev = pyndeval.RelevanceEvaluator([(a, b, c, int(d)) for a, b, c, d in rows])
    ref = ev.evaluate([(ln.split()[0], ln.split()[2], float(ln.split()[4]))
                       for ln in open(RUNS["WD"])])
    rename = {"MAP-IA": "AP_IA", "strec": "StRecall"}
    names = [rename.get(n.split("@")[0], n.split("@")[0].replace("-", "_"))
             + ("@" + n.split("@")[1] if "@" in n else "") for n in pyndeval.DEFAULT_MEASURES]
    assert list(out["summary"]) == names
    for q, values in ref.items():
        assert [out["per_query"][q][n] for n in names] == list(values.values())


def test_diversity_records_and_frames_name_what_arrow_cannot_hold():
    """Found by benchmarks/fuzz_api.py: (topic, subtopic, docno, grade) records with a grade
    past 64 bits or an id with no UTF-8 form raised numpy's OverflowError and pyarrow's
    UnicodeEncodeError; a DataFrame's object column with a lone surrogate failed in pandas'
    own text conversion. Each is now one InputError naming the value; ids follow a
    DataFrame's id rule (an integer topic is its digits) in records and frames alike."""
    import pandas as pd
    import trecqr

    run = {"1": {"a": 1.0}, "2": {"a": 1.0}}
    with pytest.raises(InputError, match="topic 1 docno 'a': grade 1180591620717411303424 is "
                                         "out of the 64-bit integer range"):
        trecqr.evaluate([(1, "1", "a", 2 ** 70)], run, ["alpha_nDCG@5"], diversity=True)
    with pytest.raises(InputError, match=r"id 'a\\udc80' is not valid Unicode text"):
        trecqr.evaluate([(1, "1", "a\udc80", 1)], run, ["alpha_nDCG@5"], diversity=True)
    frame = pd.DataFrame({"query_id": pd.Series(["q\udc80"], dtype=object),
                          "subtopic_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(InputError, match=r"<diversity qrels DataFrame>: id 'q\\udc80' is not"):
        trecqr.evaluate(frame, run, ["alpha_nDCG@5"], diversity=True)
    records = [(1, "1", "a", 1), (2, "2", "b", 1)]
    frame = pd.DataFrame(records, columns=["query_id", "iteration", "doc_id", "relevance"])
    assert trecqr.evaluate(records, run, ["alpha_nDCG@5"], diversity=True).aggregate() \
        == trecqr.evaluate(frame, run, ["alpha_nDCG@5"], diversity=True).aggregate() \
        == {"alpha_nDCG@5": 0.5}
