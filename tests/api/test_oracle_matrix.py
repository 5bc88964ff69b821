"""Every door of trecqr gives its oracle's numbers: door (``trecqr eval``, ``trecqr.evaluate`` on
files, DataFrames, Arrow tables, dicts and the other kinds, ``RelevanceEvaluator``,
``evaluate_many``, the ir_measures provider) x input kind x measure set (trec_eval's names,
pytrec_eval's spellings, ir_measures' names) x oracle (the trec_eval 9.0.8 and 10.0 binaries,
pytrec_eval, ir_measures' own pipeline). Exact float equality unless a test says otherwise.

tests/oracle_cases.py holds the axes; tests/test_oracle_edges_*.py the single hand-made cases.
"""

from __future__ import annotations

import ir_measures
import pytest
import pytrec_eval
from ir_measures.providers.base import NOT_PROVIDED

import trecqr
from compat_cases import make_case, same, write_case
from conftest import TE, data_path, run_cli
from trecqr.errors import InputError
from oracle_cases import (KINDS, cast2021, columns, dicts_of_files, irm_oracle, needs_trec_eval,
                          no_runid, own_pipeline, renumbered, run_trec_eval, te_test,
                          three_column_files)
from oracle_sets import (AD_HOC, CUT_FAMILIES, GENERATED_FAMILIES, INTENT_AWARE, IRM_NAMES,
                         IRM_NAMES_WITH_OPTIONS, MIXED, PYTREC_ALL, asked_as, cut_case)

SEEDS = range(40)


def assert_same_results(expected: dict, got: dict):
    """pytrec_eval's dicts: same topics in the run's order, same keys in trec_eval's order,
    the same doubles (NaN equal to NaN)."""
    assert list(got) == list(expected)
    for qid, values in expected.items():
        assert list(got[qid]) == list(values), qid
        wrong = {k: (v, got[qid][k]) for k, v in values.items() if not same(v, got[qid][k])}
        assert not wrong, (qid, wrong)


def assert_irm(res, names, means, per_topic, same_names=False) -> int:
    """Results of ir_measures names against its oracle: per topic (topics trecqr reports),
    the means; returns the number of per-topic values checked."""
    got_agg, per_query = res.aggregate(), res.per_query()
    checked = 0
    for (name, qid), value in per_topic.items():
        if qid in per_query:  # qrels topics the run lacks: only in the means
            assert per_query[qid][name] == value, (name, qid)
            checked += 1
    if same_names:
        for qid in set(per_query) & {q for _, q in per_topic}:
            assert set(per_query[qid]) == {n for n, q in per_topic if q == qid}, qid
    assert {n: got_agg[n] for n in names} == means
    return checked


# ----------------------------------------------------- RelevanceEvaluator x pytrec_eval names
@pytest.mark.parametrize("data", [*SEEDS, "trec_eval test"])
def test_relevance_evaluator_equals_pytrec_eval_on_every_measure(data):
    """Every measure pytrec_eval supports, levels 1 and 2, with and without -J."""
    qrels, run = dicts_of_files(*te_test()) if data == "trec_eval test" else make_case(data)
    for level in (1, 2):
        for judged in (False, True):
            options = dict(relevance_level=level, judged_docs_only_flag=judged)
            expected = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_ALL, **options)
            got = trecqr.RelevanceEvaluator(qrels, PYTREC_ALL, **options)
            assert_same_results(expected.evaluate(run), got.evaluate(run))


RE_KINDS = ["dicts", "ir_measures DataFrame", "PyTerrier DataFrame", "Arrow table",
            "Arrow views", "polars DataFrames", "Hugging Face Datasets", "DuckDB relations",
            "trecqr Qrels and Run",
            "ranx objects", "ir_datasets iterators"]


