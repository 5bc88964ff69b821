"""``trecqr cqr``: conversational query rewriting evaluated end to end.

For each input (a topics file, or a rewrites file read with :func:`read_rewrites` against the raw
topics), search a BM25 index (built first from a collection when asked), keep the run as a TREC
file, and score that file exactly as ``trecqr eval`` would. Every column averages over the same
turns, the row's ``evaluated`` ones: the qrels turns its run answered (trec_eval's rule: a turn
without a topic, ``--missing drop``'s included, or without results leaves every column), plus
``--missing empty``'s turns counting 0; a preset with ``-c``: every qrels turn. Each column is
labelled with the name whose per-turn value it averages: ``RR@3`` (ir_measures' true cutoff;
``trecqr eval -m RR@3`` averages it over every qrels turn, equal when none is left out),
``recip_rank`` (the CQR papers' "MRR" / "MRR@3"), ``ndcg_cut_3``, ``recall_10``, ``recall_100``.
The JSON keeps its keys (``RR@3``, ``MRR``, ``NDCG@3``, ``R@10``, ``R@100``); ``measures`` names
the trecqr measure behind each, ``population`` the turns.

Coverage per row: turns evaluated (the turns every column averages over),
qrels turns without a topic, qrels turns whose topic retrieved nothing, topics without gold (not in
the qrels), and turns without a rewrite (rewrites inputs: empty or absent, from the
:class:`RewriteReport`; they were handled by the ``missing`` policy).

The run of a row is scored from the file written to the runs folder, so the numbers are those of
``trecqr search`` + ``trecqr eval`` on the same index and topics.

This module is the flow (read the inputs, build or load the index, search, score);
:mod:`trecqr.workflows.cqr_report` holds the rows and the report it returns (:data:`COLUMNS`,
:class:`CqrRow`, :class:`CqrReport`), and :mod:`trecqr.workflows.cqr_candidates` the policies
for several candidate rewrites per turn.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from trecqr.runtime.deferred import pc
from trecqr.datasets.dataset_topics import dataset_topics
from trecqr.protocols.presets import preset as get_preset
from trecqr.protocols.presets import protocol_scores
from trecqr.protocols.query_settings import cut_query_words, dense_index_params
from trecqr.datasets.rewrites.candidates import read_candidates
from trecqr.datasets.topics import read_topics
from trecqr.protocols.turn_policy import (drop_short_rankings, min_results_note, with_zero_turns,
                                    zero_turns)
from trecqr.api.evaluation import evaluate, load_qrels, load_run
from trecqr.errors import UsageError, hinted
from trecqr.formats.run import write_run
from trecqr.report.labels import measure_label
from trecqr.runtime.output_paths import check_output_folder
from trecqr.runtime.transactions import new_output_dir
from trecqr.retrieval.backends import build_index, load_index
from trecqr.retrieval.bm25 import DEFAULT_B, DEFAULT_K1
from trecqr.retrieval.candidate_vectors import encode_candidates, search_candidates
from trecqr.workflows.cqr_candidates import (candidate_rows, check_policies, cqr_runid,
                                              dense_lists)
from trecqr.retrieval.indexdir import read_manifest
from trecqr.workflows.cqr_report import COLUMNS, TREC_MEASURES, CqrReport, CqrRow


def turns_mean(results, name: str, n_zero: int) -> float:
    """name's mean over the evaluated turns and n_zero more turns counting 0, summed left to
    right as trec_eval sums: how the table averages every column (an ir_measures name's own
    summary is over every qrels turn)."""
    values = np.asarray(results.evaluation.column(name).values, dtype=np.float64)
    if not len(values) + n_zero:
        return 0.0
    total = float(np.cumsum(values)[-1]) if len(values) else 0.0
    return total / (len(values) + n_zero)


def _name(path) -> str:
    stem = Path(os.fspath(path)).name
    for suffix in (".gz", ".tsv", ".tab", ".txt", ".jsonl", ".json", ".xml", ".trec"):
        stem = stem.removesuffix(suffix)
    return stem or "run"


def _read_inputs(inputs, dataset, dataset_file, raw_topics, missing, rewrite_field,
                 with_response, response_field, policies) -> list:
    """Every input read (Topics, or Candidates of a rewrites input) before any index is built
    or searched: a field no record has, or an oracle with nothing to choose from, fails first."""
    human = dataset_topics(dataset, dataset_file, "human") \
        if missing == "human" and dataset is not None else None
    out = []
    for kind, path in inputs:
        if kind == "field":
            out.append(dataset_topics(dataset, dataset_file, path))
        elif kind == "topics":
            out.append(read_topics(path))
        else:
            cands = read_candidates(path, missing=missing, raw=raw_topics, human=human,
                                    rewrite_field=rewrite_field, responses=with_response,
                                    response_field=response_field)
            if cands.stats.n <= 1 and any(c.name == "oracle" for c in policies):
                raise UsageError(f"{cands.stats.source}: one candidate per turn, so oracle has "
                                 "nothing to choose from (several candidates come from a list "
                                 "field or several rewrite fields)")
            out.append(cands)
    return out


def _column_results(q, run, rr3: str, threshold: int) -> tuple:
    """(Results of the trec_eval columns, Results of RR@3 or None): trec_eval's names take the
    relevance threshold as -l; RR@3 is an ir_measures name that carries its own (``RR(rel=2)@3``
    in a threshold-2 preset), so it is scored apart when the threshold is not 1 (trecqr refuses
    -l beside ir_measures names)."""
    trec = list(TREC_MEASURES)
    if threshold == 1:
        return evaluate(q, run, trec + [rr3]), None
    return evaluate(q, run, trec, relevance_level=threshold), evaluate(q, run, [rr3])


def cqr(qrels, topics=(), *, rewrites=(), raw=None, missing: str | None = None, index=None,
        collection=None, preset: str | None = None, k: int | None = None, runs_dir=None,
        names=None, n_threads: int = 1, show_progress: bool = False,
        collection_format: str | None = None, backend: str | None = None,
        index_params: dict | None = None, dataset: str | None = None, dataset_file=None,
        query_fields=(), protocol: str | None = None,
        min_results: int | None = None, candidates=("first",), rewrite_field=None,
        with_response: bool = False, response_field=None) -> CqrReport:
    """Search and score every topics/rewrites input; one :class:`CqrRow` per input.

    index: a trecqr index folder (any backend, or a bare Lucene index); with collection, the
    folder to build it into with ``backend`` (default bm25s; kept); collection alone: built into
    a temporary folder, removed afterwards. An index alone knows its backend: a ``backend``
    given beside it must be that one. preset: k1/b for a BM25 build, the depth (unless k is
    given) and the relevance threshold. runs_dir: where the runs are kept; without it they are
    written to a temporary folder removed before returning (each row's ``run`` and the report's
    ``runs_dir`` are then None). dataset + dataset_file: read topics from the dataset (one row
    per query field in query_fields, and rewrites are matched to the dataset's turns, falling
    back on its raw questions); raw: a raw-question topics file playing that part without a
    dataset.
    candidates: what to do with several candidate rewrites per turn (a rewrite field holding a
    list, or several names in rewrite_field): ``first``, ``each``, ``fuse[:METHOD]``, ``mean``,
    ``sc``, ``oracle``, or a list of them (one or more rows each; :mod:`.cqr_candidates`);
    with_response: mean/sc over rewrites plus the file's responses (response_field, default
    the first of ``predicted_response``, ``response``, ``generated_response``).
    """
    topics = [topics] if isinstance(topics, (str, os.PathLike)) else list(topics)
    rewrites = [rewrites] if isinstance(rewrites, (str, os.PathLike)) else list(rewrites)
    query_fields = [query_fields] if isinstance(query_fields, str) else list(query_fields)
    if (dataset is None) != (dataset_file is None):
        raise UsageError("a dataset needs its file, and a dataset file its dataset name")
    if query_fields and dataset is None:
        raise UsageError("query fields are read from a dataset (--dataset, --dataset-file)")
    inputs = [("field", f) for f in query_fields] + [("topics", t) for t in topics] + \
        [("rewrites", r) for r in rewrites]
    if not inputs:
        raise UsageError("give at least one topics or rewrites file")
    if index is None and collection is None:
        raise UsageError("give an index (--index) or a collection to index (--collection)")
    if index_params and collection is None:  # not ignored: an index is encoded when built
        names = sorted(index_params)
        raise hinted(UsageError("index parameters say how a collection is indexed; an index "
                                "already built keeps its own"),
                     f"index_params ({', '.join(names)}) need collection=",
                     f"{' and '.join('--' + n.replace('_', '-') for n in names)} "
                     f"need{'s' if len(names) == 1 else ''} --collection")
    if collection is None:
        own = read_manifest(index)["backend"]
        if backend not in (None, own):  # not ignored: the index was built with its own
            raise UsageError(f"{os.fspath(index)}: a {own} index, not {backend} (the backend "
                             "is chosen when a collection is indexed; an index knows its own)")
        backend = own
    backend = backend or "bm25s"
    policies = check_policies(candidates, backend)
    if not rewrites and any(c.name != "first" for c in policies):
        raise hinted(UsageError("candidates policies choose among the candidates of a rewrites "
                                "input, and there is none"), "give rewrites=", "give --rewrites")
    if with_response and not any(c.name in ("mean", "sc") for c in policies):
        raise UsageError("--with-response goes with --candidates mean or sc")
    if runs_dir is not None:  # refused now, not after the index is built and searched
        check_output_folder(runs_dir)
    p = get_preset(preset) if preset is not None else None
    missing = missing or (p.missing if p else "raw")  # the preset's turn policy
    min_results = min_results if min_results is not None else (p.min_results if p else None)
    if k is None:
        k = p.depth if p else 100
    threshold = p.rel_threshold if p else 1
    if min_results and min_results > k:
        raise hinted(UsageError("every turn would be left out of the run"),
                     f"min_results={min_results} is above the depth k={k} (a turn has at most "
                     f"{k} results)", f"--min-results {min_results} is above the depth -k {k} "
                     f"(a turn has at most {k} results)")
    complete = bool(p and p.complete)
    if complete and missing == "drop":
        raise UsageError(f"--missing drop takes turns out of the average, which preset {p.name} "
                         "keeps (-c: every qrels turn, a missing one counting 0): use --missing "
                         "raw, human or empty")
    names = list(names or [])
    if len(names) > len(inputs):
        raise UsageError(f"{len(names)} names for {len(inputs)} inputs")
    row_names = names + [path if kind == "field" else _name(path)
                         for kind, path in inputs[len(names):]]
    dup = {n for n in row_names if row_names.count(n) > 1}
    if dup:
        raise UsageError(f"several inputs named {sorted(dup)[0]!r}: name them with --name")
    if dataset is not None and raw is not None:
        raise UsageError("give the raw questions as a dataset or as a topics file, not both")
    if dataset is not None:
        raw_topics = dataset_topics(dataset, dataset_file, "raw")
    else:
        raw_topics = read_topics(raw) if raw is not None else None
    read = _read_inputs(inputs, dataset, dataset_file, raw_topics, missing, rewrite_field,
                        with_response, response_field, policies)

    tmp_index = tmp_runs = None
    built = False
    try:
        if collection is not None:
            params = dict(index_params or {})
            if backend == "dense":  # the preset's encoding lengths: protocols/query_settings.py
                for key, value in dense_index_params(p, params.get("encoder", "")).items():
                    params.setdefault(key, value)
            if backend in ("bm25s", "lucene"):
                params.setdefault("k1", p.bm25_k1 if p and p.bm25_k1 is not None else DEFAULT_K1)
                params.setdefault("b", p.bm25_b if p and p.bm25_b is not None else DEFAULT_B)
            if index is None:
                tmp_index = tempfile.mkdtemp(prefix="trecqr-cqr-index-")
                index = tmp_index
            build_index(collection, index, backend, format=collection_format,
                        show_progress=show_progress, **params)
            built = True
        loaded = load_index(index)
        search_kw = loaded.preset_search_params(p)
        manifest = dict(loaded.manifest, **search_kw)  # the k1/b the runs are searched with
        if runs_dir is None:
            runs_dir = tmp_runs = tempfile.mkdtemp(prefix="trecqr-cqr-runs-")
        new_output_dir(runs_dir)  # made here: removed again if the command fails
        q = load_qrels(qrels)
        qrels_qids = set(pc.unique(q.qid).to_pylist())
        trec_names = {measure_label(o): n for o, n in (
            ("recip_rank", "recip_rank"), ("ndcg_cut_3", "ndcg_cut.3"),
            ("recall_10", "recall.10"), ("recall_100", "recall.100"))}
        rr3 = p.mrr("true") if p else "RR@3"
        out_keys = {measure_label(o): o for o in ("recip_rank", "ndcg_cut_3", "recall_10",
                                                  "recall_100")} | {"RR@3": rr3}
        rows, protocol_rows = [], []

        def search_topics(t, name):
            n_cut = None
            if p and manifest["backend"] in ("bm25s", "lucene"):  # the preset's query cut
                t, n_cut = cut_query_words(t, p.bm25_query_tokens)
            run = loaded.search(t, k, n_threads=n_threads, runid=cqr_runid(name),
                                show_progress=show_progress, **search_kw)
            return t, run, n_cut

        def per_query(run):
            """{qid: the report's measures in column order}, for the turns the run has (a
            qrels turn it lacks is no choice): what oracle chooses by."""
            run = drop_short_rankings(run, min_results)[0]
            res, apart = _column_results(q, run, rr3, threshold)
            per = res.per_query()
            if apart is not None:
                for qid, v in apart.per_query().items():
                    per.setdefault(qid, {}).update(v)
            ran = set(pc.unique(run.qid).to_pylist())
            return {qid: tuple(v[out_keys[key]] for key in COLUMNS) for qid, v in per.items()
                    if qid in ran and all(out_keys[key] in v for key in COLUMNS)}

        def score(name, t, run, n_cut, report, without_rewrite, extra_notes=(), info=None):
            run, short = drop_short_rankings(run, min_results)
            if len(run) == 0:  # named by what the user gave, not the runs folder's file
                exc = UsageError(f"{current[0]}: no turn has results to score")
                raise hinted(exc, f"min_results={min_results} left out all {len(short)}",
                             f"--min-results {min_results} left out all {len(short)}") \
                    if short else exc
            run_path = os.path.join(runs_dir, f"{name}.run")
            write_run(run, run_path)
            written = load_run(run_path)  # read once, scored by both evaluations
            res, apart = _column_results(q, written, rr3, threshold)
            if protocol is not None:
                protocol_rows.append((name, protocol_scores(protocol, q, written)))
            zero = zero_turns(t, qrels_qids, set(pc.unique(run.qid).to_pylist()))
            agg = with_zero_turns(res, len(zero))
            rr = res if apart is None else apart  # the Results that hold RR@3
            if complete:  # the preset's -c: every qrels turn, RR@3's own population too
                agg = dict(evaluate(q, written, list(TREC_MEASURES),
                                    relevance_level=threshold, complete=True).aggregate(),
                           **{rr3: rr.aggregate()[rr3]})
            elif len(res.evaluation.qids) + len(zero) < len(qrels_qids):  # the others' turns
                agg[rr3] = turns_mean(rr, rr3, len(zero))
            else:  # every qrels turn: ir_measures' own mean, bit for bit
                agg[rr3] = rr.aggregate()[rr3]
            notes = [min_results_note(short, min_results)] if min_results else []
            notes += [f"BM25 queries cut at {p.bm25_query_tokens} tokens (preset {p.name}): "
                      f"{n_cut} cut"] if p and p.bm25_query_tokens and n_cut is not None else []
            notes += [f"--missing empty: {len(zero)} gold turns with an empty query count 0"] \
                if zero else []
            notes += list(extra_notes)
            if info is not None and info["candidates"] > 1:
                candidate_queries[name] = t
            scores = {key: agg[out_keys[key]] for key in COLUMNS}
            topic_qids = set(t.qids)
            run_qids = set(pc.unique(run.qid).to_pylist())
            coverage = {
                "evaluated": len(qrels_qids) if complete else
                len(res.evaluation.qids) + len(zero),
                "qrels_without_topic": len(qrels_qids - topic_qids),
                "qrels_without_result": len((qrels_qids & topic_qids) - run_qids),
                "topics_without_gold": len(topic_qids - qrels_qids),
                "without_rewrite": without_rewrite,
            }
            rw_info = None
            if report is not None:
                rw_info = {"records": report.records, "rewritten": report.rewritten,
                           "empty": len(report.empty), "absent": len(report.absent),
                           "extra": len(report.extra), "policy": report.policy,
                           "filled_raw": report.filled_raw, "dropped": report.dropped,
                           "summary": report.summary()}
            return CqrRow(name, os.fspath(current[0]), current[1],
                          None if tmp_runs else os.path.abspath(run_path), scores,
                          coverage, rw_info, notes, info)

        encoded: dict = {}  # id(rewrites input) -> its candidates' embeddings

        def dense(how, runid, cands):
            """LLM4CS' mean/sc run of a rewrites input (trecqr/retrieval/candidate_vectors.py);
            its candidates are encoded once, however many of the two it asks for."""
            qids, texts, replies, present = dense_lists(cands.sets, cands.responses)
            if id(cands) not in encoded:
                encoded[id(cands)] = encode_candidates(
                    loaded, texts, responses=replies, qids=qids, n_threads=n_threads,
                    show_progress=show_progress)
            run, chosen = search_candidates(loaded, qids, texts, how=how, responses=replies,
                                            k=k, run_id=runid, n_threads=n_threads,
                                            show_progress=show_progress,
                                            encoded=encoded[id(cands)])
            if how == "mean":
                return run, None
            return run, {q: present[j][c] for j, (q, c) in enumerate(zip(qids, chosen))}

        current, candidate_queries = [None, None], {}
        for (kind, path), name, got in zip(inputs, row_names, read):
            current[:] = [path, kind]
            if kind != "rewrites":
                t, run, n_cut = search_topics(got, name)
                rows.append(score(name, t, run, n_cut, None, None))
                continue
            cands = got
            rows += candidate_rows(name, cands, policies, search_topics, score, per_query,
                                   [COLUMNS[key][0] for key in COLUMNS], dense=dense)
        names_out = [r.name for r in rows]
        dup = {n for n in names_out if names_out.count(n) > 1}
        if dup:
            raise UsageError(f"several rows named {sorted(dup)[0]!r}: name the inputs with --name")
        measures = dict(trec_names, **{"RR@3": rr3})
        return CqrReport(rows, os.path.abspath(index) if tmp_index is None else "<temporary>",
                         built, manifest.get("k1"), manifest.get("b"), k,
                         None if tmp_runs else os.path.abspath(runs_dir), os.fspath(qrels),
                         preset, threshold, measures,
                         manifest["backend"], loaded.describe(manifest), protocol,
                         protocol_rows, candidate_queries, complete)
    finally:
        for tmp in (tmp_index, tmp_runs):
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
