"""Bad options and values: unknown measures and measure parameters, out-of-range numbers
(negative depths, integers past 32 and 64 bits, the ranges the fuzz campaign found), options
that do not fit together, quoting, field names, titles. Each is refused in one line, exit 2
(click's usage errors name the option), or, where the value is valid, gives trec_eval's
result.
"""

from __future__ import annotations

import json
import sys

import pytest

from conftest import DATA, TE, run_cli
from fault_cases import FX, Q, R, trecqr, one_line, usage_error, nothing_left, eval_error
from fault_cases import qrels, run  # noqa: F401 (fixtures)

C21 = DATA / "cast2021" / "2021_manual_evaluation_topics_v1.0.json"


def test_utility_with_a_collection_size_past_int32():
    res = trecqr(["eval", "-N", "2147483648", "-m", "utility", Q, R])
    assert res.returncode == 0, res.stderr
    # trec_eval's default coefficients 1,-1,0,0: the collection size does not enter the value
    assert res.stdout == trecqr(["eval", "-m", "utility", Q, R]).stdout
    assert res.stdout.decode().startswith("utility")


def test_ir_measures_names_with_zscores():
    res = trecqr(["eval", "-m", "RR@3", "-Z", TE / "zscores_file", Q, R, "--quiet"])
    assert res.returncode == 0, res.stderr
    assert res.stdout.decode().startswith("ZRR@3")


@pytest.mark.parametrize("option,value", [("--seed", "-1"),
                                          ("--permutations", "99999999999999999999"),
                                          ("--bootstrap", "0")])
def test_compare_ranges(option, value):
    usage_error(trecqr(["compare", FX / "cast2021/qrels.txt", FX / "cast2021/manual_bm25.run",
                        FX / "cast2021/convdr.run", "-m", "map", option, value]), option)


def test_diff_eval_args_with_an_unclosed_quote():
    line = one_line(trecqr(["diff", TE / "out.test", "--qrels", Q, "--run", R,
                            "--eval-args", "-m 'map"]))
    assert line == "trecqr: --eval-args \"-m 'map\": No closing quotation"


def test_id_fields_that_are_not_one_or_two_names(tmp_path):
    dev = DATA / "qrecc" / "dev-sampled2k_chatgpt_ICL.jsonl"
    line = one_line(trecqr(["gen", dev, dev, "--pred-field", "GPT_rewrite", "--metric", "per",
                            "--pred-id-field", ",,"]))
    assert line == "trecqr: id field ',,': give one field name or two, CONV,TURN"
    line = one_line(trecqr(["convert", "rewrites", dev, tmp_path / "o.tsv", "--id-field",
                            "a,b,c", "--rewrite-field", "GPT_rewrite"]))
    assert line == "trecqr: id field 'a,b,c': give one field name or two, CONV,TURN"
    nothing_left(tmp_path)


def test_suggest_bleu_without_targets(tmp_path):
    s = DATA / "sessions"
    gen = tmp_path / "g.tsv"
    gen.write_text("".join(f"hredqs-{i}\tsome query\n" for i in range(1, 6)))
    res = trecqr(["suggest", "hredqs", s / "hredqs-test.ctx", "--rnk", s / "hredqs-test.rnk",
                  "--generated", gen, "--metric", "bleu", "--format", "json"])
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["counts"]["instances"] == 5 and out["counts"]["generated_scored"] == 0
    assert out["metrics"]["bleu"] != out["metrics"]["bleu"]  # NaN: no (generated, target) pair
    assert out["parameters"]["bleu_signature"] == "sacrebleu BLEU (lowercase=False; no pairs)"


def test_plot_title_that_is_not_mathtext(tmp_path):
    res = trecqr(["plot", "dist", FX / "cast2021/qrels.txt", FX / "cast2021/manual_bm25.run",
                  "-m", "map", "--title", "$x^$", "-o", tmp_path / "p.png"])
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_fuzz_found_option_ranges(tmp_path):
    """Found by the final fuzz run: -l past a C long and --threads past any machine were
    internal errors (a Java method mismatch); now usage errors."""
    usage_error(trecqr(["eval", "-m", "P.5", Q, R, "-l", "99999999999999999999"]), "-l")
    for cmd in (["search", tmp_path / "idx", tmp_path / "t.tsv"],
                ["index", tmp_path / "c.jsonl", "-o", tmp_path / "idx"]):
        usage_error(trecqr([*cmd, "--threads", "99999999999999999999"]), "--threads")
    nothing_left(tmp_path)


