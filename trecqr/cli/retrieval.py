"""``trecqr index``, ``search`` and ``cqr``: the retrieval commands (trecqr/retrieval/ builds,
searches and reports)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile

import click

from trecqr.runtime import progress as reporting
from trecqr.datasets.rewrites.candidates import one_rewrite_note
from trecqr.datasets.dataset_topics import dataset_topics, DATASETS
from trecqr.protocols.presets import preset as get_preset, protocol as get_protocol
from trecqr.protocols.query_settings import cut_query_words
from trecqr.datasets.topics import read_topics
from trecqr.report.breakdown import breakdown, render_text
from trecqr.engine.idspace import ignore_id_space
from trecqr.datasets.rewrites.topics import POLICIES
from trecqr.protocols.turn_policy import drop_short_rankings, min_results_note
from trecqr.errors import InputError, UsageError
from trecqr.formats.run import write_run
from trecqr.formats.writer import atomic_write_text
from trecqr.workflows import cqr
from trecqr.retrieval.backends import backend, build_index, load_index
from trecqr.retrieval.bm25 import DEFAULT_B, DEFAULT_K1
from trecqr.retrieval.collections import COLLECTION_FORMATS, check_collection
from trecqr.retrieval.indexdir import BACKENDS
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT
from trecqr.cli.types import FiniteFloat, OutputFile, OutputFolder, RunTag


# what a protocol that cqr cannot apply scores, for its refusal (trecqr/protocols/presets.py)
PROTOCOL_INPUTS = {
    "scai": "scores the SCAI-QReCC-21 evaluator's JSON files (ground truth and run)",
    "qrecc-official": "judges passages by their text against the QReCC turns' answers (QRELS "
                      "is the QReCC turns file, with --collection)",
    "topiocqa-official": "judges passages by their title and text against the gold passages "
                         "(with --collection)",
}


@click.command("index", context_settings=CONTEXT)
@click.argument("collection")
@click.option("-o", "--output", "out_dir", required=True,
              help="Index folder to create (replaced atomically if it is an index).")
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), default="bm25s",
              show_default=True, help="bm25s (embedded), lucene (Pyserini) or dense "
                                      "(sentence-transformers + faiss).")
@click.option("--k1", type=FiniteFloat(0), default=None, help=f"BM25 k1 [default: {DEFAULT_K1}].")
@click.option("--b", "b", type=FiniteFloat(0, 1), default=None,
              help=f"BM25 b [default: {DEFAULT_B}].")
@click.option("--preset", default=None, help="Take k1/b from a dataset preset (qrecc, "
                                             "topiocqa, ...).")
@click.option("--model", default=None, help="dense: local sentence-transformers model folder "
                                            "(default: the packaged all-MiniLM-L6-v2).")
@click.option("--batch-size", type=click.IntRange(1, 1 << 20), default=None,
              help="dense: encoding batch size.")
@click.option("--store-docvectors", is_flag=True,
              help="lucene: also store positions, document vectors and raw text (for RM3, "
                   "rerankers; a bigger index).")
@click.option("--encoder", type=click.Choice(("sentence-transformers", "ance")), default=None,
              help="dense: model kind [default: sentence-transformers]; ance: a local ANCE "
                   "checkpoint, encoded as Pyserini does (CLS + head, inner product).")
@click.option("--query-max-length", type=int, default=None,
              help="dense ance: query truncation in tokens [default: 64].")
@click.option("--max-seq-length", type=int, default=None,
              help="dense: truncate texts to N tokens (default: the model's).")
@click.option("--no-normalize", is_flag=True,
              help="dense: raw inner product instead of cosine (ANCE-style models).")
@click.option("--threads", type=click.IntRange(-1, 1024), default=None,
              help="Indexing threads (lucene, dense), or bm25s's tokenising processes "
                   "[-1 or 0: one per CPU, the default; lucene: at most 8].")
@click.option("--format", "fmt", type=click.Choice(COLLECTION_FORMATS), default=None,
              help="Collection layout (default: from the file name).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def index_command(collection, out_dir, backend_name, k1, b, preset, model, batch_size,
                  store_docvectors, encoder, query_max_length, max_seq_length, no_normalize,
                  threads, fmt, quiet):
    """Build a retrieval index of a TSV/JSONL collection or irds:<dataset id>."""
    def job():
        nonlocal k1, b
        collection_ = check_collection(collection)
        params = {}
        if backend_name in ("bm25s", "lucene"):
            if preset is not None:
                p = get_preset(preset)
                k1 = p.bm25_k1 if k1 is None and p.bm25_k1 is not None else k1
                b = p.bm25_b if b is None and p.bm25_b is not None else b
            params.update(k1=DEFAULT_K1 if k1 is None else k1, b=DEFAULT_B if b is None else b)
        elif k1 is not None or b is not None or preset is not None:
            raise UsageError("--k1/--b/--preset are BM25 options (bm25s, lucene)")
        if backend_name == "dense":
            for name, value in (("model", model), ("batch_size", batch_size),
                                ("max_seq_length", max_seq_length), ("encoder", encoder),
                                ("query_max_length", query_max_length)):
                if value is not None:
                    params[name] = value
            if no_normalize:
                params["normalize"] = False
        elif model is not None or batch_size is not None or no_normalize or max_seq_length \
                or encoder is not None or query_max_length is not None:
            raise UsageError("--model/--encoder/--batch-size/--max-seq-length/"
                             "--query-max-length/--no-normalize are dense options")
        if store_docvectors:
            if backend_name != "lucene":
                raise UsageError("--store-docvectors is a lucene option")
            params["store_docvectors"] = True
        if threads is not None:
            params["threads"] = threads
        m = build_index(collection_, out_dir, backend_name, format=fmt,
                        show_progress=not quiet, **params)

        click.echo(f"indexed {m['documents']} passages into {out_dir}: "
                   f"{backend(backend_name).describe(m)}", err=True)

    run_guarded(job)


@click.command("search", context_settings=CONTEXT)
@click.argument("index_dir")
@click.argument("topics", required=False)
@click.option("-o", "--output", "out_path", required=True, type=OutputFile(),
              help="TREC run to write (- for stdout).")
@click.option("-k", "k", type=int, default=100, show_default=True, help="Passages per topic.")
@click.option("--topics-format", type=click.Choice(("trec", "tsv", "jsonl")), default=None,
              help="TOPICS format (default: from its name; needed for - , stdin).")
@click.option("--dataset", type=click.Choice(DATASETS), default=None,
              help="Read the queries from a dataset file (--dataset-file) instead of TOPICS.")
@click.option("--dataset-file", default=None,
              help="The dataset's conversations/topics file (irds: the dataset id).")
@click.option("--query-field", default=None,
              help="Dataset query field (qrecc: raw|human|context|rewrite; topiocqa: "
                   "raw|history|last-k|rewrite; cast: raw|manual|automatic|rewrite).")
@click.option("--rewrites", default=None,
              help="Model rewrites matched to the dataset's turns (query field rewrite).")
@click.option("--missing", type=click.Choice(POLICIES), default="raw", show_default=True,
              help="Turns without a usable rewrite: raw question, drop, human rewrite, empty "
                   "query, or fail.")
@click.option("--min-results", type=click.IntRange(0), default=None, metavar="N",
              help="Leave out the turns with fewer than N results (RetPO's rule) [default: "
                   "--preset's].")
@click.option("--k1", type=FiniteFloat(0), default=None,
              help="lucene: BM25 k1 (default: the index's).")
@click.option("--b", "b", type=FiniteFloat(0, 1), default=None,
              help="lucene: BM25 b (default: the index's).")
@click.option("--preset", default=None,
              help="lucene: k1/b of a dataset preset (qrecc-test, topiocqa-dev); for a bm25s "
                   "index, a warning when its build's k1/b differ; also the preset's "
                   "--min-results and BM25 query cut.")
@click.option("--threads", type=click.IntRange(-1, 1024), default=1, show_default=True,
              help="Search threads (bm25s, dense: -1 or 0 for one per CPU).")
@click.option("--pyserini-scores", is_flag=True,
              help="lucene: Pyserini's own scores and cut (rounded to 4 decimals, ties by docid "
                   "ascending) instead of Lucene's float32 scores in trec_eval order.")
@click.option("--run-id", default=None, type=RunTag(),
              help="Run tag [default: trecqr-<backend>].")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def search_command(index_dir, topics, out_path, k, topics_format, dataset, dataset_file,
                   query_field, rewrites, missing, min_results, k1, b, preset, threads,
                   pyserini_scores, run_id, quiet):
    """Search an index (any backend) with a topics file or a dataset's turns; write a TREC run.

    Give either TOPICS or --dataset with --dataset-file (and --query-field/--rewrites).
    """
    def job():
        if (topics is None) == (dataset is None):
            raise UsageError("give a TOPICS file or --dataset NAME --dataset-file FILE")
        if dataset is not None:
            if dataset_file is None:
                raise UsageError("--dataset needs --dataset-file")
            queries = dataset_topics(dataset, dataset_file, query_field, rewrites=rewrites,
                                     missing=missing)
            note = None if rewrites is None else one_rewrite_note(rewrites)
            if note is not None:
                click.echo(f"trecqr: {note}", err=True)
        else:
            if query_field is not None or rewrites is not None or dataset_file is not None:
                raise UsageError("--query-field/--rewrites/--dataset-file go with --dataset")

            queries = read_topics(topics, topics_format)
        index = load_index(index_dir)
        backend_name = index.manifest["backend"]
        kw = {"n_threads": threads, "show_progress": not quiet,
              "runid": run_id or f"trecqr-{backend_name}"}
        shortest = min_results
        if preset is not None:
            p = get_preset(preset)
            kw.update(index.preset_search_params(p))
            shortest = p.min_results if min_results is None else min_results  # the preset's
            if backend_name in ("bm25s", "lucene"):
                queries = cut_query_words(queries, p.bm25_query_tokens)[0]
        if k1 is not None or b is not None:
            if backend_name != "lucene":
                raise UsageError("--k1/--b at search time are for Lucene indexes; a "
                                 f"{backend_name} index keeps its build's")
            kw.update({n: v for n, v in (("k1", k1), ("b", b)) if v is not None})
        if pyserini_scores:
            if backend_name != "lucene":
                raise UsageError("--pyserini-scores is for Lucene indexes")
            kw["pyserini_scores"] = True
        found = index.search(queries, k, **kw)
        if len(found) == 0 and len(queries):
            raise UsageError(f"none of the {len(queries)} topics retrieved anything from "
                             f"{index_dir}: nothing to write; check that the topics go with "
                             "this index")
        run, short = drop_short_rankings(found, shortest)
        if len(run) == 0 and len(found):  # an empty run from turns that had results
            why = f"a turn has at most -k {k}" if shortest > k else "no turn has as many"
            raise UsageError(f"--min-results {shortest} leaves out every turn ({why} results): "
                             "nothing to write; lower --min-results")
        write_run(run, out_path)
        if shortest:  # trecqr/protocols/turn_policy.py
            click.echo(f"trecqr: {min_results_note(short, shortest)}", err=True)
        return len(queries)

    n = run_guarded(job)
    click.echo(f"trecqr: run of {n} topics written to "
               f"{'stdout' if out_path == '-' else out_path}", err=True)


@click.command("cqr", context_settings=CONTEXT)
@click.option("--qrels", required=True, metavar="FILE",
              help="Qrels to score every row against (TREC qrels, JSON dict, .gz).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False),
              help="BM25 index folder (with --collection: build it here and keep it).")
@click.option("--collection", default=None,
              help="TSV/JSONL collection or irds:<dataset id> to index first (a temporary "
                   "index unless --index).")
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), default=None,
              help="Backend for --collection [default: bm25s]; an --index alone knows its own "
                   "(given beside one, it must be that one).")
@click.option("--model", default=None,
              help="dense: local sentence-transformers model folder for --collection.")
@click.option("--max-seq-length", type=click.IntRange(1), default=None,
              help="dense: truncate texts to N tokens for --collection (default: the "
                   "preset's, else the model's).")
@click.option("--dataset", type=click.Choice(DATASETS), default=None,
              help="Read turns from this dataset's file (--dataset-file): the raw questions "
                   "for rewrites, and the --query-field rows.")
@click.option("--dataset-file", default=None, help="The dataset's file (irds: its id).")
@click.option("--query-field", "query_fields", multiple=True,
              help="A dataset query field to score as a row (repeatable), e.g. raw, human.")
@click.option("--topics", multiple=True,
              help="Topics file (any topics format); repeatable, one row each.")
@click.option("--rewrites", multiple=True,
              help="Model rewrites (JSONL/TSV); repeatable, one row each.")
@click.option("--rewrite-field", "rewrite_fields", multiple=True,
              help="Rewrites JSONL field; a list field, or the option repeated, gives "
                   "candidates 1..n per turn.")
@click.option("--candidates", "policies", multiple=True, metavar="POLICY",
              help="Several candidates per turn: first, each (NAME.c1...), fuse[:METHOD] (RRF "
                   "by default), mean, sc (dense), oracle (upper bound from the gold); "
                   "repeatable, rows NAME.POLICY [default: first].")
@click.option("--with-response", is_flag=True,
              help="mean/sc: average the rewrites' and the file's responses' embeddings.")
@click.option("--response-field", default=None, metavar="FIELD",
              help="--with-response: the responses' JSONL field [default: the first of "
                   "predicted_response, response, generated_response the file has].")
@click.option("--raw", "raw_path",
              help="Raw-question topics: the turn set and fallback for rewrites.")
@click.option("--missing", type=click.Choice(POLICIES), default=None,
              help="Turns without a usable rewrite: raw question, drop, human rewrite, empty "
                   "query (counts 0), or fail [default: the preset's, else raw].")
@click.option("--min-results", type=click.IntRange(0), default=None, metavar="N",
              help="Leave out turns with fewer than N results (RetPO) [default: the preset's].")
@click.option("--preset", default=None, help="Protocol preset (k1/b, depth, threshold).")
@click.option("-k", "k", type=int, default=None, help="Depth (default: preset's, else 100).")
@click.option("--runs-dir", type=OutputFolder(), default=None,
              help="Keep each row's run here as <name>.run (default: a temporary folder, "
                   "removed at exit).")
@click.option("--name", "names", multiple=True,
              help="Row names, in input order (topics first, then rewrites); default file stems.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table",
              show_default=True, help="Report as an aligned table or as JSON.")
@click.option("-o", "--output", type=OutputFile(), default=None,
              help="Also write the report here (atomically).")
@click.option("--threads", type=click.IntRange(-1, 1024), default=1, show_default=True,
              help="Search threads.")
@click.option("--quiet", is_flag=True, help="No progress bars or notes on stderr.")
@click.option("--protocol", default=None, metavar="NAME",
              help="Also score every row's run under an official protocol (cast2021-nist, "
                   "cast2022-nist, ikat2023, ...; trecqr.protocols.presets), in a second table.")
@click.option("--groups", default=None, metavar="FILE.json",
              help="Also break MRR and NDCG@3 down by overlapping groups {group: [turn ids]} "
                   "(e.g. QReCC's test_question_types.json), with an 'all' row.")
@click.option("--html", "html_page", type=OutputFile(), default=None, metavar="FILE",
              help="Also write the rows' HTML report (as trecqr report) here (atomically); "
                   "--groups filters its turns.")
@click.option("--manual", default=None, metavar="FILE",
              help="--html: the manual rewrites (topics) the page shows beside each row's.")
def cqr_command(qrels, index_dir, collection, backend_name, model, max_seq_length, dataset,
                dataset_file, query_fields, topics, rewrites, rewrite_fields, policies,
                with_response, response_field, raw_path, missing, min_results, preset, k,
                runs_dir, names, fmt, output, threads, quiet, protocol, groups, html_page,
                manual):
    """Search each topics/rewrites input and report RR@3, MRR, NDCG@3, R@10, R@100 + coverage.

    The report goes to stdout in --format; with -o it is also written to OUTPUT in the same
    format. Each row's run is kept in --runs-dir when it is given, else removed at exit.
    """
    def job():
        if quiet:  # trecqr/engine/idspace.py
            ignore_id_space()
        if manual is not None and html_page is None:
            raise UsageError("--manual goes with --html")
        rows = len(query_fields) + len(topics) + len(rewrites) * max(1, len(policies))
        if html_page is not None and rows < 2:  # the page compares the rows
            raise UsageError("--html compares the rows: give at least two topics or rewrites "
                             "inputs (or two --candidates policies)")
        named = (p for p in (raw_path, manual, groups) if p is not None)
        for path in (qrels, *topics, *rewrites, *named):
            if not os.path.isfile(path):  # before any index is built
                raise InputError(path, None, "no such file")
        if index_dir is None and collection is None:
            raise UsageError("give --index DIR or --collection FILE")
        if protocol is not None:
            kind = get_protocol(protocol).kind
            if kind != "trec_eval":
                raise UsageError(f"--protocol {protocol} {PROTOCOL_INPUTS.get(kind, kind)}, "
                                 "not cqr's --qrels: keep the runs (--runs-dir) and score them "
                                 f"with trecqr eval --protocol {protocol}")
        if collection is not None:
            check_collection(collection)
        # how --collection's dense index is built (beside an --index alone, cqr refuses them)
        encoding = {key: value for key, value in (("model", model),
                                                  ("max_seq_length", max_seq_length))
                    if value is not None}
        for name in encoding:
            if collection is not None and backend_name != "dense":
                raise UsageError(f"--{name.replace('_', '-')} is for --backend dense")
        if response_field is not None and not with_response:
            raise UsageError("--response-field goes with --with-response")
        rd = runs_dir
        protocol_dir = None  # made after the checks: a refused command leaves nothing
        if (html_page is not None or groups is not None) and rd is None:  # they read the runs
            rd = protocol_dir = tempfile.mkdtemp(prefix="trecqr-cqr-html-")
        field = list(rewrite_fields) if len(rewrite_fields) > 1 else \
            (rewrite_fields[0] if rewrite_fields else None)
        try:
            with reporting.silenced() if quiet else contextlib.nullcontext():
                report = cqr.cqr(qrels, topics, rewrites=rewrites, raw=raw_path, missing=missing,
                                 index=index_dir, collection=collection, preset=preset, k=k,
                                 runs_dir=rd, names=names, n_threads=threads,
                                 show_progress=not quiet, backend=backend_name,
                                 index_params=encoding or None,
                                 dataset=dataset, dataset_file=dataset_file,
                                 query_fields=query_fields, protocol=protocol,
                                 min_results=min_results, candidates=policies,
                                 rewrite_field=field, with_response=with_response,
                                 response_field=response_field)
            run_paths = [(r.name, r.run) for r in report.rows]
            if html_page is not None:
                atomic_write_text(html_page, report.to_html(
                    raw=raw_path, manual=manual, groups=groups, collection=collection,
                    index=None if collection is not None else index_dir))
            if protocol_dir is not None:  # runs kept only for the page and the groups
                report.runs_dir = None
                for r in report.rows:
                    r.run = None
            text = report.to_json() if fmt == "json" else report.table()
            click.echo(text, nl=False)
            if protocol is not None:  # scored with the rows (trecqr/protocols/presets.py)
                click.echo(report.protocol_table(), nl=False)
            if groups is not None:  # trecqr/report/groups.py
                click.echo("\n" + render_text(breakdown(
                    qrels, [path for _, path in run_paths], ["recip_rank", "ndcg_cut.3"],
                    groups=groups, names=[name for name, _ in run_paths],
                    relevance_level=report.rel_threshold, complete=report.complete)), nl=False)
        finally:
            if protocol_dir is not None:
                shutil.rmtree(protocol_dir, ignore_errors=True)
        if output is not None and output != "-":
            atomic_write_text(output, text)
        if not quiet and report.runs_dir:
            click.echo(f"trecqr: runs kept in {report.runs_dir}", err=True)

    run_guarded(job)
    if output is not None and output != "-":
        click.echo(f"trecqr: report written to {output}", err=True)
    if html_page is not None and html_page != "-":
        click.echo(f"trecqr: HTML report written to {html_page}", err=True)
