"""``trecqr gen PRED REF``: generative metrics over (id, text) pairs matched by id.

PRED is read with :func:`trecqr.datasets.rewrites.topics.read_rewrites` (JSONL with the id and
rewrite fields found automatically, e.g. ``GPT_rewrite`` as a string or chat-completion object, or
``--pred-field``; TSV ``id<TAB>text``). An empty or null prediction is scored as the empty
string (counted as ``empty_predictions``). REF is read with
:func:`trecqr.datasets.topics.read_topics`; in JSONL its text field is ``--ref-field``, else
the first human-rewrite field present (``Truth_rewrite``, ``Rewrite``, ...), else the usual
query fields. Format: ``.tsv``/``.tab``/``.txt`` is TSV, anything else JSONL, unless given.

Ids are matched as written; when both files use conversational turn ids of different styles
(``QReCC-Test_1_2`` vs ``1_2``), they are matched through the canonical (conversation, turn) id
of :mod:`trecqr.datasets.turn_ids`, and REF's ids are reported. Ids in only one file are
counted (``unmatched_pred``, ``unmatched_ref``) and not scored.

Aggregates: the mean over matched pairs, except BLEU (corpus BLEU). Every result carries its
parameters (tokenizer, lowercase, OOV policy, embeddings, BLEU signature, ROUGE stemming).

With ``--sim-ret --index DIR`` (any trecqr index: bm25s, lucene or dense) the columns
``sim_ret`` and ``sim_ret+`` of :mod:`.retrieval_sim` are added (``--depth`` k, ``--overlap``,
``--rbo-p``; sim_ret+ is Anserini's RM3 with ``--rm3-fb-docs``, ``--rm3-fb-terms``,
``--rm3-original-weight``, Pyserini's defaults 10/10/0.5; a dense index gives no sim_ret+).
"""

from __future__ import annotations

import math
import warnings

from trecqr.datasets.rewrites.files import HUMAN_REWRITE_FIELDS
from trecqr.datasets.rewrites.topics import match_keys, read_rewrites
from trecqr.datasets.records import json_records
from trecqr.datasets.topics import read_text_file, read_topics
from trecqr.errors import UsageError
from trecqr.generative import LOWER_IS_BETTER, METRICS, retrieval_sim as rs
from trecqr.generative.embedding import glove_6b_50d, load_embeddings, OOV_POLICY, sim_emb
from trecqr.generative.per import per, per_mt, tokenize
from trecqr.generative.rankers import BATCH
from trecqr.generative.retrieval_sim import MEASURES
from trecqr.generative.text import bleu, rouge


def _fmt_of(path, fmt):
    if fmt:
        return fmt
    low = str(path).lower().removesuffix(".gz")
    return "tsv" if low.endswith((".tsv", ".tab", ".txt")) else "jsonl"


# the hints' names of the fields (trecqr.datasets.fields): gen's own arguments and options
PRED_OPTIONS = {"rewrite_field": ("pred_field", "--pred-field"),
                "id_field": ("pred_id_field", "--pred-id-field")}
REF_OPTIONS = {"query_field": ("ref_field", "--ref-field"),
               "qid_field": ("ref_id_field", "--ref-id-field")}


