"""Session adapters: real session logs to instances, and to TREC files."""

from __future__ import annotations

import hashlib

import pytest
from click.testing import CliRunner
from conftest import data_path, mrr_by_hand

from trecqr.cli.convert_files import sessions_command
import trecqr
from trecqr.datasets.sessions import logs as S
from trecqr.errors import InputError

AOL = data_path("sessions", "aol-sample.txt")
WEBIS = data_path("sessions", "webis-smc-12-missions.tsv")
TREC = data_path("sessions", "sessiontrack2013.xml.gz")
MARCO = data_path("sessions", "marco-sessions-sample.txt")
CTX = data_path("sessions", "hredqs-test.ctx")
RNK = data_path("sessions", "hredqs-test.rnk")


def _counts(sessions):
    return len(sessions), sum(len(s.queries) for s in sessions), len(S.instances(sessions))


def test_query_key_and_candidate_id():
    assert S.query_key("  Civil\tWar  Causes ") == "civil war causes"
    assert S.candidate_id("Civil War") == S.candidate_id("civil   war")
    assert S.candidate_id("civil war") == "q" + hashlib.md5(b"civil war").hexdigest()[:16]
    assert S.candidate_id("staple.com") != S.candidate_id("staple com")


def test_aol_sample_sessions():
    ss = S.read_aol(AOL)
    # 35 rows of 2 users; 30-minute rule gives 18 sessions for 142, 6 for 217; 7 duplicates drop
    assert _counts(ss) == (24, 28, 4)
    assert _counts(S.read_aol(AOL, dedup=False)) == (24, 35, 11)
    assert _counts(S.read_aol(AOL, gap=None)) == (2, 28, 26)
    multi = [(s.sid, s.queries) for s in ss if len(s.queries) > 1]
    assert multi == [("142-9", ["www.collegeucla.edu", "www.elaorg"]),
                     ("142-11", ["broadway.vera.org", "vera.org", "broadway.vera.org"]),
                     ("142-12", ["frankmellace.com", "ucs.ljx.com"])]
    inst = S.instances(ss)
    assert [(i.iid, i.context, i.target) for i in inst[1:3]] == [
        ("142-11_2", ("broadway.vera.org",), "vera.org"),
        ("142-11_3", ("broadway.vera.org", "vera.org"), "broadway.vera.org")]
    # lottery (11:58) -> ameriprise.com (14:06): a 2-hour gap splits the session
    assert [s.queries for s in ss if s.user == "217"][:2] == [["lottery"], ["ameriprise.com"]]


def test_aol_query_ids_match_ir_datasets_aol_ia():
    from ir_datasets.util import ws_tok

    rows = [line.split("\t") for line in AOL.read_text().splitlines()[1:]]
    assert len(rows) == 35
    for r in rows:
        want = hashlib.md5(" ".join(ws_tok(r[1])).encode()).hexdigest()[:14]
        assert S.aolia_query_id(r[1]) == want
    assert S.aolia_query_id("rentdirect.com") == hashlib.md5(b"rentdirect com").hexdigest()[:14]


def test_webis_smc_sessions_by_time_mission_block():
    # 9,022 lines = header + 127 dashed user separators + 2,514 blank lines + 6,380 query rows
    assert _counts(S.read_webis_smc(WEBIS, dedup=False)) == (2596, 6380, 3784)
    time = S.read_webis_smc(WEBIS)
    assert _counts(time) == (2596, 5004, 2408)
    assert len({s.user for s in time}) == 126
    mission = S.read_webis_smc(WEBIS, split="mission")
    assert _counts(mission) == (1377, 4423, 3046)
    first = mission[0]
    assert first.sid == "38534-m1"
    assert first.queries == ["maryland state police", "harford county sheriff",
                             "aberdeen police department in maryland"]
    assert _counts(S.read_webis_smc(WEBIS, split="block")) == (2514, 4825, 2311)
    # a looser time rule merges sessions
    assert len(S.read_webis_smc(WEBIS, gap=3600)) < 2596