@pytest.fixture(scope="module")
def re_inputs():
    """pytrec_eval's values on the CAsT 2021 dicts, and (qrels, run) of each kind, made once
    (ranx's first objects cost seconds of compilation)."""
    files = cast2021()
    qrels, run = dicts_of_files(*files)
    measures = {"map", "ndcg_cut_3", "recip_rank", "P_10", "recall_100", "bpref"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    assert len(expected) == 158 and expected["106_1"]["recip_rank"] == 0.5
    return measures, expected, {k: KINDS[k](files, columns(*files), None) for k in RE_KINDS[:-1]}


@pytest.mark.parametrize("qrels_kind", RE_KINDS)
def test_relevance_evaluator_takes_every_kind(qrels_kind, re_inputs):
    """Qrels of each kind with runs of each kind: pytrec_eval's values on the dicts."""
    measures, expected, kinds = re_inputs
    qrels = (KINDS[qrels_kind](cast2021(), None, None)[0] if qrels_kind not in kinds
             else kinds[qrels_kind][0])  # ir_datasets' iterators are read once: made here
    ev = trecqr.RelevanceEvaluator(qrels, measures)
    for run_kind, (_, run) in kinds.items():
        assert ev.evaluate(run) == expected, run_kind
    assert ev.evaluate([]) == {}


# ----------------------------------------------------- evaluate x every input kind
@pytest.fixture(scope="module")
def expected():
    """The TREC files' values of MIXED, each checked against its oracle: trec_eval names per
    topic against pytrec_eval, ir_measures names against ir_measures' own pipeline."""
    files = cast2021()
    res = trecqr.evaluate(*files, MIXED)
    agg, per_query = res.aggregate(), res.per_query()
    qrels, run = dicts_of_files(*files)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.3", "recip_rank", "P.10",
                                                  "recall.100", "num_ret"}).evaluate(run)
    for qid, values in per_query.items():
        assert values["map"] == trec[qid]["map"] and values["P_10"] == trec[qid]["P_10"]
        assert values["ndcg_cut_3"] == trec[qid]["ndcg_cut_3"]
    irm = [n for n in MIXED if "@" in n]
    means, topics = irm_oracle(irm, qrels, run)
    assert_irm(res, irm, means, topics)
    assert len(per_query) == 158 and agg["map"] == pytest.approx(0.2160592, abs=1e-7)
    return agg, per_query


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "trec files"])
def test_evaluate_takes_every_kind_with_the_files_values(kind, expected, tmp_path):
    files = cast2021()
    res = trecqr.evaluate(*KINDS[kind](files, columns(*files), tmp_path), MIXED)
    assert (res.aggregate(), res.per_query()) == expected


@pytest.mark.parametrize("kind", ["Parquet files", "Feather files", "JSONL files",
                                  "JSONL.gz files"])
def test_cli_reads_table_files_as_trec_files(kind, tmp_path):
    files = cast2021()
    paths = KINDS[kind](files, columns(*files), tmp_path)
    cli = run_cli(["eval", "-q", "-m", "map", "-m", "P.10", *paths])
    ref = run_cli(["eval", "-q", "-m", "map", "-m", "P.10", *files])
    assert cli.exit_code == 0, cli.stderr
    assert no_runid(cli.stdout) == no_runid(ref.stdout) and len(cli.stdout.splitlines()) > 300


def test_msmarco_three_column_run_and_tsv_qrels(expected, tmp_path):
    files = cast2021()
    msmarco, converted, tsv = three_column_files(files, tmp_path)
    for qrels, run in ((files[0], converted), (files[0], msmarco), (tsv, msmarco)):
        res = trecqr.evaluate(qrels, run, MIXED)
        assert (res.aggregate(), res.per_query()) == expected
    cli = run_cli(["eval", "-q", "-m", "all_trec", tsv, msmarco])
    ref = run_cli(["eval", "-q", "-m", "all_trec", files[0], converted])
    assert cli.exit_code == 0, cli.stderr
    assert no_runid(cli.stdout) == no_runid(ref.stdout)


def test_evaluate_many_takes_every_kind(expected, tmp_path):
    files = cast2021()
    c = columns(*files)
    kinds = ["PyTerrier DataFrame", "Arrow table", "ranx objects", "trec files", "dicts"]
    runs = [KINDS[k](files, c, tmp_path)[1] for k in kinds]
    qrels = KINDS["ir_measures DataFrame"](files, c, tmp_path)[0]
    for res in trecqr.evaluate_many(qrels, runs, MIXED):
        assert (res.aggregate(), res.per_query()) == expected


