"""Messages that say what a name means and what to do: the note on ``MRR@k``, the nearest names
of an unknown measure, swapped arguments, an object of no input kind, turn ids in two styles,
option names in the words of the door used (CLI or Python), ir_measures parameters, cutoffs
past a C long, and measure parameters read as trec_eval's atol/atof read them (values checked
against trec_eval 9.0.8 and 10.0 built from the official sources)."""

from __future__ import annotations

import warnings

import pytest

from conftest import ROOT, run_cli

import trecqr
from trecqr.errors import InputError, UsageError
from trecqr.engine.names import MeasureNameWarning

Q = ROOT / "fixtures" / "cast2021" / "qrels.txt"
R = ROOT / "fixtures" / "cast2021" / "manual_bm25.run"
R2 = ROOT / "fixtures" / "cast2021" / "convdr.run"


def _value(res, name):
    """The summary value of ``name`` in trec_eval's output."""
    for line in res.stdout.splitlines():
        fields = line.split()
        if fields[0] == name and fields[1] == "all":
            return fields[2]
    raise AssertionError(res.stdout)


def _one_line(res) -> str:
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    return lines[0]


# ------------------------------------------------------------------------- MRR@k: one note
def _notes(stderr: str) -> list:
    return [line for line in stderr.splitlines() if "MRR@3 is ir_measures' RR@3" in line]


def test_mrr_at_k_says_once_what_it_computes_and_what_papers_mean():
    """MRR@3 keeps ir_measures' value (a true cutoff, 0.6422) and says in one note that the
    papers' "MRR@3" is recip_rank (0.6725 here), naming -m recip_rank and --quiet."""
    res = run_cli(["eval", "-m", "MRR@3", "-m", "recip_rank", Q, R])
    assert res.exit_code == 0
    assert _value(res, "MRR@3") == "0.6422" and _value(res, "recip_rank") == "0.6725"
    notes = _notes(res.stderr)
    assert len(notes) == 1
    assert "type -m recip_rank" in notes[0] and "--quiet hides this note" in notes[0]
    assert "max_docs" not in notes[0]  # the command line's words only


@pytest.mark.parametrize("command", [["eval"], ["compare"], ["breakdown"],
                                     ["report", "-o", "page.html"]])
def test_every_command_with_m_notes_mrr_at_k_once_and_quiet_silences_it(tmp_path, command):
    args = [*command, "-m", "MRR@3", Q, R, R2]
    loud = run_cli(args, cwd=tmp_path)
    assert loud.exit_code == 0, loud.stderr
    assert len(_notes(loud.stderr)) == 1
    quiet = run_cli([*command, "--quiet", *args[len(command):]], cwd=tmp_path)
    assert quiet.exit_code == 0, quiet.stderr
    assert _notes(quiet.stderr) == []


def test_rr_at_k_and_trec_eval_names_have_no_note():
    res = run_cli(["eval", "-m", "RR@3", "-m", "recip_rank", "-m", "MRR", Q, R])
    assert res.exit_code == 0 and "warning" not in res.stderr


def test_python_warns_with_a_category_that_can_be_filtered():
    with pytest.warns(MeasureNameWarning, match=r"ask for 'recip_rank'") as caught:
        got = trecqr.evaluate(Q, R, ["MRR@3"]).aggregate()["MRR@3"]
    assert round(got, 4) == 0.6422
    assert len([w for w in caught if w.category is MeasureNameWarning]) == 1
    assert "--quiet" not in str(caught[0].message)  # Python's words in Python
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=MeasureNameWarning)
        trecqr.evaluate(Q, R, ["MRR@3"])  # filtered: no warning, no error


# ------------------------------------------------------------------- unknown measure names
@pytest.mark.parametrize("name, nearest", [
    ("mrr", ["'MRR'", "'recip_rank'"]),
    ("ndcg@3", ["'nDCG@3'", "'ndcg_cut.3'"]),
    ("ndcg_cut_3", ["'ndcg_cut.3'", "'nDCG@3'"]),
    ("recall@100", ["'R@100'", "'recall.100'"]),
    ("hit_rate@5", ["'Success@5'", "'success.5'"]),  # ranx's names
    ("r-precision", ["'Rprec'"]),
])
def test_an_unknown_measure_suggests_the_nearest_names_and_trecqr_measures(name, nearest):
    line = _one_line(run_cli(["eval", "-m", name, Q, R]))
    assert line.startswith(f"trecqr: unknown measure {name!r}; did you mean ")
    for n in nearest:
        assert n in line
    assert line.endswith("(trecqr measures lists every name)")


