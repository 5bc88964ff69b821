"""The differential harness's seeded slice: each case (a seeded mutation of the real CAsT 2021,
QReCC or TopiOCQA files, tests/differential_cases.py) goes through every door of trecqr (eval,
eval -q, eval --format json, compare, breakdown, report's data, evaluate on files, dicts and
DataFrames, RelevanceEvaluator, compare(), the ir_measures provider, and pt.Experiment where
the case has ir_measures names and no trec_eval option), and each door must equal its
reference (pytrec_eval, ir_measures' own pipeline), the other doors, and state the population
its reference averages. The full campaign (with cqr and the trec_eval binaries) is
benchmarks/differential.py.

Every failure fails its test, with the classes it found and a reproducer.
"""

from __future__ import annotations

import pytest

from differential_campaign import case_failures, family
from differential_cases import RUNS, Case, make_case
from differential_checks import Tally, against_reference
from differential_doors import Out
from differential_refs import references
import differential_stated as stated

SEEDS = range(40)

ISSUE_CASE = Case(  # issue 29's minimal case: q1 judges d1=1, d2=0; q2 judges d3=1
    seed=-1, source="issue 29", measures=[("recip_rank", "recip_rank"), ("RR@3", "RR@3")],
    qrels=[("1_1", "d1", 1), ("1_1", "d2", 0), ("1_2", "d3", 1)],
    runs={"runA": [("1_1", "d2", 2.0), ("1_1", "d1", 1.0)],
          "runB": [("1_1", "d1", 2.0), ("1_2", "d3", 1.0)]},
    empty={"runA": ["1_2"]}, options={})


def _verdict(name, tally: Tally):
    if not tally.failures:
        return
    lines = [f"{len(fails)} x {cls} [{family(cls)[0]}]: {fails[0][1]}"
             for cls, fails in sorted(tally.failures.items())]
    pytest.fail(f"{name}: {len(lines)} failing classes\n" + "\n".join(lines[:25]),
                pytrace=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_every_door_agrees(seed):
    """One seeded case: every door equals its reference and the other doors, and states the
    population it averages."""
    case = make_case(seed)
    _verdict(case.describe(), case_failures(case, with_pt=True))


def test_the_issue_minimal_case():
    """Issue 29's minimal case through every door (run A lacks the judged topic 1_2; its dict
    form holds it as an empty ranking)."""
    _verdict("issue 29's case", case_failures(ISSUE_CASE, with_pt=True))


def test_the_references_follow_each_tools_rule():
    """The references on the issue's case: trec_eval's recip_rank over the topics in both (0.5
    over 1; -c: 0.25 over 2; an empty ranking in a dict: 0.25 over 2, as pytrec_eval), and
    ir_measures' RR@3 over the qrels topics (0.25 over 2)."""
    refs = references(ISSUE_CASE)
    rr, rr3 = refs["file"][("runA", "recip_rank")], refs["file"][("runA", "RR@3")]
    assert (rr.mean, sorted(rr.population)) == (0.5, ["1_1"])
    assert (rr3.mean, sorted(rr3.population)) == (0.25, ["1_1", "1_2"])
    assert refs["dict"][("runA", "recip_rank")].mean == 0.25
    complete = references(Case(**{**ISSUE_CASE.__dict__, "options": {"complete": True},
                                  "measures": [("recip_rank", "recip_rank")]}))
    assert complete["file"][("runA", "recip_rank")].mean == 0.25
    assert complete["file"][("runA", "recip_rank")].listed == {"1_1"}   # 9.0.8's -q -c


def test_the_checks_flag_a_door_that_states_or_averages_another_population():
    """A door answering with run A's recip_rank right but RR@3 averaged over the run's topics,
    stating 1 topic for both, fails the mean and stated-population checks of RR@3 only."""
    refs = references(ISSUE_CASE)["file"]
    out = Out("fake door")
    for run in RUNS:
        for key in ("recip_rank", "RR@3"):
            ref = refs[(run, key)]
            out.means[(run, key)] = ref.mean
            out.stated[(run, key)] = len(ref.population)
    out.means[("runA", "RR@3")], out.stated[("runA", "RR@3")] = 0.5, 1
    tally = Tally()
    against_reference(ISSUE_CASE, out, refs, tally)
    assert sorted(tally.failures) == ["a | mean | fake door | irm",
                                      "c | stated n | fake door | irm"]


def test_the_stated_population_parsers_read_both_wordings():
    """The coverage line as it is (one count for every name) and as issue 29 asks for (a
    count per group of names)."""
    keys = ["recip_rank", "ndcg_cut_3", "RR@3", "nDCG@3"]
    today = "trecqr: 25 topics evaluated; 9 only in qrels (a, b); 0 only in run\n"
    assert stated.eval_coverage(today, keys) == dict.fromkeys(keys, 25)
    target = ("trecqr: RR@3, nDCG@3: 34 qrels topics (ir_measures: a topic without results "
              "counts 0); recip_rank, ndcg_cut_3: 25 evaluated (-c counts the 9 as 0)")
    assert stated.eval_coverage(target, keys) == {"RR@3": 34, "nDCG@3": 34, "recip_rank": 25,
                                                  "ndcg_cut_3": 25}
    assert stated.compare_counts({"num_topics": {"r": {"RR@3": 34, "map": 25}}},
                                 ["RR@3", "map"]) == {("r", "RR@3"): 34, ("r", "map"): 25}


def test_the_slice_covers_every_mutation():
    """The slice's seeds cover topic subsets, empty rankings, ties, duplicated judgments,
    each option, each data set and both kinds of names."""
    cases = [make_case(s) for s in SEEDS]
    tags = {t for c in cases for t in c.tags}
    assert {"subsets", "empty", "ties", "duplicated"} <= tags
    assert {o for c in cases for o in c.options} == {"complete", "relevance_level",
                                                     "max_docs", "judged_only", "compat"}
    assert {c.source for c in cases} == {"cast2021", "qrecc", "topiocqa"}
    assert any(c.trec_keys() and c.irm_keys() for c in cases)
    assert any(c.trec_keys() and c.irm_keys() and not c.options for c in cases)
    assert [make_case(s) for s in SEEDS[:3]] == cases[:3]          # a seed is a case