def test_integer_ids_in_frames_are_their_decimal_text(tmp_path):
    """Integer topic and document ids (trec_eval's suite: topics 301..350, documents renamed
    to integers of one width) give what the same integers in TREC files give."""
    import numpy as np
    import pandas as pd

    run, qrels = trecqr.load_run(TE / "results.test"), trecqr.load_qrels(TE / "qrels.test")
    rq = np.array(run.qid.to_pylist(), dtype=np.int64)
    qq = np.array(qrels.qid.to_pylist(), dtype=np.int64)
    docs = {d: i for i, d in enumerate(sorted(set(run.docno.to_pylist())
                                             | set(qrels.docno.to_pylist())))}
    width = len(str(len(docs)))
    rd = [int("1" + str(docs[d]).zfill(width)) for d in run.docno.to_pylist()]
    qd = [int("1" + str(docs[d]).zfill(width)) for d in qrels.docno.to_pylist()]
    run_file, qrels_file = tmp_path / "run", tmp_path / "qrels"
    run_file.write_text("".join(f"{a} Q0 {b} 0 {c!r} r\n"
                                for a, b, c in zip(rq, rd, run.score.tolist())))
    qrels_file.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in zip(qq, qd, qrels.grade)))
    ref = trecqr.evaluate(qrels_file, run_file, MIXED)
    got = trecqr.evaluate(pd.DataFrame({"query_id": qq, "doc_id": qd, "relevance": qrels.grade}),
                          pd.DataFrame({"qid": rq, "docno": rd, "score": run.score}), MIXED)
    assert (got.aggregate(), got.per_query()) == (ref.aggregate(), ref.per_query())
    assert len(ref.per_query()) == 3


@pytest.fixture
def irds_entry(tmp_path):
    """A dataset in ir_datasets' registry whose qrels and scored documents are the CAsT 2021
    files, read by ir_datasets' own TREC parsers (local files: nothing can be downloaded)."""
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecScoredDocs
    from ir_datasets.util import LocalDownload

    files = cast2021()
    names = {"trecqr-test/cast2021": (files[0], files[1]),
             "trecqr-test/missing": (tmp_path / "no-qrels", tmp_path / "no-run")}
    for name, (qrels, run) in names.items():
        ir_datasets.registry.register(name, Dataset(TrecQrels(LocalDownload(str(qrels)), {}),
                                                    TrecScoredDocs(LocalDownload(str(run)))))
    yield
    for name in names:
        del ir_datasets.registry._registered[name]


BARE = "msmarco-passage"  # in ir_datasets' registry: documents and queries only at this id


def test_irds_ids_give_the_files_values(irds_entry, expected):
    """irds:<id> for qrels and runs, as index, search and cqr take it (it was "no such
    file"); the same values as the files, from the API and the command line."""
    files = cast2021()
    for run in ("irds:trecqr-test/cast2021", files[1]):
        res = trecqr.evaluate("irds:trecqr-test/cast2021", run, MIXED)
        assert (res.aggregate(), res.per_query()) == expected
    cli = run_cli(["eval", "-q", "-m", "map", "irds:trecqr-test/cast2021", str(files[1])])
    ref = run_cli(["eval", "-q", "-m", "map", str(files[0]), str(files[1])])
    assert cli.exit_code == 0 and cli.stdout == ref.stdout
    with pytest.raises(InputError, match=r"^irds:trecqr-test/missing: cannot read the qrels"):
        trecqr.evaluate("irds:trecqr-test/missing", files[1], ["map"])
    bad = run_cli(["eval", "irds:no-such/dataset", str(files[1])])
    assert bad.exit_code == 2 and "has no dataset 'no-such/dataset'" in bad.stderr
    # a dataset with neither qrels nor their handler (fuzz seed 79: was an internal
    # AttributeError): one line, as for one without qrels
    for args, what in (([f"irds:{BARE}", str(files[1])], "qrels"),
                       ([str(files[0]), f"irds:{BARE}"], "scoreddocs")):
        res = run_cli(["eval", "-m", "map", *args])
        assert res.exit_code == 2 and res.stderr == f"trecqr: ir_datasets '{BARE}' has no {what}\n"


# ----------------------------------------------------- every door, one run, both name sets
TREC_NAMES = ["map", "P.5", "ndcg_cut.3", "recip_rank"]
IRM_DOOR_NAMES = ["nDCG@3", "RR@3", "R@100", "P(rel=2)@5"]
DOORS = ["evaluate on dicts", "evaluate on files", "evaluate_many", "RelevanceEvaluator",
         "provider", "trecqr eval"]


