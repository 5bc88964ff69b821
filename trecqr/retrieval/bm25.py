"""Embedded BM25 with bm25s, tokenised to agree with Pyserini's default Lucene analyzer.

Analyzer (Anserini's DefaultEnglishAnalyzer = Lucene EnglishAnalyzer with Porter stemming):
lowercase; tokens are runs of word characters, joined across an apostrophe, period or colon
between letters and across ``. , ' ;`` between digits (as UAX#29 word breaks do: ``don't``,
``u.s``, ``3.14``, ``1,000`` stay whole); a trailing possessive ``'s`` is dropped; Lucene's 33
English stop words are removed; the original Porter stemmer (PyStemmer ``porter``, as Lucene's
PorterStemFilter) is applied. Scoring: bm25s ``method="lucene"``
(idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf part tf / (tf + k1 (1 - b + b dl/avgdl))).

Known differences from Lucene: Lucene stores document lengths in one lossy byte (SmallFloat),
bm25s uses exact lengths, so scores differ slightly and near-ties may swap; scores are float32
(Lucene's are float32 too); Lucene's StandardTokenizer splits CJK text into single ideographs
and has a 255-char token limit, this regex does not; Unicode word-break rules are approximated.

An index is a folder: bm25s's arrays (loaded memory-mapped), ``docids.txt`` (row i's docid)
and ``trecqr-index.json`` (written last; a folder without it is not an index). It is built in
a temporary folder beside the target and renamed into place, so an interrupted build leaves
nothing that loads as an index.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import warnings

import click
import numpy as np
import pyarrow as pa

from ..errors import InputError, UsageError
from .collections import COLLECTION_FORMATS, iter_collection

MANIFEST = "trecqr-index.json"
DOCIDS = "docids.txt"
DEFAULT_K1 = 0.9  # Pyserini's defaults (the TopiOCQA protocol's too)
DEFAULT_B = 0.4
# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET
LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split())
_L = r"[^\W\d_]"
_TOKEN = re.compile(
    rf"\w+(?:(?:(?<={_L})[.'’:](?={_L})|(?<=\d)[.,'’;](?=\d))\w+)*")
_POSSESSIVE = re.compile(r"['’＇][sS]$")


def _progress(iterable, show, **kw):
    if show:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return iterable
        return tqdm(iterable, **kw)
    return iterable


class Analyzer:
    """Lowercase, tokenise, drop possessives and stop words, Porter-stem (with a cache)."""

    def __init__(self):
        import Stemmer

        self._stem = Stemmer.Stemmer("porter").stemWord
        self._cache = {}

    def __call__(self, text: str) -> list:
        out = []
        cache = self._cache
        for tok in _TOKEN.findall(text.lower()):
            stem = cache.get(tok)
            if stem is None:
                word = _POSSESSIVE.sub("", tok)
                stem = "" if (not word or word in LUCENE_STOPWORDS) else self._stem(word)
                if len(cache) < 2_000_000:
                    cache[tok] = stem
            if stem:
                out.append(stem)
        return out


def analyze(text: str) -> list:
    """The index terms of a text (see the module docstring)."""
    return Analyzer()(text)


def build_index(collection, out_dir, k1: float = DEFAULT_K1, b: float = DEFAULT_B, *,
                format: str | None = None, show_progress: bool = True) -> dict:
    """Index a TSV/JSONL collection into out_dir (replaced atomically); returns the manifest."""
    import bm25s

    out_dir = os.path.abspath(os.fspath(out_dir))
    if os.path.exists(out_dir) and not (os.path.isdir(out_dir) and (
            not os.listdir(out_dir) or os.path.exists(os.path.join(out_dir, MANIFEST)))):
        raise UsageError(f"{out_dir}: exists and is not a trecqr index; not overwriting it")
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".trecqr-index-", dir=parent)
    try:
        analyzer = Analyzer()
        vocab = {}
        corpus_ids = []
        n = 0
        with open(os.path.join(tmp, DOCIDS), "w", encoding="utf-8", newline="\n") as ids_fh:
            docs = _progress(iter_collection(collection, format), show_progress,
                             desc="tokenising", unit=" docs", mininterval=0.5)
            for doc in docs:
                ids_fh.write(doc.docid + "\n")
                row = []
                for term in analyzer(doc.text):
                    tid = vocab.get(term)
                    if tid is None:
                        tid = vocab[term] = len(vocab)
                    row.append(tid)
                corpus_ids.append(row)
                n += 1
        if n == 0:
            raise InputError(os.fspath(collection), None, "the collection holds no passages")
        docids = _read_docids(tmp)
        import pyarrow.compute as pc

        if pc.count_distinct(docids).as_py() != n:
            vc = pc.value_counts(docids)
            dup = vc.filter(pc.greater(vc.field("counts"), 1))[0]["values"].as_py()
            raise InputError(os.fspath(collection), None, f"docid {dup!r} occurs twice")
        retriever = bm25s.BM25(k1=k1, b=b, method="lucene")
        retriever.index((corpus_ids, vocab), show_progress=show_progress)
        del corpus_ids
        retriever.save(tmp, show_progress=show_progress)
        manifest = {"format": "trecqr-bm25s", "version": 1, "k1": k1, "b": b,
                    "method": "lucene", "analyzer": "lucene-english-porter",
                    "documents": n, "terms": len(vocab),
                    "collection": os.path.abspath(os.fspath(collection)),
                    "bm25s": getattr(bm25s, "__version__", "?")}
        with open(os.path.join(tmp, MANIFEST), "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, indent=1)
        if os.path.isdir(out_dir):
            old = tempfile.mkdtemp(prefix=".trecqr-old-", dir=parent)
            os.rename(out_dir, os.path.join(old, "x"))
            os.rename(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out_dir)
        return manifest
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _read_docids(folder) -> pa.Array:
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(
        os.path.join(folder, DOCIDS),
        read_options=pcsv.ReadOptions(column_names=["docid"], block_size=1 << 24),
        parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"docid": pa.string()},
                                            strings_can_be_null=False,
                                            quoted_strings_can_be_null=False))
    return table.column(0).combine_chunks()


def load_index(index_dir, *, mmap: bool = True):
    """(bm25s retriever, docids Arrow array, manifest) of a saved index."""
    import bm25s

    index_dir = os.fspath(index_dir)
    path = os.path.join(index_dir, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except OSError:
        raise InputError(index_dir, None, "not a trecqr BM25 index (no trecqr-index.json; "
                                          "an incomplete build?)") from None
    retriever = bm25s.BM25.load(index_dir, mmap=mmap, load_corpus=False, show_progress=False)
    docids = _read_docids(index_dir)
    if len(docids) != manifest["documents"]:
        raise InputError(index_dir, None, f"{len(docids)} docids but the manifest says "
                                          f"{manifest['documents']}")
    return retriever, docids, manifest


def _order(scores: np.ndarray, idx: np.ndarray, docids: pa.Array, k: int):
    """Rows idx sorted by score descending, then docid descending (trec_eval's order), top k."""
    names = docids.take(pa.array(idx, pa.int64())).to_pylist()
    keyed = sorted(zip(scores.tolist(), [s.encode("utf-8") for s in names], names,
                       idx.tolist()), reverse=True)[:k]
    return keyed


def search(index_dir, topics, k: int = 100, *, n_threads: int = 1, runid: str = "trecqr-bm25",
           show_progress: bool = True, index=None):
    """BM25 run for the topics (a Topics, a ``{qid: query}`` dict or a topics file).

    k1/b are the index's. Only passages sharing a term with the query are returned (as
    Lucene does). Rows are in topic order, then score descending, then docid descending, so
    the ranks agree with trec_eval's; ties at rank k are cut in the same order.
    """
    from ..adapters.topics import Topics, read_topics
    from ..formats.run import Run

    if k < 1:
        raise UsageError("k must be at least 1")
    if isinstance(topics, dict):
        topics = Topics.from_dict(topics)
    elif not isinstance(topics, Topics):
        topics = read_topics(topics)
    retriever, docids, manifest = index if index is not None else load_index(index_dir)
    n_docs = len(docids)
    analyzer = Analyzer()
    vocab = retriever.vocab_dict
    queries = [[t for t in analyzer(q) if t in vocab] for q in topics.queries]
    want = min(n_docs, k + 10)
    live = [i for i, q in enumerate(queries) if q]
    results = {}
    if live:
        docs, scores = retriever.retrieve(
            [queries[i] for i in live], k=want, n_threads=n_threads, show_progress=show_progress,
            return_as="tuple")
        for j, i in enumerate(live):
            s = np.asarray(scores[j], dtype=np.float32)
            d = np.asarray(docs[j], dtype=np.int64)
            pos = s > 0
            s, d = s[pos], d[pos]
            if len(s) == want and want < n_docs and k <= len(s) and \
                    np.sort(s)[::-1][k - 1] <= s.min():
                # the tie at rank k may run past what was retrieved: score every passage
                full = np.asarray(retriever.get_scores(queries[i]), dtype=np.float32)
                cut = np.sort(s)[::-1][k - 1]
                d = np.flatnonzero(full >= cut)
                s = full[d]
            results[i] = _order(s, d, docids, k)
    qids, docnos, out_scores = [], [], []
    empty = 0
    for i, qid in enumerate(topics.qids):
        rows = results.get(i, [])
        if not rows:
            empty += 1
        for score, _, name, _ in rows:
            qids.append(qid)
            docnos.append(name)
            out_scores.append(score)
    if empty:
        warnings.warn(f"{empty} of {len(topics)} topics retrieved nothing "
                      "(no query term in the index)", stacklevel=2)
    return Run(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
               np.asarray(out_scores, dtype=np.float64), runid, f"<bm25 {index_dir}>")


@click.command("index")
@click.argument("collection", type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Index folder to create (replaced atomically if it is an index).")
@click.option("--k1", type=float, default=DEFAULT_K1, show_default=True)
@click.option("--b", "b", type=float, default=DEFAULT_B, show_default=True)
@click.option("--format", "fmt", type=click.Choice(COLLECTION_FORMATS), default=None,
              help="Collection layout (default: from the file name).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def index_command(collection, out_dir, k1, b, fmt, quiet):
    """Build a BM25 index (bm25s, Lucene-style English analysis) of a TSV/JSONL collection."""
    m = build_index(collection, out_dir, k1, b, format=fmt, show_progress=not quiet)
    click.echo(f"indexed {m['documents']} passages, {m['terms']} terms "
               f"(k1={k1} b={b}) into {out_dir}", err=True)


@click.command("search")
@click.argument("index_dir", type=click.Path(exists=True, file_okay=False))
@click.argument("topics", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("-o", "--output", "out_path", required=True, type=click.Path(allow_dash=True),
              help="TREC run to write (- for stdout).")
@click.option("-k", "k", type=int, default=100, show_default=True, help="Passages per topic.")
@click.option("--threads", type=int, default=1, show_default=True,
              help="Search threads (-1: one per CPU).")
@click.option("--run-id", default="trecqr-bm25", show_default=True)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def search_command(index_dir, topics, out_path, k, threads, run_id, quiet):
    """Search a BM25 index with a topics file; write a TREC run."""
    from ..formats.run import write_run

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = search(index_dir, topics, k, n_threads=threads, runid=run_id,
                     show_progress=not quiet)
    for w in caught:
        click.echo(f"trecqr: warning: {w.message}", err=True)
    write_run(run, out_path)
