"""Reading and writing TREC runs and qrels.

The same content in every accepted shape (white space, CRLF, blank lines, gzip, stdin)
must give identical columns and identical ``trecqr eval`` output, and the fast Arrow path and
the slow per-line Python path must agree on every shape. ``#`` lines follow trec_eval: comments
under --compat 10.0 (get_trec_results.c / get_qrels.c skip them), data under 9.0.8 (no such
code there, so they are malformed lines).
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import warnings

import numpy as np
import pytest

from conftest import TE, run_cli
from trecqr.api.evaluation import evaluate
from trecqr.errors import InputError
from trecqr.formats import (qrels_from_dict, qrels_from_frame, read_qrels, read_run,
                            run_from_dict, run_from_frame, write_qrels, write_run)
from trecqr.formats import qrels as qrels_module
from trecqr.formats import run as run_module
from trecqr.formats.qrels import TruncatedGradeWarning, _python_qrels
from trecqr.formats.run import _python_run
from trecqr.formats.textio import read_source

RUN_BYTES = (TE / "results.test").read_bytes()
QRELS_BYTES = (TE / "qrels.test").read_bytes()
QRELS_PATH = TE / "qrels.test"
MEASURES = ["eval", "-m", "map", "-m", "P.5,10", "-m", "num_rel_ret", "-m", "num_ret",
            "-m", "runid"]


def _lines(data: bytes) -> list[list[bytes]]:
    return [line.split() for line in data.split(b"\n") if line.strip()]


def _joined(data: bytes, seps) -> bytes:
    """Re-join every line's fields with seps[i % len(seps)], adding edge white space."""
    out = []
    for i, fields in enumerate(_lines(data)):
        sep = seps[i % len(seps)]
        lead = b"  " if i % 3 == 0 else b""
        out.append(lead + sep.join(fields) + (b" \t" if i % 5 == 0 else b""))
    return b"\n".join(out) + b"\n"


def _blank_lines(data: bytes) -> bytes:
    lines = data.split(b"\n")
    for at in range(len(lines) - 1, 0, -97):
        lines.insert(at, b" \t ")
    return b"\n\n" + b"\n".join(lines) + b"\n\n   \n\t\n\n"


SHAPES = {
    "as_is": lambda d: d,
    "single_spaces": lambda d: _joined(d, [b" "]),
    "single_tabs": lambda d: b"\n".join(b"\t".join(f) for f in _lines(d)) + b"\n",
    "mixed_space": lambda d: _joined(d, [b" ", b"\t", b"   ", b" \t\x0b\x0c "]),
    "crlf": lambda d: d.replace(b"\n", b"\r\n"),
    "blank_lines": _blank_lines,
    "no_final_newline": lambda d: d.rstrip(b"\n"),
    "trailing_space_no_newline": lambda d: _joined(d, [b" "]).rstrip(b"\n") + b" \t ",
    "tab_then_crlf": lambda d: _joined(d, [b"\t"]).replace(b"\n", b"\r\n"),
    "everything": lambda d: _blank_lines(_joined(d, [b"\t ", b" "])).replace(
        b"\n", b"\r\n"),
}


def _write(tmp_path, name: str, data: bytes, gz: bool = False):
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _same_run(a, b):
    assert a.qid.to_pylist() == b.qid.to_pylist()
    assert a.docno.to_pylist() == b.docno.to_pylist()
    assert a.score.dtype == b.score.dtype == np.float64
    assert a.score.tobytes() == b.score.tobytes()  # bit for bit
    assert a.runid == b.runid


def _same_qrels(a, b):
    assert a.qid.to_pylist() == b.qid.to_pylist()
    assert a.docno.to_pylist() == b.docno.to_pylist()
    assert a.grade.dtype == b.grade.dtype == np.int64
    assert np.array_equal(a.grade, b.grade)


@pytest.fixture
def no_slow_path(monkeypatch):
    """Make the per-line Python readers fail: a read that succeeds took the Arrow path."""
    def boom(*args, **kwargs):
        raise AssertionError("slow Python path used")
    monkeypatch.setattr(run_module, "_python_run", boom)
    monkeypatch.setattr(qrels_module, "_python_qrels", boom)


@pytest.fixture(scope="module")
def baseline_run():
    return _python_run(read_source(TE / "results.test"), True)


@pytest.fixture(scope="module")
def baseline_qrels():
    return _python_qrels(read_source(TE / "qrels.test"), True)


