"""What commands report when they work: the dense index bar counts encoded passages, counts are
pluralised, writing commands and reports written to a file say what they wrote, and the help
says what each option does.
"""

from __future__ import annotations

import io
import json
import re
import sys

from conftest import ROOT, run_cli
from fault_cases import CAST


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def _bar_counts(text):
    return [int(m) for m in re.findall(r"encoding passages: (\d+) passages", text)]


def test_dense_bar_counts_encoded_passages(tmp_path, monkeypatch):
    """The bar moves when passages are encoded (not read) and ends at the number encoded; it is
    silent when stderr is not a terminal and under show_progress=False (--quiet). The CAsT demo
    collection's 234 passages cut to their first 8 words: the bar counts passages, not words,
    and encoding short texts takes a second where the whole passages take about 20."""
    from trecqr.retrieval import dense

    collection = tmp_path / "short.jsonl"
    with open(CAST / "collection.jsonl", encoding="utf-8") as fh:
        collection.write_text("".join(json.dumps({"id": d["id"], "contents": " ".join(
            d["contents"].split()[:8])}) + "\n" for d in map(json.loads, fh)), encoding="utf-8")
    encoded = []
    real = dense._encode

    def counting(model, texts, *a, **kw):
        encoded.append(len(texts))
        return real(model, texts, *a, **kw)

    monkeypatch.setattr(dense, "_encode", counting)
    term = _Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    manifest = dense.build_index(collection, tmp_path / "idx", chunk_size=100)
    shown = _bar_counts(term.getvalue().replace("\r", "\n"))
    assert encoded == [100, 100, 34] and manifest["documents"] == 234
    assert shown[-1] == 234 == sum(encoded)
    assert set(shown) <= {0, 100, 200, 234}  # never ahead of the encoder
    assert "Batches" not in term.getvalue()

    index = dense.load_index(tmp_path / "idx")
    term2 = _Terminal()
    monkeypatch.setattr(sys, "stderr", term2)
    run = dense.search(tmp_path / "idx", {"1": "breast cancer", "2": "lung cancer"}, k=5,
                       show_progress=True, index=index)
    assert len(run.qid) == 10 and "encoding queries: 100%" in term2.getvalue()
    assert re.search(r"encoding queries: 100%\S* 2/2 ", term2.getvalue().replace("\r", "\n"))

    term3 = _Terminal()  # --quiet: silent on a terminal too
    monkeypatch.setattr(sys, "stderr", term3)
    dense.search(tmp_path / "idx", {"1": "breast cancer"}, k=5, show_progress=False, index=index)
    assert term3.getvalue() == ""

    pipe = io.StringIO()  # not a terminal: silent even when asked for progress
    monkeypatch.setattr(sys, "stderr", pipe)
    dense.search(tmp_path / "idx", {"1": "breast cancer"}, k=5, show_progress=True, index=index)
    assert pipe.getvalue() == ""


FIX = ROOT / "fixtures" / "cast2021"


def test_counts_are_pluralised():
    result = run_cli(["compare", FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run",
                      "-m", "map", "--permutations", "100", "--bootstrap", "100"])
    assert result.exit_code == 0, result.output
    assert "family: 1 run vs baseline manual_bm25.run x 1 measure = 1 t-test; " in result.stdout
    bd = run_cli(["breakdown", FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run",
                  "-m", "map", "--max-depth", "2"])
    assert bd.exit_code == 0, bd.output
    assert "2 groups x 1 run vs baseline manual_bm25.run x 1 measure = 2 t-tests" in bd.stdout


def test_writing_commands_say_what_they_wrote(tmp_path):
    png = tmp_path / "d.png"
    result = run_cli(["plot", "diff", FIX / "qrels.txt", FIX / "manual_bm25.run",
                      FIX / "convdr.run", "-m", "map", "-o", png])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"trecqr: plot written to {png}\n" and png.stat().st_size > 0
    topics = tmp_path / "t.tsv"
    topics.write_text("1_2\tq one\n1_3\tq two\n")
    out = tmp_path / "o.jsonl"
    result = run_cli(["convert", "topics", topics, out, "--qid-style", "QReCC-Test"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"trecqr: 2 topics written to {out}\n"
    assert out.read_text().splitlines()[0] == '{"qid": "QReCC-Test_1_2", "query": "q one"}'


def test_help_names_what_the_options_do():
    plot = run_cli(["plot", "-h"]).stdout
    assert "PNG, SVG or PDF" in " ".join(plot.split())
    from trecqr.cli.convert_files import topics_command

    style = next(p.help for p in topics_command.params if p.name == "qid_style")
    for name, example in (("QReCC-Test", "QReCC-Test_31_4"), ("topiocqa-dev", "topiocqa-dev_31_4"),
                          ("TopiOCQA-Dev", "TopiOCQA-Dev_31_4"), ("dev-dash", "dev-31-4")):
        assert f"{name} ({example})" in style
    cqr = " ".join(run_cli(["cqr", "-h"]).stdout.split())
    assert "--qrels FILE Qrels to score every row against" in cqr
    assert "(default: a temporary folder, removed at exit)" in cqr


def test_reports_written_to_a_file_say_so(tmp_path):
    runs = [FIX / "qrels.txt", FIX / "manual_bm25.run", FIX / "convdr.run", "-m", "map"]
    for cmd, what in (("compare", "comparison"), ("breakdown", "breakdown")):
        out = tmp_path / f"{cmd}.txt"
        result = run_cli([cmd, *runs, "-o", out])
        assert result.exit_code == 0, result.output
        assert result.stdout == "" and out.stat().st_size > 0
        assert result.stderr.endswith(f"trecqr: {what} written to {out}\n")
    assert run_cli(["eval", "--quiet", *runs[:2], "-m", "map",
                    "-o", tmp_path / "e.txt"]).exit_code == 0
    result = run_cli(["diff", tmp_path / "e.txt", tmp_path / "e.txt", "-o", tmp_path / "d.txt"])
    assert (result.exit_code == 0
            and result.stderr == f"trecqr: diff written to {tmp_path / 'd.txt'}\n")
    topics = tmp_path / "t.tsv"
    topics.write_text("106_1\tbreast cancer\n")
    result = run_cli(["cqr", "--qrels", CAST / "qrels.txt",
                      "--collection", CAST / "collection.jsonl",
                      "--topics", topics, "-o", tmp_path / "r.json", "--format", "json", "--quiet"])
    assert result.exit_code == 0, result.output
    assert result.stderr == f"trecqr: report written to {tmp_path / 'r.json'}\n"
    result = run_cli(["search", tmp_path / "nothing", topics, "-o", tmp_path / "x.run"])
    assert result.exit_code == 2 and "written to" not in result.stderr  # only on success
