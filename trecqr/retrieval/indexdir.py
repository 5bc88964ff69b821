"""What every retrieval backend shares: the index folder, its manifest, topics in, runs out.

An index is a folder holding the backend's files and ``trecqr-index.json`` (the manifest, written
last, naming the backend). It is built in a temporary folder beside the target and renamed into
place (:func:`atomic_index_dir`), so an interrupted build leaves nothing that loads as an index,
and a finished one replaces an older index in one step. A Pyserini/Anserini Lucene index (a
folder of Lucene ``segments_N`` files, such as Pyserini's prebuilt indexes) has no manifest and
is recognised as backend ``lucene``.

Runs come out in trec_eval's order: topic order, then score descending, then docid descending,
so the ranks written are the ranks trec_eval evaluates; a tie at rank k is cut in that order too.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import tempfile

import numpy as np
import pyarrow as pa

from ..errors import InputError, UsageError

MANIFEST = "trecqr-index.json"
DOCIDS = "docids.txt"
BACKENDS = ("bm25s", "lucene", "dense")
# manifest "format" of version-1 bm25s indexes, which predate the "backend" key
_FORMAT_BACKEND = {"trecqr-bm25s": "bm25s", "trecqr-lucene": "lucene", "trecqr-dense": "dense"}


@contextlib.contextmanager
def atomic_index_dir(out_dir):
    """Yield a temporary folder beside out_dir; on success it becomes out_dir.

    out_dir may be absent, an empty folder or a trecqr index (replaced); anything else is
    refused rather than overwritten. On any exception (Ctrl-C included) the temporary folder is
    removed and out_dir is left as it was.
    """
    out_dir = os.path.abspath(os.fspath(out_dir))
    if os.path.exists(out_dir) and not (os.path.isdir(out_dir) and (
            not os.listdir(out_dir) or os.path.exists(os.path.join(out_dir, MANIFEST)))):
        raise UsageError(f"{out_dir}: exists and is not a trecqr index; not overwriting it")
    parent = os.path.dirname(out_dir)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".trecqr-index-", dir=parent)
    try:
        yield tmp
        if not os.path.exists(os.path.join(tmp, MANIFEST)):
            raise RuntimeError("index build finished without writing its manifest")
        if os.path.isdir(out_dir):
            old = tempfile.mkdtemp(prefix=".trecqr-old-", dir=parent)
            os.rename(out_dir, os.path.join(old, "x"))
            os.rename(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_manifest(folder, manifest: dict) -> dict:
    """Write the manifest (the last file of a build)."""
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
    return manifest


def is_lucene_dir(folder) -> bool:
    return bool(glob.glob(os.path.join(os.fspath(folder), "segments_*")))


def read_manifest(index_dir) -> dict:
    """The manifest of a trecqr index; a bare Lucene index gets ``{"backend": "lucene"}``."""
    index_dir = os.fspath(index_dir)
    path = os.path.join(index_dir, MANIFEST)
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except OSError:
        if os.path.isdir(index_dir) and is_lucene_dir(index_dir):
            return {"backend": "lucene", "foreign": True}
        raise InputError(index_dir, None, "not a trecqr index (no trecqr-index.json; "
                                          "an incomplete build?)") from None
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"bad JSON: {exc.msg}") from None
    if "backend" not in manifest:
        manifest["backend"] = _FORMAT_BACKEND.get(manifest.get("format"), "bm25s")
    return manifest


def backend_of(index_dir) -> str:
    return read_manifest(index_dir)["backend"]


def write_docids(folder, docids) -> int:
    """Write row i's docid on line i of ``docids.txt``; returns the count."""
    n = 0
    with open(os.path.join(folder, DOCIDS), "w", encoding="utf-8", newline="\n") as fh:
        for d in docids:
            fh.write(d + "\n")
            n += 1
    return n


def read_docids(folder) -> pa.Array:
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(
        os.path.join(folder, DOCIDS),
        read_options=pcsv.ReadOptions(column_names=["docid"], block_size=1 << 24),
        parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"docid": pa.string()},
                                            strings_can_be_null=False,
                                            quoted_strings_can_be_null=False))
    return table.column(0).combine_chunks()


def check_unique_docids(docids: pa.Array, source) -> None:
    """A docid seen twice is an InputError naming it (a run may not repeat a docno)."""
    import pyarrow.compute as pc

    if pc.count_distinct(docids).as_py() != len(docids):
        vc = pc.value_counts(docids)
        dup = vc.filter(pc.greater(vc.field("counts"), 1))[0]["values"].as_py()
        raise InputError(os.fspath(source), None, f"docid {dup!r} occurs twice")


def as_topics(topics):
    """A Topics from a Topics, a ``{qid: query}`` dict or a topics file."""
    from ..adapters.topics import Topics, read_topics

    if isinstance(topics, Topics):
        return topics
    if isinstance(topics, dict):
        return Topics.from_dict(topics)
    return read_topics(topics)


def order_hits(scores, names, k: int) -> list:
    """[(score, docid)] sorted by score descending, then docid descending (by UTF-8 bytes, as
    trec_eval's strcmp), cut at k. scores are compared as given (float32 for BM25)."""
    keyed = sorted(zip(np.asarray(scores).tolist(), [s.encode("utf-8") for s in names], names),
                   reverse=True)[:k]
    return [(s, name) for s, _, name in keyed]


def hits_to_run(topics, hits: dict, runid: str, source: str, why_empty: str = ""):
    """A Run from ``{topic index: [(score, docid), ...]}`` (already ordered), in topic order;
    topics without a hit are left out, with one warning (why_empty says why, if known)."""
    import warnings

    from ..formats.run import Run

    qids, docnos, out_scores = [], [], []
    empty = 0
    for i, qid in enumerate(topics.qids):
        rows = hits.get(i) or []
        if not rows:
            empty += 1
        for score, name in rows:
            qids.append(qid)
            docnos.append(name)
            out_scores.append(score)
    if empty:
        warnings.warn(f"{empty} of {len(topics)} topics retrieved nothing"
                      + (f" ({why_empty})" if why_empty else ""), stacklevel=3)
    return Run(pa.array(qids, pa.string()), pa.array(docnos, pa.string()),
               np.asarray(out_scores, dtype=np.float64), runid, source)


def thread_count(n) -> int:
    """n search threads; None or < 1: one per CPU."""
    return (os.cpu_count() or 1) if n is None or n < 1 else int(n)


def progress(iterable, show: bool, **kw):
    """tqdm over iterable when show (and tqdm is installed), else iterable itself."""
    if show:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return iterable
        return tqdm(iterable, **kw)
    return iterable
