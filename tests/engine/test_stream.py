"""Streaming evaluation: a run read piece by piece (whole topics at a time), grouped or with
interleaved topics (spilled to temporary files by topic), plain or gzip/bzip2/xz/zstd.

Pieces are made tiny here (a few KB) so that the small real files are cut into many of them;
every output must still be trec_eval's own, byte for byte: its conformance suite (9.0.8 and
10.0, -q -c -M -l -Z and the parameterised measures) and the TREC CAsT 2021 runs."""

from __future__ import annotations

import bz2
import gzip
import lzma
import random
from pathlib import Path

import pytest

from conftest import TE, data_path, run_cli
from test_conformance import CASES, V10_ONLY

import trecqr
from trecqr.formats import runstream
from trecqr.engine import stream

STREAMED = {"results.test", "results.trunc", "results.comment.test"}


@pytest.fixture
def pieces(monkeypatch):
    """Stream every run file, in pieces of 4 KB; returns the log of pieces read per run."""
    monkeypatch.setattr(runstream, "PIECE_BYTES", 4096)
    monkeypatch.setattr(stream, "STREAM_BYTES", 1)
    monkeypatch.setattr(stream, "STREAM_COMPRESSED_BYTES", 1)
    log = []
    real = stream._score_pieces

    def counted(gen, *args, **kw):
        def tee():
            for run in gen:
                log.append(run)
                yield run
        parts, runid = real(tee(), *args, **kw)
        log.append(("done", len(parts)))
        return parts, runid

    monkeypatch.setattr(stream, "_score_pieces", counted)
    return log


def _shuffled(src, dst, seed=0):
    lines = src.read_text().splitlines(keepends=True)
    random.Random(seed).shuffle(lines)
    dst.write_text("".join(lines))
    return dst


def _compress(src, dst, kind):
    data = src.read_bytes()
    if kind == "gz":
        dst.write_bytes(gzip.compress(data))
    elif kind == "bz2":
        dst.write_bytes(bz2.compress(data))
    elif kind == "xz":
        dst.write_bytes(lzma.compress(data))
    else:
        import pyarrow as pa

        dst.write_bytes(pa.compress(data, "zstd", asbytes=True))
    return dst


def _layouts(tmp_path, name):
    """The run as it is, with its lines shuffled, and shuffled then compressed (4 ways)."""
    out = {"grouped": TE / name, "shuffled": _shuffled(TE / name, tmp_path / name)}
    # the 2.5 MB comment.test run: one codec is enough (the others are tried on results.test)
    for kind in ("zst",) if "comment" in name else ("gz", "bz2", "xz", "zst"):
        out[kind] = _compress(out["shuffled"], tmp_path / f"{name}.{kind}", kind)
    return out


