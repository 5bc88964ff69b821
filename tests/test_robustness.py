"""Issue 12: nothing a user types or does breaks trecqr.

Every example of the issue, run as a user runs it (the ``trecqr`` console script in a child
process, so closed or full stdout, FIFOs, signals and non-UTF-8 names are real): exit 0 or 2,
no traceback, no "internal error", one stderr line on error (click's usage errors aside), no
file left behind, no hang. Plus the error path itself (internal errors, TRECQR_DEBUG, warnings
dropped before a failure, outputs removed on failure) and damaged index folders.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import DATA, ROOT, TE, run_cli
from trecqr.runtime.holdpoints import Held, make_hold_dir, variable

FX = ROOT / "fixtures"
Q, R = TE / "qrels.test", TE / "results.test"
CMD = [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
       "from trecqr.runtime.launch import entry; entry()"]


def trecqr(args, cwd=None, env=None, timeout=120, **kw):
    e = dict(os.environ)
    e.pop("TRECQR_DEBUG", None)
    e.update(env or {})
    return subprocess.run(CMD + [a if isinstance(a, bytes) else str(a) for a in args], cwd=cwd,
                          env=e, capture_output=True, timeout=timeout, **kw)


def one_line(res, code=2) -> str:
    """Assert exit `code`, no traceback, one stderr line; return it."""
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode == code, err
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def usage_error(res, option: str) -> None:
    err = res.stderr.decode()
    assert res.returncode == 2 and "Traceback" not in err
    assert f"Invalid value for '{option}'" in err, err


def nothing_left(folder: Path, keep=()) -> None:
    left = sorted(p.name for p in folder.iterdir() if p.name not in keep)
    assert left == [], left


# ------------------------------------------------------------------ the examples
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


# root writes into a read-only folder: as root, trecqr runs without the capabilities that let
# it (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its bounding set)
AS_USER = [] if os.geteuid() != 0 else \
    ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


@pytest.mark.skipif(AS_USER != [] and shutil.which("setpriv") is None,
                    reason="running as root, and no setpriv to drop root's override")
def test_index_into_a_folder_without_write_permission(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        res = subprocess.run(AS_USER + CMD + ["index", str(FX / "cast2021-demo/collection.jsonl"),
                                              "-o", str(ro / "idx"), "--quiet"],
                             capture_output=True, timeout=300)
        line = one_line(res)
        assert line == f"{ro}: cannot write into this folder (Permission denied)", line
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


# ------------------------------------------------------------------ damaged index folders
@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robust-index") / "idx"
    res = trecqr(["index", FX / "cast2021-demo/collection.jsonl", "-o", folder, "--quiet"])
    assert res.returncode == 0, res.stderr
    return folder


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


# ------------------------------------------------------------------ hostile environments
def test_non_utf8_file_names_work_as_trec_evals_do(tmp_path):
    q = os.fsencode(tmp_path) + b"/q\xff\xfe.txt"
    r = os.fsencode(tmp_path) + b"/r\xe9.run"
    with open(q, "wb") as fh:
        fh.write(Q.read_bytes())
    with open(r, "wb") as fh:
        fh.write(R.read_bytes())
    res = trecqr(["eval", "-m", "map", "-m", "P.5", q, r, "--quiet"])
    assert res.returncode == 0, res.stderr
    assert res.stdout == trecqr(["eval", "-m", "map", "-m", "P.5", Q, R, "--quiet"]).stdout
    # breakdown / compare name runs after their files
    res = trecqr(["compare", q, r, r, "-m", "map", "--permutations", "10", "--bootstrap", "10"])
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    # an error names the file with the bytes it was given
    bad = os.fsencode(tmp_path) + b"/bad\xff.run"
    with open(bad, "wb") as fh:
        fh.write(b"1 Q0 d 1\n")
    res = trecqr(["eval", q, bad])
    assert res.returncode == 2
    assert res.stderr == bad + b":1: expected at least 6 fields (qid Q0 docno rank score " \
                              b"runid), found 4\n"


def test_non_utf8_name_printed_on_stdout_under_a_strict_utf8_locale(tmp_path):
    s = DATA / "sessions"
    ctx = os.fsencode(tmp_path) + b"/x\xff\xfe.ctx"
    with open(ctx, "wb") as fh:
        fh.write((s / "hredqs-test.ctx").read_bytes())
    gen = tmp_path / "g.tsv"
    gen.write_text("".join(f"hredqs-{i}\tsome query\n" for i in range(1, 6)))
    res = trecqr(["suggest", "hredqs", ctx, "--rnk", s / "hredqs-test.rnk", "--generated", gen,
                  "--metric", "per"], env={"PYTHONIOENCODING": "utf-8"})  # errors=strict
    assert res.returncode == 0, res.stderr
    assert b"# sessions: " + ctx + b"\n" in res.stdout


def test_closed_stdout(tmp_path):
    res = subprocess.run(CMD + ["eval", "-m", "map", str(Q), str(R)], capture_output=False,
                         stdout=None, stderr=subprocess.PIPE, timeout=120,
                         preexec_fn=lambda: os.close(1))
    assert res.returncode == 2
    assert res.stderr == b"<stdout>: cannot write: stdout is closed (>&-)\n"
    out = tmp_path / "out.txt"
    res = subprocess.run(CMD + ["eval", "-m", "map", "-o", str(out), str(Q), str(R)],
                         stderr=subprocess.PIPE, timeout=120, preexec_fn=lambda: os.close(1))
    assert res.returncode == 0, res.stderr
    assert out.read_text() == "map                   \tall\t0.1785\n"


def test_full_stdout():
    with open("/dev/full", "wb") as full:
        res = subprocess.run(CMD + ["eval", "-m", "map", str(Q), str(R)], stdout=full,
                             stderr=subprocess.PIPE, timeout=120)
    assert res.returncode == 2
    assert res.stderr == b"<stdout>: cannot write: No space left on device\n"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_devices_are_refused(device):
    # refused before reading: reading it would never end (the timeout is the net)
    line = one_line(trecqr(["eval", Q, device], timeout=300))
    assert line == f"{device}: a device that never ends; give a file"


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_stdin_stops_at_its_first_chunk(device):
    with open(device, "rb") as fh:
        res = trecqr(["eval", Q, "-"], stdin=fh, timeout=60)
    assert one_line(res) == "<stdin>: binary data (NUL bytes), not text"


def test_stdin_and_fifo_with_a_writer(tmp_path):
    want = trecqr(["eval", "-m", "map", Q, R, "--quiet"]).stdout
    res = trecqr(["eval", "-m", "map", Q, "-", "--quiet"], input=R.read_bytes())
    assert res.returncode == 0 and res.stdout == want
    for which in ("run", "qrels"):
        fifo = tmp_path / f"{which}.fifo"
        os.mkfifo(fifo)
        src = R if which == "run" else Q

        def write(fifo=fifo, src=src):
            # a blocking open: the writer comes exactly when trecqr opens the FIFO to read
            with open(fifo, "wb") as fh:
                fh.write(src.read_bytes())
        t = threading.Thread(target=write, daemon=True)
        t.start()
        args = [Q, fifo] if which == "run" else [fifo, R]
        res = trecqr(["eval", "-m", "map", *args, "--quiet"], timeout=60)
        if t.is_alive():  # trecqr never opened it: a reader of ours lets the writer go
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        t.join()
        assert res.returncode == 0, res.stderr
        assert res.stdout == want


def test_fifo_without_a_writer_is_refused(tmp_path):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    line = one_line(trecqr(["eval", Q, fifo], env={"TRECQR_FIFO_WAIT": "1"}, timeout=300))
    assert line == f"{fifo}: a FIFO with no writer after 1 s (TRECQR_FIFO_WAIT)"


def test_failed_ir_datasets_lookup_creates_nothing_under_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    e = dict(os.environ)
    e.pop("IR_DATASETS_HOME", None)
    e.update(env)
    for dataset in ("no-such/dataset", "msmarco-passage/dev/small"):
        res = subprocess.run(CMD + ["convert", "irds", dataset, "--topics-out",
                                    str(tmp_path / "t.tsv")], env=e, capture_output=True,
                             timeout=300)
        line = one_line(res)
        assert dataset in line
        assert sorted(os.listdir(home)) == []
    assert not (tmp_path / "t.tsv").exists()
    # a documents look-up writes irds_version.txt into the dataset's new folder (fuzz seed 23)
    res = subprocess.run(CMD + ["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--topics",
                                FX / "cast2021-demo/topics-raw.tsv", "--collection",
                                "irds:msmarco-passage", "--runs-dir", tmp_path / "runs",
                                "--quiet"], env=e, capture_output=True, timeout=300)
    assert "the documents files are not available locally" in one_line(res)
    assert sorted(os.listdir(home)) == []
    nothing_left(tmp_path, keep={"home"})


# ------------------------------------------------------------------ the error path itself
def test_unexpected_exception_is_one_line_with_where_to_report(monkeypatch):
    import trecqr.report.outputs as outputs
    from trecqr.cli.failures import HOW_TO_REPORT

    def boom(*a, **k):
        raise RuntimeError("boom")
    monkeypatch.setattr(outputs, "render", boom)
    monkeypatch.delenv("TRECQR_DEBUG", raising=False)
    res = run_cli(["eval", "-m", "map", Q, R])
    assert res.exit_code == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("trecqr: internal error: RuntimeError: boom at ")
    assert lines[0].endswith(" (please report it with the command line and this message; "
                             "TRECQR_DEBUG=1 prints the traceback)")
    assert HOW_TO_REPORT in lines[0] and "http" not in lines[0]  # no invented address
    monkeypatch.setenv("TRECQR_DEBUG", "1")
    res = run_cli(["eval", "-m", "map", Q, R])
    assert res.exit_code == 2
    assert "Traceback (most recent call last)" in res.stderr
    assert res.stderr.splitlines()[-1].startswith("trecqr: internal error: RuntimeError: boom")


def test_warnings_before_a_fatal_error_are_not_printed(tmp_path):
    # a topic that retrieves nothing warns; writing the run then fails: only the failure shows
    topics = tmp_path / "t.tsv"
    topics.write_text("1\tbreast cancer\n2\tzzzzqqqq\n")
    out = tmp_path / "missing" / "s.run"
    res = run_cli(["search", tmp_path / "nope", topics, "-o", out, "--quiet"])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    from trecqr.cli.lifecycle import run_guarded

    def job():
        import warnings

        warnings.warn("overflow encountered in cast")
        print("progress 50%", file=sys.stderr)
        raise __import__("trecqr").InputError("x.run", 3, "bad score")
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exc:
        run_guarded(job)
    assert exc.value.code == 2
    assert err.getvalue() == "x.run:3: bad score\n"

    def ok():
        import warnings

        warnings.warn("a fractional grade")
        print("progress 100%", file=sys.stderr)
        return 7
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert run_guarded(ok) == 7
    assert err.getvalue() == "progress 100%\ntrecqr: warning: a fractional grade\n"


def test_outputs_of_a_failed_command_are_removed(tmp_path):
    from trecqr.formats.writer import atomic_write_text
    from trecqr.runtime.transactions import new_output_dir, output_transaction

    old = tmp_path / "old.txt"
    old.write_text("old\n")
    with pytest.raises(RuntimeError), output_transaction():
        atomic_write_text(tmp_path / "a.txt", "a\n")
        atomic_write_text(old, "new\n")
        d = new_output_dir(tmp_path / "runs" / "x")
        atomic_write_text(Path(d) / "r.run", "r\n")
        raise RuntimeError("late failure")
    assert sorted(os.listdir(tmp_path)) == ["old.txt"]
    assert old.read_text() == "new\n"  # replaced whole: the new content, never a part
    with output_transaction():
        atomic_write_text(tmp_path / "a.txt", "a\n")
    assert (tmp_path / "a.txt").read_text() == "a\n"


def test_convert_cast_leaves_nothing_when_its_qrels_are_bad(tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("garbage line\n")
    line = one_line(trecqr(["convert", "cast", "--topics",
                            DATA / "cast2021/2021_manual_evaluation_topics_v1.0.json",
                            "--query-field", "manual", "--topics-out", tmp_path / "c.tsv",
                            "--meta-out", tmp_path / "meta.jsonl", "--qrels", bad,
                            "--qrels-out", tmp_path / "c.qrels"]))
    assert line == f"{bad}:1: expected 4 fields (qid iter docno grade), found 2"
    nothing_left(tmp_path, keep={"bad.qrels"})


def test_failed_cqr_removes_its_runs_folder(tmp_path, built_index):
    bad = tmp_path / "bad.tsv"
    bad.write_text("x\n")
    line = one_line(trecqr(["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--index",
                            built_index, "--topics", FX / "cast2021-demo/topics-raw.tsv",
                            "--topics", bad, "--runs-dir", tmp_path / "runs" / "sub",
                            "--quiet"]))
    assert line == f"{bad}:1: expected qid<TAB>query"
    nothing_left(tmp_path, keep={"bad.tsv"})


# ------------------------------------------------------------------ signals
@pytest.fixture(scope="module")
def big_run(tmp_path_factory):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from make_data import make

    return make(tmp_path_factory.mktemp("kill-data"), queries=200, depth=1000)


def test_signals_during_eval_leave_no_temp_and_a_whole_or_no_output(tmp_path, big_run):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import kill_eval

    run, qrels = big_run
    ref, took = kill_eval.reference(qrels, run, tmp_path)
    results = []
    for i, (frac, signum) in enumerate([(0.5, signal.SIGINT), (0.8, signal.SIGTERM),
                                        (0.95, signal.SIGHUP), (1.0, signal.SIGTERM),
                                        (0.9, signal.SIGINT), (0.7, signal.SIGHUP)]):
        results.append(kill_eval.one_try(qrels, run, tmp_path / f"t{i}", ref,
                                         0.3 + frac * took, signum, i % 2 == 0))
    assert all(r["ok"] for r in results), results
    for r in results:
        if r["code"] == 130:
            assert r["stderr"] == ["trecqr: interrupted"]
        elif r["code"] in (143, 129):
            assert r["stderr"] == [f"trecqr: terminated ({r['signal']})"]


def _group(pgid: int) -> list:
    """The pids of the live processes in process group pgid (zombies aside)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                pids.append(int(entry))
    return pids


