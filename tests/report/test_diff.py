"""``trecqr diff A B`` on trec_eval's own output files (trec_eval-test/out.test.aq: 387 lines,
3 topics 301-303 plus ``all``, ``runid`` and ``relstring`` string values)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import TE, data_path, run_cli

from trecqr.errors import InputError
from trecqr.cli.report import diff_command as command
from trecqr.report.diff import diff_files, line_of, parse_trec_output

AQ = data_path("trec_eval-test", "out.test.aq")
LINES = AQ.read_text().splitlines(keepends=True)


def _diff(*args):
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)


def _write(tmp_path, name, lines):
    path = tmp_path / name
    path.write_text("".join(lines))
    return path


def _planted(tmp_path):
    """map for topic 302 (line 100, 0.4175) with one digit changed: 0.4175 -> 0.4176."""
    lines = list(LINES)
    assert lines[99] == "map                   \t302\t0.4175\n"
    lines[99] = "map                   \t302\t0.4176\n"
    return _write(tmp_path, "planted.aq", lines)


def test_file_shape():
    assert len(LINES) == 387
    parsed = parse_trec_output(AQ.read_text(), str(AQ))
    assert len(parsed.values) == 387
    assert parsed.values[("runid", "all")] == "STANDARD"
    assert parsed.values[("relstring", "301")] == "'0000011000'"
    assert parsed.values[("map", "302")] == "0.4175"
    assert line_of(AQ.read_text(), ("map", "302")) == 100


def test_identical_copy_agrees(tmp_path):
    copy = _write(tmp_path, "copy.aq", LINES)
    r = _diff(AQ, copy)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-2:] == [
        "compared 387, differing 0, only in A 0, only in B 0 (tolerance 0)", "agree"]


def test_planted_one_digit_difference(tmp_path):
    planted = _planted(tmp_path)
    r = _diff(AQ, planted)
    assert r.exit_code == 1
    out = r.stdout.splitlines()
    rows = [line for line in out if line.startswith("map\t")]
    assert rows == ["map\t302\t0.4175\t0.4176\t0.0001"]
    assert out[-2:] == ["compared 387, differing 1, only in A 0, only in B 0 (tolerance 0)",
                        "differ"]
    res = diff_files(AQ, planted)
    assert res.differing == [("map", "302", "0.4175", "0.4176", 0.0001)]
    assert res.only_in_a == [] and res.only_in_b == [] and res.compared == 387


def test_planted_difference_json(tmp_path):
    planted = _planted(tmp_path)
    r = _diff(planted, AQ, "--format", "json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["agree"] is False
    assert doc["summary"] == {"compared": 387, "differing": 1, "only_in_a": 0, "only_in_b": 0}
    assert doc["differing"] == [{"measure": "map", "qid": "302", "a": "0.4176", "b": "0.4175",
                                 "abs_diff": 0.0001}]


def test_tolerance_covers_planted_difference(tmp_path):
    planted = _planted(tmp_path)
    assert _diff(AQ, planted, "--tol", "0.0001").exit_code == 0
    assert _diff(AQ, planted, "--tol", "0.00005").exit_code == 1
    r = _diff(AQ, planted, "--tol", "0.001")
    assert r.exit_code == 0
    assert "compared 387, differing 0, only in A 0, only in B 0 (tolerance 0.001)" in r.stdout


def test_removed_row_is_only_in_a(tmp_path):
    lines = list(LINES)
    assert lines[310].startswith("P_10                  \tall\t0.3000")
    del lines[310]
    fewer = _write(tmp_path, "fewer.aq", lines)
    r = _diff(AQ, fewer)
    assert r.exit_code == 1
    out = r.stdout.splitlines()
    i = out.index(f"only in A ({AQ}):")
    assert out[i + 1] == "P_10\tall\t0.3000"
    assert out[-2] == "compared 386, differing 0, only in A 1, only in B 0 (tolerance 0)"
    res = diff_files(fewer, AQ)
    assert res.only_in_b == [("P_10", "all", "0.3000")] and res.only_in_a == []


def test_string_values_compared_as_text(tmp_path):
    lines = [line.replace("STANDARD", "OTHER") for line in LINES]
    other = _write(tmp_path, "other.aq", lines)
    res = diff_files(AQ, other, tol=1.0)
    assert res.differing == [("runid", "all", "STANDARD", "OTHER", None)]
    assert _diff(AQ, other, "--ignore", "runid").exit_code == 0


def test_numeric_equality_of_printed_values(tmp_path):
    # 0.4175 printed with more places (as --places 6 would) is the same number.
    lines = list(LINES)
    lines[99] = "map\t302\t0.417500\n"
    wider = _write(tmp_path, "wider.aq", lines)
    assert _diff(AQ, wider).exit_code == 0


def test_malformed_line_exits_2(tmp_path):
    lines = list(LINES)
    lines[4] = "Rprec\t301\n"
    bad = _write(tmp_path, "bad.aq", lines)
    r = _diff(AQ, bad)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"{bad}:5: expected 3 fields")
    assert r.stdout == ""
    with pytest.raises(InputError) as exc:
        diff_files(AQ, bad)
    assert exc.value.line == 5


def test_duplicate_key_exits_2(tmp_path):
    dup = _write(tmp_path, "dup.aq", LINES + [LINES[3]])
    r = _diff(dup, AQ)
    assert r.exit_code == 2
    assert r.stderr.startswith(f"{dup}:388: measure 'map' for query '301' given twice "
                               "(first on line 4)")


def test_missing_file_exits_2(tmp_path):
    r = _diff(AQ, tmp_path / "nope.aq")
    assert r.exit_code == 2
    assert r.stderr.startswith(f"{tmp_path / 'nope.aq'}: no such file")


def test_zscore_rows(tmp_path):
    """out.test.aqZ: 'Z'-prefixed measures plus the runid row; against out.test.aq no key matches
    except runid, num_q and the like."""
    aqz = data_path("trec_eval-test", "out.test.aqZ")
    res = diff_files(aqz, aqz)
    assert res.agree and res.compared == 387
    res = diff_files(AQ, aqz)
    assert res.compared + len(res.only_in_a) == 387
    assert ("Zmap", "302") in {(m, q) for m, q, _ in res.only_in_b}


def test_trecqr_eval_output_matches_trec_eval(tmp_path):
    """trecqr eval's output on the conformance suite, checked against trec_eval's file by diff."""
    r = run_cli(["eval", "--quiet", "--compat", "10.0", "-m", "all_trec", "-q", "qrels.test",
                 "results.test"], cwd=TE)
    assert r.exit_code == 0, r.stderr
    ours = _write(tmp_path, "trecqr.aq", [r.stdout])
    d = _diff(AQ, ours)
    assert d.exit_code == 0, d.stdout
    assert "compared 387, differing 0, only in A 0, only in B 0" in d.stdout
    # and trecqr's 9.0.8 output differs from 10.0's exactly where trec_eval's two files do
    r9 = run_cli(["eval", "--quiet", "--compat", "9.0.8", "-m", "all_trec", "-q", "qrels.test",
                  "results.test"], cwd=TE)
    ours9 = _write(tmp_path, "trecqr9.aq", [r9.stdout])
    assert _diff(TE / "v9.0.8" / "out.test.aq", ours9).exit_code == 0
    mine = diff_files(ours, ours9)
    theirs = diff_files(AQ, TE / "v9.0.8" / "out.test.aq")
    assert mine.differing == theirs.differing and len(theirs.differing) == 6
    assert len(theirs.only_in_a) == 20  # rbp, rbp_resid, unj_5/10/20 are new in 10.0


def test_a_trec_eval_file_against_a_runs_evaluation():
    """The issue's second form: trec_eval's output A against trecqr's evaluation of the run."""
    from click.testing import CliRunner

    from trecqr.cli.report import diff_command as command

    runner = CliRunner()
    args = ["--qrels", str(TE / "qrels.test"), "--run", str(TE / "results.test"),
            "--eval-args", "-q -m all_trec"]
    same = runner.invoke(command, [str(TE / "v9.0.8" / "out.test.aq"), *args])
    assert same.exit_code == 0, same.output
    assert "compared 367, differing 0, only in A 0, only in B 0" in same.stdout
    # trec_eval 10.0's file against the default 9.0.8 evaluation: the six documented differences
    other = runner.invoke(command, [str(TE / "out.test.aq"), *args])
    assert other.exit_code == 1
    assert "compared 367, differing 6, only in A 20, only in B 0" in other.stdout
    both = runner.invoke(command, [str(TE / "out.test.aq"), str(TE / "out.test.aq"), *args])
    assert both.exit_code == 2 and "not both" in both.stderr