def test_empty_file_names_are_refused_before_any_work(tmp_path):
    """An option given an empty file or folder name (fuzz seed 3083): `convert topiocqa --qrels
    ''` was an internal error (the name was tested for truth in one place and for None in
    another), `cqr --groups ''` printed its whole table before failing, and others took the
    empty name as no name or as the working folder. Each is refused in one line that shows
    the empty name, before anything is written to stdout or a file."""
    demo = FX / "cast2021-demo"
    cases = [["eval", "", R],
             ["convert", "topiocqa", "--qrels", "", "--qrels-out", tmp_path / "t.qrels"],
             ["convert", "topiocqa", "--turns", "", "--topics-out", tmp_path / "t.tsv"]]
    cqr = ["cqr", "--qrels", demo / "qrels.txt", "--collection", demo / "collection.jsonl",
           "--topics", demo / "topics-raw.tsv"]
    cases += [[*cqr, f"--{option}", ""] for option in ("groups", "raw")]
    # where an empty name was taken as no name: `gen --embeddings ''` scored with GloVe and
    # `convert rewrites --raw ''` wrote the topics without the raw questions, both exit 0 (then
    # the one said "cannot read: No such file or directory", the other that it could not tell
    # the topics format of '' from its name)
    qrecc = DATA / "qrecc" / "dev-sampled2k_chatgpt_ICL.jsonl"
    rewrites = tmp_path / "rewrites.tsv"
    rewrites.write_text("31_1\tWhat is throat cancer?\n")
    cases += [["gen", qrecc, qrecc, "--pred-field", "GPT_rewrite", "--metric", "sim_emb",
               "--embeddings", ""],
              ["convert", "rewrites", rewrites, tmp_path / "out.tsv", "--raw", ""]]
    for args in cases:
        res = trecqr(args, cwd=tmp_path)
        assert one_line(res) == "'': no such file", args
        assert res.stdout == b"", args
    # an empty output name: `index -o ''` built the index into the working folder (exit 0)
    demo_run = DATA / "cast2021" / "docrun_org_convdr.run"
    outputs = {"file": [["fuse", demo_run, demo_run, "-o", ""],
                        ["convert", "ikat", "--topics", DATA / "ikat" / "2023_test_topics.json",
                         "--query-field", "resolved", "--topics-out", tmp_path / "t.tsv",
                         "--meta-out", ""]],
               "folder": [["index", demo / "collection.jsonl", "-o", ""],
                          [*cqr, "--runs-dir", ""]]}
    for what, commands in outputs.items():
        for args in commands:
            res = trecqr(args, cwd=tmp_path)
            assert one_line(res) == f"'': cannot write: an empty {what} name; give the " \
                                    f"{what}'s path", args
    nothing_left(tmp_path, keep={"rewrites.tsv"})


def test_unknown_measure(qrels, run):
    assert eval_error(["-m", "nosuch", qrels, run]) == \
        "trecqr: unknown measure 'nosuch' (trecqr measures lists every name)"


@pytest.mark.parametrize("arg,measure,bad", [
    ("P.0", "P", "0"), ("P.5,5", "P", "5,5"), ("P.abc", "P", "abc"), ("P.-3", "P", "-3"),
    ("ndcg_cut.0", "ndcg_cut", "0"), ("ndcg.1", "ndcg", "1")])
def test_bad_measure_parameter(qrels, run, arg, measure, bad):
    line = eval_error(["-m", arg, qrels, run])
    assert line.startswith(f"trecqr: measure {measure!r}: ") and repr(bad) in line


def test_negative_max_docs(qrels, run):
    assert eval_error(["-M", "-1", qrels, run]) == "trecqr: -M must not be negative (got -1)"


def test_integers_past_64_bits_in_options_and_cutoffs():
    """Fuzz case (seed 76): `compare -l 99999999999999999999` and `eval -m
    P.99999999999999999999` were internal errors (the C pass's 64-bit integers overflowed).
    -l is range-checked as eval's is; a cutoff is read as trec_eval's atol reads it (glibc's
    strtol saturates: P_9223372036854775807), and the C pass leaves what it cannot hold to
    the numpy path; the API takes any relevance level."""
    import trecqr

    qrels, run, trunc = TE / "qrels.test", TE / "results.test", TE / "results.trunc"
    res = run_cli(["compare", "-l", "99999999999999999999", "-m", "P.10", qrels, run, trunc])
    assert res.exit_code == 2 and "Traceback" not in res.stderr  # click's usage error
    assert "Error: Invalid value for '-l': 99999999999999999999 is not in the range" in res.stderr
    res = run_cli(["eval", "-m", "P.99999999999999999999", "-m", "map", qrels, run])
    assert res.exit_code == 0, res.stderr
    assert "P_9223372036854775807 \tall\t0.0000\n" in res.stdout  # trec_eval 9.0.8's line
    assert "map                   \tall\t0.1785\n" in res.stdout
    got = trecqr.evaluate(str(qrels), str(run), ["P.10", "map"], relevance_level=2 ** 70)
    assert got.aggregate() == {"P_10": 0.0, "map": 0.0}


