"""trecqr suggest: MRR over candidates equals trecqr eval's recip_rank on the converted files,
and generative metrics of generated next queries against session targets."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from trecqr.cli.generative import suggest_command
from trecqr.datasets.sessions import logs as S
from trecqr.errors import UsageError
from trecqr.generative import suggest as SG

from conftest import data_path, mrr_by_hand, run_cli

CTX = data_path("sessions", "hredqs-test.ctx")
RNK = data_path("sessions", "hredqs-test.rnk")
MARCO = data_path("sessions", "marco-sessions-sample.txt")

TARGETS = ["future nissan", "congressional representative", "white house e mail", "nye",
           "fcc radio station"]
SCORE_FILE = "LEN HRED\n13 0.3\n17 0.2\n18 0.7\n19 0.9\n3 0.4\n3 0.1\n18 0.6\n"


def _suggest_json(args):
    res = CliRunner().invoke(suggest_command, [str(a) for a in args] + ["--format", "json"],
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
    assert out["metrics"]["mrr"] == pytest.approx(mrr_by_hand(insts, sc, missing), abs=1e-12)
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
    res = CliRunner().invoke(suggest_command, ["marco", str(MARCO), "--candidates", str(cands),
                                          "--generated", str(gen), "--metric", "per"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[1].split()[0] == "mrr" and lines[2].split()[:2] == ["per", "0.0000"]
    assert "# missing: zero" in lines
    with pytest.raises(UsageError):
        SG.suggest("marco", MARCO)
    with pytest.raises(UsageError):
        SG.suggest("marco", MARCO, scores=cands)
    bad = CliRunner().invoke(suggest_command, ["marco", str(MARCO)])
    assert bad.exit_code == 2 and "nothing to score" in bad.stderr


# ---------------------------------------------------------------- sim_ret / + / ++ in suggest
# The real collection of tests/generative/test_retrieval_sim.py: TREC Session 2013 result titles and
# snippets (one passage per clueweb12 id, its first occurrence), embedded BM25 (k1=0.9, b=0.4).

XML = data_path("sessions", "sessiontrack2013.xml.gz")
SIM_GEN = {"1_2": "civil war",               # target "US civil war economic causes" (last)
           "2_2": "scooter brands",          # target "scooter brands reliable", t = 1 of 8
           "2_5": "cheap scooter reviews",   # target "scooter review", t = 4 of 8
           "2_8": "buy a scooter"}           # target "where to buy scooters" (last)


@pytest.fixture(scope="module")
def sess13_index(tmp_path_factory):
    from trecqr.retrieval.bm25 import build_index

    tmp = tmp_path_factory.mktemp("sess13-suggest")
    coll = tmp / "passages.jsonl"
    assert S.write_results_collection(XML, coll) == 2739  # the shown results' titles+snippets
    manifest = build_index(coll, tmp / "idx", show_progress=False)
    assert (manifest["documents"], manifest["terms"]) == (2739, 14558)  # distinct index terms
    return tmp / "idx"


def _sim_gen_file(tmp_path):
    path = tmp_path / "gen.jsonl"
    path.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in SIM_GEN.items()))
    return path


def _direct(index, fusion="rrf", k=10, measure="rbo", p=0.9):
    """{id: (sim_ret, sim_ret+, sim_ret++)} computed with retrieval_sim itself."""
    from trecqr.generative import retrieval_sim as rs
    from trecqr.retrieval.bm25 import load_index

    idx = load_index(index)
    sessions = {s.sid: s.queries for s in S.read_trec_session(XML)}
    out = {}
    for iid, g in SIM_GEN.items():
        sid, pos = iid.split("_")
        queries, t = sessions[sid], int(pos) - 1
        out[iid] = (rs.sim_ret(g, queries[t], idx, k, measure, p)["value"],
                    rs.sim_ret_plus(g, queries[t], idx, k, measure, p)["value"],
                    rs.sim_ret_plus_plus(g, rs.next_half(queries, t), idx, k, measure, p,
                                         fusion=fusion)["value"])
    return out


def test_suggest_sim_ret_equals_retrieval_sim(sess13_index, tmp_path):
    gen = _sim_gen_file(tmp_path)
    per = tmp_path / "per.jsonl"
    out = _suggest_json(["trec-session", XML, "--generated", gen, "--metric", "per",
                         "--sim-ret", "--index", sess13_index, "--per-instance", per])
    rows = {r["id"]: r for r in map(json.loads, per.read_text().splitlines())}
    assert sorted(rows) == sorted(SIM_GEN)
    want = _direct(sess13_index)
    for iid, (plain, plus, pp) in want.items():
        assert (rows[iid]["sim_ret"], rows[iid]["sim_ret+"], rows[iid]["sim_ret++"]) == (
            plain, plus, pp)
    # the scooter pair: the values pinned in tests/generative/test_retrieval_sim.py, and sim_ret++
    # fuses next_half = the target and the 3 queries after it
    assert rows["2_2"]["sim_ret"] == pytest.approx(0.49249426969285715, abs=1e-12)
    assert rows["2_2"]["sim_ret+"] == pytest.approx(0.6283479785142857, abs=1e-9)
    assert rows["2_2"]["sim_ret++"] == pytest.approx(0.22737998687142852, abs=1e-9)
    # a last query's next half is the target alone: sim_ret++ == sim_ret there, not elsewhere
    for iid in ("1_2", "2_8"):
        assert rows[iid]["sim_ret++"] == rows[iid]["sim_ret"]
    assert rows["2_5"]["sim_ret++"] != rows["2_5"]["sim_ret"]
    for m, i in (("sim_ret", 0), ("sim_ret+", 1), ("sim_ret++", 2)):
        assert out["metrics"][m] == pytest.approx(sum(v[i] for v in want.values()) / 4,
                                                  abs=1e-12)
        assert out["direction"][m] == "higher"
    assert list(out["metrics"]) == ["per", "sim_ret", "sim_ret+", "sim_ret++"]
    p = out["parameters"]
    assert (p["sim_ret_index"], p["sim_ret_depth"], p["sim_ret_overlap"], p["sim_ret_rbo_p"],
            p["sim_ret++_fusion"], p["sim_ret++_rrf_k"], p["sim_ret++_fusion_depth"]) == (
        str(sess13_index), 10, "rbo", 0.9, "rrf", 60, 100)
    assert p["sim_ret++_reference"].startswith("next half of the session")
    assert out["counts"]["generated_scored"] == 4


def test_suggest_sim_ret_options(sess13_index, tmp_path):
    gen = _sim_gen_file(tmp_path)
    out = _suggest_json(["trec-session", XML, "--generated", gen, "--metric", "per",
                         "--sim-ret", "--index", sess13_index, "--fusion", "combsum"])
    want = _direct(sess13_index, fusion="combsum")
    assert out["metrics"]["sim_ret++"] == pytest.approx(
        sum(v[2] for v in want.values()) / 4, abs=1e-12)
    assert "sim_ret++_rrf_k" not in out["parameters"]
    # combsum's pinned value for the scooter pair (tests/generative/test_retrieval_sim.py)
    res = SG.suggest("trec-session", XML, generated=gen, metrics=("per",), sim_ret=True,
                     index=sess13_index, fusion="combsum")
    vals = dict(zip(res["per_instance"]["generated"]["ids"],
                    res["per_instance"]["generated"]["values"]["sim_ret++"]))
    assert vals["2_2"] == pytest.approx(0.17028424343571427, abs=1e-9)
    # cut-off, overlap measure and RBO persistence reach all three
    out = _suggest_json(["trec-session", XML, "--generated", gen, "--metric", "per",
                         "--sim-ret", "--index", sess13_index, "--depth", "5",
                         "--overlap", "jaccard"])
    want = _direct(sess13_index, k=5, measure="jaccard")
    for m, i in (("sim_ret", 0), ("sim_ret+", 1), ("sim_ret++", 2)):
        assert out["metrics"][m] == pytest.approx(sum(v[i] for v in want.values()) / 4,
                                                  abs=1e-12)
    out = _suggest_json(["trec-session", XML, "--generated", gen, "--metric", "per",
                         "--sim-ret", "--index", sess13_index, "--rbo-p", "0.5"])
    want = _direct(sess13_index, p=0.5)
    assert out["metrics"]["sim_ret++"] == pytest.approx(sum(v[2] for v in want.values()) / 4,
                                                        abs=1e-12)
    assert out["parameters"]["sim_ret_rbo_p"] == 0.5


def test_suggest_sim_ret_hredqs_reference_is_target(sess13_index, tmp_path):
    from trecqr.generative import retrieval_sim as rs

    tgt, _ = _hred_files(tmp_path)
    gen = tmp_path / "g.tsv"
    gen.write_text("hredqs-1\tnissan cars\nhredqs-3\twhite house\n")
    res = SG.suggest("hredqs", CTX, rnk=RNK, tgt=tgt, generated=gen, metrics=("per",),
                     sim_ret=True, index=sess13_index)
    v = res["per_instance"]["generated"]["values"]
    assert res["per_instance"]["generated"]["ids"] == ["hredqs-1", "hredqs-3"]
    assert v["sim_ret++"] == v["sim_ret"]
    assert v["sim_ret"] == [rs.sim_ret("nissan cars", "future nissan", sess13_index)["value"],
                            rs.sim_ret("white house", "white house e mail",
                                       sess13_index)["value"]]
    assert res["parameters"]["sim_ret++_reference"].startswith("the target only")


def test_suggest_sim_ret_errors(sess13_index, tmp_path):
    gen = _sim_gen_file(tmp_path)
    runner = CliRunner()
    for args, msg in [
            (["--sim-ret", "--index", str(sess13_index)], "give --generated"),
            (["--generated", str(gen), "--sim-ret"], "--sim-ret needs --index"),
            (["--generated", str(gen), "--sim-ret", "--index", str(sess13_index),
              "--fusion-depth", "0"], "--fusion-depth must be at least 1")]:
        res = runner.invoke(suggest_command, ["trec-session", str(XML)] + args)
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and msg in res.stderr
