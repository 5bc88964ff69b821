"""Output formats (--format trec|json|jsonl|csv|tsv), --places, -o FILE and the coverage line.

Every format carries the same values: JSON/CSV values are the full-precision floats the trec
text rounds with ``%6.4f``; the coverage line on stderr counts topics evaluated, only in the
qrels and only in the run.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from conftest import TE, run_cli

QRELS, RUN = TE / "qrels.test", TE / "results.test"
MEASURES = ["-m", "map", "-m", "P.5,10", "-m", "num_rel_ret", "-m", "recip_rank", "-m", "runid"]
INTEGER = {"num_rel_ret"}


def _eval(*args, cwd=None):
    result = run_cli(["eval", *args], cwd=cwd)
    assert result.exit_code == 0, result.stderr
    return result


def _trec_rows(text):
    rows = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        rows[(name.strip(), qid)] = value
    return rows


@pytest.fixture(scope="module")
def trec_text():
    return _eval("--quiet", "-q", *MEASURES, QRELS, RUN).stdout


def test_json_summary_and_per_query_equal_the_trec_text(trec_text):
    doc = json.loads(_eval("--quiet", "-q", "--format", "json", *MEASURES, QRELS, RUN).stdout)
    trec = _trec_rows(trec_text)
    assert doc["runid"] == "STANDARD" == trec[("runid", "all")]
    assert doc["compat"] == "9.0.8"
    assert doc["topics"] == {"evaluated": 3, "qrels_only": [], "run_only": []}
    assert list(doc["per_query"]) == ["301", "302", "303"]
    seen = 0
    for (name, qid), text in trec.items():
        if name == "runid":
            continue
        value = doc["summary"][name] if qid == "all" else doc["per_query"][qid][name]
        if name in INTEGER:
            assert isinstance(value, int) and str(value) == text
        else:
            assert isinstance(value, float) and f"{value:6.4f}" == text
        seen += 1
    assert seen == 4 * 5  # 5 values (map P_5 P_10 num_rel_ret recip_rank) x 3 topics + all
    assert doc["summary"]["map"] == pytest.approx(0.1785, abs=5e-5)
    assert doc["summary"]["map"] != round(doc["summary"]["map"], 4)  # full precision


def test_jsonl_csv_tsv_hold_the_json_rows():
    doc = json.loads(_eval("--quiet", "-q", "--format", "json", *MEASURES, QRELS, RUN).stdout)
    expected = [(m, q, v) for q, vals in doc["per_query"].items() for m, v in vals.items()]
    expected += [(m, "all", v) for m, v in doc["summary"].items()]
    jsonl = _eval("--quiet", "-q", "--format", "jsonl", *MEASURES, QRELS, RUN).stdout
    got = [(r["measure"], r["qid"], r["value"]) for r in map(json.loads, jsonl.splitlines())]
    assert got == expected
    for fmt, delim in (("csv", ","), ("tsv", "\t")):
        text = _eval("--quiet", "-q", "--format", fmt, *MEASURES, QRELS, RUN).stdout
        rows = list(csv.reader(io.StringIO(text), delimiter=delim))
        assert rows[0] == ["measure", "qid", "value"]
        parsed = [(m, q, v if m == "runid" else (int(v) if m in INTEGER else float(v)))
                  for m, q, v in rows[1:]]
        assert parsed == expected


def test_places_6_gives_6_decimals(trec_text):
    text = _eval("--quiet", "-q", "--places", "6", *MEASURES, QRELS, RUN).stdout
    wide, narrow = _trec_rows(text), _trec_rows(trec_text)
    assert wide.keys() == narrow.keys()
    for key, value in wide.items():
        if key[0] in INTEGER or key[0] == "runid":
            assert value == narrow[key]
        else:
            assert re.fullmatch(r"\d\.\d{6}", value), value
            assert f"{float(value):.4f}" == narrow[key]
    assert wide[("map", "all")] == "0.178545"


def test_places_in_csv_and_json():
    text = _eval("--quiet", "--format", "csv", "--places", "3", *MEASURES, QRELS, RUN).stdout
    assert "map,all,0.179\n" in text and "num_rel_ret,all,131\n" in text
    doc = json.loads(_eval("--quiet", "--format", "json", "--places", "2", *MEASURES, QRELS,
                           RUN).stdout)
    assert doc["summary"]["map"] == 0.18 and doc["summary"]["P_5"] == 0.27


def test_nosummary_json_has_per_query_only():
    doc = json.loads(_eval("--quiet", "-q", "-n", "--format", "json", "-m", "map", QRELS,
                           RUN).stdout)
    assert doc["summary"] == {} and set(doc["per_query"]) == {"301", "302", "303"}


def test_nan_is_json_null():
    from trecqr.api.evaluation import score_trec
    from trecqr.report.outputs import render

    ev = score_trec(QRELS, RUN, ["map"])
    ev.columns[0].summary = float("nan")
    assert json.loads(render(ev, "json"))["summary"]["map"] is None
    assert json.loads(render(ev, "jsonl"))["value"] is None
    assert render(ev, "csv").splitlines()[1] == "map,all,nan"
    assert render(ev, "trec") == "map                   \tall\t   nan\n"  # C printf pads to width 6


def test_relstring_is_quoted_in_trec_text_only():
    trec = _eval("--quiet", "-q", "-m", "relstring.5", QRELS, RUN).stdout
    doc = json.loads(_eval("--quiet", "-q", "--format", "json", "-m", "relstring.5", QRELS,
                           RUN).stdout)
    value = _trec_rows(trec)[("relstring_5", "301")]
    assert value == f"'{doc['per_query']['301']['relstring_5']}'" and len(value) == 7


# ---------------------------------------------------------------------------- -o FILE
@pytest.mark.parametrize("fmt", ["trec", "json", "csv"])
def test_output_file(tmp_path, fmt):
    stdout = _eval("--quiet", "-q", "--format", fmt, *MEASURES, QRELS, RUN).stdout
    (tmp_path / "out").write_text("old\n")
    result = _eval("-q", "--format", fmt, "-o", "out", *MEASURES, QRELS, RUN, cwd=tmp_path)
    assert result.stdout == ""
    assert (tmp_path / "out").read_text() == stdout
    assert result.stderr == "trecqr: 3 topics evaluated; 0 only in qrels; 0 only in run\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary file left


# ---------------------------------------------------------------------------- coverage
def test_coverage_line_counts_missing_and_extra_topics(tmp_path):
    lines = [line for line in RUN.read_text().splitlines() if not line.startswith("302")]
    lines += ["999 Q0 X 1 1.0 STANDARD", "998 Q0 Y 1 1.0 STANDARD"]
    run = tmp_path / "run"
    run.write_text("\n".join(lines) + "\n")
    result = _eval("-m", "num_q", QRELS, run)
    assert result.stdout == "num_q                 \tall\t2\n"
    assert result.stderr == ("trecqr: 2 topics evaluated; 1 only in qrels (302); "
                             "2 only in run (998, 999)\n")
    doc = json.loads(_eval("--quiet", "--format", "json", "-m", "num_q", QRELS, run).stdout)
    assert doc["topics"] == {"evaluated": 2, "qrels_only": ["302"], "run_only": ["998", "999"]}


def test_coverage_line_abbreviates_long_lists(tmp_path):
    run = tmp_path / "run"
    run.write_text(RUN.read_text() + "".join(f"9{i:02d} Q0 X 1 1.0 r\n" for i in range(7)))
    result = _eval("-m", "num_q", QRELS, run)
    assert result.stderr.endswith("; 7 only in run (900, 901, 902, 903, 904, ...)\n")


def test_coverage_line_names_a_json_qrels_topic_without_judgments(tmp_path):
    """pytrec_eval's qrels as JSON may hold {"b": {}}: ir_measures' names count it (3 qrels
    topics), and the line said 3 qrels topics, 1 with results and 1 only in qrels without
    naming the third; it now says which topic has no judgments."""
    qrels, run = tmp_path / "q.json", tmp_path / "r.json"
    qrels.write_text('{"a": {"d1": 1}, "b": {}, "c": {"d9": 1}}')
    run.write_text('{"a": {"d1": 1.0, "d2": 0.5}}')
    result = _eval("-m", "RR@3", qrels, run)
    assert result.stdout == "RR@3                  \tall\t0.3333\n"
    assert result.stderr == ("trecqr: 3 qrels topics (ir_measures: a topic without results "
                             "counts 0), 1 with results; 1 only in qrels (c); 1 without "
                             "judgments (b); 0 only in run\n")
    assert _eval("-m", "recip_rank", qrels, run).stderr == \
        "trecqr: 1 topics evaluated; 1 only in qrels (c); 0 only in run\n"


def test_quiet_has_no_coverage_line():
    result = _eval("--quiet", "-m", "map", QRELS, RUN)
    assert result.stderr == "" and result.stdout == "map                   \tall\t0.1785\n"


def test_all_topics_evaluated_under_complete_10(tmp_path):
    """10.0 -c evaluates qrels topics missing from the run: they count as evaluated."""
    lines = [line for line in RUN.read_text().splitlines() if not line.startswith("302")]
    run = tmp_path / "run"
    run.write_text("\n".join(lines) + "\n")
    result = _eval("--compat", "10.0", "-c", "-m", "num_q", QRELS, run)
    assert result.stdout == "num_q                 \tall\t3\n"
    # the coverage line names the population num_q and every -c mean count: 3 qrels topics
    assert result.stderr == ("trecqr: 3 qrels topics (-c: a topic without results counts 0), "
                             "2 with results; 1 only in qrels (302); 0 only in run\n")


def test_output_through_a_symlink_keeps_the_link(tmp_path):
    (tmp_path / "link").symlink_to("real")
    _eval("--quiet", "-m", "map", "-o", "link", QRELS, RUN, cwd=tmp_path)
    assert (tmp_path / "link").is_symlink()
    assert (tmp_path / "real").read_text() == "map                   \tall\t0.1785\n"


def test_output_to_a_fifo_writes_into_it(tmp_path):
    """A device or FIFO (/dev/null, /dev/stdout) is written, never replaced by a rename."""
    import os
    import stat
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    _eval("--quiet", "-m", "map", "-o", fifo, QRELS, RUN)
    reader.join(timeout=20)
    assert got == [b"map                   \tall\t0.1785\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