def test_trec_session_2013():
    ss = S.read_trec_session(TREC)
    assert len(ss) == 133
    assert _counts(ss) == (133, 478, 345)  # 401 interactions + 87 current queries, 10 repeats
    assert _counts(S.read_trec_session(TREC, current=False)) == (133, 393, 260)
    assert _counts(S.read_trec_session(TREC, dedup=False)) == (133, 488, 355)
    assert ss[0].queries == ["US civil war causes", "US civil war economic causes"]
    inst = S.instances(ss)
    assert (inst[0].iid, inst[0].context, inst[0].target) == (
        "1_2", ("US civil war causes",), "US civil war economic causes")
    details = S.read_trec_session_details(TREC)
    r = details[0]["interactions"][0]["results"][0]
    assert r["clueweb12id"] == "clueweb12-1400wb-08-23845" and r["rank"] == "1"
    assert details[0]["interactions"][0]["clicks"] == ["1"]
    assert sum(len(i["results"]) for d in details for i in d["interactions"]) == 4449


def test_marco_sessions():
    ss = S.read_marco_sessions(MARCO)
    assert _counts(ss) == (18, 100, 82)
    assert [len(s.queries) for s in ss] == [4, 5, 5, 10, 4, 5, 5, 4, 5, 15, 4, 6, 4, 4, 6, 4, 4, 6]
    assert all("\t" not in q and q == q.strip() for s in ss for q in s.queries)
    assert ss[0].queries[2] == "how to make deviled eggs"  # trailing blank stripped


def test_hredqs_candidates():
    inst = S.read_hredqs_candidates(CTX, RNK)
    assert len(inst) == 5
    assert [len(i.candidates) for i in inst] == [1, 1, 1, 2, 2]
    assert sum(len(i.candidates) for i in inst) == 7
    assert inst[0].context == ("carmax", "consumer report", "nissan")
    assert inst[3].candidates == ("county nevada radio", "nye")
    assert all(i.target is None for i in inst)


TARGETS = ["future nissan", "congressional representative", "white house e mail", "nye",
           "fcc radio station"]
# HRED-qs score-file layout: header, one line per candidate in rnk order
SCORE_FILE = "LEN HRED\n13 0.3\n17 0.2\n18 0.7\n19 0.9\n3 0.4\n3 0.1\n18 0.6\n"


def _hred_setup(tmp_path):
    tgt = tmp_path / "test.tgt"
    tgt.write_text("\n".join(TARGETS) + "\n")
    scores = tmp_path / "test.rnk_HRED.f"
    scores.write_text(SCORE_FILE)
    inst = S.read_hredqs_candidates(CTX, RNK, tgt)
    return inst, S.read_hredqs_scores(inst, scores, "HRED"), scores, tgt


def test_hredqs_run_scores_through_trecqr_evaluate(tmp_path):
    inst, scores, _, _ = _hred_setup(tmp_path)
    assert scores["hredqs-4"] == [("county nevada radio", 0.9), ("nye", 0.4)]
    # by hand: RR per instance = 1 (target only candidate), missing, 1, 1/2 (nye second), missing
    # zero (trec_eval): (1 + 0 + 1 + 0.5 + 0) / 5 = 0.5
    # last (HRED-qs):    (1 + 1/1 + 1 + 0.5 + 1/2) / 5 = 0.8
    qrels = S.to_qrels(inst)
    assert len(qrels) == 5
    for missing, want in [(S.MISSING_ZERO, 0.5), (S.MISSING_LAST, 0.8)]:
        run = S.to_run(inst, scores, missing=missing)
        res = trecqr.evaluate(qrels, run, ["recip_rank"])
        assert res.aggregate()["recip_rank"] == pytest.approx(want, abs=1e-12)
        assert mrr_by_hand(inst, scores, missing) == pytest.approx(want, abs=1e-12)
    per = trecqr.evaluate(qrels, S.to_run(inst, scores, missing="last"), ["recip_rank"]).per_query()
    assert per["hredqs-2"]["recip_rank"] == 1.0 and per["hredqs-5"]["recip_rank"] == 0.5
    with pytest.raises(trecqr.errors.UsageError):
        S.to_run(inst, scores, missing="half")


