"""The tables trecqr composes (compare, breakdown, report, cqr, the protocol tables) use one
population for every column, the value of each name is the one ``trecqr eval`` gives for it
with the same options, and the header or footnote says which topics each mean is over.

Data: the CAsT 2021 fixture (fixtures/cast2021: 34 judged turns, two runs over all of them), a
copy of its BM25 run without 9 judged turns; the CAsT 2021 demo collection (fixtures/
cast2021-demo, 239 turns, bm25 backend) for cqr; the minimal case of two turns (q1 judges d1=1
and d2=0, q2 judges d3=1; run1 ranks d2, d1 for q1 and has no q2; run2 has both), where RR@3 is
0.25 for run1 (ir_measures), recip_rank 0.5 (trec_eval) and recip_rank with -c 0.25.
"""

from __future__ import annotations

import json
import re

import ir_measures
import pytest
from conftest import ROOT, run_cli

import trecqr
from trecqr.report.breakdown import breakdown
from trecqr.report.compare import compare
from trecqr.report.html import report_page

FIX = ROOT / "fixtures" / "cast2021"
DEMO = ROOT / "fixtures" / "cast2021-demo"
FAST = ["--permutations", "50", "--bootstrap", "50"]


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    d = tmp_path_factory.mktemp("minimal")
    (d / "qrels").write_text("1_1 0 d1 1\n1_1 0 d2 0\n1_2 0 d3 1\n")
    (d / "run1").write_text("1_1 Q0 d2 1 2.0 r1\n1_1 Q0 d1 2 1.0 r1\n")
    (d / "run2").write_text("1_1 Q0 d2 1 2.0 r2\n1_1 Q0 d1 2 1.0 r2\n1_2 Q0 d3 1 1.0 r2\n")
    return d


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    """The fixture's BM25 run without 9 of the 34 judged turns (and its 9 unjudged ones)."""
    judged = sorted({ln.split()[0] for ln in (FIX / "qrels.txt").read_text().splitlines()})
    gone = set(judged[::4][:9])
    lines = (FIX / "manual_bm25.run").read_text().splitlines()
    path = tmp_path_factory.mktemp("short") / "short.run"
    path.write_text("".join(ln + "\n" for ln in lines if ln.split()[0] not in gone))
    assert len(gone) == 9
    return path