@pytest.mark.parametrize("door", DOORS)
def test_every_door_gives_the_oracles_values(door):
    """On CAsT 2021's ConvDR run: trec_eval names per topic equal pytrec_eval's, ir_measures
    names equal ir_measures' own pipeline's; the command line prints them to 4 decimals."""
    files = cast2021("docrun_org_convdr.run")
    qrels, run = dicts_of_files(*files)
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES)).evaluate(run)
    irm_means, irm_topics = irm_oracle(IRM_DOOR_NAMES, qrels, run)
    keys = ["map", "P_5", "ndcg_cut_3", "recip_rank"]
    if door == "RelevanceEvaluator":
        assert trecqr.RelevanceEvaluator(qrels, set(TREC_NAMES)).evaluate(run) == trec
    elif door == "provider":
        provider = trecqr.register_ir_measures()
        try:
            measures = [ir_measures.parse_measure(n) for n in IRM_DOOR_NAMES]
            got = ir_measures.calc_aggregate(measures, qrels, run)
            assert {n: got[m] for n, m in zip(IRM_DOOR_NAMES, measures)} == irm_means
        finally:
            ir_measures.DefaultPipeline.providers.remove(provider)
    elif door == "trecqr eval":
        out = run_cli(["eval", "-q", *[a for n in TREC_NAMES + IRM_DOOR_NAMES
                                       for a in ("-m", n)], *files])
        assert out.exit_code == 0, out.stderr
        rows = {(k.strip(), q): v for k, q, v in (line.split("\t")
                                                  for line in out.stdout.splitlines())}
        for qid, values in trec.items():
            assert all(rows[(k, qid)] == f"{values[k]:.4f}" for k in keys), qid
        assert all(rows[(n, q)] == f"{v:.4f}" for (n, q), v in irm_topics.items()
                   if (n, q) in rows)
        assert all(rows[(n, "all")] == f"{irm_means[n]:.4f}" for n in IRM_DOOR_NAMES)
    else:
        names = TREC_NAMES + IRM_DOOR_NAMES
        res = (trecqr.evaluate(qrels, run, names) if door == "evaluate on dicts" else
               trecqr.evaluate(*files, names) if door == "evaluate on files" else
               trecqr.evaluate_many(str(files[0]), [str(files[1])] * 2, names)[1])
        per_query = res.per_query()
        assert {q: {k: per_query[q][k] for k in keys} for q in trec} == trec
        assert_irm(res, IRM_DOOR_NAMES, irm_means, irm_topics)


# ----------------------------------------------------- trec_eval names x the binaries
CLI_OPTIONS = [["-q", "-m", "all_trec"], ["-q", "-c", "-m", "all_trec"],
               ["-q", "-J", "-m", "all_trec"], ["-q", "-l", "2", "-m", "all_trec"],
               ["-q", "-M", "5", "-m", "all_trec"], ["-m", "official", "-m", "P.3,7"],
               ["-q", "-Z", TE / "zscores_file", "-m", "official"]]


@pytest.mark.parametrize("options", CLI_OPTIONS, ids=lambda o: " ".join(map(str, o)))
@pytest.mark.parametrize("version", ["9.0.8", "10.0"])
def test_cli_equals_trec_eval_binary_on_its_test_data(options, version):
    binary = needs_trec_eval(version)
    compat = ["--compat", "10.0"] if version == "10.0" else []
    got = run_cli(["eval", *compat, *options, *te_test()])
    assert got.exit_code == 0, got.stderr
    assert got.stdout == run_trec_eval(binary, [*options, *te_test()])


@pytest.mark.parametrize("seed", [3, 7, 11])
def test_cli_equals_trec_eval_binary_on_generated_cases(seed, tmp_path):
    binary = needs_trec_eval("9.0.8")
    qrels, run = make_case(seed)
    paths = write_case(qrels, {q: d for q, d in run.items() if d}, tmp_path)
    for options in (["-q", "-m", "all_trec"], ["-q", "-c", "-J", "-M", "20", "-m", "all_trec"]):
        got = run_cli(["eval", *options, *paths])
        assert got.exit_code == 0, got.stderr
        assert got.stdout == run_trec_eval(binary, [*options, *paths])


@pytest.mark.parametrize("options", [["-q", "-m", "all_trec"], ["-q", "-J", "-m", "all_trec"],
                                     ["-q", "-l", "2", "-m", "all_trec"]],
                         ids=lambda o: " ".join(o))