def _check(expected, args, compat, tmp_path, pieces):
    run = args[-1]
    layouts = _layouts(tmp_path, run) if run in STREAMED else {"grouped": TE / run}
    runstream.PIECE_BYTES = max(4096, (TE / run).stat().st_size // 6)  # ~6 pieces
    for layout, path in layouts.items():
        if compat == "9.0.8" and "comment" in run and layout != "grouped":
            continue
        del pieces[:]
        result = run_cli(["eval", "--quiet", "--compat", compat, *args[:-1], path], cwd=TE)
        assert result.exit_code == 0, (layout, result.stderr)
        assert result.stdout == expected.read_text(), layout
        if run in STREAMED and "-R" not in args:
            assert pieces and pieces[-1][0] == "done", layout  # streamed, no fallback
            assert len(pieces) > 2, layout  # more than one piece


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
def test_conformance_908_streamed(name, args, tmp_path, pieces):
    _check(TE / "v9.0.8" / name, args, "9.0.8", tmp_path, pieces)


@pytest.mark.parametrize("name,args", CASES + V10_ONLY,
                         ids=[c[0] for c in CASES] + ["with-comments", "comment.test"])
def test_conformance_10_streamed(name, args, tmp_path, pieces):
    _check(TE / name, args, "10.0", tmp_path, pieces)


@pytest.mark.parametrize("compat,tag", [("9.0.8", "908"), ("10.0", "10")])
def test_cast2021_streamed_grouped_and_interleaved(compat, tag, tmp_path, pieces, monkeypatch):
    monkeypatch.setattr(runstream, "PIECE_BYTES", 64 << 10)
    folder = data_path("cast2021")
    name = "docrun_org_manual_bm25.run"
    expected = _expected_cast(tag)
    shuffled = _shuffled(folder / name, tmp_path / name, seed=3)
    for path in (folder / name, shuffled, _compress(folder / name, tmp_path / "r.zst", "zst")):
        del pieces[:]
        result = run_cli(["eval", "--quiet", "--compat", compat, "-q", "-c", "-m", "all_trec",
                          folder / "qrels-docs.2021.qrel", path])
        assert result.exit_code == 0, result.stderr
        assert result.stdout == expected
        assert pieces[-1][0] == "done" and pieces[-1][1] > 5  # streamed in pieces
    # the Python API streams too, with the same values as the whole-file path
    streamed = trecqr.evaluate(folder / "qrels-docs.2021.qrel", shuffled, ["map", "P.5"],
                               compat=compat)
    monkeypatch.setattr(stream, "STREAM_BYTES", 1 << 40)
    whole = trecqr.evaluate(folder / "qrels-docs.2021.qrel", shuffled, ["map", "P.5"],
                            compat=compat)
    assert streamed.per_query() == whole.per_query()
    assert streamed.aggregate() == whole.aggregate()
    assert round(whole.aggregate()["map"], 4) == 0.2161


def _expected_cast(tag):
    path = (Path(__file__).parents[1] / "expected" / "cast2021"
            / f"docrun_org_manual_bm25.{tag}.txt.gz")
    return gzip.decompress(path.read_bytes()).decode()


def test_errors_in_a_streamed_run_name_the_file_and_line(tmp_path, pieces):
    lines = (TE / "results.test").read_text().splitlines(keepends=True)
    bad = tmp_path / "bad.run"
    bad.write_text("".join(lines[:900]) + "301 Q0 FBIS3-1 1 oops run\n" + "".join(lines[900:]))
    result = run_cli(["eval", "-m", "map", TE / "qrels.test", bad])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{bad}:901: score 'oops' is not a finite number"
    dup = tmp_path / "dup.run"
    dup.write_text("".join(lines) + lines[500])
    result = run_cli(["eval", "-m", "map", TE / "qrels.test", dup])
    assert result.exit_code == 2
    first = lines[500].split()
    assert result.stderr.strip() == (f"{dup}:{len(lines) + 1}: duplicate document for topic "
                                     f"{first[0]!r} and docno {first[2]!r} (first at line 501)")
    trunc = tmp_path / "t.run.gz"
    trunc.write_bytes(gzip.compress((TE / "results.test").read_bytes())[:5000])
    result = run_cli(["eval", "-m", "map", TE / "qrels.test", trunc])
    assert result.exit_code == 2
    assert str(trunc) in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_boundaries_cut_between_topics(tmp_path):
    text = "".join(f"{q} Q0 d{i} {i} {100 - i} r\n" for q in ("a", "b", "c") for i in range(50))
    path = tmp_path / "r.txt"
    path.write_text(text)
    spans = list(runstream._ranges(str(path), 300, comments=False))
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    cuts = {text.index("b Q0"), text.index("c Q0")}
    assert {start for start, _ in spans[1:]} <= cuts and len(spans) == 3
    assert runstream._split_tail(text.encode(), False) == text.index("c Q0")
    assert runstream._split_tail(b"a x\na y\n", False) == 0
    assert runstream.compression(str(path)) is None


def test_compressed_pieces_without_memfd_use_a_temporary_file(tmp_path, pieces, monkeypatch):
    def no_memfd(*args):
        raise OSError("no memfd")

    monkeypatch.setattr(runstream.os, "memfd_create", no_memfd)
    run = _compress(TE / "results.test", tmp_path / "r.gz", "gz")
    result = run_cli(["eval", "--quiet", "-q", "-m", "all_trec", TE / "qrels.test", run])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (TE / "v9.0.8" / "out.test.aq").read_text()
    assert pieces[-1][0] == "done" and pieces[-1][1] > 1
    assert not list(tmp_path.glob("trecqr-piece-*"))


def test_each_piece_is_joined_with_its_own_topics_judgments(tmp_path, pieces, monkeypatch):
    """A piece is ranked against the qrels rows of its topics only (in their file order), not
    the whole qrels: joining every piece with the whole qrels made the 98M-line run's main
    thread sort and map 2.5M judgments 41 times (12-14 s; 6.5 s now)."""
    monkeypatch.setattr(runstream, "PIECE_BYTES", 20_000)
    qrels_lines = (TE / "qrels.test").read_text().splitlines(keepends=True)
    joined = []
    real = stream.build_rankings

    def spy(run, qrels, options):
        joined.append((list(run.codes.topics), qrels.qid.to_pylist(), qrels.docno.to_pylist()))
        return real(run, qrels, options)

    monkeypatch.setattr(stream, "build_rankings", spy)
    result = run_cli(["eval", "--quiet", "-q", "-m", "all_trec", TE / "qrels.test",
                      TE / "results.test"])
    assert result.exit_code == 0
    assert result.stdout == (TE / "v9.0.8" / "out.test.aq").read_text() or \
        result.stdout == (TE / "out.test.aq").read_text()
    assert [topics for topics, _, _ in joined] == [["301"], ["302"], ["303"]]  # 3 pieces
    for topics, qids, docnos in joined:
        want = [line.split() for line in qrels_lines if line.split()[0] in topics]
        assert (qids, docnos) == ([w[0] for w in want], [w[2] for w in want])
        assert 0 < len(qids) < len(qrels_lines)


def test_a_repeated_judgment_outside_the_run_is_refused_streamed_or_not(tmp_path, pieces):
    """The whole-file path refuses a qrels file with a repeated (topic, docno) even in a topic
    the run lacks; streaming, whose pieces see their own topics' judgments only, does too."""
    lines = (TE / "qrels.test").read_text().splitlines(keepends=True)
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(lines) + "999 0 D1 1\n999 0 D1 0\n")
    streamed = run_cli(["eval", "-m", "map", qrels, TE / "results.test"])
    stream.STREAM_BYTES = 1 << 40
    whole = run_cli(["eval", "-m", "map", qrels, TE / "results.test"])
    assert (streamed.exit_code, streamed.stderr) == (whole.exit_code, whole.stderr)
    assert whole.exit_code == 2
    assert whole.stderr.strip() == (f"{qrels}:{len(lines) + 2}: duplicate judgment for topic "
                                    "'999' and docno 'D1' (first at line "
                                    f"{len(lines) + 1})")