def _json(args):
    res = run_cli(args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _eval(qrels, run, measure, *flags) -> float:
    """The value ``trecqr eval`` prints for the name (4 decimals)."""
    res = run_cli(["eval", *flags, "-m", measure, qrels, run])
    assert res.exit_code == 0, res.output
    return float(res.stdout.split()[-1])


# ---------------------------------------------------------------------------------------------
# compare


def test_compare_gives_eval_s_value_for_each_name(minimal):
    """The minimal case: RR@3 is averaged over the qrels topics at every door (0.25, as eval
    and ir_measures), recip_rank with -c too (0.25); before, compare gave 0.5 for RR@3 and
    could not give ir_measures' value at all (-c was refused next to an ir_measures name)."""
    q, r1, r2 = minimal / "qrels", minimal / "run1", minimal / "run2"
    assert _eval(q, r1, "RR@3") == 0.25
    got = _json(["compare", q, r1, r2, "-m", "RR@3", "--format", "json", *FAST])
    assert got["means"]["run1"]["RR@3"] == 0.25 and got["means"]["run2"]["RR@3"] == 0.75
    assert got["num_topics"] == {"run1": 2, "run2": 2} and got["pairs"][0]["n"] == 2
    assert got["topics_note"].startswith("topics: all 2 qrels topics (ir_measures' rule")
    both = _json(["compare", q, r1, r2, "-m", "RR@3", "-m", "recip_rank", "-c", "--format",
                  "json", *FAST])
    assert both["means"]["run1"] == {"recip_rank": 0.25, "RR@3": 0.25}
    assert _eval(q, r1, "recip_rank", "-c") == 0.25


def test_compare_header_states_each_run_s_topics(minimal):
    """trec_eval names without -c: run1's mean is over its 1 topic, run2's over 2, the test
    over the 1 both have; the header says so (before: "the qrels topics both runs are
    evaluated on (1)" above run2's mean over 2)."""
    q, r1, r2 = minimal / "qrels", minimal / "run1", minimal / "run2"
    res = run_cli(["compare", q, r1, r2, "-m", "recip_rank", *FAST])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == (
        "topics: per run, the qrels topics it has (trec_eval's rule: run1 1, run2 2); per pair, "
        "those both runs have (1); -c: all 2, a topic a run lacks counting 0")
    got = _json(["compare", q, r1, r2, "-m", "recip_rank", "--format", "json", *FAST])
    assert got["means"] == {"run1": {"recip_rank": 0.5}, "run2": {"recip_rank": 0.75}}
    assert got["num_topics"] == {"run1": 1, "run2": 2}
    assert got["population"]["topics"] == {"run1": 1, "run2": 2}


def test_compare_on_cast2021_equals_eval_name_by_name(short):
    """On the CAsT 2021 fixture with a run lacking 9 judged turns, every mean compare prints
    (JSON, all decimals) equals trecqr.evaluate's for the same name and options."""
    q, full = str(FIX / "qrels.txt"), str(FIX / "manual_bm25.run")
    irm = compare(q, [full, str(short)], ["RR@3", "nDCG@3"], permutations=50, bootstrap=50)
    ref = trecqr.evaluate(q, str(short), ["RR@3", "nDCG@3"]).aggregate()
    assert irm.means["short.run"] == ref and irm.num_topics["short.run"] == 34
    assert [p.n for p in irm.pairs] == [34, 34]
    assert irm.pairs[0].mean_run == ref["RR@3"]
    ext = ir_measures.calc_aggregate([ir_measures.parse_measure("RR@3")],
                                     ir_measures.read_trec_qrels(q),
                                     ir_measures.read_trec_run(str(short)))
    assert irm.means["short.run"]["RR@3"] == pytest.approx(
        ext[ir_measures.parse_measure("RR@3")], abs=1e-15)
    trec = compare(q, [full, str(short)], ["recip_rank", "ndcg_cut.3"], permutations=50,
                   bootstrap=50)
    assert trec.means["short.run"] == trecqr.evaluate(q, str(short), ["recip_rank",
                                                                      "ndcg_cut.3"]).aggregate()
    assert trec.num_topics["short.run"] == 25
    mixed = compare(q, [full, str(short)], ["RR@3", "recip_rank"], complete=True,
                    permutations=50, bootstrap=50)
    assert mixed.means["short.run"]["RR@3"] == ref["RR@3"]
    assert mixed.means["short.run"]["recip_rank"] == trecqr.evaluate(
        q, str(short), ["recip_rank"], complete=True).aggregate()["recip_rank"]
    assert mixed.population["rule"] == "qrels" and mixed.num_topics["short.run"] == 34


def test_compare_refuses_two_populations_in_one_table(short):
    """ir_measures and trec_eval names without -c, a run lacking judged turns: the two names
    would average over different topics; one line naming -c. When every run has every
    judged turn, the two rules agree and the table is made."""
    q, full = FIX / "qrels.txt", FIX / "manual_bm25.run"
    res = run_cli(["compare", q, full, short, "-m", "RR@3", "-m", "recip_rank", *FAST])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "add -c" in res.stderr
    assert "short.run lacks 9 of them" in res.stderr
    ok = _json(["compare", q, full, FIX / "convdr.run", "-m", "RR@3", "-m", "recip_rank",
                "--format", "json", *FAST])
    assert ok["means"]["convdr.run"] == trecqr.evaluate(
        str(q), str(FIX / "convdr.run"), ["recip_rank", "RR@3"]).aggregate()
    assert "every run has each of them" in ok["topics_note"]


def test_a_qrels_dict_s_topic_without_judgments_through_every_table():
    """{"b": {}} in a qrels dict is a qrels topic for ir_measures names (evaluate: RR@3 over
    a, b, c), not for trec_eval's, which never sees it. compare, agree_rankings and bounds
    read the qrels as columns, which have no row for it: they averaged RR@3 over a and c
    (0.5 where evaluate says 1/3). Now each gives evaluate's value and states its three
    topics; ir_measures names with -c's trec_eval names, whose topics now differ, are
    refused, and the refusal without -c no longer suggests -c."""
    q = {"a": {"d1": 1}, "b": {}, "c": {"d9": 1}}
    r1, r2 = {"a": {"d1": 1.0, "d2": 0.5}}, {"a": {"d1": 0.1, "d2": 0.5}}
    rr3 = [trecqr.evaluate(q, r, ["RR@3"]).aggregate()["RR@3"] for r in (r1, r2)]
    assert rr3 == [1 / 3, 1 / 6]
    cmp = compare(q, [r1, r2], ["RR@3"], permutations=50, bootstrap=50).to_dict()
    assert [cmp["means"][n]["RR@3"] for n in ("run1", "run2")] == rr3
    assert cmp["population"]["qrels_topics"] == 3
    assert cmp["population"]["topics"] == {"run1": 3, "run2": 3}
    agree = trecqr.agree_rankings(q, q, [r1, r2, r1], ["RR@3"])
    assert agree.scores_a == {"RR@3": [rr3[0], rr3[1], rr3[0]]}
    assert "all 3 qrels topics" in agree.topics_a
    assert trecqr.bounds(q, r1, ["RR@3"]).summary["RR@3"]["lower"] == rr3[0]
    assert compare(q, [r1, r2], ["map"], complete=True, permutations=50,
                   bootstrap=50).to_dict()["means"]["run1"] == \
        trecqr.evaluate(q, r1, ["map"], complete=True).aggregate()  # -c: over a and c
    with pytest.raises(trecqr.UsageError, match=re.escape(
            "RR@3 (ir_measures names) count the qrels' 1 topic without judgments (b) and "
            "-c's map (trec_eval names) do not")):
        compare(q, [r1, r2], ["RR@3", "map"], complete=True)
    with pytest.raises(trecqr.UsageError) as refused:
        compare(q, [r1, r2], ["RR@3", "map"])
    assert "add -c" not in str(refused.value)


@pytest.mark.parametrize("measure", ["num_ret", "gm_map"])
def test_compare_refuses_a_summary_that_is_not_a_mean(measure):
    """eval sums num_ret and takes gm_map's geometric mean; a table of means of per-topic
    values would print another number under the same name (before: the arithmetic mean)."""
    res = run_cli(["compare", FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run",
                   "-m", measure, *FAST])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith(f"trecqr: {measure}'s summary is ")


def test_compare_leaves_a_set_s_sums_out_and_says_so():
    """-m official brings num_q, num_ret, num_rel, num_rel_ret (sums) and gm_map (a geometric
    mean): left out of the table of means and named in the header; the means kept are eval's
    (before: their arithmetic means under eval's names)."""
    q, full, convdr = FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run"
    got = _json(["compare", q, full, convdr, "-m", "official", "--format", "json", *FAST])
    assert got["topics_note"].endswith("; left out, their summaries not being means: num_q, "
                                       "num_ret, num_rel, num_rel_ret, gm_map")
    assert not {"num_ret", "gm_map"} & set(got["measures"])
    ref = trecqr.evaluate(str(q), str(convdr), ["map", "P.10"]).aggregate()
    assert got["means"]["convdr.run"]["map"] == ref["map"]
    assert got["means"]["convdr.run"]["P_10"] == ref["P_10"]


# ---------------------------------------------------------------------------------------------
# breakdown


def test_breakdown_text_n_is_the_n_of_each_mean(short):
    """trec_eval names: each run's group mean is over the group's topics it has, and the text
    table's n columns say so per run, as the JSON does (before: one n, the union's)."""
    q, full = FIX / "qrels.txt", FIX / "manual_bm25.run"
    res = run_cli(["breakdown", q, full, short, "-m", "recip_rank", "--max-depth", "3"])
    assert res.exit_code == 0, res.output
    got = _json(["breakdown", q, full, short, "-m", "recip_rank", "--max-depth", "3",
                 "--format", "json"])
    ns = {(r["group"], r["run"]): r["n"] for r in got["rows"]}
    lines = res.stdout.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("group"))
    assert lines[head].split()[:5] == ["group", "n", "manual_bm25.run", "n", "short.run"]
    for line in lines[head + 2:head + 2 + len(got["groups"])]:
        cells = line.split()
        assert int(cells[1]) == ns[(cells[0], "manual_bm25.run")]
        assert int(cells[2]) == ns[(cells[0], "short.run")]
    assert sum(n for (g, r), n in ns.items() if r == "short.run") == 25