@pytest.fixture(scope="module")
def baseline_output():
    result = run_cli([*MEASURES, "-q", TE / "qrels.test", TE / "results.test"])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_baseline_is_the_file_content(baseline_run, baseline_qrels):
    """The reference parse itself: first and last lines of results.test and qrels.test."""
    assert len(baseline_run) == 1500 and len(baseline_qrels) == 3681
    first = (baseline_run.qid[0].as_py(), baseline_run.docno[0].as_py())
    assert first == ("301", "FR940202-2-00150")
    assert baseline_run.score[0] == 2.129133 and baseline_run.runid == "STANDARD"
    assert baseline_qrels.grade[2] == 1 and baseline_qrels.docno[2].as_py() == "CR93E-1282"


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_run_shapes_parse_identically(tmp_path, shape, gz, baseline_run, baseline_qrels,
                                      baseline_output, monkeypatch):
    data = SHAPES[shape](RUN_BYTES)
    path = _write(tmp_path, "run", data, gz)
    slow = _python_run(read_source(path), True)
    _same_run(slow, baseline_run)
    with monkeypatch.context() as m:  # the Arrow path alone must read every shape
        m.setattr(run_module, "_python_run", lambda *a: pytest.fail("slow path used"))
        fast = read_run(path)
    _same_run(fast, baseline_run)
    result = run_cli([*MEASURES, "-q", TE / "qrels.test", path])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == baseline_output


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_qrels_shapes_parse_identically(tmp_path, shape, gz, baseline_qrels, baseline_output,
                                        monkeypatch):
    path = _write(tmp_path, "qrels", SHAPES[shape](QRELS_BYTES), gz)
    _same_qrels(_python_qrels(read_source(path), True), baseline_qrels)
    with monkeypatch.context() as m:
        m.setattr(qrels_module, "_python_qrels", lambda *a: pytest.fail("slow path used"))
        fast = read_qrels(path)
    _same_qrels(fast, baseline_qrels)
    result = run_cli([*MEASURES, "-q", path, TE / "results.test"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == baseline_output


def test_gzip_detected_by_content_not_name(tmp_path, baseline_run):
    path = _write(tmp_path, "run.txt", gzip.compress(RUN_BYTES))
    _same_run(read_run(path), baseline_run)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_stdin(monkeypatch, gz, baseline_run, baseline_qrels, baseline_output):
    data = SHAPES["everything"](RUN_BYTES)
    data = gzip.compress(data) if gz else data

    class Stdin:
        buffer = io.BytesIO(data)
    monkeypatch.setattr(sys, "stdin", Stdin)
    run = read_run("-")
    assert run.source == "<stdin>"
    _same_run(run, baseline_run)
    result = run_cli([*MEASURES, "-q", TE / "qrels.test", "-"], input=data)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == baseline_output
    result = run_cli([*MEASURES, "-q", "-", TE / "results.test"], input=QRELS_BYTES)
    assert result.stdout == baseline_output


def test_extra_run_fields_are_ignored(tmp_path, baseline_run, no_slow_path):
    """trec_eval's parse_results_line skips the rest of the line after the runid."""
    data = b"\n".join(line + b" extra 7" for line in RUN_BYTES.split(b"\n") if line) + b"\n"
    _same_run(read_run(_write(tmp_path, "run7", data)), baseline_run)


def test_ragged_extra_fields_take_the_slow_path_and_agree(tmp_path, baseline_run,
                                                          baseline_output):
    lines = [line for line in RUN_BYTES.split(b"\n") if line]
    data = b"\n".join(line + b" x" * (i % 3) for i, line in enumerate(lines)) + b"\n"
    path = _write(tmp_path, "ragged", data)
    _same_run(read_run(path), baseline_run)
    result = run_cli([*MEASURES, "-q", TE / "qrels.test", path])
    assert result.stdout == baseline_output


# ---------------------------------------------------------------------------- scores
GOOD_SCORES = ["1", "-1", "+1", "1.", ".5", "-.5", "+.5e-2", "1e5", "1E+5", "1.5e-3", "0001",
               "-0", "0.1", "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308",
               "9007199254740993", "1.00000000000000011102230246251565404236316680908203125",
               "3.14159265358979323846264338327950288", "123456789012345678901234567890",
               # leading zeros count as digits in the scanner's 19-digit fast path
               "0000000000000000000001", "000000000000000000000.5", "0.0000000000000000000001234",
               "00000", "1e23", "0.30000000000000004", "123456789012345678.9"]


def test_score_parsing_is_bit_identical_on_both_paths(tmp_path, no_slow_path):
    data = "".join(f"1 Q0 d{i} {i} {s} r\n" for i, s in enumerate(GOOD_SCORES)).encode()
    fast = read_run(_write(tmp_path, "scores", data))
    slow = _python_run(read_source(tmp_path / "scores"), True)
    expected = np.array([float(s) for s in GOOD_SCORES])
    assert fast.score.tobytes() == expected.tobytes() == slow.score.tobytes()


@pytest.mark.parametrize("text", ["nan", "NaN", "inf", "-inf", "Infinity", "1e400", "0x10",
                                  "1_0", "1e", "e5", "1.2.3", "+", "-", ".", "1d5", "high",
                                  "\u0661", "\uff11", "1,5"])
def test_bad_scores_are_rejected_at_their_line(tmp_path, text):
    """Unicode digits ('\u0661', fullwidth 1) pass Python's \\d and float(): not numbers here."""
    data = f"1 Q0 a 1 0.5 r\n1 Q0 b 2 {text} r\n".encode()
    with pytest.raises(InputError) as err:
        read_run(_write(tmp_path, "bad", data))
    assert err.value.line == 2 and repr(text) in err.value.message


# ---------------------------------------------------------------------------- comments
def test_hash_lines_are_comments_under_10(baseline_output):
    """trec_eval 10.0 get_qrels.c skips '#' lines; 9.0.8 has no such code."""
    qrels = TE / "qrels.test.with-comments"
    v10 = run_cli([*MEASURES, "-q", "--compat", "10.0", qrels, TE / "results.test"])
    plain = run_cli([*MEASURES, "-q", "--compat", "10.0", TE / "qrels.test", TE / "results.test"])
    assert v10.exit_code == 0 and v10.stdout == plain.stdout
    v9 = run_cli([*MEASURES, "-q", qrels, TE / "results.test"])
    assert v9.exit_code == 2
    assert v9.stderr.strip() == f"{qrels}:1: expected 4 fields (qid iter docno grade), found 3"


def test_hash_inside_a_docno_is_data():
    qrels = read_qrels(TE / "qrels.test.with-comments", comments=True)
    docnos = qrels.docno.to_pylist()
    assert "CR#93E-1860" in docnos and "CR93E-1860" not in docnos  # replaces it in qrels.test
    assert len(qrels) == 3681


def test_hash_run_lines(tmp_path):
    """10.0 (get_trec_results.c) skips a line whose first non-blank is '#'; 9.0.8 reads it."""
    data = b"# a comment\n  # indented comment\n1 Q0 a 1 0.5 r\n"
    path = _write(tmp_path, "run", data)
    assert read_run(path, comments=True).docno.to_pylist() == ["a"]
    with pytest.raises(InputError) as err:
        read_run(path, comments=False)
    assert (err.value.line, err.value.message) == (
        1, "expected at least 6 fields (qid Q0 docno rank score runid), found 3")
    six = _write(tmp_path, "six", b"#1 Q0 x 1 0.25 r\n1 Q0 a 1 0.5 r\n")
    assert read_run(six, comments=False).qid.to_pylist() == ["#1", "1"]
    assert read_run(six, comments=True).qid.to_pylist() == ["1"]


def test_real_comment_files_both_paths_agree(no_slow_path):
    for name, reader, slow in [("results.comment.test", read_run, _python_run),
                               ("qrels.comment.test", read_qrels, _python_qrels)]:
        fast = reader(TE / name, comments=True)
        ref = slow(read_source(TE / name), True)
        assert fast.qid.to_pylist() == ref.qid.to_pylist()
        assert fast.docno.to_pylist() == ref.docno.to_pylist()


def test_only_comments_is_no_data(tmp_path):
    path = _write(tmp_path, "c", b"# nothing\n\n# here\n")
    with pytest.raises(InputError, match="no data lines"):
        read_qrels(path, comments=True)


# ---------------------------------------------------------------------------- grades
def test_fractional_grades_truncate_like_atol_with_one_warning(tmp_path):
    """atol stops at the first non-digit: 1.7 -> 1, -1.5 -> -1, 2e1 -> 2, .5 -> 0."""
    data = b"1 0 a 1.7\n1 0 b -1.5\n1 0 c 2e1\n1 0 d .5\n1 0 e 3\n1 0 f -2\n"
    with pytest.warns(TruncatedGradeWarning) as caught:
        qrels = read_qrels(_write(tmp_path, "q", data))
    assert qrels.grade.tolist() == [1, -1, 2, 0, 3, -2]
    assert len(caught) == 1
    assert str(caught[0].message) == (f"{tmp_path / 'q'}:1: grade '1.7' is not an integer; "
                                      "truncated to 1 as trec_eval's atol does "
                                      "(4 fractional grades in all)")


def test_integer_grades_have_no_warning_and_negatives_stay(tmp_path, no_slow_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        qrels = read_qrels(_write(tmp_path, "q", b"1 0 a -1\n1 0 b 0\n1 0 c 4\n"))
    assert qrels.grade.tolist() == [-1, 0, 4]


@pytest.mark.parametrize("lines", [3, 70_000])  # a small file's lists; Arrow's reader
def test_hexadecimal_grade_is_refused_at_its_line(tmp_path, lines):
    """Arrow's integers take 0x1 as 1, where trec_eval's atol reads 0: a grade that is not a
    decimal number is refused at its line on every path, whatever the docnos hold."""
    rows = [f"1 0 0xd{i} {i % 2}\n" for i in range(lines)]  # docnos that start with 0x
    rows[1] = "1 0 doc 0x1\n"
    with pytest.raises(InputError) as err:
        read_qrels(_write(tmp_path, "q", "".join(rows).encode()))
    assert (err.value.line, err.value.message) == (2, "grade '0x1' is not an integer")


def test_large_qrels_grades_are_read_by_arrow_as_integers(tmp_path, no_slow_path):
    rows = "".join(f"1 0 d{i} {i % 5 - 1}\n" for i in range(70_000)).encode()
    assert read_qrels(_write(tmp_path, "q", rows)).grade.tolist() == \
        [i % 5 - 1 for i in range(70_000)]


def test_qrels_need_exactly_four_fields(tmp_path):
    with pytest.raises(InputError) as err:
        read_qrels(_write(tmp_path, "q", b"1 0 a 1\n1 0 b 1 extra\n"))
    assert (err.value.line, err.value.message) == (
        2, "expected 4 fields (qid iter docno grade), found 5")


# ---------------------------------------------------------------------------- dicts, frames
def _dicts():
    run, qrels = {}, {}
    for f in _lines(RUN_BYTES):
        run.setdefault(f[0].decode(), {})[f[2].decode()] = float(f[4])
    for f in _lines(QRELS_BYTES):
        qrels.setdefault(f[0].decode(), {})[f[2].decode()] = int(f[3])
    return qrels, run


def test_pytrec_eval_dicts_score_like_files():
    qrels, run = _dicts()
    want = evaluate(TE / "qrels.test", TE / "results.test", ["map", "P.5,10"]).per_query()
    got = evaluate(qrels, run, ["map", "P.5,10"]).per_query()
    assert got == want and set(got) == {"301", "302", "303"}


def test_dataframes_with_ir_measures_columns():
    import pandas as pd
    qrels, run = _dicts()
    qdf = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                       columns=["query_id", "doc_id", "relevance"])
    qdf["iteration"] = "0"
    rdf = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                       columns=["query_id", "doc_id", "score"])
    want = evaluate(TE / "qrels.test", TE / "results.test", ["map", "P.5"]).aggregate()
    assert evaluate(qdf, rdf, ["map", "P.5"]).aggregate() == want
    _same_qrels(qrels_from_frame(qdf), read_qrels(TE / "qrels.test"))
    r = run_from_frame(rdf)
    assert r.score.tobytes() == read_run(TE / "results.test").score.tobytes()


def test_float_grades_in_dicts_and_frames_truncate_with_warning():
    import pandas as pd
    with pytest.warns(TruncatedGradeWarning, match=r"doc 'a': grade '1\.5' .*truncated to 1"):
        q = qrels_from_dict({"1": {"a": 1.5, "b": 2, "c": -1.0}})
    assert q.grade.tolist() == [1, 2, -1]
    frame = pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "relevance": [2.9, 1.0]})
    with pytest.warns(TruncatedGradeWarning, match=r"row 0: grade '2\.9' .*truncated to 2"):
        q = qrels_from_frame(frame)
    assert q.grade.tolist() == [2, 1] and q.qid.to_pylist() == ["1", "1"]


