"""``trecqr suggest``: judge a query-suggestion model on session instances.

Sessions (any format of :mod:`trecqr.datasets.sessions.logs`) become next-query instances
(context = previous queries, target = next query). Then:

Discriminative side (``--candidates SCORES``, or for ``hredqs`` ``--rnk RNK --scores FILE``)
    The model's candidate scores are turned into a TREC run and the targets into qrels
    (:func:`~trecqr.datasets.sessions.logs.to_run` /
    :func:`~trecqr.datasets.sessions.logs.to_qrels`),
    and MRR is trecqr's ``recip_rank`` (trec_eval's) on them -- the same number
    ``trecqr convert sessions ... --qrels Q --run R`` followed by ``trecqr eval -m recip_rank Q R``
    gives. A target missing from its candidate list counts per ``--missing``: ``zero``
    (trec_eval: 0) or ``last`` (HRED-qs: ``1/len(list)``); the reading is named in the output.
    The mean is over the instances that have candidates and a target (trec_eval's average over
    the run's queries that have qrels); the counts are reported.

Generative side (``--generated FILE``)
    The model's generated next query per instance id (JSONL ``{"id", "text"}`` -- id also
    ``qid``/``instance_id``, text also ``generated``/``generated_query``/``query``/
    ``prediction``/``suggestion``/``rewrite`` or ``--gen-field`` -- or TSV ``id<TAB>text``) is
    scored against the instance's target with :func:`trecqr.generative.gen.score_pairs`
    (PER, PER-MT, sim_emb, BLEU, ROUGE; see :mod:`trecqr.generative`). Instances without a
    generated query, and generated ids that are no instance, are counted and not scored.

Retrieval-based similarities (``--sim-ret --index DIR``, with ``--generated``)
    The columns ``sim_ret``, ``sim_ret+`` and ``sim_ret++`` of
    :mod:`trecqr.generative.retrieval_sim`, from one trecqr index (bm25s, lucene or dense; a
    dense index gives no sim_ret+), with the options of
    ``trecqr gen``: ``--depth`` (the cut-off k of both rankings, 10), ``--overlap``
    (rbo, jaccard, overlap) and ``--rbo-p`` (0.9); sim_ret+ expands the target with Anserini's
    RM3 (``--rm3-fb-docs``, ``--rm3-fb-terms``, ``--rm3-original-weight``, Pyserini's
    defaults 10/10/0.5, as ``trecqr gen``). sim_ret++ is what ``trecqr gen`` cannot give,
    since it needs the session: its reference ranking fuses the rankings of
    :func:`~trecqr.generative.retrieval_sim.next_half` of the instance's session -- the target
    (position t of n queries, after the duplicate rule) and the first half of the queries after
    it -- each searched to ``--fusion-depth`` (100) and fused by ``--fusion`` (``rrf`` with
    ``--rrf-k`` 60, or ``combsum``). For ``hredqs`` ctx/rnk instances no later query is known,
    so the reference is the target alone (sim_ret++ then equals sim_ret); the parameters say
    so. Each value is exactly what the functions of :mod:`.retrieval_sim` return for the pair.

TREC Tasks track query suggestion (FORMAT ``tasks``, ``--qrels DIVERSITY_QRELS``)
    SESSIONS is then a run of query suggestions per task (TREC run format: ``task Q0 suggestion
    rank score runid``), scored as the Tasks track scored it: with NIST's ndeval measures
    against diversity qrels (``task subtask suggestion grade``), by default alpha-nDCG@10,@20
    and ERR-IA@10,@20 (``--measure`` takes any ir_measures name of the intent-aware family).
    The values are ``trecqr eval -R diversity``'s (:func:`trecqr.api.evaluation.score_diversity`):
    ir_measures' pyndeval provider's, per task and as its mean over the qrels' tasks.

Every result carries its parameters.
"""

from __future__ import annotations

import math

from trecqr.runtime.deferred import pc
from trecqr.datasets.sessions import logs as S
from trecqr.datasets.fields import check_named_fields
from trecqr.api.evaluation import evaluate, load_run, score_diversity
from trecqr.errors import InputError, UsageError
from trecqr.formats.diversity import load_diversity_qrels, run_in_rank_order
from trecqr.rankings.options import Options
from trecqr.generative import LOWER_IS_BETTER, METRICS, retrieval_sim as rs
from trecqr.generative.gen import score_pairs
from trecqr.generative.rankers import BATCH
from trecqr.generative.retrieval_sim import FUSIONS, next_half

GEN_ID_FIELDS = ("id", "qid", "instance_id")
GEN_TEXT_FIELDS = ("text", "generated", "generated_query", "query", "prediction", "suggestion",
                   "rewrite")


