"""Bad file contents: one line ``file:line: what is wrong`` on stderr, exit 2, never a traceback,
and the whole message asserted (file name and line number included, so a message that names the
wrong line or adds a line of noise fails). Run and qrels lines with the wrong number of fields,
bad scores and grades, duplicates, empty, comment-only, binary, differently compressed and
corrupt files, run and qrels swapped, no topic in common, lone surrogates in JSONL, damaged
index folders, a bad JSONL line read in a worker, breakdown labels that are not text, bad rows
in DataFrames, JSONL and TSV runs.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import TE, run_cli
from fault_cases import (FX, trecqr, one_line, nothing_left, RUN_LINES, QRELS_LINES, RUN_FIELDS,
                        QRELS_FIELDS, bad_file, edited, eval_error)
from fault_cases import built_index, large_collection, qrels, run  # noqa: F401 (fixtures)
from trecqr import evaluate, load_run
from trecqr.errors import InputError


@pytest.mark.parametrize("backend", ["bm25s", "lucene"])
def test_jsonl_docid_that_is_a_lone_surrogate(tmp_path, backend):
    """Lucene's fast path (a file already in Pyserini's layout is linked, not converted) took
    "\\ud800" for a valid id, then failed to write it: an internal error (fuzz seed 31)."""
    coll = tmp_path / "c.jsonl"
    coll.write_text('{"id": "a", "contents": "x y"}\n{"id": "\\ud800", "contents": "hello"}\n')
    line = one_line(trecqr(["index", coll, "-o", tmp_path / "idx", "--backend", backend,
                            "--quiet"]))
    assert line == f"{coll}:2: bad docid '\\ud800': a lone surrogate (not a Unicode character)"
    nothing_left(tmp_path, keep={"c.jsonl"})


def _damaged_copy(built_index, tmp_path, damage):
    import shutil

    idx = tmp_path / "idx"
    shutil.copytree(built_index, idx)
    damage(idx)
    return idx


def _truncate(name):
    def f(idx):
        data = (idx / name).read_bytes()
        (idx / name).write_bytes(data[: len(data) // 2])
    return f


def _flip(name):
    def f(idx):
        data = bytearray((idx / name).read_bytes())
        data[len(data) // 2] ^= 0x20
        (idx / name).write_bytes(bytes(data))
    return f


DAMAGES = {
    "missing manifest": (lambda idx: (idx / "trecqr-index.json").unlink(),
                         "no trecqr-index.json (an incomplete build, or not a trecqr index)"),
    "missing params": (lambda idx: (idx / "params.index.json").unlink(),
                       "params.index.json is missing"),
    "empty docids": (lambda idx: (idx / "docids.txt").write_bytes(b""),
                     "docids.txt has 0 bytes, the manifest says"),
    "truncated npy": (_truncate("data.csc.index.npy"), "data.csc.index.npy has"),
    "bad byte in vocab": (_flip("vocab.index.json"),
                          "vocab.index.json does not match its checksum"),
    "bad byte in manifest": (lambda idx: (idx / "trecqr-index.json").write_bytes(
        (idx / "trecqr-index.json").read_bytes().replace(b"{", b"[", 1)),
        "trecqr-index.json is not valid JSON"),
}


@pytest.mark.parametrize("what", sorted(DAMAGES))
def test_damaged_index_is_refused_by_search_and_cqr(built_index, tmp_path, what):
    damage, message = DAMAGES[what]
    idx = _damaged_copy(built_index, tmp_path, damage)
    topics = FX / "cast2021-demo/topics-raw.tsv"
    line = one_line(trecqr(["search", idx, topics, "-o", tmp_path / "s.run", "--quiet"]))
    assert line.startswith(f"{idx}: damaged index: ") and line.endswith("; rebuild it"), line
    assert message in line, line
    line2 = one_line(trecqr(["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--index", idx,
                             "--topics", topics, "--runs-dir", tmp_path / "runs", "--quiet"]))
    assert line2 == line
    assert not (tmp_path / "s.run").exists() and not (tmp_path / "runs").exists()


def test_manifest_lists_every_file_with_size_and_checksum(built_index):
    manifest = json.loads((built_index / "trecqr-index.json").read_text())
    files = manifest["files"]
    on_disk = sorted(p.name for p in built_index.iterdir() if p.name != "trecqr-index.json")
    assert sorted(files) == on_disk
    for name, entry in files.items():
        assert entry["size"] == (built_index / name).stat().st_size
        assert isinstance(entry["crc32"], int)


def test_breakdown_labels_that_are_not_text(tmp_path):
    import lzma

    labels = tmp_path / "labels.xz"
    labels.write_bytes(lzma.compress(b"106_1\tx\n"))
    line = one_line(trecqr(["breakdown", FX / "cast2021/qrels.txt", FX / "cast2021/manual_bm25.run",
                            "-m", "map", "--by", "labels", "--labels", labels]))
    assert line == (f"{labels}: not UTF-8 text (invalid start byte); labels are a plain "
                    "qid<TAB>label file")


def test_bad_jsonl_line_parsed_in_a_worker_keeps_its_line_number(tmp_path, large_collection):
    """JSONL lines are parsed in the tokenising workers: an error there comes back whole
    (InputError pickles with its file and line) and the half-built index is removed."""
    lines = large_collection.read_text(encoding="utf-8").splitlines(keepends=True)[:20_000]
    lines[17_321] = '{"id": "a b", "contents": "x"}\n'
    coll = tmp_path / "c.jsonl"
    coll.write_text("".join(lines), encoding="utf-8")
    line = one_line(trecqr(["index", coll, "-o", tmp_path / "idx", "--quiet"]))
    assert line == f"{coll}:17322: bad docid 'a b': empty or holds white space"
    nothing_left(tmp_path, keep={"c.jsonl"})


def test_run_line_with_five_fields(tmp_path, qrels):
    bad = bad_file(tmp_path, "run", edited(RUN_LINES, 3, lambda f: f[:5]))
    assert eval_error([qrels, bad]) == f"{bad}:3: expected at least 6 fields {RUN_FIELDS}, found 5"


def test_run_line_number_counts_blank_lines(tmp_path, qrels):
    lines = ["", *RUN_LINES[:10], "   ", *edited(RUN_LINES[10:], 1, lambda f: f[:2])]
    bad = bad_file(tmp_path, "run", lines)
    assert eval_error([qrels, bad]) == f"{bad}:13: expected at least 6 fields {RUN_FIELDS}, found 2"


def test_qrels_line_with_three_and_five_fields(tmp_path, run):
    three = bad_file(tmp_path, "q3", edited(QRELS_LINES, 7, lambda f: f[:3]))
    assert eval_error([three, run]) == f"{three}:7: expected 4 fields {QRELS_FIELDS}, found 3"
    five = bad_file(tmp_path, "q5", edited(QRELS_LINES, 3681, lambda f: f + ["x"]))
    assert eval_error([five, run]) == f"{five}:3681: expected 4 fields {QRELS_FIELDS}, found 5"


def test_arguments_swapped(qrels, run):
    """A run where the qrels belong: its first line is a run line, and qrels go first."""
    assert eval_error([run, qrels]) == (f"{run}:1: expected 4 fields {QRELS_FIELDS}, found 6; "
                                    "this is a run line (qid Q0 docno rank score runid): "
                                    "qrels go first, then the runs")


@pytest.mark.parametrize("score", ["high", "nan", "NaN", "inf", "-inf", "1e999", "0.5.1", "1e"])
def test_bad_score(tmp_path, qrels, score):
    bad = bad_file(tmp_path, "run", edited(RUN_LINES, 42, lambda f: f[:4] + [score] + f[5:]))
    assert eval_error([qrels, bad]) == f"{bad}:42: score {score!r} is not a finite number"


@pytest.mark.parametrize("grade", ["high", "nan", "inf", "1x", "", "--1"])
def test_bad_grade(tmp_path, run, grade):
    lines = edited(QRELS_LINES, 5, lambda f: f[:3] + [grade]) if grade else None
    if grade == "":  # a missing grade is a field count error
        lines = edited(QRELS_LINES, 5, lambda f: f[:3])
        bad = bad_file(tmp_path, "q", lines)
        assert eval_error([bad, run]) == f"{bad}:5: expected 4 fields {QRELS_FIELDS}, found 3"
        return
    bad = bad_file(tmp_path, "q", lines)
    assert eval_error([bad, run]) == f"{bad}:5: grade {grade!r} is not an integer"


def test_grade_out_of_range(tmp_path, run):
    bad = bad_file(tmp_path, "q",
                   edited(QRELS_LINES, 2, lambda f: f[:3] + ["99999999999999999999"]))
    assert eval_error([bad, run]) == f"{bad}:2: grade '99999999999999999999' is out of range"


def test_fractional_grade_truncates_with_warning_and_exit_0(tmp_path, run):
    """atol("1.9") is 1: the result equals qrels with 1 there, plus one warning line."""
    number = next(i for i, line in enumerate(QRELS_LINES, 1) if line.endswith(" 1"))
    frac = bad_file(tmp_path, "frac", edited(QRELS_LINES, number, lambda f: f[:3] + ["1.9"]))
    result = run_cli(["eval", "-q", "-m", "map", "-m", "num_rel", frac, run])
    want = run_cli(["eval", "--quiet", "-q", "-m", "map", "-m", "num_rel", TE / "qrels.test", run])
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert result.stdout == want.stdout
    warning = (f"trecqr: warning: {frac}:{number}: grade '1.9' is not an integer; "
               "truncated to 1 as trec_eval's atol does")
    assert warning in result.stderr.splitlines()


def test_duplicate_in_run_names_both_lines(tmp_path, qrels):
    lines = RUN_LINES[:30] + [RUN_LINES[7]] + RUN_LINES[30:]
    bad = bad_file(tmp_path, "run", lines)
    qid, docno = RUN_LINES[7].split()[0], RUN_LINES[7].split()[2]
    assert eval_error([qrels, bad]) == (f"{bad}:31: duplicate document for topic {qid!r} and docno "
                                    f"{docno!r} (first at line 8)")


def test_duplicate_in_qrels_names_both_lines(tmp_path, run):
    """A repeated judgment, even with another grade, is a duplicate."""
    qid, _, docno, _ = QRELS_LINES[99].split()
    lines = QRELS_LINES + [f"{qid} 0 {docno} 2"]
    bad = bad_file(tmp_path, "q", lines)
    assert eval_error([bad, run]) == (f"{bad}:3682: duplicate judgment for topic {qid!r} and docno "
                                  f"{docno!r} (first at line 100)")


def test_duplicate_in_columnar_files_names_lines_or_rows(tmp_path, qrels):
    """JSONL has lines (its non-blank ones are its rows); Parquet and Feather have rows only."""
    rows = [line.split() for line in RUN_LINES[:12]]
    frame = pd.DataFrame({"query_id": [r[0] for r in rows] + [rows[4][0]],
                          "doc_id": [r[2] for r in rows] + [rows[4][2]],
                          "score": [float(r[4]) for r in rows] + [-1.0]})
    what = f"duplicate document for topic {rows[4][0]!r} and docno {rows[4][2]!r}"
    jsonl = tmp_path / "run.jsonl"
    lines = frame.to_json(orient="records", lines=True).splitlines()
    jsonl.write_text("\n".join(lines[:3] + [""] + lines[3:]) + "\n")  # a blank line is no row
    assert eval_error([qrels, jsonl]) == f"{jsonl}:14: {what} (first at line 6)"
    for path in (tmp_path / "run.parquet", tmp_path / "run.feather"):
        getattr(frame, f"to_{path.suffix[1:]}")(path)
        assert eval_error([qrels, path]) == f"{path}: row 12: {what} (first at row 4)"


def test_duplicate_in_gzipped_run_from_stdin(qrels):
    lines = RUN_LINES[:3] + [RUN_LINES[0]]
    data = gzip.compress(("\n".join(lines) + "\n").encode())
    qid, docno = RUN_LINES[0].split()[0], RUN_LINES[0].split()[2]
    assert eval_error([qrels, "-"], input=data) == (
        f"<stdin>:4: duplicate document for topic {qid!r} and docno {docno!r} (first at line 1)")


@pytest.mark.parametrize("content", [b"", b"\n\n", b" \t\r\n", b"\xef\xbb\xbf\n"],
                         ids=["zero_bytes", "newlines", "white_space", "bom_only"])
def test_empty_file(tmp_path, qrels, run, content):
    empty = bad_file(tmp_path, "empty", data=content)
    assert eval_error([qrels, empty]) == f"{empty}: empty file"
    assert eval_error([empty, run]) == f"{empty}: empty file"


def test_empty_gzip_and_empty_stdin(tmp_path, qrels):
    empty = bad_file(tmp_path, "empty.gz", data=gzip.compress(b""))
    assert eval_error([qrels, empty]) == f"{empty}: empty file"
    assert eval_error([qrels, "-"], input=b"") == "<stdin>: empty file"


def test_only_comments(tmp_path, qrels):
    only = bad_file(tmp_path, "c", ["# a comment", "  # another"])
    assert eval_error(["--compat", "10.0", qrels, only]) == (
        f"{only}: no data lines (only blank or comment lines)")
    assert eval_error([qrels, only]) == (
        f"{only}:1: expected at least 6 fields {RUN_FIELDS}, found 3")


@pytest.mark.parametrize("data,line,byte", [
    (b"301 Q0 a 1 0.5 r\n301 Q0 b 2 0.4\x00 r\n", 2, 0x00),
    (bytes(range(256)) * 4, 1, 0x00),
    (bytes([0x1b, 0x5b]) * 200 + b"\x7fELF", 1, 0x1b),
], ids=["nul_in_line_2", "all_bytes", "escape_codes"])
def test_binary_garbage(tmp_path, qrels, data, line, byte):
    bad = bad_file(tmp_path, "bin", data=data)
    assert eval_error([qrels, bad]) == (
        f"{bad}:{line}: binary data (byte 0x{byte:02x}); not a text file")


def test_real_binary_file(tmp_path, qrels):
    """An executable or compressed archive given by mistake."""
    import sys
    exe = open(sys.executable, "rb").read(4096)
    bad = bad_file(tmp_path, "python", data=exe)
    assert eval_error([qrels, bad]).startswith(f"{bad}:1: binary data (byte 0x")


@pytest.mark.parametrize("magic,kind", [(b"BZh91AY&SY", "bzip2"), (b"\xfd7zXZ\x00\x00", "xz"),
                                        (b"PK\x03\x04\x14\x00", "zip"),
                                        (b"\x28\xb5\x2f\xfd\x00", "zstd")])
def test_other_compression(tmp_path, qrels, magic, kind):
    """bzip2, xz and zstd runs are read (tests/engine/test_stream.py); damaged ones, and zip
    archives, are one-line errors."""
    bad = bad_file(tmp_path, "run.z", data=magic + b"rest")
    if kind == "zip":
        assert eval_error([qrels, bad]) == (f"{bad}: zip-compressed data; only gzip, bzip2, xz and "
                                        "zstd are read")
    else:
        assert eval_error([qrels, bad]).startswith(f"{bad}: corrupt {kind} data (")


def test_corrupt_gzip(tmp_path, qrels):
    good = gzip.compress(("\n".join(RUN_LINES) + "\n").encode())
    truncated = bad_file(tmp_path, "trunc.gz", data=good[: len(good) // 2])
    assert eval_error([qrels, truncated]) == (
        f"{truncated}: corrupt gzip data (Compressed file ended before the end-of-stream "
        "marker was reached)")
    flipped = bytearray(good)
    flipped[-6] ^= 0xFF  # inside the CRC32 trailer
    bad_crc = bad_file(tmp_path, "crc.gz", data=bytes(flipped))
    assert eval_error([qrels, bad_crc]).startswith(
        f"{bad_crc}: corrupt gzip data (CRC check failed")
    header_only = bad_file(tmp_path, "hdr.gz", data=b"\x1f\x8bgarbage")
    assert eval_error([qrels, header_only]).startswith(f"{header_only}: corrupt gzip data (")


def test_no_topic_in_common(tmp_path, qrels):
    """trec_eval: 'No queries with both results and relevance info' (exit 2 here, not 0)."""
    other = bad_file(tmp_path, "other", ["9" + line for line in RUN_LINES])
    assert eval_error([qrels, other]) == (
        f"{other}: no queries with both results and relevance info: none of the 3 topics "
        f"of the run is among the 3 topics of {qrels}")


def test_no_topic_in_common_is_fine_under_10_complete(tmp_path, qrels):
    """trec_eval 10.0 -c scores qrels topics missing from the run on a bogus ranking."""
    other = bad_file(tmp_path, "other", ["9" + line for line in RUN_LINES])
    result = run_cli(["eval", "--compat", "10.0", "-c", "-m", "num_q", "-m", "num_ret", qrels,
                      other])
    assert result.exit_code == 0
    # trec_eval.c zeroes num_ret of a bogus ranking; num_q counts the 3 qrels topics
    assert result.stdout == "num_q                 \tall\t3\nnum_ret               \tall\t0\n"
    assert result.stderr == ("trecqr: 3 qrels topics (-c: a topic without results counts 0), "
                             "0 with results; 3 only in qrels (301, 302, 303); "
                             "3 only in run (9301, 9302, 9303)\n")


# ---------------------------------------------------------------- rows of objects and table files
def test_bad_rows_name_the_object_and_the_row(tmp_path):
    run = pd.DataFrame({"qid": ["1"] * 20, "docno": [f"d{i}" for i in range(20)],
                        "score": [1.0] * 17 + ["abc", 1.0, 1.0]})
    qrels = {"1": {"d1": 1}}
    with pytest.raises(InputError, match=r"^<run DataFrame>: row 17: score 'abc' is not a "
                                         r"number$"):
        evaluate(qrels, run, ["map"])
    with pytest.raises(InputError, match=r"^<qrels DataFrame>: no relevance column"):
        evaluate(pd.DataFrame({"qid": ["1"], "docno": ["d"]}), run, ["map"])
    bad = tmp_path / "run.jsonl"
    bad.write_text('{"qid": "1", "docno": "a", "score": 1}\n\n'
                   '{"qid": "1", "docno": "b", "score": "x"}\n')
    with pytest.raises(InputError, match=r"run.jsonl:3: score 'x' is text, but a number on "
                                         r"line 1$"):
        evaluate(qrels, bad, ["map"])
    tsv = tmp_path / "run.tsv"
    tsv.write_text("1\ta\t1\n1\tb\ttwo\n")
    with pytest.raises(InputError, match=r"run.tsv:2: rank 'two' is not a positive integer$"):
        evaluate(qrels, tsv, ["map"])
    rows = [("1", "a", 1.0)]
    with pytest.raises(InputError, match=r"<run rows>: expected rows of namedtuples"):
        evaluate(qrels, rows, ["map"])
    result = run_cli(["eval", str(tmp_path / "run.tsv"), str(tsv)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1


def test_frames_with_missing_or_odd_values(tmp_path):
    """A DataFrame with a missing id or score is refused naming the row; integer ids are read
    as their decimal text, float32 scores as their doubles; a frame changed after it was read
    does not change the run."""
    small = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "score": [1.0, 2.0]})
    assert load_run(small).qid.to_pylist() == ["1", "1"]
    for frame, message in (
            (pd.DataFrame({"qid": ["1", None], "docno": ["a", "b"], "score": [1.0, 2.0]}),
             "row 1: query id is missing"),
            (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, np.nan]}),
             "row 1: score is missing")):
        with pytest.raises(InputError, match=f"^<run DataFrame>: {message}$"):
            load_run(frame)
    f32 = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": np.float32([0.1])})
    assert load_run(f32).score.tolist() == [float(np.float32(0.1))]
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    read = load_run(frame)
    frame.loc[0, "score"] = -1.0
    assert read.score.tolist() == [1.0, 2.0]
