"""The ir_measures doors of the differential harness: trecqr's provider
(``trecqr.register_ir_measures()``) under ``ir_measures.calc_aggregate`` / ``iter_calc``, and
under PyTerrier's ``pt.Experiment`` (needs no Java and downloads nothing: the systems are
``pt.Transformer.from_df`` of the case's runs). They take ir_measures names only, and no
trec_eval option. The provider's reference is ir_measures' own pipeline
(differential_refs.own_pipeline); pt.Experiment's is the same Experiment without trecqr.
"""

from __future__ import annotations

import contextlib

import ir_measures
import pandas as pd

import trecqr
from differential_cases import RUNS, Case
from differential_doors import Out, _api, frames


@contextlib.contextmanager
def pipeline(with_trecqr: bool):
    """ir_measures' default pipeline with trecqr's provider first, or its own (without trecqr,
    and without ranx, as differential_refs.own_pipeline), restored afterwards."""
    providers = ir_measures.DefaultPipeline.providers
    saved = list(providers)
    try:
        providers[:] = [p for p in saved if p.NAME not in ("trecqr", "ranx")]
        if with_trecqr:
            trecqr.register_ir_measures()
        yield
    finally:
        providers[:] = saved


def door_provider(case: Case) -> Out | None:
    if not case.irm_keys() or case.has_options():
        return None
    out = Out("ir_measures + trecqr provider", scope="irm")
    measures = [ir_measures.parse_measure(k) for k in case.irm_keys()]
    with pipeline(True):
        for name in RUNS:
            qrels, run = frames(case, name)
            means = _api(out, lambda: ir_measures.calc_aggregate(measures, qrels, run))
            metrics = means is not None and _api(
                out, lambda: list(ir_measures.iter_calc(measures, qrels, run)))
            if not metrics:
                return out
            out.means.update({(name, str(m)): float(v) for m, v in means.items()})
            for x in metrics:
                out.topics.setdefault((name, str(x.measure)), {})[x.query_id] = float(x.value)
            for key in case.irm_keys():
                out.stated[(name, key)] = len(out.topics.get((name, key), {}))
    return out


def door_pt_experiment(case: Case) -> tuple | None:
    """(pt.Experiment with trecqr's provider, the same Experiment with ir_measures' own)."""
    if not case.irm_keys() or case.has_options():
        return None
    import pyterrier as pt

    measures = [ir_measures.parse_measure(k) for k in case.irm_keys()]
    qrels = pd.DataFrame(case.qrels, columns=["qid", "docno", "label"])
    systems, qids = [], {q for q, _, _ in case.qrels}
    for name in RUNS:
        run = frames(case, name)[1].rename(columns={"query_id": "qid", "doc_id": "docno"})
        qids |= set(run.qid)
        systems.append(pt.Transformer.from_df(run))
    topics = pd.DataFrame({"qid": sorted(qids), "query": "unused"})
    outs = []
    for with_trecqr in (True, False):
        out = Out("pt.Experiment + trecqr provider" if with_trecqr else "pt.Experiment alone",
                  scope="irm")
        with pipeline(with_trecqr):
            table = _api(out, lambda: pt.Experiment(systems, topics, qrels, measures,
                                                    names=list(RUNS)))
            rows = table is not None and _api(out, lambda: pt.Experiment(
                systems, topics, qrels, measures, names=list(RUNS), perquery=True))
        if table is not None and rows is not False and rows is not None:
            for rec in table.to_dict("records"):
                for key in case.irm_keys():
                    out.means[(rec["name"], key)] = float(rec[key])
            for rec in rows.dropna(subset=["value"]).to_dict("records"):
                out.topics.setdefault((rec["name"], rec["measure"]), {})[rec["qid"]] = \
                    float(rec["value"])
            out.columns = [c for c in table.columns if c != "name"]
        outs.append(out)
    return tuple(outs)