def test_rows_that_start_with_an_integer_keep_their_fractions():
    """ir_measures' rows typed from the first row: ``ScoredDoc(q, d, 1)`` then float scores
    were read into an int64 column, which Arrow fills by cutting 0.13 to 0, without a word
    (map 0.25 where the dicts give 1/11); a grade 1.5 after an integer one was cut the same
    way, where a DataFrame's is truncated with a warning."""
    from ir_measures import Qrel, ScoredDoc

    scores = [1, 0.74, 0.62, 0.57, 0.53, 0.46, 0.28, 0.13, 0.11, 0.05, 0.04, 0.03]
    docs = [f"d{i}" for i in range(len(scores) - 2)] + ["rel", "z"]
    run = {"q": dict(zip(docs, scores))}
    rows = [ScoredDoc("q", d, s) for d, s in run["q"].items()]
    qrels = {"q": {"rel": 1}}
    assert evaluate(qrels, rows, ["map"]).aggregate() == \
        evaluate(qrels, run, ["map"]).aggregate() == {"map": 1 / 11}
    with pytest.warns(TruncatedGradeWarning, match=r"row 1: grade '1\.5' .*truncated to 1"):
        got = evaluate([Qrel("q", "d0", 2), Qrel("q", "rel", 1.5)], run, ["map"]).aggregate()
    assert got == {"map": (1 + 2 / 11) / 2}