def test_breakdown_all_row_is_eval_s_value(short, tmp_path):
    """--groups: the 'all' row of an ir_measures name is eval's value (over every qrels
    topic, the 9 missing ones counting 0), n 34 for both runs (before: over the run's 25)."""
    q = str(FIX / "qrels.txt")
    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"first": ["106_1", "107_1"]}))
    bd = breakdown(q, [str(FIX / "manual_bm25.run"), str(short)], ["RR@3"], groups=groups)
    row = bd.get("all", "short.run", "RR@3")
    assert row.n == 34 and row.mean == trecqr.evaluate(q, str(short), ["RR@3"]).aggregate()["RR@3"]
    assert bd.get("all", "short.run", "RR@3").n_pair == 34


# ---------------------------------------------------------------------------------------------
# report


def test_report_page_data_holds_eval_s_values(short):
    """The HTML page's embedded data: the comparison's means are eval's for ir_measures
    names, and the turn table counts a missing qrels turn as 0 (complete)."""
    q = str(FIX / "qrels.txt")
    page = report_page(q, [str(FIX / "manual_bm25.run"), str(short)], ["RR@3", "nDCG@3"])
    data = json.loads(page.split('type="application/json">')[1].split("</script>")[0])
    ref = trecqr.evaluate(q, str(short), ["RR@3", "nDCG@3"]).aggregate()
    assert data["comparison"]["means"]["short.run"] == ref
    assert data["comparison"]["num_topics"]["short.run"] == 34
    assert data["complete"] is True and len(data["ids"]) == 34
    assert "all 34 qrels topics (ir_measures' rule" in page