def test_every_suggested_name_is_a_name_trecqr_takes():
    from trecqr.measures.catalog import nearest_names

    for name in ["mrr", "ndcg@3", "ndcg_cut_3", "recall@100", "P_5", "map_cut_10", "ndgc",
                 "nDGC@10", "success@10", "offical", "precision", "hit_rate@5", "r-precision",
                 "ndcg(judged_only=True)@3"]:
        near = nearest_names(name, "9.0.8")
        assert near, name
        for n in near:
            trecqr.evaluate(Q, R, [n])  # parses and scores


def test_a_measure_of_the_other_version_names_the_option_of_the_door():
    line = _one_line(run_cli(["eval", "-m", "rbp", Q, R]))
    assert line.endswith("(not in trec_eval 9.0.8; try --compat 10.0)")
    with pytest.raises(UsageError, match=r"try compat='10.0'\)$"):
        trecqr.evaluate(Q, R, ["rbp"])


# ---------------------------------------------------------------- ir_measures names on -m
@pytest.mark.parametrize("name", ["AP", "RR", "nDCG", "MRR", "Bpref", "NumQ", "NumRet",
                                  "Compat", "Accuracy"])
def test_bare_ir_measures_names_are_read_on_the_command_line_as_in_python(name):
    res = run_cli(["eval", "-m", name, Q, R])
    assert res.exit_code == 0, res.stderr
    want = trecqr.evaluate(Q, R, [name]).aggregate()[name]
    assert float(_value(res, name)) == pytest.approx(want, abs=5e-5)


@pytest.mark.parametrize("name, says", [
    ("INSQ", "'INSQ' needs max_rel (maximum relevance score): e.g. 'INSQ(max_rel=4)'"),
    ("SDCG@10", "'SDCG@10' needs max_rel (maximum relevance score): e.g. "
                "'SDCG(max_rel=4)@10'"),
    ("SDCG", "needs cutoff (ranking cutoff threshold), max_rel (maximum relevance score): "
             "e.g. 'SDCG(max_rel=4)@10'"),
    ("SDCG(max_rel='x')@10", "max_rel (maximum relevance score) must be an int, not 'x'"),
    ("nDCG(dcg='foo')@3", "dcg (DCG formulation) must be one of 'log2', 'exp-log2'"),
    ("P(foo=1)@3", "no parameter 'foo'; P takes cutoff, rel, judged_only"),
])
def test_ir_measures_parameters_are_explained(name, says):
    line = _one_line(run_cli(["eval", "-m", name, Q, R]))
    assert says in line and "object at 0x" not in line


@pytest.mark.parametrize("name", ["R@99999999999999999999", "P@99999999999999999999",
                                  "nDCG@99999999999999999999", "AP@99999999999999999999",
                                  "Success@99999999999999999999"])
def test_a_cutoff_past_a_c_long_is_refused_where_ir_measures_has_no_value(name):
    """ir_measures' pytrec_eval provider fails on these (KeyError): pytrec_eval saturates
    the cutoff at 2**63-1 and ir_measures looks the value up under the cutoff as written."""
    line = _one_line(run_cli(["eval", "-m", name, Q, R]))
    assert "cutoff past 2**63-1" in line and "give at most 9223372036854775807" in line


def test_a_cutoff_past_a_c_long_cuts_nothing_where_ir_measures_ranks_in_python():
    """RR@k and Judged@k compare ranks in Python: ir_measures gives the uncut values."""
    huge = "99999999999999999999"
    got = trecqr.evaluate(Q, R, [f"RR@{huge}", "RR", f"Judged@{huge}", "Judged@1000"])
    values = got.aggregate()
    assert values[f"RR@{huge}"] == values["RR"]
    assert values[f"Judged@{huge}"] == values["Judged@1000"]
    assert round(values[f"Judged@{huge}"], 4) == 0.3650  # ir_measures 0.4.3: 0.36504885...