def test_cli_per_topic_rows_equal_pytrec_eval(options):
    """Without the binaries too: each per-topic row of a measure pytrec_eval supports is its
    value to 4 decimals."""
    qrels, run = dicts_of_files(*te_test())
    level = int(options[options.index("-l") + 1]) if "-l" in options else 1
    ev = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_ALL, relevance_level=level,
                                        judged_docs_only_flag="-J" in options)
    expected = ev.evaluate(run)
    got = run_cli(["eval", *options, *te_test()])
    assert got.exit_code == 0, got.stderr
    checked = 0
    for line in got.stdout.splitlines():
        key, qid, value = (f.strip() for f in line.split("\t"))
        if qid in expected and key in expected[qid] and key != "relstring":
            want = expected[qid][key]  # counts print as integers
            assert value == (f"{want:.4f}" if "." in value else str(int(want))), (key, qid)
            checked += 1
    assert checked >= 90 * len(expected)


EVALUATE_OPTIONS = [{}, {"relevance_level": 2}, {"judged_only": True},
                    {"relevance_level": 3, "judged_only": True, "compat": "10.0"},
                    {"complete": True}]


@pytest.mark.parametrize("options", EVALUATE_OPTIONS, ids=str)
def test_evaluate_on_dicts_under_options_equals_trec_eval(options):
    """trec_eval names on dicts under -l, -J, 10.0 and -c: the binary's -q rows to 4
    decimals (pytrec_eval's values where it has the option, the binary where it is present)."""
    files = data_path("cast2021", "qrels-docs.2021.qrel"), data_path("cast2021",
                                                                      "org_convdr.trec")
    qrels, run = dicts_of_files(*files)
    names = ["map", "P.5,10", "recall.100", "recip_rank", "ndcg_cut.3,10", "map_cut.10"]
    res = trecqr.evaluate(qrels, run, names, **options)
    per_query, agg = res.per_query(), res.aggregate()
    if "compat" not in options and "complete" not in options:
        ev = pytrec_eval.RelevanceEvaluator(
            qrels, set(names), relevance_level=options.get("relevance_level", 1),
            judged_docs_only_flag=options.get("judged_only", False))
        assert per_query == ev.evaluate(run)
    binary = needs_trec_eval(options.get("compat", "9.0.8"))
    args = (["-l", options["relevance_level"]] if "relevance_level" in options else []) + \
        (["-J"] if options.get("judged_only") else []) + \
        (["-c"] if options.get("complete") else [])
    out = run_trec_eval(binary, ["-q", *args, *[a for n in names for a in ("-m", n)], *files])
    checked = 0
    for line in out.splitlines():
        key, qid, value = (f.strip() for f in line.split("\t"))
        if key == "runid":
            continue
        got = agg[key] if qid == "all" else per_query[qid][key]
        assert f"{got:.4f}" == value, (key, qid)
        checked += 1
    assert checked > 1000


# ----------------------------------------------------- ir_measures names x ir_measures
@pytest.mark.parametrize("seed", SEEDS)
def test_evaluate_on_dicts_equals_ir_measures(seed):
    """Means in the run's topic order over the qrels topics; keyed by the names as written.
    Names with judged_only or gains in their own calls (ir_measures computes NumRet and
    gain-less nDCG in whichever pytrec_eval invocation its set iteration meets first)."""
    qrels, run = make_case(seed)
    run = {q: d for q, d in run.items() if d}  # a DataFrame or file has no empty topics
    assert set(run) & set(qrels)
    for names in (IRM_NAMES, *IRM_NAMES_WITH_OPTIONS):
        got = trecqr.evaluate(qrels, run, names).aggregate()
        means, _ = irm_oracle(names, qrels, run)
        assert not {n: (means[n], got[n]) for n in names if not same(means[n], got[n])}
        assert list(got) == names


def test_evaluate_on_files_equals_ir_measures_per_topic():
    qrels = list(ir_measures.read_trec_qrels(str(TE / "qrels.test")))
    run = list(ir_measures.read_trec_run(str(TE / "results.test")))
    res = trecqr.evaluate(*te_test(), IRM_NAMES)
    means, per_topic = irm_oracle(IRM_NAMES, qrels, run)
    assert assert_irm(res, IRM_NAMES, means, per_topic) == len(res.per_query()) * len(IRM_NAMES)