def test_missing_last_with_ties_stays_last():
    inst = [S.Instance("i1", ("a",), "zzz", None, ("b", "c", "d"))]
    scores = {"i1": [("b", 1.0), ("c", 0.5), ("d", 0.5)]}
    run = S.to_run(inst, scores, missing="last")
    res = trecqr.evaluate(S.to_qrels(inst), run, ["recip_rank"])
    assert res.aggregate()["recip_rank"] == pytest.approx(1 / 3)
    assert len(run) == 3


def test_cli_writes_files_that_trecqr_eval_scores(tmp_path):
    _, _, scores, tgt = _hred_setup(tmp_path)
    runner = CliRunner()
    for missing, want in [("zero", 0.5), ("last", 0.8)]:
        out = tmp_path / missing
        res = runner.invoke(sessions_command, [
            "hredqs", str(CTX), "--rnk", str(RNK), "--tgt", str(tgt), "--scores", str(scores),
            "--column", "HRED", "--missing", missing, "--topics", str(out) + ".tsv",
            "--qrels", str(out) + ".qrels", "--run", str(out) + ".run"],
            catch_exceptions=False)
        assert res.exit_code == 0, res.output
        assert "instances=5 qrels=5 run_lines=7" in res.stderr
        val = trecqr.evaluate(str(out) + ".qrels", str(out) + ".run", ["recip_rank"])
        assert val.aggregate()["recip_rank"] == pytest.approx(want, abs=1e-12)
        topics = (tmp_path / f"{missing}.tsv").read_text().splitlines()
        assert topics[0] == "hredqs-1\tcarmax ||| consumer report ||| nissan"
    qrels_lines = (tmp_path / "zero.qrels").read_text().splitlines()
    assert qrels_lines[3].split() == ["hredqs-4", "0", S.candidate_id("nye"), "1"]


def test_candidate_scores_tsv_and_jsonl(tmp_path):
    ss = S.read_trec_session(TREC)
    inst = [i for i in S.instances(ss) if i.session == "1"]
    tsv = tmp_path / "c.tsv"
    tsv.write_text("id\tcandidate\tscore\n1_2\tUS civil war battles\t2.0\n"
                   "1_2\tus civil war  economic causes\t1.5\n1_2\tcivil war\t3\n")
    js = tmp_path / "c.jsonl"
    js.write_text('{"id": "1_2", "candidates": ["US civil war battles", '
                  '"US civil war economic causes", "civil war"], "scores": [2.0, 1.5, 3]}\n')
    for path in (tsv, js):
        sc = S.read_candidate_scores(path)
        assert len(sc["1_2"]) == 3
        res = trecqr.evaluate(S.to_qrels(inst), S.to_run(inst, sc), ["recip_rank"])
        assert res.aggregate()["recip_rank"] == pytest.approx(1 / 3)
    bad = tmp_path / "bad.tsv"
    bad.write_text("1_2\tx\t1\n1_2\ty\tnope\n")
    with pytest.raises(InputError) as e:
        S.read_candidate_scores(bad)
    assert e.value.line == 2


def test_cli_sessions_webis_mission(tmp_path):
    res = CliRunner().invoke(sessions_command, [
        "webis", str(WEBIS), "--split", "mission", "--topics", str(tmp_path / "t.jsonl"),
        "--qrels", str(tmp_path / "q.qrels")], catch_exceptions=False)
    assert res.exit_code == 0
    assert "instances=3046 qrels=3046" in res.stderr
    assert len((tmp_path / "q.qrels").read_text().splitlines()) == 3046


# ---------------------------------------------------------------- HRED-qs .ses session files

def _ctx_lines():
    return CTX.read_text().rstrip("\n").split("\n")


