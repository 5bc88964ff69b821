"""Bad input: one line ``file:line: what is wrong`` on stderr, exit status 2, never a traceback.

Bad files are generated in tmp_path from the real trec_eval test files; each test asserts the
whole message (file name and line number included), so a message that names the wrong line
or a second line of noise fails. ``-o FILE`` never leaves a partial, temporary or clobbered
file behind.
"""

from __future__ import annotations

import gzip

import pytest

from conftest import TE, run_cli

RUN_LINES = (TE / "results.test").read_text().splitlines()
QRELS_LINES = (TE / "qrels.test").read_text().splitlines()
RUN_FIELDS = "(qid Q0 docno rank score runid)"
QRELS_FIELDS = "(qid iter docno grade)"


def _file(tmp_path, name, lines=None, data: bytes | None = None):
    path = tmp_path / name
    if data is None:
        data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    return path


def _edit(lines, number, fn):
    """A copy of lines with line `number` (1-based) replaced by fn(its fields)."""
    out = list(lines)
    out[number - 1] = " ".join(fn(out[number - 1].split()))
    return out


def _error(args, cwd=None, input=None) -> str:
    """Run ``trecqr eval args``; assert exit 2, no output, no traceback; return the one line."""
    result = run_cli(["eval", *args], cwd=cwd, input=input)
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def qrels():
    return TE / "qrels.test"


@pytest.fixture
def run():
    return TE / "results.test"


# ---------------------------------------------------------------------------- field counts
def test_run_line_with_five_fields(tmp_path, qrels):
    bad = _file(tmp_path, "run", _edit(RUN_LINES, 3, lambda f: f[:5]))
    assert _error([qrels, bad]) == f"{bad}:3: expected at least 6 fields {RUN_FIELDS}, found 5"


def test_run_line_number_counts_blank_lines(tmp_path, qrels):
    lines = ["", *RUN_LINES[:10], "   ", *_edit(RUN_LINES[10:], 1, lambda f: f[:2])]
    bad = _file(tmp_path, "run", lines)
    assert _error([qrels, bad]) == f"{bad}:13: expected at least 6 fields {RUN_FIELDS}, found 2"


def test_qrels_line_with_three_and_five_fields(tmp_path, run):
    three = _file(tmp_path, "q3", _edit(QRELS_LINES, 7, lambda f: f[:3]))
    assert _error([three, run]) == f"{three}:7: expected 4 fields {QRELS_FIELDS}, found 3"
    five = _file(tmp_path, "q5", _edit(QRELS_LINES, 3681, lambda f: f + ["x"]))
    assert _error([five, run]) == f"{five}:3681: expected 4 fields {QRELS_FIELDS}, found 5"


def test_arguments_swapped(qrels, run):
    """A run where the qrels belong: its first line is a run line, and qrels go first."""
    assert _error([run, qrels]) == (f"{run}:1: expected 4 fields {QRELS_FIELDS}, found 6; "
                                    "this is a run line (qid Q0 docno rank score runid): "
                                    "qrels go first, then the runs")


# ---------------------------------------------------------------------------- scores, grades
@pytest.mark.parametrize("score", ["high", "nan", "NaN", "inf", "-inf", "1e999", "0.5.1", "1e"])
def test_bad_score(tmp_path, qrels, score):
    bad = _file(tmp_path, "run", _edit(RUN_LINES, 42, lambda f: f[:4] + [score] + f[5:]))
    assert _error([qrels, bad]) == f"{bad}:42: score {score!r} is not a finite number"


@pytest.mark.parametrize("grade", ["high", "nan", "inf", "1x", "", "--1"])
def test_bad_grade(tmp_path, run, grade):
    lines = _edit(QRELS_LINES, 5, lambda f: f[:3] + [grade]) if grade else None
    if grade == "":  # a missing grade is a field count error
        lines = _edit(QRELS_LINES, 5, lambda f: f[:3])
        bad = _file(tmp_path, "q", lines)
        assert _error([bad, run]) == f"{bad}:5: expected 4 fields {QRELS_FIELDS}, found 3"
        return
    bad = _file(tmp_path, "q", lines)
    assert _error([bad, run]) == f"{bad}:5: grade {grade!r} is not an integer"


def test_grade_out_of_range(tmp_path, run):
    bad = _file(tmp_path, "q", _edit(QRELS_LINES, 2, lambda f: f[:3] + ["99999999999999999999"]))
    assert _error([bad, run]) == f"{bad}:2: grade '99999999999999999999' is out of range"


def test_fractional_grade_truncates_with_warning_and_exit_0(tmp_path, run):
    """atol("1.9") is 1: the result equals qrels with 1 there, plus one warning line."""
    number = next(i for i, line in enumerate(QRELS_LINES, 1) if line.endswith(" 1"))
    frac = _file(tmp_path, "frac", _edit(QRELS_LINES, number, lambda f: f[:3] + ["1.9"]))
    result = run_cli(["eval", "-q", "-m", "map", "-m", "num_rel", frac, run])
    want = run_cli(["eval", "--quiet", "-q", "-m", "map", "-m", "num_rel", TE / "qrels.test", run])
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert result.stdout == want.stdout
    warning = (f"trecqr: warning: {frac}:{number}: grade '1.9' is not an integer; "
               "truncated to 1 as trec_eval's atol does")
    assert warning in result.stderr.splitlines()


