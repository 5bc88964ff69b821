"""One aligned-table renderer and one CSV writer for every report
(trecqr/report/text_table.py), and cqr's protocol table scored with the rows, not again."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT, run_cli
from trecqr.report.text_table import aligned_table, fmt_p, fmt_value, render_csv

DEMO = ROOT / "fixtures" / "cast2021-demo"


def test_aligned_table_layout():
    rows = [["topics-raw", "0.4435", "239"], ["m", "0.5", "7"]]
    assert aligned_table(rows, ["run", "RR@3", "evaluated"]) == [
        "run           RR@3  evaluated",
        "----------  ------  ---------",
        "topics-raw  0.4435        239",
        "m              0.5          7"]
    assert aligned_table(rows, ["run", "RR@3", "n"], left=2, rule=False) == [
        "run         RR@3      n",
        "topics-raw  0.4435  239",
        "m           0.5       7"]


def test_numbers_and_csv():
    assert (fmt_value(float("nan"), 4), fmt_value(None, 2), fmt_value(0.12345, 4)) == \
        ("-", "-", "0.1235")
    assert (fmt_p(1e-7, 4), fmt_p(0.0, 4), fmt_p(0.04567, 3)) == ("1.0e-07", "0.0000", "0.046")

    @dataclass
    class Row:
        run: str
        diff: float
        n: int

    assert render_csv([Row("a", 0.1 + 0.2, 3), Row("b", float("nan"), 0)],
                      ["run", "diff", "n"]) == "run,diff,n\na,0.30000000000000004,3\nb,,0\n"


def test_one_renderer_and_one_csv_writer_in_the_source():
    """No other module aligns columns with ljust/rjust widths or defines render_csv."""
    defs, aligners = [], []
    for path in sorted((ROOT / "trecqr").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == "render_csv":
                defs.append(path.relative_to(ROOT).as_posix())
        if ".ljust(w)" in text and ".rjust(w)" in text:
            aligners.append(path.relative_to(ROOT).as_posix())
    assert defs == ["trecqr/report/text_table.py"]
    assert aligners == ["trecqr/report/text_table.py"]


def test_cqr_protocol_table_reads_the_qrels_and_each_run_once(tmp_path, monkeypatch):
    """The protocol's table comes from the rows' own pass: the qrels are read once for both
    tables, each run file once (it was: the qrels again and every run again per protocol)."""
    from trecqr.formats import qrels as qrels_module
    from trecqr.formats import run as run_module
    from trecqr.workflows import cqr as cqr_module

    reads = {"qrels": [], "run": []}
    read_qrels, read_run = qrels_module.read_qrels, run_module.read_run

    def count_qrels(path, *a, **kw):
        reads["qrels"].append(Path(path).name)
        return read_qrels(path, *a, **kw)

    def count_run(path, *a, **kw):
        reads["run"].append(Path(path).name)
        return read_run(path, *a, **kw)

    from trecqr.formats import objects  # the input layer: every file is read through it
    # the core reads a run given as a path itself
    from trecqr.engine import rankings as core_rankings

    monkeypatch.setattr(objects, "read_qrels", count_qrels)
    monkeypatch.setattr(objects, "read_run", count_run)
    monkeypatch.setattr(core_rankings, "read_run", count_run)
    report = cqr_module.cqr(DEMO / "qrels.txt", [DEMO / "topics-raw.tsv",
                                                 DEMO / "topics-manual.tsv"],
                            collection=DEMO / "collection.jsonl", protocol="cast2022-nist",
                            runs_dir=tmp_path / "runs")
    assert reads == {"qrels": ["qrels.txt"], "run": ["topics-raw.run", "topics-manual.run"]}
    lines = report.protocol_table().splitlines()
    assert lines[0].startswith("protocol cast2022-nist (-c -M1000 -l2 ")
    assert lines[1].split() == ["run", "ndcg_cut_3", "ndcg_cut_5", "ndcg_cut_500",
                                "map_cut_500", "evaluated"]
    assert lines[2].split() == ["topics-raw", "0.4713", "0.5053", "0.5653", "0.0000", "239"]
    assert lines[3].split() == ["topics-manual", "0.5685", "0.6190", "0.6618", "0.0000", "239"]
    # the same numbers as scoring the kept run on its own under the protocol
    res = run_cli(["eval", "--protocol", "cast2022-nist", DEMO / "qrels.txt",
                   tmp_path / "runs" / "topics-manual.run"])
    assert res.stdout.split()[2::3][:3] == ["0.5685", "0.6190", "0.6618"]
    assert "protocol" not in report.to_dict() and "protocol_rows" not in report.to_dict()