def read_pairs(pred_path, ref_path, *, pred_field=None, ref_field=None, pred_id_field=None,
               ref_id_field=None, pred_format=None, ref_format=None):
    """(ids, preds, refs, counts) of the pairs matched by id."""
    rw = read_rewrites(pred_path, format=_fmt_of(pred_path, pred_format), id_field=pred_id_field,
                       rewrite_field=pred_field, missing="drop", options=PRED_OPTIONS)
    pred = rw.topics.as_dict()
    for q in rw.report.empty:
        pred[q] = ""
    pred_ids = [q for q in _order(pred_path, rw) if q in pred]

    rfmt = _fmt_of(ref_path, ref_format)
    if rfmt == "jsonl" and ref_field is None:
        name, text = read_text_file(ref_path)
        first = next((rec for _, rec in json_records(name, text)), {})
        ref_field = next((f for f in HUMAN_REWRITE_FIELDS if f in first), None)
    ref_topics = read_topics(ref_path, rfmt, qid_field=ref_id_field, query_field=ref_field,
                             options=REF_OPTIONS)
    ref = ref_topics.as_dict()
    ref_ids = list(ref_topics.qids)

    pkeys, rkeys, _ = match_keys(pred_ids, ref_ids, rw.report.source)
    pred_by_key = dict(zip(pkeys, pred_ids))
    ids, preds, refs = [], [], []
    for key, rid in zip(rkeys, ref_ids):
        pid = pred_by_key.get(key)
        if pid is not None:
            ids.append(rid)
            preds.append(pred[pid])
            refs.append(ref[rid])
    if pred_ids and ref_ids and not ids:
        raise UsageError(f"no id of {pred_path} matches an id of {ref_path} (e.g. "
                         f"{pred_ids[0]!r} and {ref_ids[0]!r}): give the id fields "
                         "(--pred-id-field, --ref-id-field) or the formats")
    rset = set(rkeys)
    counts = {"pred_records": len(pred_ids), "ref_records": len(ref_ids), "matched": len(ids),
              "unmatched_pred": sum(k not in rset for k in pkeys),
              "unmatched_ref": len(ref_ids) - len(ids),
              "empty_predictions": sum(1 for p in preds if not p.strip()),
              "pred_field": rw.report.rewrite_field, "ref_field": ref_field or "auto"}
    return ids, preds, refs, counts


def _order(path, rw):
    """Prediction ids in file order (kept ones and empty ones)."""
    kept = list(rw.topics.qids)
    return kept + [q for q in rw.report.empty if q not in set(kept)]