# ---------------------------------------------------------------------------- duplicates
def test_duplicate_in_run_names_both_lines(tmp_path, qrels):
    lines = RUN_LINES[:30] + [RUN_LINES[7]] + RUN_LINES[30:]
    bad = _file(tmp_path, "run", lines)
    qid, docno = RUN_LINES[7].split()[0], RUN_LINES[7].split()[2]
    assert _error([qrels, bad]) == (f"{bad}:31: duplicate document for topic {qid!r} and docno "
                                    f"{docno!r} (first at line 8)")


def test_duplicate_in_qrels_names_both_lines(tmp_path, run):
    """A repeated judgment, even with another grade, is a duplicate."""
    qid, _, docno, _ = QRELS_LINES[99].split()
    lines = QRELS_LINES + [f"{qid} 0 {docno} 2"]
    bad = _file(tmp_path, "q", lines)
    assert _error([bad, run]) == (f"{bad}:3682: duplicate judgment for topic {qid!r} and docno "
                                  f"{docno!r} (first at line 100)")


def test_duplicate_in_gzipped_run_from_stdin(qrels):
    lines = RUN_LINES[:3] + [RUN_LINES[0]]
    data = gzip.compress(("\n".join(lines) + "\n").encode())
    qid, docno = RUN_LINES[0].split()[0], RUN_LINES[0].split()[2]
    assert _error([qrels, "-"], input=data) == (
        f"<stdin>:4: duplicate document for topic {qid!r} and docno {docno!r} (first at line 1)")


# ---------------------------------------------------------------------------- files
@pytest.mark.parametrize("content", [b"", b"\n\n", b" \t\r\n", b"\xef\xbb\xbf\n"],
                         ids=["zero_bytes", "newlines", "white_space", "bom_only"])
def test_empty_file(tmp_path, qrels, run, content):
    empty = _file(tmp_path, "empty", data=content)
    assert _error([qrels, empty]) == f"{empty}: empty file"
    assert _error([empty, run]) == f"{empty}: empty file"


def test_empty_gzip_and_empty_stdin(tmp_path, qrels):
    empty = _file(tmp_path, "empty.gz", data=gzip.compress(b""))
    assert _error([qrels, empty]) == f"{empty}: empty file"
    assert _error([qrels, "-"], input=b"") == "<stdin>: empty file"


def test_only_comments(tmp_path, qrels):
    only = _file(tmp_path, "c", ["# a comment", "  # another"])
    assert _error(["--compat", "10.0", qrels, only]) == (
        f"{only}: no data lines (only blank or comment lines)")
    assert _error([qrels, only]) == f"{only}:1: expected at least 6 fields {RUN_FIELDS}, found 3"


def test_missing_file(tmp_path, qrels):
    missing = tmp_path / "nope.run"
    assert _error([qrels, missing]) == f"{missing}: no such file"


def test_directory(tmp_path, run):
    assert _error([tmp_path, run]) == f"{tmp_path}: is a directory, not a file"