# -------------------------------------------------------------- options in the door's words
def test_trec_eval_options_beside_ir_measures_names_are_named_as_the_door_names_them():
    line = _one_line(run_cli(["eval", "-J", "-l", "2", "-m", "RR@3", Q, R]))
    assert "-l, -J apply to trec_eval names only" in line
    assert "relevance_level" not in line and "judged_only=, @cutoff); -l" in line
    with pytest.raises(UsageError, match=r"relevance_level=, judged_only= apply to trec_eval"):
        trecqr.evaluate(Q, R, ["RR@3"], relevance_level=2, judged_only=True)


# --------------------------------------------------------------------------- swapped files
@pytest.mark.parametrize("command", [["eval"], ["compare"], ["breakdown"],
                                     ["report", "-o", "page.html"]])
def test_swapped_arguments_say_qrels_go_first(tmp_path, command):
    line = _one_line(run_cli([*command, "-m", "map", R, Q, R2], cwd=tmp_path))
    assert line == (f"{R}:1: expected 4 fields (qid iter docno grade), found 6; this is a run "
                    "line (qid Q0 docno rank score runid): qrels go first, then the runs")


def test_swapped_arguments_in_python():
    with pytest.raises(InputError, match=r"qrels go first, then the runs$"):
        trecqr.evaluate(R, Q, ["map"])


def test_swapped_run_and_qrels_objects_are_named():
    """trecqr's own Run and Qrels objects swapped, at evaluate and at the drop-in (which
    takes them as it takes DataFrames): one line that says so, not an AttributeError."""
    run, qrels = trecqr.load_run(R), trecqr.load_qrels(Q)
    files = trecqr.evaluate(Q, R, ["map"]).per_query()
    assert trecqr.evaluate(qrels, run, ["map"]).per_query() == files
    assert trecqr.RelevanceEvaluator(qrels, {"map"}).evaluate(run) == files
    for call in (lambda a, b: trecqr.evaluate(a, b, ["map"]),
                 lambda a, b: trecqr.RelevanceEvaluator(a, {"map"}).evaluate(b)):
        with pytest.raises(InputError, match=r"^<qrels \w+>: a Run is given as the qrels: "
                                             r"qrels go first, then the run$"):
            call(run, qrels)
        with pytest.raises(InputError, match=r"^<run \w+>: a Qrels is given as the run: "):
            call(qrels, qrels)


def test_ids_in_a_dataframes_index_are_named():
    """A run whose topic ids a ``set_index`` or ``groupby`` left in the index: the error says
    where they are and what to do."""
    import pandas as pd

    frame = pd.DataFrame({"query_id": ["1"], "doc_id": ["d"], "score": [1.0]})
    with pytest.raises(InputError, match=r"no topic column .*; query_id is the DataFrame's "
                                         r"index: pass frame.reset_index\(\)$"):
        trecqr.evaluate(Q, frame.set_index("query_id"), ["map"])


def test_a_qrels_line_with_six_other_fields_has_no_hint(tmp_path):
    bad = tmp_path / "q.txt"
    bad.write_text("q1 0 d1 1 x y\n")
    line = _one_line(run_cli(["eval", "-m", "map", bad, R]))
    assert line == f"{bad}:1: expected 4 fields (qid iter docno grade), found 6"