def test_bad_dicts_and_frames():
    import pandas as pd
    with pytest.raises(InputError, match=r"<qrels dict>: query '1' doc 'a': grade 'x' is not"):
        qrels_from_dict({"1": {"a": "x"}})
    with pytest.raises(InputError,
                       match=r"<run dict>: query '1' doc 'b': score nan is not a finite number"):
        run_from_dict({"1": {"a": 1.0, "b": float("nan")}})
    # one DataFrame reader (formats.tables): a grade column under ranx's name is read
    assert qrels_from_frame(pd.DataFrame({"query_id": [1], "doc_id": ["a"], "score": [1]})) \
        .grade.tolist() == [1]
    with pytest.raises(InputError, match=r"<qrels DataFrame>: no relevance column \(one of "):
        qrels_from_frame(pd.DataFrame({"query_id": [1], "doc_id": ["a"], "judged": [1]}))
    with pytest.raises(InputError,
                       match=r"<run DataFrame>: row 1: score inf is not a finite number"):
        run_from_frame(pd.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"],
                                     "score": [1.0, float("inf")]}))
    with pytest.raises(InputError, match=r"<run DataFrame>: row 0: score 'high' is not a number"):
        run_from_frame(pd.DataFrame({"query_id": [1], "doc_id": ["a"], "score": ["high"]}))