def test_evaluate_on_dicts_without_some_topics_equals_ir_measures():
    """qrels topics the run lacks and a qrels topic without judgments: ir_measures'
    defaults, counted in the means."""
    qrels, run = dicts_of_files(*cast2021("docrun_org_convdr.run"))
    dropped = sorted(run)[:5]
    for qid in dropped:
        del run[qid]
    qrels["unjudged-topic"] = {}
    names = ["RR", "nDCG@3", "R@100", "P(rel=2)@5", "AP"]
    res = trecqr.evaluate(qrels, run, names)
    assert res.aggregate() == pytest.approx(irm_oracle(names, qrels, run)[0], abs=1e-12)
    assert res.per_query()[dropped[0]] == dict.fromkeys(names, 0.0)


def test_gains_and_levels_equal_ir_measures():
    """nDCG(gains=...) and rel=k names, computed on the call's one ranking, equal ir_measures'
    own pipeline (pytrec_eval on mapped qrels)."""
    qrels, run = dicts_of_files(*cast2021("docrun_org_convdr.run"))
    names = ["nDCG(gains={0:0,1:1,2:5,3:7,4:10})@10", "P(rel=3)@5", "AP(rel=2)",
             "nDCG(judged_only=True,gains={0:1,1:0,2:2,3:2,4:4})"]
    assert trecqr.evaluate(qrels, run, names).aggregate() == irm_oracle(names, qrels, run)[0]


@pytest.mark.parametrize("family", sorted(AD_HOC))
def test_registry_ad_hoc_names_equal_ir_measures_on_cast2021(family, cast_frames):
    qf, rf, qrows, rrows = cast_frames
    names = AD_HOC[family]
    means, per_topic = irm_oracle(names, qrows, rrows, one_call_each=True)
    res = trecqr.evaluate(qf, rf, asked_as(names))
    assert assert_irm(res, names, means, per_topic) >= 130 * len(names)  # 158 judged topics


@pytest.mark.parametrize("run", ["tasks2016-run-QS.txt", "tasks2016-run-WD.txt"])
@pytest.mark.parametrize("family", sorted(INTENT_AWARE))
def test_registry_intent_aware_names_equal_ir_measures_on_tasks2016(family, run, tasks_frames):
    qf, rf, qrows = tasks_frames[run]
    qf, rf = qf.copy(), rf.copy()
    names = INTENT_AWARE[family]
    means, per_topic = irm_oracle(names, qrows, rf, one_call_each=True)
    res = trecqr.evaluate(qf, rf, asked_as(names))
    assert assert_irm(res, names, means, per_topic) >= 40 * len(names)


@pytest.fixture(scope="module")
def tasks_frames():
    """The two TREC Tasks 2016 runs and the diversity qrels, renumbered once for the module:
    {run: (qrels frame, run frame, the qrels frame's rows as ir_measures reads them)}. The
    oracle is given those rows (the Qrel tuples, with subtopics, that ir_measures makes of the
    frame on each call: 47,000 rows, a second per call, made once here)."""
    qrels = data_path("sessions", "tasks2016-qrels-suggestions.txt")
    frames = {run: renumbered(qrels, data_path("sessions", run), subtopics=True)
              for run in ("tasks2016-run-QS.txt", "tasks2016-run-WD.txt")}
    out = {}
    for run, (qf, rf) in frames.items():
        rows = list(ir_measures.util.QrelsConverter(qf).as_namedtuple_iter())
        assert len(rows) == len(qf) and all(r.iteration is not None for r in rows[:5])
        out[run] = qf, rf, rows
    return out


@pytest.fixture(scope="module")
def cast_frames():
    """(qrels frame, run frame, their rows as ir_measures reads them): the oracle is given the
    Qrel and ScoredDoc tuples ir_measures makes of the frames on each call, made once here."""
    qf, rf = renumbered(*cast2021("docrun_org_convdr.run"))
    qrows = list(ir_measures.util.QrelsConverter(qf).as_namedtuple_iter())
    rrows = list(ir_measures.util.RunConverter(rf).as_namedtuple_iter())
    assert (len(qrows), len(rrows)) == (len(qf), len(rf))
    return qf, rf, qrows, rrows


@pytest.fixture(scope="module", params=[(name, ties) for name in
                                        ("docrun_org_convdr.run", "docrun_org_manual_bm25.run")
                                        for ties in (False, True)],
                ids=lambda p: p[0].split("_", 2)[-1][:-4] + ("-ties" if p[1] else ""))
def cut(request, tmp_path_factory):
    return cut_case(*request.param, tmp_path_factory.mktemp("irm"))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("family", sorted(CUT_FAMILIES))
