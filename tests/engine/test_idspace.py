"""The id-space check: one warning line when run and qrels number documents differently.

Data: ../shared/data/cast2021/ (the organisers' runs and NIST's document qrels), and every other
real run there with its qrels; fixtures/qrecc-demo for cqr.
"""

from __future__ import annotations

import warnings

import numpy as np
import pyarrow as pa
import pytest
from conftest import ROOT, data_path, run_cli

import trecqr
from trecqr.datasets.cast.topics import provenance_run, read_cast_topics
from trecqr.datasets.collapse import collapse_run
from trecqr.api.evaluation import load_qrels, load_run
from trecqr.formats.run import read_run
from trecqr.engine.idspace import IdSpaceWarning, id_space_problem

WARNING = "seem to use different document id spaces"


@pytest.fixture(scope="module")
def renumbered(tmp_path_factory):
    """docrun_org_manual_bm25.run with its document ids renumbered 1, 2, ... (ConvDR style)."""
    ids: dict = {}
    out = []
    for line in data_path("cast2021", "docrun_org_manual_bm25.run").read_text().splitlines():
        f = line.split()
        f[2] = str(ids.setdefault(f[2], len(ids) + 1))
        out.append(" ".join(f) + "\n")
    path = tmp_path_factory.mktemp("ids") / "renumbered.run"
    path.write_text("".join(out))
    return path


def test_fires_on_the_renumbered_cast2021_run(renumbered):
    qrels = data_path("cast2021", "qrels-docs.2021.qrel")
    res = run_cli(["eval", qrels, renumbered, "-m", "map"])
    assert res.exit_code == 0
    lines = [ln for ln in res.stderr.splitlines() if WARNING in ln]
    assert lines == [f"trecqr: warning: {renumbered} and {qrels} {WARNING}: 0 of 12479 retrieved "
                     "documents of the 158 topics they share are judged; run ids look like '1', "
                     "qrels ids like 'KILT_105219'"]
    assert WARNING not in run_cli(["eval", "--quiet", qrels, renumbered, "-m", "map"]).stderr
    both = [renumbered, data_path("cast2021", "docrun_org_manual_bm25.run")]
    res = run_cli(["compare", qrels, *both, "-m", "map"])
    assert res.exit_code == 0 and res.stderr.count(WARNING) == 1
    assert WARNING not in run_cli(["compare", "--quiet", qrels, *both, "-m", "map"]).stderr
    with pytest.warns(IdSpaceWarning, match="run ids look like '1'"):
        trecqr.evaluate(qrels, renumbered, ["map"])


def test_fires_in_cqr_when_the_qrels_are_renumbered(tmp_path):
    demo = ROOT / "fixtures" / "qrecc-demo"
    ids: dict = {}
    lines = []
    for line in (demo / "qrels.txt").read_text().splitlines():
        q, z, d, g = line.split()
        lines.append(f"{q} {z} {ids.setdefault(d, len(ids))} {g}\n")
    qrels = tmp_path / "renumbered.qrels"
    qrels.write_text("".join(lines))
    args = ["cqr", "--qrels", qrels, "--collection", demo / "collection.jsonl", "--topics",
            demo / "topics-human.tsv", "--index", tmp_path / "ix"]
    res = run_cli(args)
    assert res.exit_code == 0, res.stderr
    assert res.stderr.count(WARNING) == 1 and "qrels ids like '" in res.stderr
    res = run_cli(args[:-2] + ["--index", tmp_path / "ix", "--quiet"])
    assert res.exit_code == 0 and WARNING not in res.stderr


def _real_pairs():
    c21 = data_path("cast2021", "qrels-docs.2021.qrel")
    te = data_path("trec_eval-test")
    pairs = [(c21, p, False) for p in sorted(data_path("cast2021").glob("docrun_*.run"))]
    pairs += [(c21, p, True) for p in sorted(data_path("cast2021").glob("org_*.trec"))]
    pairs += [(te / q, te / r, False) for q, r in (
        ("qrels.test", "results.test"), ("qrels.test", "results.trunc"),
        ("qrels-302.test", "results-302.test"), ("qrels.rel_level", "results.test"),
        ("qrels.123", "results.test"), ("qrels.comment.test", "results.comment.test"))]
    s = data_path("sessions")
    pairs += [(s / "tasks2016-qrels-suggestions.txt", s / f"tasks2016-run-{r}.txt", False)
              for r in ("QS", "WD")]
    return pairs