# ---------------------------------------------------------------------------------------------
# cqr


@pytest.fixture(scope="module")
def demo_index(tmp_path_factory):
    from trecqr.retrieval.backends import build_index

    index = tmp_path_factory.mktemp("demo") / "index"
    build_index(DEMO / "collection.jsonl", index, "bm25s")
    return index


def _restricted_rr3(run, turns) -> float:
    """ir_measures' RR@3 on the demo qrels restricted to these turns."""
    qrels = [x for x in ir_measures.read_trec_qrels(str(DEMO / "qrels.txt"))
             if x.query_id in turns]
    m = ir_measures.parse_measure("RR@3")
    return ir_measures.calc_aggregate([m], qrels, ir_measures.read_trec_run(str(run)))[m]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cqr_missing_drop_leaves_every_column(demo_index, tmp_path, seed):
    """--missing drop: the dropped turns leave RR@3 as they leave the other columns (before:
    RR@3 counted them 0 over all 239 turns while the others averaged over the kept ones)."""
    import random

    from trecqr.workflows.cqr import cqr

    lines = (DEMO / "topics-manual.tsv").read_text().splitlines()
    emptied = set(random.Random(seed).sample(range(len(lines)), 25))
    rewrites = tmp_path / "rewrites.jsonl"
    rewrites.write_text("".join(json.dumps({"sample_id": ln.split("\t")[0], "rewrite":
                                            "" if i in emptied else ln.split("\t")[1]}) + "\n"
                                for i, ln in enumerate(lines)))
    rep = cqr(DEMO / "qrels.txt", rewrites=rewrites, raw=DEMO / "topics-raw.tsv",
              missing="drop", index=demo_index, runs_dir=tmp_path / "runs")
    row = rep.rows[0]
    assert row.coverage["evaluated"] == 239 - 25
    kept = set(trecqr.load_run(row.run).qid.to_pylist())
    assert row.scores["RR@3"] == pytest.approx(_restricted_rr3(row.run, kept), abs=1e-12)
    plain = trecqr.evaluate(DEMO / "qrels.txt", row.run, ["recip_rank", "ndcg_cut.3"]).aggregate()
    assert row.scores["MRR"] == plain["recip_rank"]
    assert row.scores["NDCG@3"] == plain["ndcg_cut_3"]
    assert rep.to_dict()["population"].startswith("every column: the mean over the row's")