# ---------------------------------------------------------------------------- writers
def test_write_run_round_trips(tmp_path, baseline_output):
    out = tmp_path / "out.run"
    write_run(read_run(TE / "results.test"), out)
    again = read_run(out)
    lines = out.read_text().splitlines()
    assert lines[0].split()[:4] == ["301", "Q0", again.docno[0].as_py(), "1"]
    assert again.runid == "STANDARD" and len(again) == 1500
    assert sorted(zip(again.docno.to_pylist(), again.score.tolist())) == sorted(
        zip(*(lambda r: (r.docno.to_pylist(), r.score.tolist()))(read_run(TE / "results.test"))))
    result = run_cli([*MEASURES, "-q", TE / "qrels.test", out])
    assert result.stdout == baseline_output
    assert [p.name for p in tmp_path.iterdir()] == ["out.run"]


def test_write_run_of_large_string_columns(tmp_path):
    """Ids as large_string (Arrow's type for text past 2 GiB), in chunks: the same bytes as
    the run of string columns (the writer's join had no kernel for the two types mixed)."""
    import pyarrow as pa

    run = read_run(TE / "results.test")
    chunked = pa.chunked_array([run.docno.slice(0, 700), run.docno.slice(700)])
    large = run_module.Run(run.qid.cast(pa.large_string()), chunked.cast(pa.large_string()),
                           run.score, run.runid, run.source)
    write_run(run, tmp_path / "string.run")
    write_run(large, tmp_path / "large.run")
    assert (tmp_path / "large.run").read_bytes() == (tmp_path / "string.run").read_bytes()


@pytest.mark.parametrize("run, what, bad", [
    ({"q 1": {"a": 1.0}}, "query id", "'q 1'"), ({"q1": {"a\tb": 1.0}}, "docno", "'a\\tb'"),
    ({"q1": {"": 1.0}}, "docno", "''"), ({"q1": {"a\x00": 1.0}}, "docno", "'a\\x00'")],
    ids=["space in a qid", "tab in a docno", "empty docno", "NUL in a docno"])