def test_silent_on_every_real_run():
    """Each real run with the qrels it is scored against (CAsT 2021 passage runs collapsed to
    documents first, as cast2021-nist does), and the CAsT 2022 organisers' provenance run."""
    for qrels, path, collapse in _real_pairs():
        run = collapse_run(read_run(path))[0] if collapse else load_run(path)
        assert id_space_problem(load_qrels(qrels), run) is None, path
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topics = read_cast_topics(data_path("cast2022", "2022_evaluation_topics_tree_v1.0.json"))
    from trecqr.formats.run import run_from_dict

    prov: dict = {}
    for line in provenance_run(topics):
        q, _, d, _, s, _ = line.split()
        prov.setdefault(q, {})[d] = float(s)
    assert id_space_problem(load_qrels(data_path("cast2022", "cast2022.qrel")),
                            run_from_dict(prov)) is None
    # the same passage run against the document qrels, not collapsed: passage ids are another
    # id space (MARCO_D2706327-1 against MARCO_D2706327), and the check says so
    text = id_space_problem(load_qrels(data_path("cast2021", "qrels-docs.2021.qrel")),
                            load_run(data_path("cast2021", "org_manual_bm25.trec")))
    assert text is not None and "-1'" in text.split("run ids look like ")[1]


def test_sparse_gold_qrels_are_not_held_to_the_one_percent_rule(tmp_path):
    """One gold passage per turn, 100 retrieved: 1% judged is normal there; with pooled qrels
    (>= 10% of the run judged) 0.5% judged is suspicious."""
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.run"
    qrels.write_text("".join(f"t{i} 0 g{i} 1\n" for i in range(10)))
    run.write_text("".join(f"t{i} Q0 {'g' if j == 50 and i < 5 else 'x'}{i}-{j} {j + 1} "
                           f"{100 - j} r\n".replace(f"g{i}-50", f"g{i}")
                           for i in range(10) for j in range(100)))
    assert id_space_problem(load_qrels(qrels), load_run(run)) is None  # 5 of 1000 judged
    pooled = tmp_path / "pooled.txt"
    pooled.write_text("".join(f"t{i} 0 g{i} 1\n" for i in range(10)) +
                      "".join(f"t{i} 0 p{i}-{j} 0\n" for i in range(10) for j in range(20)))
    text = id_space_problem(load_qrels(pooled), load_run(run))
    assert text is not None and ": 5 of 1000 retrieved documents of the 10 topics" in text


@pytest.mark.parametrize("topics", [["106_1"], ["106_1", "106_2", "107_1"]])
@pytest.mark.parametrize("renumber", [False, True])
def test_small_inputs_warn_as_large_ones(renumbered, topics, renumber):
    """Small columns (slices of the real CAsT 2021 run and qrels, renumbered or not) give
    evaluate the warning the columns' count gives, and only when the ids differ."""
    from trecqr.formats import Qrels, Run

    qrels = load_qrels(data_path("cast2021", "qrels-docs.2021.qrel"))
    run = load_run(renumbered if renumber else
                   data_path("cast2021", "docrun_org_manual_bm25.run"))
    keep_q = np.isin(np.array(qrels.qid.to_pylist()), topics)
    keep_r = np.isin(np.array(run.qid.to_pylist()), topics + ["999"])
    q = Qrels(pa.array(np.array(qrels.qid.to_pylist())[keep_q]),
              pa.array(np.array(qrels.docno.to_pylist())[keep_q]), qrels.grade[keep_q], "q")
    r = Run(pa.array(np.array(run.qid.to_pylist())[keep_r]),
            pa.array(np.array(run.docno.to_pylist())[keep_r]), run.score[keep_r], "r", "r")
    assert 0 < len(r) <= 4096
    expected = id_space_problem(q, r)
    assert (expected is not None) == renumber
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        trecqr.evaluate(q, r, ["nDCG@3"])
    assert [str(w.message) for w in seen if w.category is IdSpaceWarning] == \
        ([expected] if renumber else [])


def test_scanned_runs_are_checked_on_the_scanner_codes(renumbered):
    """A run file the C scanner read with the qrels' docnos is checked on its codes (which
    lines are judged): the same answer as the columns' count on every real run and on the
    renumbered one, and, when silent, no second read of the file for its docno column
    (before: the check read every docno of a 5M-line run again, half of trecqr.evaluate's
    time on files)."""
    import pyarrow.compute as pc

    from trecqr.formats import Run

    cases = [(q, p) for q, p, collapse in _real_pairs() if not collapse]
    cases += [(data_path("cast2021", "qrels-docs.2021.qrel"), renumbered),
              (data_path("cast2021", "qrels-docs.2021.qrel"),
               data_path("cast2021", "org_manual_bm25.trec"))]  # passage ids: warns
    warned = checked = 0
    for qpath, path in cases:
        qrels = load_qrels(qpath)
        scanned = read_run(path, comments=False, judged=pc.unique(qrels.docno), float32=True)
        if getattr(scanned, "codes", None) is None:  # not plain (a comment line...): columns
            continue
        checked += 1
        plain = Run(scanned.qid, read_run(path).docno, scanned.score, scanned.runid,
                    scanned.source)
        blocks = scanned._docno is None  # read in topic blocks: no docno column yet
        text = id_space_problem(qrels, scanned)
        assert text == id_space_problem(qrels, plain), path
        warned += text is not None
        if text is None and blocks:
            assert scanned._docno is None, path
    assert warned == 2 and checked >= 12