def test_native_families_equal_ir_measures_on_cut_runs(family, cut):
    """cwl_eval, gdeval, Compat and Accuracy: trecqr's own kernels on files, the providers'
    tie orders exercised (see oracle_sets.cut_case)."""
    names, renumber, skip = CUT_FAMILIES[family]
    if skip:
        skip()
    qrels = list(ir_measures.read_trec_qrels(str(cut[0])))
    run = list(ir_measures.read_trec_run(str(cut[1])))
    back = {}
    if renumber:  # gdeval: digits only, numbered in run order
        ids: dict = {}
        for row in run + qrels:
            ids.setdefault(row.query_id, str(len(ids) + 1))
        back = {v: k for k, v in ids.items()}
        qrels = [row._replace(query_id=ids[row.query_id]) for row in qrels]
        run = [row._replace(query_id=ids[row.query_id]) for row in run]
    means, per_topic = irm_oracle(names, qrels, run)
    per_topic = {(n, back.get(q, q)): v for (n, q), v in per_topic.items()}
    res = trecqr.evaluate(str(cut[0]), str(cut[1]), names)
    assert assert_irm(res, names, means, per_topic, same_names=True) > \
        (0 if family == "Accuracy" else 30 * len(names))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("seed", range(12))
def test_native_families_equal_ir_measures_on_generated_cases(seed):
    """Exact ties and 1e-9 gaps, grades -1..3, missing topics, numeric and URL docnos. gdeval
    adds topics in numeric order, trecqr in run order: the means may differ in the last bit."""
    pytest.importorskip("cwl")
    import shutil

    if shutil.which("perl") is None:
        pytest.skip("gdeval.pl needs perl")
    qrels, run = make_case(seed)
    run = {q: d for q, d in run.items() if d}
    means, per_topic = irm_oracle(GENERATED_FAMILIES, qrels, run)
    res = trecqr.evaluate(qrels, run, GENERATED_FAMILIES)
    for qid, values in res.per_query().items():
        assert all(values[n] == per_topic[(n, qid)] for n in GENERATED_FAMILIES), qid
    agg = res.aggregate()
    assert all(agg[n] == pytest.approx(means[n], rel=1e-15, abs=1e-15)
               for n in GENERATED_FAMILIES)


# ----------------------------------------------------- the ir_measures provider
PROVIDER_RUNS = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
                 "org_manual_bm25"]


@pytest.mark.parametrize("name", PROVIDER_RUNS)
def test_provider_calc_aggregate_and_iter_calc_equal_ir_measures_own(name, provider):
    """Every ad hoc registry name (67 measures) through ir_measures' own API with trecqr
    first. NumRet's oracle is the run itself (the judged topics' documents): ir_measures' own
    pipeline counts only judged documents for it when a judged_only measure reaches its
    pytrec_eval provider first (test_oracle_edges_irm: numret_follows_the_first_invocation).
    nDCG with gains is computed apart: see test_gainless_ndcg_is_trec_evals_whatever_comes_first."""
    measures = [ir_measures.parse_measure(n) for names in AD_HOC.values() for n in names]
    qrels, run = renumbered(*cast2021(f"docrun_{name}.run"))
    evaluator = ir_measures.evaluator(measures, qrels)
    assert type(evaluator).__module__ == "trecqr.api.irm_provider"  # trecqr alone
    # the oracle reads the frames' rows as ir_measures makes them, made once, not once per call
    rows = (list(ir_measures.util.QrelsConverter(qrels).as_namedtuple_iter()),
            list(ir_measures.util.RunConverter(run).as_namedtuple_iter()))
    expected, own_metrics = own_calc_gains_apart(measures, *rows)
    judged = set(qrels.query_id)
    numret = ir_measures.parse_measure("NumRet")
    expected[numret] = float(run.query_id.isin(judged).sum())
    got = ir_measures.calc_aggregate(measures, qrels, run)
    assert got == expected and len(got) == len(set(measures)) == 67
    triples = (lambda ms: sorted((str(m.measure), m.query_id, float(m.value)) for m in ms))
    retrieved = run[run.query_id.isin(judged)].query_id.value_counts()
    oracle = [m for m in own_metrics if m.measure != numret] + \
        [ir_measures.Metric(q, numret, float(n)) for q, n in retrieved.items()]
    assert triples(ir_measures.iter_calc(measures, qrels, run)) == triples(oracle)