def test_writers_refuse_ids_a_trec_line_cannot_hold(tmp_path, run, what, bad):
    """An id from a dict or a frame (where it evaluates) that a TREC line would split or cut:
    the file was written and read back as other fields (or, for a runid, cut at the space);
    now nothing is written. Other bytes (é, a control character) are written as they are."""
    with pytest.raises(InputError, match=re.escape(
            f"<run dict>: {what} {bad} cannot be one field of a TREC line")):
        write_run(run_from_dict(run), tmp_path / "out.run")
    with pytest.raises(InputError, match=re.escape(f"<qrels dict>: {what} {bad} cannot be")):
        write_qrels(qrels_from_dict({q: {d: 1 for d in docs} for q, docs in run.items()}),
                    tmp_path / "out.qrels")
    with pytest.raises(InputError, match=r"runid 'my run' cannot be one field"):
        write_run(run_from_dict({"q1": {"a": 1.0}}), tmp_path / "out.run", runid="my run")
    assert list(tmp_path.iterdir()) == []
    import pyarrow as pa  # slices of one array in chunks: each read from its own offset

    ids = pa.array(["x y"] + [f"d{i}" for i in range(10)] + ["p q"])
    for docno, bad in ((pa.chunked_array([ids.slice(1, 5), ids.slice(6, 5)]), None),
                       (pa.chunked_array([ids.slice(1, 5), ids.slice(6)]), "'p q'")):
        sliced = run_module.Run(pa.array(["q"] * len(docno)), docno,
                                np.arange(len(docno), dtype=float), "r", "<sliced>")
        if bad is None:
            write_run(sliced, tmp_path / "sliced.run")
        else:
            with pytest.raises(InputError, match=re.escape(f"<sliced>: docno {bad} cannot")):
                write_run(sliced, tmp_path / "sliced.run")
    (tmp_path / "sliced.run").unlink()
    write_run(run_from_dict({"q1": {"é": 1.0, "a\x01": 2.0}}), tmp_path / "out.run")
    assert (tmp_path / "out.run").read_bytes() == \
        "q1 Q0 a\x01 1 2.0 trecqr\nq1 Q0 é 2 1.0 trecqr\n".encode()


def test_write_qrels_round_trips(tmp_path, baseline_qrels):
    out = tmp_path / "out.qrels"
    write_qrels(baseline_qrels, out)
    _same_qrels(read_qrels(out), baseline_qrels)
    assert out.read_text().splitlines()[2] == "301 0 CR93E-1282 1"


def test_writers_are_atomic(tmp_path, monkeypatch):
    out = tmp_path / "out.qrels"
    out.write_text("old content\n")
    qrels = read_qrels(TE / "qrels.test")

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(InputError, match="No space left on device"):
        write_qrels(qrels, out)
    assert out.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.qrels"]


def test_written_files_get_normal_permissions(tmp_path):
    mask = os.umask(0o022)
    try:
        write_qrels(read_qrels(TE / "qrels.test"), tmp_path / "q")
    finally:
        os.umask(mask)
    assert (tmp_path / "q").stat().st_mode & 0o777 == 0o644


def test_latin1_bytes_read_the_same_on_both_paths(tmp_path, no_slow_path):
    """Not UTF-8: each byte maps to one code point (Latin-1), keeping strcmp order of docnos."""
    data = b"1 Q0 caf\xe9 1 0.5 r\n1 Q0 cafe 2 0.5 r\n1 Q0 caf\xff 3 0.5 r\n"
    path = _write(tmp_path, "latin1", data)
    fast = read_run(path)
    slow = _python_run(read_source(path), True)
    assert fast.docno.to_pylist() == slow.docno.to_pylist() == ["caf\xe9", "cafe", "caf\xff"]
    assert sorted(fast.docno.to_pylist()) == ["cafe", "caf\xe9", "caf\xff"]  # byte order


def test_duplicate_line_numbers_follow_the_comment_rule(tmp_path):
    """Under 9.0.8 a '#' line is data, so a duplicate of it is found and located there."""
    data = b"#1 Q0 a 1 0.5 r\n1 Q0 a 1 0.5 r\n#1 Q0 a 2 0.4 r\n"
    path = _write(tmp_path, "run", data)
    result = run_cli(["eval", "--quiet", QRELS_PATH, path])
    assert result.exit_code == 2
    assert result.stderr == (f"{path}:3: duplicate document for topic '#1' and docno 'a' "
                             "(first at line 1)\n")
    result = run_cli(["eval", "--quiet", "--compat", "10.0", "-m", "num_ret", QRELS_PATH, path])
    assert result.exit_code == 2 and "no queries with both" in result.stderr