def test_cqr_topics_subset_rr3_beside_mrr(demo_index, tmp_path):
    """A 20-turn topics file: RR@3 is over the 20 turns, as recip_rank is (before: over all
    239 qrels turns, 0.0384 beside an MRR of 0.4783); the labels are the names shown."""
    from trecqr.workflows.cqr import cqr

    topics = tmp_path / "t20.tsv"
    topics.write_text("".join((DEMO / "topics-manual.tsv").read_text().splitlines(True)[:20]))
    rep = cqr(DEMO / "qrels.txt", [topics], index=demo_index, runs_dir=tmp_path / "runs")
    row = rep.rows[0]
    assert row.coverage["evaluated"] == 20
    turns = set(trecqr.load_run(row.run).qid.to_pylist())
    assert row.scores["RR@3"] == pytest.approx(_restricted_rr3(row.run, turns), abs=1e-12)
    assert row.scores["RR@3"] <= row.scores["MRR"]
    head = rep.table().splitlines()[0].split()
    assert head[:6] == ["run", "RR@3", "recip_rank", "ndcg_cut_3", "recall_10", "recall_100"]
    ndcg = trecqr.evaluate(DEMO / "qrels.txt", row.run, ["ndcg_cut.3"]).aggregate()
    assert row.scores["NDCG@3"] == ndcg["ndcg_cut_3"]
    assert "every column averages over the row's evaluated turns" in rep.table()


# ---------------------------------------------------------------------------------------------
# protocol tables and their docs


def test_protocol_docs_name_what_eval_prints():
    """docs/protocols.md's convsearch-r1-qrecc row names the measures as `trecqr eval
    --protocol` prints them (before: recip_rank "printed as MRR@3", but it prints
    recip_rank)."""
    res = run_cli(["eval", "--protocol", "convsearch-r1-qrecc", FIX / "qrels.txt",
                   FIX / "manual_bm25.run"])
    assert res.exit_code == 0, res.output
    printed = [ln.split()[0] for ln in res.stdout.splitlines()]
    assert printed == ["recip_rank", "recall_10", "recall_100", "ndcg_cut_3"]
    row = next(ln for ln in (ROOT / "docs" / "protocols.md").read_text().splitlines()
               if ln.startswith("| `convsearch-r1-qrecc` |"))
    assert 'printed as "MRR@3"' not in row and "printed as `recip_rank`" in row


def test_protocol_table_counts_the_topics_its_means_are_over(short):
    """A -c protocol's table (cqr --protocol) averages over every qrels turn: its evaluated
    column says 34, not the 25 the run has (before: 25 beside means over 34)."""
    from trecqr.protocols.presets import protocol_scores, protocol_table

    q = str(FIX / "qrels.txt")
    scores = protocol_scores("chatty-goose-cast2019", q, str(short))
    assert scores["evaluated"] == 34
    assert scores["map"] == trecqr.evaluate(q, str(short), ["map"], complete=True,
                                            max_docs=1000).aggregate()["map"]
    plain = protocol_scores("cast2019", q, str(short))
    assert plain["evaluated"] == 25
    text = protocol_table("chatty-goose-cast2019", [("short", scores)])
    assert text.splitlines()[-1] == ("every column averages over the evaluated turns: every "
                                     "qrels turn, one the run lacks counting 0 (-c)")