def read_generated(path, text_field=None) -> dict:
    """{instance id: generated text} from JSONL or TSV (``id<TAB>text``)."""
    name, text = S._read_text(path)
    low = str(path).lower().removesuffix(".gz")
    jsonl = not low.endswith((".tsv", ".tab", ".txt")) and text.lstrip()[:1] == "{"
    out: dict = {}
    for n, rec in S.line_records(name, text, jsonl):
        if jsonl:
            iid = next((str(rec[k]) for k in GEN_ID_FIELDS if k in rec), None)
            if iid is None:
                raise InputError(name, n, f"no id field ({', '.join(GEN_ID_FIELDS)})")
            fields = (text_field,) if text_field else GEN_TEXT_FIELDS
            f = next((f for f in fields if f in rec), None)
            if f is None:
                if text_field:  # a field no record has: the file's fields, in one line
                    check_named_fields(name, {"gen_field": text_field}, dict.fromkeys(
                        k for _, r in S.line_records(name, text, jsonl) for k in r))
                raise InputError(name, n, f"no text field ({', '.join(fields)})")
            val = rec[f]
            out[iid] = "" if val is None else str(val)
        else:
            cols = rec.split("\t", 1)
            if len(cols) != 2:
                raise InputError(name, n, "expected id<TAB>text")
            out[cols[0]] = cols[1]
    return out


def reference_queries(sessions) -> dict:
    """{instance id: the sim_ret++ reference queries}: next_half of the instance's session
    (the ids are those :func:`~trecqr.datasets.sessions.logs.instances` gives)."""
    out = {}
    for s in sessions:
        for t in range(1, len(s.queries)):
            out[f"{s.sid}_{t + 1}"] = next_half(s.queries, t)
    return out