def own_calc_gains_apart(measures, qrels, run):
    """ir_measures' own calc, with each nDCG(gains=...) in a call of its own: its pytrec_eval
    provider puts a gain-less nDCG in the first invocation its set iteration meets, and that
    invocation maps the grades through another nDCG's gains when that one comes first (which
    PYTHONHASHSEED decides)."""
    gains = [m for m in measures if m.NAME == "nDCG" and m["gains"] is not NOT_PROVIDED]
    rest = [m for m in measures if m not in gains]
    aggregated, metrics = own_pipeline().calc(rest, qrels, run)
    metrics = list(metrics)
    for m in gains:
        one, rows = own_pipeline().calc([m], qrels, run)
        aggregated.update(one)
        metrics += list(rows)
    return aggregated, metrics


def test_gainless_ndcg_is_trec_evals_whatever_comes_first(provider):
    """Finding (ir_measures 0.4.3): its pytrec_eval provider gives nDCG@3 0.2821 instead of
    trec_eval's 0.3542 on org_convdr when nDCG(gains=...)@5 is met first, as the gains' map
    reaches the gain-less nDCG's invocation. trecqr's provider gives trec_eval's value in
    either order."""
    from ir_measures.providers.pytrec_eval_provider import PytrecEvalProvider

    qrels, run = dicts_of_files(*cast2021("docrun_org_convdr.run"))
    gains = ir_measures.parse_measure("nDCG(gains={0:0,1:1,2:3,3:7,4:15})@5")
    ndcg3 = ir_measures.nDCG @ 3
    own = PytrecEvalProvider()
    assert round(own.calc_aggregate([gains, ndcg3], qrels, run)[ndcg3], 4) == 0.2821
    assert round(own.calc_aggregate([ndcg3, gains], qrels, run)[ndcg3], 4) == 0.3542
    alone = {m: own.calc_aggregate([m], qrels, run)[m] for m in (gains, ndcg3)}
    for order in ([gains, ndcg3], [ndcg3, gains]):
        assert ir_measures.calc_aggregate(order, qrels, run) == alone


def test_provider_takes_inputs_as_ir_measures_gives_them(provider):
    """dicts (an empty topic gets the defaults), namedtuple iterators, an empty run."""
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 2}, "3": {}}
    run = {"1": {"a": 0.2, "b": 0.9, "x": 0.5}, "2": {"c": 0.1}, "9": {"a": 1.0}}
    measures = [ir_measures.parse_measure(m) for m in ("nDCG@3", "RR", "P@2", "Judged@2")]
    expected = own_pipeline().calc_aggregate(measures, qrels, run)
    assert ir_measures.calc_aggregate(measures, qrels, run) == expected
    assert expected[ir_measures.parse_measure("RR")] == pytest.approx((1 / 3 + 1) / 3)
    rows = (ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items())
    scored = (ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items())
    two = own_pipeline().calc_aggregate(measures, {k: v for k, v in qrels.items() if v}, run)
    assert ir_measures.calc_aggregate(measures, rows, scored) == two
    assert ir_measures.calc_aggregate(measures, qrels, {}) == {m: 0.0 for m in measures}


def test_hugging_face_datasets_in_memory_and_streamed():
    """A Dataset is read as its Arrow view; a streamed IterableDataset, as rows of dicts (here,
    where the matrix has imported datasets: 0.7 s a worker)."""
    datasets = pytest.importorskip("datasets")
    from trecqr.formats.inputs import decide

    qrels = datasets.Dataset.from_dict({"query-id": ["q1", "q1", "q2"],
                                        "corpus-id": ["d1", "d2", "d3"], "score": [1, 0, 2]})
    run = datasets.Dataset.from_dict({"query_id": ["q1", "q1", "q2"],
                                      "doc_id": ["d1", "d2", "d3"], "score": [0.5, 1.5, 1.0]})
    streamed = (qrels.to_iterable_dataset(), run.to_iterable_dataset())
    assert [decide(x).kind for x in (qrels, *streamed)] == ["arrow", "iterable", "iterable"]
    want = trecqr.evaluate({"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}},
                           {"q1": {"d1": 0.5, "d2": 1.5}, "q2": {"d3": 1.0}}, ["map", "P.1"])
    for given in ((qrels, run), streamed):
        assert trecqr.evaluate(*given, ["map", "P.1"]).per_query() == want.per_query()
