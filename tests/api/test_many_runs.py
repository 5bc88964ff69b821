"""Many runs in one call: ``trecqr eval QRELS RUN [RUN ...]``, ``trecqr.evaluate_many`` and its
executors (a local process pool, any concurrent.futures executor, a Dask LocalCluster).

The five TREC CAsT 2021 organiser runs: ``eval QRELS r1 ... r5`` must print exactly the
concatenation of trec_eval 9.0.8's five outputs (tests/expected/cast2021, made by trec_eval)."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import trecqr
from conftest import data_path, run_cli

EXPECTED = Path(__file__).parents[1] / "expected" / "cast2021"
NAMES = ["org_convdr", "org_convdr_bert", "org_manual_ance", "org_manual_ance_bert",
         "org_manual_bm25"]
RUNS = [f"docrun_{n}.run" for n in NAMES]
QRELS = "qrels-docs.2021.qrel"
MEASURES = ["map", "ndcg_cut.3", "recip_rank", "P.5", "recall.100", "nDCG@3", "RR@3"]


def _expected(tag: str = "908") -> str:
    return "".join(gzip.decompress((EXPECTED / f"docrun_{n}.{tag}.txt.gz").read_bytes()).decode()
                   for n in NAMES)


@pytest.mark.parametrize("jobs", [None, "1", "2"])
def test_five_runs_are_the_concatenation_of_trec_eval_outputs(jobs):
    folder = data_path("cast2021")
    extra = [] if jobs is None else ["-j", jobs]
    result = run_cli(["eval", "--quiet", "-q", "-c", "-m", "all_trec", *extra, QRELS, *RUNS],
                     cwd=folder)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == _expected()


def test_glob_and_folder_expand_sorted(tmp_path):
    folder = data_path("cast2021")
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in reversed(RUNS):
        shutil.copy(folder / name, runs / name)
    (runs / ".hidden").write_text("not a run\n")
    by_folder = run_cli(["eval", "--quiet", "-q", "-c", "-m", "all_trec", folder / QRELS, runs])
    by_glob = run_cli(["eval", "--quiet", "-q", "-c", "-m", "all_trec", folder / QRELS,
                       str(runs / "docrun_*.run")])
    assert by_folder.exit_code == 0 and by_glob.exit_code == 0, by_folder.stderr
    assert by_folder.stdout == _expected() == by_glob.stdout
    none = run_cli(["eval", "-m", "map", folder / QRELS, str(runs / "nothing*.run")])
    assert none.exit_code == 2
    assert "no run file matches" in none.stderr


def test_structured_formats_carry_a_run_column():
    folder = data_path("cast2021")
    args = ["eval", "--quiet", "-m", "map", "-m", "P.5", QRELS, *RUNS[:2]]
    rows = list(csv.reader(io.StringIO(run_cli(args + ["--format", "csv"], cwd=folder).stdout)))
    assert rows[0] == ["run", "measure", "qid", "value"]
    assert rows[1:] == [["docrun_org_convdr.run", "map", "all", "0.20237500120474428"],
                        ["docrun_org_convdr.run", "P_5", "all", "0.467088607594937"],
                        ["docrun_org_convdr_bert.run", "map", "all", "0.22034053965546008"],
                        ["docrun_org_convdr_bert.run", "P_5", "all", "0.5139240506329115"]]
    tsv = run_cli(args + ["--format", "tsv"], cwd=folder).stdout.splitlines()
    assert tsv[0] == "run\tmeasure\tqid\tvalue" and len(tsv) == 5
    jsonl = [json.loads(x) for x in run_cli(args + ["--format", "jsonl"], cwd=folder).stdout
             .splitlines()]
    assert jsonl[2] == {"run": "docrun_org_convdr_bert.run", "measure": "map", "qid": "all",
                        "value": 0.22034053965546008, "n": jsonl[2]["n"], "rule": "trec_eval"}
    assert jsonl[2]["n"] == json.loads(run_cli(args + ["--format", "json"], cwd=folder).stdout
                                       )[1]["averaged_over"]["map"]["n"]
    docs = json.loads(run_cli(args + ["--format", "json"], cwd=folder).stdout)
    assert [d["run"] for d in docs] == RUNS[:2]
    assert docs[1]["summary"] == {"map": 0.22034053965546008, "P_5": 0.5139240506329115}
    assert docs[0]["topics"]["evaluated"] == 158
    # one run named alone: the single-run output, no run column
    one = run_cli(["eval", "--quiet", "-m", "map", "--format", "csv", QRELS, RUNS[0]], cwd=folder)
    assert one.stdout == "measure,qid,value\nmap,all,0.20237500120474428\n"


def test_a_bad_run_among_several_is_one_error_and_no_output(tmp_path):
    folder = data_path("cast2021")
    bad = tmp_path / "bad.run"
    bad.write_text("106_1 Q0 d1 1 1.5 r\n106_1 Q0 d2 2 x r\n")
    out = tmp_path / "out.txt"
    for jobs in ("1", "2"):
        result = run_cli(["eval", "-m", "map", "-j", jobs, "-o", out, folder / QRELS,
                          folder / RUNS[0], bad, folder / RUNS[1]])
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [f"{bad}:2: score 'x' is not a finite number"]
        assert not out.exists()


def _values(results):
    return [(r.aggregate(), r.per_query()) for r in results]


def test_evaluate_many_equals_evaluate_per_run():
    folder = data_path("cast2021")
    runs = [str(folder / r) for r in RUNS]
    single = [trecqr.evaluate(str(folder / QRELS), r, MEASURES) for r in runs]
    assert single[4].aggregate()["map"] == pytest.approx(0.2161, abs=5e-5)
    many = trecqr.evaluate_many(str(folder / QRELS), runs, MEASURES)
    assert _values(many) == _values(single)
    pooled = trecqr.evaluate_many(str(folder / QRELS), runs, MEASURES, jobs=2)
    assert _values(pooled) == _values(single)
    with ThreadPoolExecutor(2) as pool:
        threaded = trecqr.evaluate_many(str(folder / QRELS), runs, MEASURES, executor=pool)
    assert _values(threaded) == _values(single)
    complete = trecqr.evaluate_many(str(folder / QRELS), runs[:2], ["map"], complete=True)
    assert complete[0].aggregate()["map"] == trecqr.evaluate(
        str(folder / QRELS), runs[0], ["map"], complete=True).aggregate()["map"]


def test_named_runs_at_every_door_that_takes_many():
    """``{name: run}`` where a list of runs goes: its values, named by its keys (evaluate_many
    returns ``{name: Results}``; compare, agree_rankings name the systems). One run dict given
    there, and names given twice, are refused: a dict's keys were read as file names."""
    from trecqr.errors import UsageError

    folder = data_path("cast2021")
    qrels, paths = str(folder / QRELS), [str(folder / r) for r in RUNS[:3]]
    named = dict(zip(NAMES[:3], paths))
    many = trecqr.evaluate_many(qrels, named, ["map", "RR@3"])
    assert list(many) == NAMES[:3]
    assert _values(list(many.values())) == _values(trecqr.evaluate_many(qrels, paths,
                                                                       ["map", "RR@3"]))
    cmp = trecqr.compare(qrels, named, ["map"])
    assert cmp.runs == NAMES[:3] and cmp.means == trecqr.compare(qrels, paths, ["map"],
                                                                 names=NAMES[:3]).means
    assert trecqr.agree_rankings(qrels, qrels, named, ["map"]).runs == NAMES[:3]
    assert trecqr.fuse(named).score.tolist() == trecqr.fuse(paths).score.tolist()
    with pytest.raises(UsageError, match=r"^evaluate_many takes many runs: a list, or \{name: "
                                         r"run\}; this is one run dict"):
        trecqr.evaluate_many(qrels, {"106_1": {"d1": 1.0}}, ["map"])
    with pytest.raises(UsageError, match="^compare: names given twice"):
        trecqr.compare(qrels, named, ["map"], names=["a", "b", "c"])


def test_evaluate_many_on_a_dask_local_cluster():
    import distributed
    folder = data_path("cast2021")
    runs = [str(folder / r) for r in RUNS]
    local = trecqr.evaluate_many(str(folder / QRELS), runs, MEASURES, jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = trecqr.evaluate_many(str(folder / QRELS), runs, MEASURES,
                                      executor=client.get_executor())
        assert _values(remote) == _values(local)
        cli = run_cli(["eval", "--quiet", "-q", "-c", "-m", "all_trec", "--scheduler",
                       cluster.scheduler_address, QRELS, *RUNS], cwd=folder)
    assert cli.exit_code == 0, cli.stderr
    assert cli.stdout == _expected()