def test_utf16_is_named(tmp_path):
    path = _write(tmp_path, "u16", "1 Q0 a 1 0.5 r\n".encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16 text; trecqr reads UTF-8"):
        read_run(path)


# ---------------------------------------------------------------------------- C scanner
def test_scanner_reads_plain_files():
    run = read_run(TE / "results.test")
    assert type(run).__name__ == "ScannedRun"


def test_lines_across_scanner_blocks(tmp_path):
    """The scanner reads 8 MiB blocks: a 12 MB run must parse exactly as the Python path."""
    rng = np.random.default_rng(7)
    scores = rng.random(250_000) * 100
    lines = [f"q{i // 1000}\tQ0 doc-{i:07d}  {i % 1000 + 1} {s!r} run_{i % 3}\r\n"
             for i, s in enumerate(scores.tolist())]
    path = _write(tmp_path, "big", "".join(lines).encode())
    assert path.stat().st_size > (8 << 20)  # at least one block boundary inside a line
    fast = read_run(path)
    slow = _python_run(read_source(path), True)
    _same_run(fast, slow)
    assert fast.runid == "run_0" == slow.runid


def test_scanner_duplicates_name_both_lines(tmp_path):
    path = _write(tmp_path, "dup", b"1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n2 Q0 a 1 1 r\n")
    result = run_cli([*MEASURES, TE / "qrels.test", path])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"{path}:3: duplicate document for topic '1' and docno 'a' (first at line 1)")


def test_duplicates_in_interleaved_topics_are_found(tmp_path):
    path = _write(tmp_path, "dup", b"1 Q0 a 1 3 r\n2 Q0 a 1 1 r\n1 Q0 a 3 1 r\n")
    result = run_cli([*MEASURES, TE / "qrels.test", path])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"{path}:3: duplicate document for topic '1' and docno 'a' (first at line 1)")


# ---------------------------------------------------------------------------- JSON files
def test_pytrec_eval_json_files_score_like_trec_files(tmp_path):
    """pytrec_eval's {qid: {docno: value}} saved with json.dump: same output as TREC files."""
    import json

    qrels, run = {}, {}
    for line in (TE / "qrels.test").read_text().splitlines():
        f = line.split()
        qrels.setdefault(f[0], {})[f[2]] = int(f[3])
    for line in (TE / "results.test").read_text().splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    (tmp_path / "qrels.json").write_text(json.dumps(qrels, indent=1))
    (tmp_path / "run.json").write_text(json.dumps(run))
    as_json = run_cli([*MEASURES, "-q", tmp_path / "qrels.json", tmp_path / "run.json"])
    as_trec = run_cli([*MEASURES, "-q", TE / "qrels.test", TE / "results.test"])
    assert as_json.exit_code == 0, as_json.stderr
    # the runid of a dict is 'trecqr'; every value row is the same
    assert as_json.stdout.replace("trecqr", "STANDARD") == as_trec.stdout


def test_broken_json_is_reported_at_its_line(tmp_path):
    bad = tmp_path / "run.json"
    bad.write_text('{"1": {"a": 0.5},\n "2": {"b": }}\n')
    result = run_cli([*MEASURES, TE / "qrels.test", bad])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{bad}:2: invalid JSON: ")


@pytest.mark.parametrize("text", ["1 0 d1 1\n1 0 d2 0\n\n2 0 d3 2", "1\t0\td1\t1\n1\t0\td2\t-3\n",
                                  "\ufeff1 0 d1 1\n", "1 0 d\u00e9 +1\n2 0 e 007\n",
                                  "\n\n1 0 d1 1\n\n", "1 0 d1 x\n", "1 0 d1 1\n1 0 d2\n",
                                  "1 0 d1 1.0\n", "#1 0 d 1\n", "1 0 d1 1 5\n1 0 d2\n",
                                  "1 0 d1 -0\n1 0 d2 99999999999999999999\n",
                                  " 1 \t0\x0bd1\x0c+2 \r\n1 0 d1_0 1_0\n", "1 0 d1 2\n#c\n",
                                  "1 0 a 1\n1 0 a\x1c 2\n"])
@pytest.mark.parametrize("comments", [True, False])
def test_small_qrels_files_read_as_the_line_reader_reads_them(tmp_path, text, comments):
    """A qrels file under 256 KiB is split by one ``str.split`` into lists: the same values
    (or the same one-line error, or warning) as the per-line reader, trec_eval's rules."""
    path = tmp_path / "qrels"
    path.write_text(text, encoding="utf-8")

    def outcome(read):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                q = read()
            except InputError as exc:
                return str(exc), [str(w.message) for w in seen]
        return ((q.qid.to_pylist(), q.docno.to_pylist(), q.grade.tolist(), q.grade.dtype),
                [str(w.message) for w in seen])

    got = outcome(lambda: read_qrels(path, comments=comments))
    assert got == outcome(lambda: _python_qrels(read_source(path, trec=True), comments))
    if text.startswith("1 0 d1 1\n1 0 d2 0"):
        assert type(read_qrels(path)).__name__ == "ListedQrels"
        assert got[0][2] == [1, 0, 2]