def score_pairs(preds, refs, metrics=METRICS, *, tokenizer="alnum", lowercase=True,
                embeddings=None, bleu_lowercase=False, rouge_stemmer=False, index=None,
                sim_ret=False, depth=10, rbo_p=0.9, overlap="rbo", rm3=None):
    """({metric: per-instance list}, {metric: aggregate}, parameters).

    sim_ret: add sim_ret and sim_ret+ from ``index`` (any trecqr index, see
    :mod:`.retrieval_sim`); rm3: sim_ret+'s RM3 parameters (fb_docs, fb_terms,
    original_weight, filter_terms; Pyserini's defaults). On a dense index sim_ret+ is left
    out (RM3 needs terms) and the parameters say so."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise UsageError(f"unknown metric {unknown[0]!r}: use {', '.join(METRICS)}")
    params = {"tokenizer": tokenizer, "lowercase": lowercase}
    per_inst, agg = {}, {}
    toks_g = [tokenize(p, tokenizer, lowercase) for p in preds]
    toks_t = [tokenize(r, tokenizer, lowercase) for r in refs]
    if "per" in metrics:
        per_inst["per"] = [per(g, t) for g, t in zip(toks_g, toks_t)]
    if "per-mt" in metrics:
        per_inst["per-mt"] = [per_mt(g, t) for g, t in zip(toks_g, toks_t)]
    if "sim_emb" in metrics:
        emb = load_embeddings(embeddings) if embeddings is not None else glove_6b_50d()
        per_inst["sim_emb"] = [sim_emb(g, t, emb) for g, t in zip(toks_g, toks_t)]
        oov = sum(len(x) - len(emb.lookup(x)[0]) for x in toks_g + toks_t)
        params.update({"embeddings": emb.name, "embedding_dim": emb.dim, "oov": OOV_POLICY,
                       "oov_tokens": oov, "composition": "vector extrema"})
    if "bleu" in metrics:
        per_inst["bleu"], agg["bleu"], sig = bleu(preds, refs, lowercase=bleu_lowercase)
        params.update({"bleu_signature": sig, "bleu_aggregate": "corpus", "bleu_scale": 100})
    rtypes = [m for m in ("rouge1", "rouge2", "rougeL") if m in metrics]
    if rtypes:
        per_inst.update(rouge(preds, refs, rtypes, stemmer=rouge_stemmer))
        params.update({"rouge_stemmer": rouge_stemmer, "rouge_measure": "F1"})
    if sim_ret:
        _check_sim_ret_options(depth, rbo_p, overlap)
        per_inst_ret, ret_params = _sim_ret_pairs(preds, refs, index, depth, overlap, rbo_p,
                                                  rm3 or {})
        per_inst.update(per_inst_ret)
        params.update(ret_params)
    for m, vals in per_inst.items():
        if m not in agg:
            agg[m] = sum(vals) / len(vals) if vals else math.nan
    order = [m for m in METRICS if m in per_inst] + [m for m in per_inst if m not in METRICS]
    return ({m: per_inst[m] for m in order}, {m: agg[m] for m in order}, params)


def _check_sim_ret_options(depth, rbo_p, overlap) -> None:
    if overlap not in MEASURES:
        raise UsageError(f"overlap must be one of {', '.join(MEASURES)}, not {overlap!r}")
    if depth < 1:
        raise UsageError(f"--depth must be at least 1 (got {depth})")
    if overlap == "rbo" and not 0 < rbo_p < 1:
        raise UsageError(f"--rbo-p must be in (0, 1) (got {rbo_p})")


def _sim_ret_pairs(preds, refs, index, depth, overlap, rbo_p, rm3) -> tuple:
    """({"sim_ret": [...], "sim_ret+": [...]}, parameters) for aligned pairs."""
    if index is None:
        raise UsageError("--sim-ret needs --index DIR (a trecqr index: bm25s, lucene or dense)")
    r = rs.ranker(index)
    rm3 = {"fb_docs": rs.FB_DOCS, "fb_terms": rs.FB_TERMS,
           "original_weight": rs.ORIGINAL_WEIGHT, "filter_terms": True, **rm3}
    plus = r.backend != "dense"
    if plus:
        r.expansions(refs, **rm3)  # all at once: one pass over a bm25s collection's texts
    out = {"sim_ret": [], "sim_ret+": []} if plus else {"sim_ret": []}
    for lo in range(0, len(preds), BATCH):  # rankings of one batch held at a time
        pairs = list(zip(preds[lo:lo + BATCH], refs[lo:lo + BATCH]))
        r.prefetch([x for pair in pairs for x in pair], depth)
        out["sim_ret"] += [rs.sim_ret(g, t, r, depth, overlap, rbo_p)["value"] for g, t in pairs]
        if plus:
            r.prefetch_expanded([t for _, t in pairs], depth, **rm3)
            out["sim_ret+"] += [rs.sim_ret_plus(g, t, r, depth, overlap, rbo_p, **rm3)["value"]
                                for g, t in pairs]
        r.clear()
    params = {"sim_ret_index": r.label}
    params.update({f"sim_ret_{k}": v for k, v in r.params().items()})
    params.update({"sim_ret_depth": depth, "sim_ret_overlap": overlap})
    if overlap == "rbo":
        params["sim_ret_rbo_p"] = rbo_p
    if not plus:
        warnings.warn(f"sim_ret+ left out: RM3 needs a term index (bm25s or lucene), "
                      f"{r.label} is a dense index", stacklevel=3)
        params["sim_ret+"] = "not computed: RM3 needs a term index (bm25s or lucene)"
        return out, params
    params.update({f"rm3_{k}": v for k, v in rm3.items()})
    params["rm3"] = "Anserini's Rm3Reranker" + (" (run by Anserini)" if r.backend == "lucene"
                                                 else " (computed on the bm25s index)")
    return out, params


def evaluate_gen(pred_path, ref_path, metrics=METRICS, **kw):
    """Read, match and score: a dict with ``metrics``, ``direction``, ``counts``, ``parameters``
    and ``per_instance`` (ids and values)."""
    read_kw = {k: kw.pop(k) for k in list(kw) if k in (
        "pred_field", "ref_field", "pred_id_field", "ref_id_field", "pred_format", "ref_format")}
    ids, preds, refs, counts = read_pairs(pred_path, ref_path, **read_kw)
    inst, agg, params = score_pairs(preds, refs, metrics, **kw)
    return {"metrics": agg,
            "direction": {m: "lower" if m in LOWER_IS_BETTER else "higher" for m in agg},
            "counts": counts, "parameters": params,
            "per_instance": {"ids": ids, "values": inst}}


def result_table(result) -> str:
    lines = [f"{'metric':<10}{'value':>12}  better"]
    for m, v in result["metrics"].items():
        lines.append(f"{m:<10}{v:>12.4f}  {result['direction'][m]}")
    c = result["counts"]
    lines.append(f"# pairs: {c['matched']} matched; {c['unmatched_pred']} predictions and "
                 f"{c['unmatched_ref']} references unmatched; {c['empty_predictions']} empty "
                 "predictions")
    for k, v in result["parameters"].items():
        lines.append(f"# {k}: {v}")
    return "\n".join(lines) + "\n"