def test_runids_a_trec_line_cannot_hold_are_refused_before_any_work(tmp_path):
    """`fuse --runid "my run"` wrote lines of seven fields (exit 0), which read back with the
    runid cut to "my"; every option that names a run's runid now refuses white space, NUL and
    an empty value with click's usage line, before the runs are read."""
    demo_run = DATA / "cast2021" / "docrun_org_convdr.run"
    commands = [["fuse", demo_run, demo_run, "-o", tmp_path / "out.run", "--runid"],
                ["collapse", demo_run, "-o", tmp_path / "out.run", "--runid"],
                ["search", tmp_path / "index", tmp_path / "topics.tsv", "--run-id"]]
    for args in commands:
        for bad in ("my run", "a\tb", ""):
            res = run_cli([*args, bad])
            assert res.exit_code == 2, (args, bad, res.stderr)
            assert "cannot be one field of a TREC line" in res.stderr, res.stderr
    nothing_left(tmp_path)


@pytest.mark.parametrize("args,line", [
    (["convert", "cast", "--topics", C21, "--topics-out", "t.tsv"],
     "--topics-out needs --query-field (raw, manual, automatic or context)"),
    (["convert", "cast", "--topics", C21, "--query-field", "raw"],
     "--query-field needs --topics-out OUT (the topics file to write)"),
    (["convert", "cast", "--topics", C21, "--qrels-out", "q.txt"],
     "--qrels-out needs --qrels FILE (the CAsT qrels to check)"),
    (["convert", "ikat", "--topics", DATA / "ikat" / "2023_test_topics.json", "--topics-out",
      "t.tsv"], "--topics-out needs --query-field (raw, resolved or context)"),
    (["convert", "ikat", "--query-field", "raw"],
     "--query-field needs --topics-out OUT (the topics file to write)"),
    (["diff", "a.txt", "--run", R], "--run needs --qrels QRELS (to evaluate --run against)"),
    (["diff", "a.txt", "--qrels", Q], "--qrels needs --run RUN (the run to evaluate, compared "
                                      "with A)"),
])
def test_an_option_given_without_its_partner_names_the_partner(tmp_path, args, line):
    """Options that mean something only together: the one given alone is named with the one
    it needs and what that one takes, in one line, before any file is read or written."""
    res = run_cli(args, cwd=tmp_path)
    assert res.exit_code == 2 and res.stderr == f"trecqr: {line}\n"
    assert list(tmp_path.iterdir()) == []


def test_scai_run_without_run_out_is_a_usage_error(tmp_path):
    """convert qrecc refuses before its job starts, as click refuses an option: the usage
    lines, then the partner named."""
    res = run_cli(["convert", "qrecc", "--run-out", "r.run"], cwd=tmp_path)
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1] == ("Error: --run-out needs --scai-run FILE (the SCAI run "
                                           "to convert)")
    assert list(tmp_path.iterdir()) == []


CAST_DEMO = FX / "cast2021-demo"


@pytest.mark.parametrize("extra,line", [
    (["--collection", CAST_DEMO / "collection.jsonl", "--max-seq-length", "128"],
     "--max-seq-length is for --backend dense"),
    (["--index", "idx", "--backend", "dense", "--max-seq-length", "128"],
     "index parameters say how a collection is indexed; an index already built keeps its own; "
     "--max-seq-length needs --collection"),
    (["--index", "idx", "--model", "m", "--max-seq-length", "128"],
     "index parameters say how a collection is indexed; an index already built keeps its own; "
     "--max-seq-length and --model need --collection"),
])
def test_cqr_encoding_options_without_a_dense_collection(tmp_path, extra, line):
    """cqr's --model and --max-seq-length say how --collection's dense index is built: with
    another backend, or an --index already built, they are refused, not ignored."""
    res = run_cli(["cqr", "--qrels", CAST_DEMO / "qrels.txt", "--topics",
                   CAST_DEMO / "topics-raw.tsv", *extra], cwd=tmp_path)
    assert res.exit_code == 2 and res.stderr == f"trecqr: {line}\n"
    assert list(tmp_path.iterdir()) == []