def test_hredqs_ses_sessions_built_from_ctx_lines(tmp_path):
    from trecqr.datasets.sessions.logs import read_hredqs_sessions  # forwarded name

    ctx = _ctx_lines()
    assert len(ctx) == 5
    # 1. the ctx lines themselves as sessions: 3+1+1+2+2 queries, 2+0+0+1+1 instances
    ses = tmp_path / "ctx.ses"
    ses.write_text("\n".join(ctx) + "\n")
    ss = read_hredqs_sessions(ses)
    assert [s.sid for s in ss] == [f"hredqs-{n}" for n in range(1, 6)]
    assert _counts(ss) == (5, 9, 4)
    assert [s.queries for s in ss] == [line.split("\t") for line in ctx]
    # 2. each ctx line followed by the first candidate of its rnk line: the last instance of
    # session n has exactly the context the ctx reader gives for line n
    cand = S.read_hredqs_candidates(CTX, RNK)
    ses2 = tmp_path / "ctx+rnk.ses"
    ses2.write_text("".join(f"{c}\t{i.candidates[0]}\n" for c, i in zip(ctx, cand)))
    ss2 = read_hredqs_sessions(ses2)
    inst = S.instances(ss2)
    last = {i.session: i for i in inst}
    for n in (1, 2, 3, 4):
        i = last[f"hredqs-{n}"]
        assert i.context == cand[n - 1].context and i.target == cand[n - 1].candidates[0]
        assert i.iid == f"hredqs-{n}_{len(cand[n - 1].context) + 1}"
    assert last["hredqs-1"].context == ("carmax", "consumer report", "nissan")
    assert last["hredqs-1"].target == "future nissan"
    # line 5 is "nye radio frequent<TAB>fcc" + "fcc": the duplicate rule drops the repeat
    assert ss2[4].queries == ["nye radio frequent", "fcc"]
    assert (last["hredqs-5"].iid, last["hredqs-5"].context) == ("hredqs-5_2",
                                                                 ("nye radio frequent",))
    assert _counts(ss2) == (5, 13, 8)
    assert _counts(read_hredqs_sessions(ses2, dedup=False)) == (5, 14, 9)
    assert S.load_sessions_instances("hredqs-ses", ses2) == inst


def test_hredqs_ses_line_numbers_are_ids(tmp_path):
    ctx = _ctx_lines()
    ses = tmp_path / "gaps.ses"
    # a blank line and a line of empty queries keep their numbers; CRLF and padded, re-cased
    # repeats are handled as everywhere else
    ses.write_bytes(("\r\n".join([ctx[0], "", ctx[1], "\t \t", ctx[3] + "\t NYE \t" + "nye  "])
                     + "\r\n").encode())
    ss = S.read_hredqs_sessions(ses)
    assert [(s.sid, s.queries) for s in ss] == [
        ("hredqs-1", ["carmax", "consumer report", "nissan"]),
        ("hredqs-3", ["govern rep"]),
        ("hredqs-5", ["nye", "nye county nevada radio", "NYE"])]


def test_cli_sessions_hredqs_ses(tmp_path, cli):
    ses = tmp_path / "ctx.ses"
    ses.write_text("\n".join(_ctx_lines()) + "\n")
    res = cli(["convert", "sessions", "hredqs-ses", ses, "--topics", tmp_path / "t.tsv",
               "--qrels", tmp_path / "q.qrels"])
    assert res.exit_code == 0, res.output
    assert "instances=4 qrels=4" in res.stderr
    assert (tmp_path / "t.tsv").read_text().splitlines() == [
        "hredqs-1_2\tcarmax", "hredqs-1_3\tcarmax ||| consumer report",
        "hredqs-4_2\tnye", "hredqs-5_2\tnye radio frequent"]
    q = [line.split() for line in (tmp_path / "q.qrels").read_text().splitlines()]
    assert q[1] == ["hredqs-1_3", "0", S.candidate_id("nissan"), "1"]
    bad = cli(["convert", "sessions", "hredqs-ses", ses, "--rnk", RNK, "--qrels",
               tmp_path / "x"])
    assert bad.exit_code == 2 and "--rnk and --tgt are for the hredqs" in bad.stderr