def suggest(fmt, sessions_path, *, candidates=None, rnk=None, scores=None, tgt=None,
            column=None, generated=None, gen_field=None, missing=S.MISSING_ZERO,
            metrics=METRICS, split="time", gap=S.DEFAULT_GAP, dedup=True, sim_ret=False,
            index=None, fusion="rrf", rrf_k=None, fusion_depth=None, **gen_kw) -> dict:
    """MRR over candidates and/or generative metrics for sessions in ``fmt`` at
    ``sessions_path``. Returns a dict with ``metrics``, ``direction``, ``counts``,
    ``parameters`` and ``per_instance`` ({"ids": [...], "values": {metric: [...]}} per side).

    sim_ret/index: add sim_ret, sim_ret+ (via :func:`.gen.score_pairs`, with its ``depth``,
    ``overlap`` and ``rbo_p``) and sim_ret++ (fusion, rrf_k, fusion_depth) to the generated
    side."""
    if missing not in (S.MISSING_ZERO, S.MISSING_LAST):
        raise UsageError(f"missing must be {S.MISSING_ZERO!r} or {S.MISSING_LAST!r}")
    if candidates is not None and scores is not None:
        raise UsageError("give --candidates or --rnk with --scores, not both")
    if scores is not None and (fmt != "hredqs" or rnk is None):
        raise UsageError("--scores is the HRED-qs score file: it needs FORMAT hredqs and --rnk")
    if sim_ret and generated is None:
        raise UsageError("--sim-ret scores generated next queries: give --generated")
    if candidates is None and scores is None and generated is None:
        raise UsageError("nothing to score: give --candidates, --rnk/--scores or --generated")
    if sim_ret and index is None:
        raise UsageError("--sim-ret needs --index DIR (a trecqr index: bm25s, lucene or dense)")
    if sim_ret:
        _check_fusion(fusion, rrf_k, fusion_depth)
    sessions = None
    if fmt == "hredqs":
        insts = S.load_sessions_instances(fmt, sessions_path, rnk=rnk, tgt=tgt)
    else:
        if rnk is not None or tgt is not None:
            raise UsageError(f"--rnk and --tgt are for the hredqs ctx/rnk format, not {fmt}")
        sessions = S.load_sessions(fmt, sessions_path, split=split, gap=gap, dedup=dedup)
        insts = S.instances(sessions)
    out = {"metrics": {}, "direction": {}, "counts": {"instances": len(insts)},
           "parameters": {"format": fmt, "sessions": str(sessions_path)}, "per_instance": {}}
    if fmt != "hredqs":
        out["parameters"].update({"split": split, "gap": gap, "dedup": dedup})

    if candidates is not None or scores is not None:
        sc = (S.read_hredqs_scores(insts, scores, column) if scores is not None
              else S.read_candidate_scores(candidates))
        known = {i.iid for i in insts}
        _check_some_match(sc, known, candidates if candidates is not None else scores)
        targets = {i.iid: i.target for i in insts}
        qrels = S.to_qrels(insts)
        run = S.to_run(insts, sc, missing=missing)
        res = evaluate(qrels, run, ["recip_rank"])
        per = res.per_query()
        ids = sorted(per)
        mrr = float(res.aggregate()["recip_rank"]) if ids else math.nan
        out["metrics"]["mrr"] = mrr
        out["direction"]["mrr"] = "higher"
        with_target = {i.iid for i in insts if i.target is not None}
        ranked = set(map(str, run.qid.to_pylist()))
        out["counts"].update({
            "scored_instances": len(ids),
            "instances_without_candidates": sum(1 for i in with_target if i not in ranked),
            "candidate_ids_not_instances": sum(1 for k in sc if k not in known),
            "targets_missing_from_candidates": sum(1 for q in ids if _missing(q, targets, sc)),
            "run_lines": len(run)})
        out["parameters"].update({
            "mrr_definition": "trec_eval recip_rank (score desc, ties by candidate id desc)",
            "missing": missing,
            "missing_reading": ("zero: a target missing from the candidates scores 0 (trec_eval)"
                                if missing == S.MISSING_ZERO else
                                "last: a target missing from the candidates scores 1/len(list) "
                                "(HRED-qs)"),
            "candidates": str(candidates if candidates is not None else scores)})
        if column is not None:
            out["parameters"]["score_column"] = column
        out["per_instance"]["mrr"] = {"ids": ids, "values": {"mrr": [per[q]["recip_rank"]
                                                                      for q in ids]}}

    if generated is not None:
        gen = read_generated(generated, gen_field)
        _check_some_match(gen, {i.iid for i in insts}, generated)
        ids = [i.iid for i in insts if i.target is not None and i.iid in gen]
        target = {i.iid: i.target for i in insts}
        preds = [gen[q] for q in ids]
        refs = [target[q] for q in ids]
        if sim_ret:
            index = rs.ranker(index)  # load once for every metric
        inst, agg, params = score_pairs(preds, refs, metrics, index=index, sim_ret=sim_ret,
                                        **gen_kw)
        if sim_ret:
            more = _sim_ret_pp(sessions, insts, ids, preds, index, fusion, rrf_k,
                               fusion_depth, gen_kw)
            inst["sim_ret++"], agg["sim_ret++"] = more[0], more[1]
            params.update(more[2])
        out["metrics"].update(agg)
        out["direction"].update({m: "lower" if m in LOWER_IS_BETTER else "higher" for m in agg})
        out["counts"].update({
            "generated_records": len(gen), "generated_scored": len(ids),
            "generated_not_instances": sum(1 for k in gen if k not in target),
            "instances_without_generated": sum(1 for i in insts
                                               if i.target is not None and i.iid not in gen),
            "empty_generated": sum(1 for p in preds if not p.strip())})
        out["parameters"].update(params)
        out["parameters"]["generated"] = str(generated)
        out["per_instance"]["generated"] = {"ids": ids, "values": inst}
    return out


TASKS = "tasks"
TASKS_MEASURES = ("alpha_nDCG@10", "alpha_nDCG@20", "ERR_IA@10", "ERR_IA@20")
ORDERS = {"score": "score descending, ties by suggestion ascending (pyndeval, ir_measures)",
          "rank": "the run's rank column (the ndeval program without -traditional)"}


def suggest_tasks(run_path, qrels, measures=TASKS_MEASURES, order="score") -> dict:
    """TREC Tasks track query suggestion: a run of suggestions per task scored against
    diversity qrels with ndeval's intent-aware measures (ir_measures names). Returns the dict
    :func:`suggest` returns (``metrics``, ``direction``, ``counts``, ``parameters``,
    ``per_instance``).

    order: ``score`` ranks each task's suggestions by score, ties by suggestion ascending
    (ir_measures' pyndeval provider); ``rank`` follows the run's rank column, as the ndeval
    program does without ``-traditional``."""
    if order not in ORDERS:
        raise UsageError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    div = load_diversity_qrels(qrels)
    run = load_run(run_path) if order == "score" else run_in_rank_order(run_path)
    ev = score_diversity(div, run, list(measures), Options())
    tasks = set(pc.unique(div.qid).to_pylist())
    ranked = set(pc.unique(run.qid).to_pylist())
    keys = pc.binary_join_element_wise(run.qid, run.docno, "\x00")
    judged = pc.unique(pc.binary_join_element_wise(div.qid, div.docno, "\x00"))
    cols = [c for c in ev.columns if c.name in measures]
    return {
        "metrics": {c.name: float(c.summary) for c in cols},
        "direction": {c.name: "higher" for c in cols},
        "counts": {"tasks": len(tasks), "tasks_with_suggestions": len(tasks & ranked),
                   "tasks_without_suggestions": len(tasks - ranked),
                   "run_tasks_not_in_qrels": len(ranked - tasks), "suggestions": len(run),
                   "judged_suggestions": int(pc.sum(pc.is_in(keys, value_set=judged)).as_py()
                                             or 0)},
        "parameters": {"format": TASKS, "run": str(run_path),
                       "qrels": str(getattr(div, "source", qrels)),
                       "measures": "NIST ndeval's, as ir_measures' pyndeval provider computes "
                                   "them; mean over the qrels' tasks (a task without "
                                   "suggestions counts 0)",
                       "order": order, "order_reading": ORDERS[order]},
        "per_instance": {"tasks": {"ids": list(ev.qids),
                                   "values": {c.name: [float(v) for v in c.values]
                                              for c in cols}}},
    }