@pytest.mark.parametrize("odd, read", [(1.0, "1"), (7, "7"), (b"b", "b"), (1.5, None),
                                       (True, None)])
def test_ids_of_mixed_types_follow_the_dict_keys_rule_in_frames_and_rows(odd, read):
    """An object column or rows mixing text ids with other values: each value is read by the
    rule of a dict's keys (formats.arrays.key_id), so ``1.0`` names topic 1 through every
    door. Before, such a column was read as Python's text of each value: ``1.0`` was a
    document "1.0" (0 where the dicts give 1), ``True`` "True", ``b"b"`` "b'b'", and 1.5 was
    an id the dicts refuse."""
    import pandas as pd
    from ir_measures import ScoredDoc

    qrels = {"q": {"a": 0, (read or "x"): 1}}
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": pd.Series(["a", odd], dtype=object),
                          "score": [1.0, 2.0]})
    rows = [ScoredDoc("q", "a", 1.0), ScoredDoc("q", odd, 2.0)]
    for run, source in ((frame, "<run DataFrame>"), (rows, "<run rows>")):
        if read is None:
            with pytest.raises(InputError, match=re.escape(
                    f"{source}: row 1: doc id {odd!r} is not an id (text or an integer)")):
                evaluate(qrels, run, ["map"])
        else:
            assert evaluate(qrels, run, ["map"]).aggregate() == {"map": 1.0}
    if read is not None:
        assert evaluate(qrels, {"q": {"a": 1.0, odd: 2.0}}, ["map"]).aggregate() == {"map": 1.0}


class _Exporter:
    """A table of no library trecqr knows, with only Arrow's PyCapsule stream (as polars and
    DuckDB export theirs)."""

    def __init__(self, table=None, error=None):
        self.table, self.error = table, error

    def __arrow_c_stream__(self, requested_schema=None):
        if self.error:
            raise self.error
        return self.table.__arrow_c_stream__(requested_schema)


def _te_run_table():
    """(qrels path, run path, the run as an Arrow table) of trec_eval's test files."""
    import pyarrow as pa

    qrels, run = TE / "qrels.test", TE / "results.test"
    r = read_run(str(run))
    return qrels, run, pa.table({"query_id": r.qid, "doc_id": r.docno, "score": r.score})


def test_a_table_exporting_an_arrow_stream_is_read_as_its_table():
    import pyarrow as pa

    qrels, run, table = _te_run_table()
    want = evaluate(str(qrels), str(run), ["map", "P.10"]).per_query()
    assert evaluate(str(qrels), _Exporter(table), ["map", "P.10"]).per_query() == want
    with pytest.raises(InputError, match=r"^<run _Exporter>: not readable as an Arrow table "
                                         r"\(no stream\)$"):
        evaluate(str(qrels), _Exporter(error=pa.ArrowInvalid("no stream")), ["map"])



def test_bytes_paths_are_read_as_their_text_paths(tmp_path):
    """A path given as bytes (as ``open`` takes one) is decided as the same path in text: its
    Parquet or JSONL is found by content, and an error names the path, not its repr."""
    import pyarrow.parquet as pq

    qrels, run, table = _te_run_table()
    pq.write_table(table, tmp_path / "run.parquet")
    (tmp_path / "run.jsonl").write_text("".join(
        f'{{"qid": "{q}", "docno": "{d}", "score": {s!r}}}\n' for q, d, s in
        zip(*(table[c].to_pylist() for c in ("query_id", "doc_id", "score")))))
    want = evaluate(str(qrels), str(run), ["map", "P.10"]).per_query()
    for path in (run, tmp_path / "run.parquet", tmp_path / "run.jsonl"):
        got = evaluate(os.fsencode(qrels), os.fsencode(path), ["map", "P.10"]).per_query()
        assert got == want, path
    missing = os.fsencode(tmp_path / "no.run")
    with pytest.raises(InputError, match=rf"^{re.escape(str(tmp_path / 'no.run'))}: "):
        evaluate(os.fsencode(qrels), missing, ["map"])