def test_session_readers_import_order():
    """sessions imports session_readers (both build on session_model, neither imports the
    other back): either module may be imported first, and the readers are the same objects."""
    import subprocess
    import sys

    code = ("import trecqr.datasets.sessions.readers as R; "
            "from trecqr.datasets.sessions.logs import read_aolia_qlogs, read_hredqs_sessions; "
            "assert read_aolia_qlogs is R.read_aolia_qlogs; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
    with pytest.raises(AttributeError):
        S.read_nothing  # noqa: B018


# ---------------------------------------------------------------- ir_datasets aol-ia qlogs

class _SampleLog:
    """Stands in for one of aol-ia's AOL log downloads: streams a local log file (header
    included) to ir_datasets' own AolManager, which parses it into AolQlog records."""

    def __init__(self, path):
        self.path = path

    def stream(self):
        return open(self.path, "rb")


def _aolia_manager(tmp_path, monkeypatch, logs=None):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    from ir_datasets.datasets import aol_ia

    base = tmp_path / "aol-ia"
    if logs is None:
        logs = [_SampleLog(AOL)]
    return aol_ia, aol_ia.AolManager(logs, None, base)


def _register(monkeypatch, name, manager, aol_ia):
    import ir_datasets
    from ir_datasets.datasets.base import Dataset

    ds = Dataset(aol_ia.AolQlogs(manager.file_ref("log.pkl.lz4")))
    monkeypatch.setitem(ir_datasets.registry._registered, name, ds)
    return ds


def test_aolia_qlogs_equal_read_aol(tmp_path, monkeypatch):
    aol_ia, manager = _aolia_manager(tmp_path, monkeypatch)
    records = list(aol_ia.AolQlogs(manager.file_ref("log.pkl.lz4")).qlogs_iter())
    assert len(records) == 35 and type(records[0]).__name__ == "AolQlog"
    # ir_datasets' normalised query (ws_tok) and id, the original kept in query_orig
    assert (records[2].query_orig, records[2].query) == ("staple.com", "staple com")
    assert all(r.query_id == S.aolia_query_id(r.query_orig) for r in records)
    for kw in ({}, {"gap": None}, {"dedup": False}, {"gap": 3600 * 24}):
        want = S.read_aol(AOL, **kw)
        got = S.read_aolia_qlogs(records, **kw)
        assert got == want  # ids, queries, times and users
        assert S.instances(got) == S.instances(want)
    ss = S.read_aolia_qlogs(iter(records))  # a stream is enough
    assert _counts(ss) == (24, 28, 4)
    assert [i.iid for i in S.instances(ss)] == ["142-9_2", "142-11_2", "142-11_3", "142-12_2"]
    # the text is query_orig's: ws_tok would have turned "www.elaorg" into "www elaorg"
    assert ss[8].queries == ["www.collegeucla.edu", "www.elaorg"]


def test_convert_sessions_aol_ia_reads_local_dataset(tmp_path, monkeypatch, cli):
    aol_ia, manager = _aolia_manager(tmp_path, monkeypatch)
    _register(monkeypatch, "trecqr-test/aol-sample", manager, aol_ia)
    assert not (tmp_path / "aol-ia" / "_built_logs").exists()
    out = {}
    for fmt, src in (("aol-ia", "trecqr-test/aol-sample"), ("aol", AOL)):
        res = cli(["convert", "sessions", fmt, src, "--gap", "600", "--topics",
                   tmp_path / f"{fmt}.tsv", "--qrels", tmp_path / f"{fmt}.qrels"])
        assert res.exit_code == 0, res.output
        # 10 minutes: www.collegeucla.edu (21:12) -> www.elaorg (21:25) splits, 4 -> 3
        assert "instances=3 qrels=3" in res.stderr
        out[fmt] = [(tmp_path / f"{fmt}{ext}").read_bytes() for ext in (".tsv", ".qrels")]
    assert out["aol-ia"] == out["aol"]
    # ir_datasets built its log file from the local sample (no archive needed, nothing fetched)
    assert (tmp_path / "aol-ia" / "_built_logs").exists()
    insts = S.load_sessions_instances("aol-ia", "trecqr-test/aol-sample")
    assert insts == S.instances(S.read_aol(AOL))


def test_convert_sessions_aol_ia_missing_files_one_line(tmp_path, monkeypatch, cli):
    from ir_datasets.util import DownloadConfig, GzipExtract, TarExtract

    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    from ir_datasets.datasets import aol_ia

    # aol-ia's own download table, rooted in tmp: the archive is not there
    dlc = DownloadConfig.context("aol-ia", tmp_path / "aol-ia")
    logs = [GzipExtract(TarExtract(dlc["logs"], f"AOL-user-ct-collection/"
                                                f"user-ct-test-collection-{k:02d}.txt.gz"))
            for k in (1, 2)]
    manager = aol_ia.AolManager(logs, GzipExtract(dlc["id2wb"]), tmp_path / "aol-ia")
    _register(monkeypatch, "trecqr-test/aol-missing", manager, aol_ia)
    res = cli(["convert", "sessions", "aol-ia", "trecqr-test/aol-missing", "--topics",
               tmp_path / "t.tsv"])
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    base = tmp_path / "aol-ia"
    assert lines[0] == (
        "trecqr: ir_datasets 'trecqr-test/aol-missing': query logs not available locally "
        f"(trecqr never downloads); missing: {base / 'log.pkl.lz4'}, which ir_datasets builds "
        f"from {base / 'aol-data.tar.gz'} (from http://www.cim.mcgill.ca/~dudek/206/Logs/"
        "AOL-user-ct-collection/aol-data.tar.gz)")
    assert not (tmp_path / "t.tsv").exists()
    assert sorted(p.name for p in base.iterdir()) == []  # nothing fetched, nothing built
    # a fetch ir_datasets would still attempt is refused (irds.offline), also in one line
    from trecqr.datasets.sessions import readers as R

    monkeypatch.setattr(R, "missing_files", lambda handler: [])
    with pytest.raises(trecqr.errors.UsageError) as e:
        S.load_aolia_sessions("trecqr-test/aol-missing")
    assert "download refused" in str(e.value) and "\n" not in str(e.value)


def test_damaged_session_files_are_one_line_errors(tmp_path):
    """A truncated .gz, a binary file and an empty file: exit 2, one line naming the file (they
    were 'Aborted!' with exit 1, or 0 instances)."""
    from trecqr.cli import main

    whole = open(data_path("sessions", "sessiontrack2013.xml.gz"), "rb").read()
    (tmp_path / "cut.xml.gz").write_bytes(whole[:5000])
    (tmp_path / "bin.txt").write_bytes(b"\x00\x01garbage")
    (tmp_path / "empty.txt").write_bytes(b"")
    for fmt in ("trec-session", "aol", "marco", "hredqs-ses"):
        for name, message in (("cut.xml.gz", "corrupt gzip data"),
                              ("bin.txt", "binary data (byte 0x00)"),
                              ("empty.txt", "empty file")):
            res = CliRunner().invoke(main, ["convert", "sessions", fmt, str(tmp_path / name),
                                            "--topics", str(tmp_path / "t.tsv")])
            assert res.exit_code == 2, (fmt, name, res.output)
            assert res.output.startswith(f"{tmp_path / name}") and message in res.output
            assert len(res.output.strip().splitlines()) == 1
            assert not (tmp_path / "t.tsv").exists()


def test_candidate_scores_must_be_finite_and_once(tmp_path):
    """nan, inf, a non-number, a JSON null and a repeated candidate: file:line errors (a bad
    score on line 1 was taken for a header and the line dropped; nan ranked first)."""
    cases = {
        "nan.tsv": ("1_2\tcivil war\tnan\n", 1, "score 'nan' is not a finite number"),
        "inf.tsv": ("1_2\tx\t1\n1_2\tcivil war\t-inf\n", 2, "score '-inf' is not a finite"),
        "word.tsv": ("1_2\tcivil war\tabc\n", 1, "bad score 'abc'"),
        "twice.tsv": ("1_2\tx\t1\n1_2\tx\t2\n", 2, "candidate 'x' of '1_2' given twice (first "
                                                   "on line 1)"),
        "null.jsonl": ('{"id": "1_2", "candidates": ["a", "b"], "scores": [1, null]}\n', 1,
                       "bad score None"),
        "str.jsonl": ('{"id": "1_2", "candidate": "a", "score": "high"}\n', 1,
                      "bad score 'high'"),
    }
    for name, (body, line, message) in cases.items():
        path = tmp_path / name
        path.write_text(body)
        with pytest.raises(InputError) as e:
            S.read_candidate_scores(path)
        assert e.value.line == line and message in str(e.value), name
    header = tmp_path / "header.tsv"
    header.write_text("qid\tcandidate\tscore\n1_2\tcivil war\t2\n")
    assert S.read_candidate_scores(header) == {"1_2": [("civil war", 2.0)]}