def test_unreadable_file(tmp_path, qrels, monkeypatch):
    """Root reads any file (CI runs as root), so the denial is simulated at open() and at
    the C scanner's open(2)."""
    import builtins

    locked = _file(tmp_path, "locked", RUN_LINES)
    real_open = builtins.open

    def deny(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    from trecqr.formats import _scan

    real_scan = _scan.scan_run

    def denied_scan(path, *args):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scan(path, *args)

    monkeypatch.setattr(_scan, "scan_run", denied_scan)
    assert _error([qrels, locked]) == f"{locked}: permission denied"


@pytest.mark.parametrize("data,line,byte", [
    (b"301 Q0 a 1 0.5 r\n301 Q0 b 2 0.4\x00 r\n", 2, 0x00),
    (bytes(range(256)) * 4, 1, 0x00),
    (bytes([0x1b, 0x5b]) * 200 + b"\x7fELF", 1, 0x1b),
], ids=["nul_in_line_2", "all_bytes", "escape_codes"])
def test_binary_garbage(tmp_path, qrels, data, line, byte):
    bad = _file(tmp_path, "bin", data=data)
    assert _error([qrels, bad]) == f"{bad}:{line}: binary data (byte 0x{byte:02x}); not a text file"


def test_real_binary_file(tmp_path, qrels):
    """An executable or compressed archive given by mistake."""
    import sys
    exe = open(sys.executable, "rb").read(4096)
    bad = _file(tmp_path, "python", data=exe)
    assert _error([qrels, bad]).startswith(f"{bad}:1: binary data (byte 0x")


@pytest.mark.parametrize("magic,kind", [(b"BZh91AY&SY", "bzip2"), (b"\xfd7zXZ\x00\x00", "xz"),
                                        (b"PK\x03\x04\x14\x00", "zip"),
                                        (b"\x28\xb5\x2f\xfd\x00", "zstd")])
def test_other_compression(tmp_path, qrels, magic, kind):
    """bzip2, xz and zstd runs are read (tests/test_stream.py); damaged ones, and zip
    archives, are one-line errors."""
    bad = _file(tmp_path, "run.z", data=magic + b"rest")
    if kind == "zip":
        assert _error([qrels, bad]) == (f"{bad}: zip-compressed data; only gzip, bzip2, xz and "
                                        "zstd are read")
    else:
        assert _error([qrels, bad]).startswith(f"{bad}: corrupt {kind} data (")


def test_corrupt_gzip(tmp_path, qrels):
    good = gzip.compress(("\n".join(RUN_LINES) + "\n").encode())
    truncated = _file(tmp_path, "trunc.gz", data=good[: len(good) // 2])
    assert _error([qrels, truncated]) == (
        f"{truncated}: corrupt gzip data (Compressed file ended before the end-of-stream "
        "marker was reached)")
    flipped = bytearray(good)
    flipped[-6] ^= 0xFF  # inside the CRC32 trailer
    bad_crc = _file(tmp_path, "crc.gz", data=bytes(flipped))
    assert _error([qrels, bad_crc]).startswith(f"{bad_crc}: corrupt gzip data (CRC check failed")
    header_only = _file(tmp_path, "hdr.gz", data=b"\x1f\x8bgarbage")
    assert _error([qrels, header_only]).startswith(f"{header_only}: corrupt gzip data (")


# ---------------------------------------------------------------------------- options
def test_unknown_measure(qrels, run):
    assert _error(["-m", "nosuch", qrels, run]) == \
        "trecqr: unknown measure 'nosuch' (trecqr measures lists every name)"


@pytest.mark.parametrize("arg,measure,bad", [
    ("P.0", "P", "0"), ("P.5,5", "P", "5,5"), ("P.abc", "P", "abc"), ("P.-3", "P", "-3"),
    ("ndcg_cut.0", "ndcg_cut", "0"), ("ndcg.1", "ndcg", "1")])
def test_bad_measure_parameter(qrels, run, arg, measure, bad):
    line = _error(["-m", arg, qrels, run])
    assert line.startswith(f"trecqr: measure {measure!r}: ") and repr(bad) in line


def test_negative_max_docs(qrels, run):
    assert _error(["-M", "-1", qrels, run]) == "trecqr: -M must not be negative (got -1)"


def test_both_inputs_from_stdin():
    assert _error(["-", "-"], input=b"1 0 a 1\n") == (
        "trecqr: QRELS and RUN cannot both be '-' (stdin)")


def test_no_topic_in_common(tmp_path, qrels):
    """trec_eval: 'No queries with both results and relevance info' (exit 2 here, not 0)."""
    other = _file(tmp_path, "other", ["9" + line for line in RUN_LINES])
    assert _error([qrels, other]) == (
        f"{other}: no queries with both results and relevance info: none of the 3 topics "
        f"of the run is among the 3 topics of {qrels}")


def test_no_topic_in_common_is_fine_under_10_complete(tmp_path, qrels):
    """trec_eval 10.0 -c scores qrels topics missing from the run on a bogus ranking."""
    other = _file(tmp_path, "other", ["9" + line for line in RUN_LINES])
    result = run_cli(["eval", "--compat", "10.0", "-c", "-m", "num_q", "-m", "num_ret", qrels,
                      other])
    assert result.exit_code == 0
    # trec_eval.c zeroes num_ret of a bogus ranking; num_q counts the 3 qrels topics
    assert result.stdout == "num_q                 \tall\t3\nnum_ret               \tall\t0\n"
    assert result.stderr == ("trecqr: 3 qrels topics (-c: a topic without results counts 0), "
                             "0 with results; 3 only in qrels (301, 302, 303); "
                             "3 only in run (9301, 9302, 9303)\n")


# ---------------------------------------------------------------------------- -o FILE
def test_failure_leaves_no_output_file(tmp_path, qrels):
    bad = _file(tmp_path, "run", _edit(RUN_LINES, 3, lambda f: f[:5]))
    result = run_cli(["eval", "-o", "out.txt", qrels, bad], cwd=tmp_path)
    assert result.exit_code == 2 and result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_failure_after_reading_leaves_existing_file_untouched(tmp_path, qrels):
    """The no-common-topic error comes after both files are parsed: still nothing written."""
    other = _file(tmp_path, "other", ["9" + line for line in RUN_LINES])
    (tmp_path / "out.txt").write_text("previous results\n")
    result = run_cli(["eval", "-o", "out.txt", qrels, other], cwd=tmp_path)
    assert result.exit_code == 2
    assert (tmp_path / "out.txt").read_text() == "previous results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "out.txt"]


def test_output_into_missing_directory(tmp_path, qrels, run):
    target = tmp_path / "no" / "out.txt"
    assert _error(["-o", target, qrels, run]) == (
        f"{target}: cannot write: No such file or directory")
    assert list(tmp_path.iterdir()) == []


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
