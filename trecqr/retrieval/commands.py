"""``trecqr index`` and ``trecqr search``: thin click commands over :mod:`.backends`."""

from __future__ import annotations

import click

from ..clicktypes import FiniteFloat

from ..adapters.dataset_topics import DATASETS
from ..adapters.turn_policy import POLICIES, drop_short_rankings, min_results_note
from .collections import COLLECTION_FORMATS, check_collection
from .indexdir import BACKENDS

BM25_K1 = 0.9  # Pyserini's defaults (the TopiOCQA protocol's too)
BM25_B = 0.4


@click.command("index", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("collection")
@click.option("-o", "--output", "out_dir", required=True,
              help="Index folder to create (replaced atomically if it is an index).")
@click.option("--backend", "backend_name", type=click.Choice(BACKENDS), default="bm25s",
              show_default=True, help="bm25s (embedded), lucene (Pyserini) or dense "
                                      "(sentence-transformers + faiss).")
@click.option("--k1", type=FiniteFloat(0), default=None, help=f"BM25 k1 [default: {BM25_K1}].")
@click.option("--b", "b", type=FiniteFloat(0, 1), default=None,
              help=f"BM25 b [default: {BM25_B}].")
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
    from ..guard import run_guarded
    from ..errors import UsageError
    from .backends import build_index

    def job():
        nonlocal k1, b
        collection_ = check_collection(collection)
        params = {}
        if backend_name in ("bm25s", "lucene"):
            if preset is not None:
                from ..adapters.presets import preset as get_preset

                p = get_preset(preset)
                k1 = p.bm25_k1 if k1 is None and p.bm25_k1 is not None else k1
                b = p.bm25_b if b is None and p.bm25_b is not None else b
            params.update(k1=BM25_K1 if k1 is None else k1, b=BM25_B if b is None else b)
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
        from .backends import backend

        click.echo(f"indexed {m['documents']} passages into {out_dir}: "
                   f"{backend(backend_name).describe(m)}", err=True)

    run_guarded(job)


@click.command("search", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("index_dir")
@click.argument("topics", required=False)
@click.option("-o", "--output", "out_path", required=True, type=click.Path(allow_dash=True),
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
@click.option("--run-id", default=None, help="Run tag [default: trecqr-<backend>].")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def search_command(index_dir, topics, out_path, k, topics_format, dataset, dataset_file, query_field, rewrites,
                   missing, min_results, k1, b, preset, threads, pyserini_scores, run_id, quiet):
    """Search an index (any backend) with a topics file or a dataset's turns; write a TREC run.

    Give either TOPICS or --dataset with --dataset-file (and --query-field/--rewrites).
    """
    from ..guard import run_guarded
    from ..errors import UsageError
    from ..formats.run import write_run
    from .backends import load_index

    def job():
        if (topics is None) == (dataset is None):
            raise UsageError("give a TOPICS file or --dataset NAME --dataset-file FILE")
        if dataset is not None:
            from ..adapters.dataset_topics import dataset_topics

            if dataset_file is None:
                raise UsageError("--dataset needs --dataset-file")
            queries = dataset_topics(dataset, dataset_file, query_field, rewrites=rewrites,
                                     missing=missing)
        else:
            if query_field is not None or rewrites is not None or dataset_file is not None:
                raise UsageError("--query-field/--rewrites/--dataset-file go with --dataset")
            from ..adapters.topics import read_topics

            queries = read_topics(topics, topics_format)
        index = load_index(index_dir)
        backend_name = index.manifest["backend"]
        kw = {"n_threads": threads, "show_progress": not quiet,
              "runid": run_id or f"trecqr-{backend_name}"}
        shortest = min_results
        if preset is not None:
            from ..adapters.presets import preset as get_preset
            from ..adapters.query_settings import cut_query_words

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
        run, short = drop_short_rankings(index.search(queries, k, **kw), shortest)
        write_run(run, out_path)
        if shortest:  # trecqr/adapters/turn_policy.py
            click.echo(f"trecqr: {min_results_note(short, shortest)}", err=True)
        return len(queries)

    n = run_guarded(job)
    click.echo(f"trecqr: run of {n} topics written to "
               f"{'stdout' if out_path == '-' else out_path}", err=True)
