"""trecqr suggest: MRR over candidates equals trecqr eval's recip_rank on the converted files,
and generative metrics of generated next queries against session targets."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from trecqr.adapters import sessions as S
from trecqr.errors import UsageError
from trecqr.generative import suggest as SG

from conftest import data_path, run_cli

CTX = data_path("sessions", "hredqs-test.ctx")
RNK = data_path("sessions", "hredqs-test.rnk")
MARCO = data_path("sessions", "marco-sessions-sample.txt")

TARGETS = ["future nissan", "congressional representative", "white house e mail", "nye",
           "fcc radio station"]
SCORE_FILE = "LEN HRED\n13 0.3\n17 0.2\n18 0.7\n19 0.9\n3 0.4\n3 0.1\n18 0.6\n"


def _suggest_json(args):
    res = CliRunner().invoke(SG.command, [str(a) for a in args] + ["--format", "json"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _eval_mrr(qrels, run):
    res = run_cli(["eval", "-m", "recip_rank", "--format", "json", qrels, run])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)["summary"]["recip_rank"]


def _hred_files(tmp_path):
    tgt = tmp_path / "test.tgt"
    tgt.write_text("\n".join(TARGETS) + "\n")
    scores = tmp_path / "test.rnk_HRED.f"
    scores.write_text(SCORE_FILE)
    return tgt, scores


@pytest.mark.parametrize("missing,want", [("zero", 0.5), ("last", 0.8)])
def test_hredqs_suggest_mrr_equals_trecqr_eval(tmp_path, missing, want):
    tgt, scores = _hred_files(tmp_path)
    conv = run_cli(["convert", "sessions", "hredqs", CTX, "--rnk", RNK, "--tgt", tgt,
                    "--scores", scores, "--column", "HRED", "--missing", missing,
                    "--qrels", tmp_path / "q", "--run", tmp_path / "r"])
    assert conv.exit_code == 0, conv.output
    via_eval = _eval_mrr(tmp_path / "q", tmp_path / "r")
    out = _suggest_json(["hredqs", CTX, "--rnk", RNK, "--scores", scores, "--tgt", tgt,
                         "--column", "HRED", "--missing", missing])
    assert out["metrics"]["mrr"] == via_eval
    assert out["metrics"]["mrr"] == pytest.approx(want, abs=1e-12)
    assert out["parameters"]["missing"] == missing
    assert out["parameters"]["missing_reading"].startswith(missing + ":")
    c = out["counts"]
    assert (c["instances"], c["scored_instances"], c["run_lines"]) == (5, 5, 7)
    # hredqs-2 ("congressional rep" vs "congressional representative") and hredqs-5 miss
    assert c["targets_missing_from_candidates"] == 2


def _marco_candidates(tmp_path):
    """Made-up scores: candidates = every query of the instance's session, with a few ties;
    the target is dropped from every third instance; one id that is no instance."""
    ss = S.read_marco_sessions(MARCO)
    insts = S.instances(ss)
    by_sid = {s.sid: s.queries for s in ss}
    lines = ["id\tcandidate\tscore"]
    for k, inst in enumerate(insts):
        for j, q in enumerate(by_sid[inst.session]):
            if k % 3 == 0 and q == inst.target:
                continue
            lines.append(f"{inst.iid}\t{q}\t{(len(q) * 7 + j + k) % 5 / 4}")
    lines.append("marco-99_2\tnothing\t1.0")
    path = tmp_path / "cands.tsv"
    path.write_text("\n".join(lines) + "\n")
    return insts, path


@pytest.mark.parametrize("missing", ["zero", "last"])
def test_marco_suggest_mrr_equals_trecqr_eval(tmp_path, missing):
    insts, cands = _marco_candidates(tmp_path)
    assert len(insts) == 82
    conv = run_cli(["convert", "sessions", "marco", MARCO, "--scores", cands,
                    "--missing", missing, "--qrels", tmp_path / "q", "--run", tmp_path / "r"])
    assert conv.exit_code == 0, conv.output
    via_eval = _eval_mrr(tmp_path / "q", tmp_path / "r")
    out = _suggest_json(["marco", MARCO, "--candidates", cands, "--missing", missing])
    assert out["metrics"]["mrr"] == via_eval
    # and the direct computation agrees (ties by candidate id descending)
    sc = S.read_candidate_scores(cands)
    sc.pop("marco-99_2")
    assert out["metrics"]["mrr"] == pytest.approx(S.mrr_by_hand(insts, sc, missing), abs=1e-12)
    c = out["counts"]
    assert c["instances"] == 82 and c["scored_instances"] == 82
    assert c["targets_missing_from_candidates"] == 28  # k = 0, 3, ..., 81
    assert c["candidate_ids_not_instances"] == 1
    want = {"zero": 0.22021389856755702, "last": 0.29469125048393324}[missing]
    assert out["metrics"]["mrr"] == pytest.approx(want, abs=1e-12)


def test_marco_missing_readings_differ_by_missing_terms(tmp_path):
    insts, cands = _marco_candidates(tmp_path)
    zero = SG.suggest("marco", MARCO, candidates=cands, missing="zero")
    last = SG.suggest("marco", MARCO, candidates=cands, missing="last")
    sc = S.read_candidate_scores(cands)
    extra = sum(1 / len({S.candidate_id(c) for c, _ in sc[i.iid]})
                for k, i in enumerate(insts) if k % 3 == 0)
    assert last["metrics"]["mrr"] - zero["metrics"]["mrr"] == pytest.approx(extra / 82, abs=1e-12)


GEN = {"marco-1_3": "make deviled eggs how to",      # target "how to make deviled eggs"
       "marco-1_4": "how to boil eggs",              # target "recipe how to boil one egg"
       "marco-2_3": "treaty of versailles germany",  # "how did the treaty of versailles ..."
       "bogus_1": "not an instance"}


@pytest.mark.parametrize("ext", ["jsonl", "tsv"])
def test_generated_per_by_hand(tmp_path, ext):
    path = tmp_path / f"gen.{ext}"
    if ext == "jsonl":
        path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in GEN.items()))
    else:
        path.write_text("".join(f"{k}\t{v}\n" for k, v in GEN.items()))
    per_file = tmp_path / "per.tsv"
    out = _suggest_json(["marco", MARCO, "--generated", path, "--metric", "per",
                         "--metric", "per-mt", "--per-instance", per_file])
    # PER = (|g| + |t| - 2 common) / |t|: 0 (order ignored); (4 + 6 - 6)/6; (4 + 10 - 8)/10
    assert out["metrics"]["per"] == pytest.approx((0 + 4 / 6 + 6 / 10) / 3, abs=1e-12)
    # PER-MT = 1 - (common - max(0, |g| - |t|)) / |t|: 0; 1 - 3/6; 1 - 4/10
    assert out["metrics"]["per-mt"] == pytest.approx((0 + 0.5 + 0.6) / 3, abs=1e-12)
    assert out["direction"] == {"per": "lower", "per-mt": "lower"}
    c = out["counts"]
    assert (c["generated_records"], c["generated_scored"], c["generated_not_instances"],
            c["instances_without_generated"]) == (4, 3, 1, 79)
    assert out["parameters"]["tokenizer"] == "alnum" and "mrr" not in out["metrics"]
    rows = per_file.read_text().splitlines()
    assert rows[0] == "id\tper\tper-mt"
    assert rows[1:] == ["marco-1_3\t0.000000\t0.000000", "marco-1_4\t0.666667\t0.500000",
                        "marco-2_3\t0.600000\t0.600000"]


def test_both_sides_table_and_errors(tmp_path):
    insts, cands = _marco_candidates(tmp_path)
    gen = tmp_path / "g.tsv"
    gen.write_text("marco-1_3\thow to make deviled eggs\n")
    res = CliRunner().invoke(SG.command, ["marco", str(MARCO), "--candidates", str(cands),
                                          "--generated", str(gen), "--metric", "per"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[1].split()[0] == "mrr" and lines[2].split()[:2] == ["per", "0.0000"]
    assert "# missing: zero" in lines
    with pytest.raises(UsageError):
        SG.suggest("marco", MARCO)
    with pytest.raises(UsageError):
        SG.suggest("marco", MARCO, scores=cands)
    bad = CliRunner().invoke(SG.command, ["marco", str(MARCO)])
    assert bad.exit_code == 2 and "nothing to score" in bad.stderr