def test_cqr_page_leaves_rr3_off_when_a_run_lacks_turns(demo_index, tmp_path, capsys):
    """cqr's HTML page shows trecqr eval's means; with a row over 20 of the 239 turns its
    RR@3 would be averaged over every qrels turn beside columns over the row's turns, so
    the page leaves RR@3 off and says so (before: RR@3 over 239 turns, the rest over 20)."""
    from trecqr.workflows.cqr import cqr

    topics = tmp_path / "t20.tsv"
    topics.write_text("".join((DEMO / "topics-manual.tsv").read_text().splitlines(True)[:20]))
    rep = cqr(DEMO / "qrels.txt", [DEMO / "topics-raw.tsv", topics], index=demo_index,
              runs_dir=tmp_path / "runs")
    capsys.readouterr()
    page = rep.to_html()
    assert "RR@3 is left off the page: t20's run lacks qrels turns" in capsys.readouterr().err
    data = json.loads(page.split('type="application/json">')[1].split("</script>")[0])
    assert data["measures"] == ["recip_rank", "ndcg_cut_3", "recall_10", "recall_100"]  # cqr's
    assert data["comparison"]["means"]["t20"]["recip_rank"] == rep.rows[1].scores["MRR"]


def test_cqr_complete_preset_averages_every_qrels_turn(demo_index, tmp_path):
    """A preset with -c (chatty-goose-cast2019) names the population: every qrels turn, one
    without a topic counting 0, in every column, as trecqr eval -c (and ir_measures for
    RR@3) give (before: the columns averaged over the 20 turns searched)."""
    from trecqr.errors import UsageError
    from trecqr.workflows.cqr import cqr

    topics = tmp_path / "t20.tsv"
    topics.write_text("".join((DEMO / "topics-manual.tsv").read_text().splitlines(True)[:20]))
    with pytest.warns(UserWarning, match="preset chatty-goose-cast2019 says k1=0.82"):
        rep = cqr(DEMO / "qrels.txt", [topics], index=demo_index, runs_dir=tmp_path / "runs",
                  preset="chatty-goose-cast2019")  # the demo index's k1, b: the same turns
    row = rep.rows[0]
    c = trecqr.evaluate(DEMO / "qrels.txt", row.run, ["recip_rank", "ndcg_cut.3"],
                        complete=True).aggregate()
    assert row.scores["MRR"] == c["recip_rank"] and row.scores["NDCG@3"] == c["ndcg_cut_3"]
    rr3 = trecqr.evaluate(DEMO / "qrels.txt", row.run, ["RR@3"]).aggregate()["RR@3"]
    assert row.scores["RR@3"] == rr3 and row.coverage["evaluated"] == 239
    assert "every column averages over every qrels turn (preset chatty-goose-cast2019's -c" \
        in rep.table()
    with pytest.raises(UsageError, match="--missing drop takes turns out of the average"):
        cqr(DEMO / "qrels.txt", [topics], index=demo_index, preset="chatty-goose-cast2019",
            missing="drop")


def test_report_page_lists_every_topic_its_means_average(tmp_path):
    """Under a population of every qrels topic (-c, or ir_measures names), the page's per-topic
    values list a topic the run lacks as 0, as its mean counts it (the differential campaign's
    seed 575: the page listed only the run's topics beside a mean over both)."""
    q, r1, r2 = tmp_path / "q.txt", tmp_path / "a.run", tmp_path / "b.run"
    q.write_text("t1 0 d1 1\nt2 0 d2 1\n")
    r1.write_text("t1 Q0 x 1 1.7 a\n")
    r2.write_text("t2 Q0 d2 1 1.6 b\n")
    page = tmp_path / "page.html"
    res = run_cli(["report", "-o", str(page), "-m", "RR@3", "-c", str(q), str(r1), str(r2)])
    assert res.exit_code == 0, res.stderr
    data = json.loads(re.search(r'<script id="trecqr-data" type="application/json">(.*?)'
                                r'</script>', page.read_text(), re.S).group(1))
    assert sorted(data["ids"]) == ["t1", "t2"]
    for values in data["values"]:
        assert None not in values[0] and len(values[0]) == 2
    assert sorted(data["values"][1][0]) == [0.0, 1.0]