def _ignores(pid: int, signum: int) -> bool:
    """Whether process pid ignores signum (SigIgn in /proc/PID/status)."""
    try:
        status = open(f"/proc/{pid}/status").read()
    except OSError:
        return False
    mask = int(status.split("SigIgn:")[1].split()[0], 16)
    return bool(mask >> (signum - 1) & 1)


def _hangup_default() -> None:
    """In the child before trecqr starts: SIGHUP back to its default. A suite run under nohup
    (or any parent that ignores SIGHUP) passes the ignored SIGHUP on, and trecqr keeps an
    ignored SIGHUP ignored, as nohup asks (trecqr.cli.lifecycle): the SIGHUP cases then
    test nothing but nohup."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _interrupt_workers(args, signum, to_group: bool, hold_dir: Path, workers: int = 2) -> None:
    """Start trecqr with args, its worker processes held at hold point "worker-started"
    (trecqr.runtime.holdpoints), and send signum once all `workers` are held there (to the process
    group, as a terminal's Ctrl-C, or to trecqr alone): the command cannot have ended, nor be
    between two states, whatever the machine's speed. Check: one line, exit 128 + signal, and
    no process of the group left."""
    held = Held(make_hold_dir(hold_dir))
    parent_dir = hold_dir / "parent"  # the parent's hold point, inside the workers' folder
    parent_dir.mkdir()
    parent = Held(make_hold_dir(parent_dir))
    env = dict(os.environ, **{variable("worker-started"): str(hold_dir),
                              variable("pool-started"): str(parent_dir)})
    env.pop("TRECQR_DEBUG", None)
    proc = subprocess.Popen(CMD + [str(a) for a in args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True, env=env,
                            preexec_fn=_hangup_default)
    try:
        pids = held.wait(workers, alive=lambda: proc.poll() is None)
        assert all(pid in _group(proc.pid) for pid in pids)
        # trecqr ignores the signals while it starts its workers (so that they ignore them
        # for good); held at "pool-started", it handles them again and cannot end
        assert parent.wait(1, alive=lambda: proc.poll() is None) == [proc.pid]
        assert not _ignores(proc.pid, signum)
        if to_group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        held.close()
        parent.close()
    name = "interrupted" if signum == signal.SIGINT else \
        f"terminated ({signal.Signals(signum).name})"
    assert (proc.returncode, err.decode().splitlines()) == (128 + signum, [f"trecqr: {name}"])
    deadline = time.monotonic() + 60  # the same safety net
    while _group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)  # the forkserver and the tracker see trecqr's end, then leave
    assert _group(proc.pid) == []


SIGNAL_CASES = [(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGHUP, True)]
RUN_COPIES = 4  # with the workers held, the amount of work does not matter


@pytest.mark.parametrize("signum,to_group", SIGNAL_CASES)
def test_signal_during_eval_with_worker_processes(tmp_path, big_run, signum, to_group):
    """Ctrl-C in a terminal reaches the whole process group: the worker processes of -j 2,
    multiprocessing's forkserver and resource tracker too. One line, exit 128 + signal, no
    output, and no process of the group left (SIGTERM sent to trecqr alone ends its workers)."""
    run, qrels = big_run
    runs = []
    for i in range(RUN_COPIES):
        runs.append(tmp_path / f"r{i}.run")
        os.symlink(run, runs[-1])
    (tmp_path / "hold").mkdir()
    _interrupt_workers(["eval", "-j", "2", "-q", "-m", "all_trec", "-o", tmp_path / "out.txt",
                        qrels, *runs], signum, to_group, tmp_path / "hold")
    shutil.rmtree(tmp_path / "hold")
    nothing_left(tmp_path, keep={f"r{i}.run" for i in range(RUN_COPIES)})


@pytest.fixture(scope="module")
def large_collection(tmp_path_factory):
    """20,000 synthetic passages: the bm25s index tokenises them in 3 batches, in worker
    processes."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_retrieval

    bench_retrieval.DATA = tmp_path_factory.mktemp("collection")
    folder, _ = bench_retrieval.make_collection(20_000, 10, seed=1)
    return folder / "collection.jsonl"


@pytest.mark.parametrize("signum,to_group", SIGNAL_CASES)
def test_signal_during_index_with_worker_processes(tmp_path, large_collection, signum,
                                                   to_group):
    """The bm25s index's tokenising workers, held at their start: one line, 128 + signal, no
    process and no index left (guard.worker_pool also closes the result pipe, so a worker
    killed while it sends its batch back cannot leave trecqr waiting for the rest)."""
    (tmp_path / "hold").mkdir()
    _interrupt_workers(["index", large_collection, "-o", tmp_path / "idx", "--quiet",
                        "--threads", "2"], signum, to_group, tmp_path / "hold")
    shutil.rmtree(tmp_path / "hold")
    nothing_left(tmp_path)


def test_held_workers_go_on_when_released(tmp_path, big_run):
    """The hold point itself: eval -j 2 waits while its workers are held (both at the point
    at once), and once released writes the output of an eval without workers."""
    run, qrels = big_run
    runs = [tmp_path / "a.run", tmp_path / "b.run"]
    for r in runs:
        os.symlink(run, r)
    want = trecqr(["eval", "-q", "-m", "map", qrels, *runs]).stdout
    (tmp_path / "hold").mkdir()
    held = Held(make_hold_dir(tmp_path / "hold"))
    env = dict(os.environ, **{variable("worker-started"): str(tmp_path / "hold")})
    proc = subprocess.Popen(CMD + ["eval", "-j", "2", "-q", "-m", "map", str(qrels),
                                   *map(str, runs)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    try:
        pids = held.wait(2, alive=lambda: proc.poll() is None)
        assert len(set(pids)) == 2 and proc.pid not in pids and proc.poll() is None
        held.release()
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        held.close()
    assert proc.returncode == 0, err
    assert out == want and want.count(b"\tall\t") == 2


@pytest.mark.parametrize("then", ["fails", "succeeds"])
def test_signal_swallowed_by_a_library_still_ends_the_command(tmp_path, then):
    """A bare ``except:`` in a library (pandas' import, fuzz seed 24) swallowed the signal's
    exception: the command went on and ended as an internal error. It ends as interrupted,
    and an output it wrote meanwhile is removed."""
    out = tmp_path / "out.txt"
    code = f"""
import os, signal, sys
from trecqr.cli.lifecycle import install_signal_handlers, run_guarded
from trecqr.formats.writer import atomic_write_text
install_signal_handlers()
def work():
    atomic_write_text({str(out)!r}, "partial\\n")
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        import time; time.sleep(5)
    except BaseException:
        pass
    if {then!r} == "fails":
        raise AttributeError("partially initialized module")
run_guarded(work)
print("not reached")
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert (res.returncode, res.stderr, res.stdout) == (143, b"trecqr: terminated (SIGTERM)\n",
                                                         b"")
    nothing_left(tmp_path)


def test_signal_while_the_command_line_is_imported():
    """The console script's first handlers (trecqr.runtime.launch), before click and numpy are
    imported: one line and 128 + signal, not a traceback."""
    code = ("import os, signal, sys; sys.argv[0] = 'trecqr'; from trecqr.runtime import launch; "
            "launch._install(); os.kill(os.getpid(), signal.SIGTERM); import time; "
            "time.sleep(5); print('not reached')")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert (res.returncode, res.stderr, res.stdout) == (143, b"trecqr: terminated (SIGTERM)\n",
                                                         b"")


# ------------------------------------------------------------------ found by the campaign
def test_plots_and_cqr_runs_named_after_non_utf8_files(tmp_path, built_index):
    run = os.fsencode(tmp_path) + b"/x\xffc.run"
    with open(run, "wb") as fh:
        fh.write((FX / "cast2021/convdr.run").read_bytes())
    for kind, runs in (("dist", [run]), ("depth", [run]),
                       ("diff", [FX / "cast2021/manual_bm25.run", run])):
        out = tmp_path / f"{kind}.png"
        res = trecqr(["plot", kind, FX / "cast2021/qrels.txt", *runs, "-m", "map", "-o", out])
        assert res.returncode == 0, res.stderr
        assert out.read_bytes()[:4] == b"\x89PNG"
    topics = os.fsencode(tmp_path) + b"/t\xff.tsv"
    with open(topics, "wb") as fh:
        fh.write((FX / "cast2021-demo/topics-raw.tsv").read_bytes())
    res = trecqr(["cqr", "--qrels", FX / "cast2021-demo/qrels.txt", "--index", built_index,
                  "--topics", topics, "-k", "10", "--runs-dir", tmp_path / "runs", "--quiet"])
    assert res.returncode == 0, res.stderr
    written = os.listdir(os.fsencode(tmp_path / "runs"))
    assert written == [b"t\xff.run"]
    first = open(os.path.join(os.fsencode(tmp_path / "runs"), written[0]), "rb").readline()
    assert first.split()[1] == b"Q0" and first.rstrip().endswith("t\ufffd".encode())


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


def test_failed_index_removes_the_folders_it_made(tmp_path):
    coll = tmp_path / "c.jsonl"
    coll.write_text("[]\n")
    line = one_line(trecqr(["index", coll, "-o", tmp_path / "no" / "such" / "idx", "--quiet"]))
    assert line == f"{coll}:1: expected a JSON object per line"
    nothing_left(tmp_path, keep={"c.jsonl"})


def test_diff_against_an_evaluation_of_non_utf8_files(tmp_path):
    q = os.fsencode(tmp_path) + b"/x\xffq.test"
    with open(q, "wb") as fh:
        fh.write(b"# a comment\n" + Q.read_bytes())  # 9.0.8 reads '#' as a qrels line
    res = trecqr(["diff", TE / "out.test", "--qrels", q, "--run", R, "--eval-args", "-m map"])
    one_line(res)
    assert res.stderr == b"trecqr: " + q + b":1: expected 4 fields (qid iter docno grade), " \
                                           b"found 3\n"


def test_fuzz_found_option_ranges(tmp_path):
    """Found by the final fuzz run: -l past a C long and --threads past any machine were
    internal errors (a Java method mismatch); now usage errors."""
    usage_error(trecqr(["eval", "-m", "P.5", Q, R, "-l", "99999999999999999999"]), "-l")
    for cmd in (["search", tmp_path / "idx", tmp_path / "t.tsv"],
                ["index", tmp_path / "c.jsonl", "-o", tmp_path / "idx"]):
        usage_error(trecqr([*cmd, "--threads", "99999999999999999999"]), "--threads")
    nothing_left(tmp_path)


def test_diff_of_gzip_data_on_stdin(tmp_path):
    """fuzz seed 25: `diff -` read stdin as text, and gzip bytes there were an internal error."""
    import gzip

    out = tmp_path / "a.txt"
    out.write_bytes(trecqr(["eval", "-m", "map", FX / "cast2021/qrels.txt",
                            FX / "cast2021/convdr.run"]).stdout)
    line = one_line(trecqr(["diff", "-", out, "--ignore", "runid"],
                           input=gzip.compress(out.read_bytes())))
    assert line == "<stdin>: not UTF-8 text (invalid start byte)"
    res = trecqr(["diff", "-", out], input=out.read_bytes())
    assert (res.returncode, res.stdout.splitlines()[-1]) == (0, b"agree")


def test_resource_tracker_is_started_quiet():
    """A pool's resource tracker runs with the -W option that silences its leaked-semaphore
    report (trecqr.runtime.workers.QUIET_TRACKER): after a signal, that report came as four more lines
    after trecqr's one. Checked on the tracker's own command line, in a fresh interpreter."""
    code = ("import multiprocessing.resource_tracker as rt\n"
            "from trecqr.runtime.workers import worker_pool\n"
            "with worker_pool(1) as pool:\n"
            "    pool.submit(int, '7').result()\n"
            "    pid = rt._resource_tracker._pid\n"
            "    print(open(f'/proc/{pid}/cmdline', 'rb').read().replace(b'\\0', b' ').decode())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "-Wignore:resource_tracker:UserWarning" in proc.stdout
    assert "resource_tracker" in proc.stdout.split("-c", 1)[1]  # it is the tracker's line