# ------------------------------------------------------------------ turn ids in two styles
def test_turn_ids_in_another_style_name_qid_style(tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("5_2 0 d1 1\n5_3 0 d2 1\n")
    run = tmp_path / "r.run"
    run.write_text("QReCC-Test_5_2 Q0 d1 1 1.0 r\nQReCC-Test_5_3 Q0 d2 1 1.0 r\n")
    run2 = tmp_path / "r2.run"
    run2.write_text("QReCC-Test_5_2 Q0 d2 1 1.0 r\n")
    for command in (["eval", "-m", "map", qrels, run], ["eval", "-m", "RR@3", qrels, run],
                    ["compare", "-m", "map", qrels, run, run2]):
        line = _one_line(run_cli(command))
        assert line.startswith(f"{run}: no queries with both results and relevance info")
        assert line.endswith("they name the same turns in two id styles (run "
                             "'QReCC-Test_5_2', qrels '5_2'): write the qrels in the run's "
                             "style with --qid-style QReCC-Test (trecqr convert qrecc, "
                             "topiocqa or irds; convert topics for topics)")
    other = tmp_path / "o.run"
    other.write_text("7_1 Q0 d1 1 1.0 r\n")  # no shared turn: no hint
    line = _one_line(run_cli(["eval", "-m", "map", qrels, other]))
    assert line.endswith("none of the 1 topics of the run is among the 2 topics of "
                         f"{qrels}")


# ------------------------------------------------- digits and numbers as trec_eval reads them
@pytest.mark.parametrize("option", ["-M", "-l"])
def test_non_ascii_digits_in_trec_eval_options_are_refused(option):
    """Python's int reads '٣' as 3; trec_eval's atol reads 0 (num_ret 0 with -M ٣)."""
    res = run_cli(["eval", option, "٣", "-m", "num_ret", Q, R])
    assert res.exit_code == 2 and res.stdout == ""
    assert "'٣' is not an integer in ASCII digits" in res.stderr


def test_a_cutoff_in_non_ascii_digits_is_refused_as_trec_eval_refuses_it():
    """trec_eval: "Negative cutoff detected" (its atol reads 0)."""
    line = _one_line(run_cli(["eval", "-m", "P.５", Q, R]))
    assert line == "trecqr: measure 'P': parameter '５' is not a number"


@pytest.mark.parametrize("compat, want", [("9.0.8", "0.3340"), ("10.0", "0.3887")])
def test_a_gain_level_in_non_ascii_digits_is_level_0_as_atol_reads_it(compat, want):
    """trec_eval 9.0.8 reads 'ndcg.٣=2' as a gain for level 0, 10.0 skips the pair."""
    res = run_cli(["eval", "--compat", compat, "-m", "ndcg.٣=2", Q, R])
    assert res.exit_code == 0 and _value(res, "ndcg_٣=2") == want


def test_hexadecimal_parameters_are_read_as_atof_reads_them():
    """glibc's atof reads hexadecimal floats: trec_eval prints 0.3872 for ndcg.1=0x2, as
    for ndcg.1=2 (it was 0.3911 here, the gain read as 0)."""
    res = run_cli(["eval", "-m", "ndcg.1=0x2", "-m", "Rprec_mult.0x1p1", Q, R])
    assert _value(res, "ndcg_1=0x2") == "0.3872"
    assert _value(res, "Rprec_mult_2.00") == "0.1822"


@pytest.mark.parametrize("param", ["ndcg.1=nan", "ndcg.1=inf", "Rprec_mult.nan",
                                   "utility.nan,1,1,1"])
def test_nan_and_inf_parameters_are_refused(param):
    """trec_eval prints nan (ndcg.1=nan, where trecqr gave 0.3911) or other undefined
    values: refused in one line."""
    line = _one_line(run_cli(["eval", "-m", param, Q, R]))
    assert "is not a finite number" in line


def test_an_object_of_no_input_kind_is_named():
    """A number, None or a lazy frame where a run or qrels goes: one line that names it and
    what goes there, not the TypeError of opening it as a path."""
    import polars as pl

    dicts = ({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}})
    for bad in (42, None, object()):
        with pytest.raises(InputError, match=rf"^<run {type(bad).__name__}>: not a run: pass a "
                                             r"file path, a \{qid: \{docno: score\}\} dict, "):
            trecqr.evaluate(dicts[0], bad, ["map"])
        with pytest.raises(InputError, match=rf"^<qrels {type(bad).__name__}>: not qrels: "):
            trecqr.evaluate(bad, dicts[1], ["map"])
    lazy = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]}).lazy()
    with pytest.raises(InputError, match=r"; a lazy frame: collect\(\) it first "
                                         r"\(docs/python.md, Inputs\)$"):
        trecqr.evaluate(dicts[0], lazy, ["map"])
    assert trecqr.evaluate(dicts[0], lazy.collect(), ["map"]).aggregate() == {"map": 1.0}