def _check_some_match(records: dict, instance_ids: set, path) -> None:
    """A model file none of whose ids is an instance id is a wrong file or id scheme: say so
    instead of reporting nan."""
    if records and instance_ids and not any(k in instance_ids for k in records):
        example = next(iter(records))
        raise UsageError(f"no id of {path} is an instance id (e.g. {example!r}; the instances'"
                         f" ids look like {min(instance_ids)!r})")


def _check_fusion(fusion, rrf_k, fusion_depth) -> None:
    if fusion not in FUSIONS:
        raise UsageError(f"fusion must be one of {', '.join(FUSIONS)}, not {fusion!r}")
    if rrf_k is not None and rrf_k < 0:
        raise UsageError(f"--rrf-k must not be negative (got {rrf_k})")
    if fusion_depth is not None and fusion_depth < 1:
        raise UsageError(f"--fusion-depth must be at least 1 (got {fusion_depth})")


def _sim_ret_pp(sessions, insts, ids, preds, index, fusion, rrf_k, fusion_depth,
                gen_kw):
    """(per-instance sim_ret++ values, their mean, parameters) for the scored pairs."""
    rrf_k = rs.RRF_K if rrf_k is None else rrf_k
    fusion_depth = rs.FUSE_DEPTH if fusion_depth is None else fusion_depth
    if sessions is None:
        refs = {i.iid: [i.target] for i in insts if i.target is not None}
        reading = "the target only (hredqs ctx/rnk instances have no later queries)"
    else:
        refs = reference_queries(sessions)
        reading = ("next half of the session: the target (position t of n) and the next "
                   "ceil((n - t) / 2) - 1 queries")
    k = gen_kw.get("depth", 10)
    measure = gen_kw.get("overlap", "rbo")
    p = gen_kw.get("rbo_p", 0.9)
    vals = []
    for lo in range(0, len(ids), BATCH):  # rankings of one batch held at a time
        part = list(zip(ids[lo:lo + BATCH], preds[lo:lo + BATCH]))
        index.prefetch([x for q, _ in part for x in refs[q]], fusion_depth)
        index.prefetch([g for _, g in part], k)
        vals += [rs.sim_ret_plus_plus(g, refs[q], index, k, measure, p, fusion=fusion,
                                      rrf_k=rrf_k, depth=fusion_depth)["value"] for q, g in part]
        index.clear()
    params = {"sim_ret++_reference": reading, "sim_ret++_fusion": fusion,
              "sim_ret++_fusion_depth": fusion_depth}
    if fusion == "rrf":
        params["sim_ret++_rrf_k"] = rrf_k
    return vals, (sum(vals) / len(vals) if vals else math.nan), params


def _missing(iid, targets, sc) -> bool:
    """True if the instance's target is not among its candidates (for the missing count)."""
    tgt = targets.get(iid)
    cands = sc.get(iid, ())
    cands = cands.items() if isinstance(cands, dict) else cands
    return tgt is not None and S.candidate_id(tgt) not in {S.candidate_id(c) for c, _ in cands}


def result_table(result) -> str:
    w = max([10] + [len(m) + 1 for m in result["metrics"]])  # alpha_nDCG@10 is longer
    lines = [f"{'metric':<{w}}{'value':>12}  better"]
    for m, v in result["metrics"].items():
        lines.append(f"{m:<{w}}{v:>12.4f}  {result['direction'][m]}")
    for k, v in result["counts"].items():
        lines.append(f"# {k}: {v}")
    for k, v in result["parameters"].items():
        lines.append(f"# {k}: {v}")
    return "\n".join(lines) + "\n"
