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
import warnings
import zlib

import numpy as np

from trecqr.runtime.deferred import pa, pc, pacsv as pcsv
from trecqr.datasets.topics import read_topics, Topics
from trecqr.errors import InputError, UsageError
from trecqr.formats.run import Run
from trecqr.runtime.interrupts import signals_blocked
from trecqr.runtime.tempfiles import register_temp, unregister_temp
from trecqr.runtime.output_paths import check_output_name
from trecqr.runtime.transactions import new_output_dir
from trecqr.runtime.workers import usable_cpus

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
    check_output_name(out_dir, "folder")
    out_dir = os.path.abspath(os.fspath(out_dir))
    if os.path.exists(out_dir) and not (os.path.isdir(out_dir) and (
            not os.listdir(out_dir) or os.path.exists(os.path.join(out_dir, MANIFEST)))):
        raise UsageError(f"{out_dir}: exists and is not a trecqr index; not overwriting it")
    parent = os.path.dirname(out_dir)

    new_output_dir(parent)  # folders made here are removed again if the command fails

    with signals_blocked():  # a signal removes the half-built folder (trecqr/runtime/interrupts.py)
        try:
            tmp = tempfile.mkdtemp(prefix=".trecqr-index-", dir=parent)
        except OSError as exc:  # named after the folder asked for, not the temporary one
            raise InputError(parent, None, f"cannot write into this folder "
                                           f"({exc.strerror or exc})") from None
        register_temp(tmp, folder=True)
    try:
        yield tmp
        if not os.path.exists(os.path.join(tmp, MANIFEST)):
            raise RuntimeError("index build finished without writing its manifest")
        seal(tmp)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # mkdtemp's 0700 would stay on the index
        if os.path.isdir(out_dir):
            old = tempfile.mkdtemp(prefix=".trecqr-old-", dir=parent)
            os.rename(out_dir, os.path.join(old, "x"))
            with signals_blocked():
                os.rename(tmp, out_dir)
                unregister_temp(tmp)
            shutil.rmtree(old, ignore_errors=True)
        else:
            with signals_blocked():
                os.rename(tmp, out_dir)
                unregister_temp(tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        unregister_temp(tmp)
        raise


# Every file of an index is listed in its manifest with its size, and its CRC-32 when it is at
# most CHECKSUM_MAX bytes: a truncated, emptied, missing or altered file is refused as
# "damaged index: ...; rebuild it" before a backend reads it (Lucene's own segment files carry
# their own checksums; they are listed by size).
CHECKSUM_MAX = 256 << 20
_verified: dict = {}


def _file_crc(path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while True:
            block = fh.read(1 << 22)
            if not block:
                return crc
            crc = zlib.crc32(block, crc)


def seal(folder) -> dict:
    """Add the size (and CRC-32) of every file of folder to its manifest."""
    path = os.path.join(folder, MANIFEST)
    with open(path, encoding="utf-8") as fh:
        manifest = json.load(fh)
    files = {}
    for dirpath, _, names in os.walk(folder):
        for name in sorted(names):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, folder).replace(os.sep, "/")
            if rel == MANIFEST:
                continue
            size = os.path.getsize(full)
            files[rel] = {"size": size, "crc32": _file_crc(full) if size <= CHECKSUM_MAX
                          else None}
    manifest["files"] = dict(sorted(files.items()))
    built = _written.get(os.path.abspath(os.fspath(folder)))
    write_manifest(folder, manifest)
    _written.pop(os.path.abspath(os.fspath(folder)), None)
    if built is not None:  # the dict the builder returns is the manifest as written
        built["files"] = manifest["files"]
    return manifest


def damaged(index_dir, what: str) -> InputError:
    return InputError(os.fspath(index_dir), None, f"damaged index: {what}; rebuild it")


def verify_files(index_dir, manifest: dict) -> None:
    """Check every file the manifest lists (size, then CRC-32); once per process and state."""
    files = manifest.get("files")
    if files is None:
        return  # an index built before manifests listed their files
    if not isinstance(files, dict):
        raise damaged(index_dir, "its manifest's file list is not valid")
    for rel, want in files.items():
        full = os.path.join(os.fspath(index_dir), *str(rel).split("/"))
        try:
            st = os.stat(full)
        except OSError:
            raise damaged(index_dir, f"{rel} is missing") from None
        key = (full, st.st_size, st.st_mtime_ns, st.st_ino)
        if _verified.get(full) == key:
            continue
        if not isinstance(want, dict) or not isinstance(want.get("size"), int):
            raise damaged(index_dir, f"its manifest's entry for {rel} is not valid")
        if st.st_size != want["size"]:
            raise damaged(index_dir, f"{rel} has {st.st_size} bytes, the manifest says "
                                     f"{want['size']}")
        crc = want.get("crc32")
        if crc is not None and _file_crc(full) != crc:
            raise damaged(index_dir, f"{rel} does not match its checksum")
        _verified[full] = key


_written: dict = {}  # folder -> the manifest dict a build wrote (and returns): seal() adds to it


def write_manifest(folder, manifest: dict) -> dict:
    """Write the manifest (the last file of a build)."""
    with open(os.path.join(folder, MANIFEST), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=1)
    _written[os.path.abspath(os.fspath(folder))] = manifest
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
        if not os.path.isdir(index_dir):
            raise InputError(index_dir, None, "not a trecqr index: no such folder") from None
        raise damaged(index_dir, "no trecqr-index.json (an incomplete build, or not a trecqr "
                                 "index)") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise damaged(index_dir, f"trecqr-index.json is not valid JSON "
                                 f"({getattr(exc, 'msg', None) or type(exc).__name__})") from None
    if not isinstance(manifest, dict):
        raise damaged(index_dir, "trecqr-index.json is not a JSON object")
    if "backend" not in manifest:
        manifest["backend"] = _FORMAT_BACKEND.get(manifest.get("format"), "bm25s")
    if manifest["backend"] not in BACKENDS:
        raise damaged(index_dir, f"trecqr-index.json names no known backend "
                                 f"({str(manifest['backend'])[:40]!r})")
    verify_files(index_dir, manifest)
    return manifest


def write_docids(folder, docids) -> int:
    """Write row i's docid on line i of ``docids.txt``; returns the count."""
    n = 0
    with open(os.path.join(folder, DOCIDS), "w", encoding="utf-8", newline="\n") as fh:
        for d in docids:
            fh.write(d + "\n")
            n += 1
    return n


def read_docids(folder) -> pa.Array:
    with open(os.path.join(folder, DOCIDS), "rb") as fh:  # a folder name need not be UTF-8
        table = _read_docids(pcsv, fh)
    return table.column(0).combine_chunks()


def _read_docids(pcsv, fh):
    return pcsv.read_csv(
        fh,
        read_options=pcsv.ReadOptions(column_names=["docid"], block_size=1 << 24),
        parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"docid": pa.string()},
                                            strings_can_be_null=False,
                                            quoted_strings_can_be_null=False))


def check_unique_docids(docids: pa.Array, source) -> None:
    """A docid seen twice is an InputError naming it (a run may not repeat a docno)."""
    if pc.count_distinct(docids).as_py() != len(docids):
        vc = pc.value_counts(docids)
        dup = vc.filter(pc.greater(vc.field("counts"), 1))[0]["values"].as_py()
        raise InputError(os.fspath(source), None, f"docid {dup!r} occurs twice")


def as_topics(topics):
    """A Topics from a Topics, a ``{qid: query}`` dict or a topics file, checked as every
    backend needs it (_check_encodable)."""
    if isinstance(topics, Topics):
        out = topics
    elif isinstance(topics, dict):
        out = Topics.from_dict(topics)
    else:
        out = read_topics(topics)
    _check_encodable(out)
    return out


def order_hits(scores, names, k: int) -> list:
    """[(score, docid)] sorted by score descending, then docid descending (by UTF-8 bytes, as
    trec_eval's strcmp), cut at k. scores are compared as given (float32 for BM25)."""
    keyed = sorted(zip(np.asarray(scores).tolist(), [s.encode("utf-8") for s in names], names),
                   reverse=True)[:k]
    return [(s, name) for s, _, name in keyed]


def _check_encodable(topics) -> None:
    """Topic ids and queries a run and every backend can hold: a JSON topics file can spell a
    lone surrogate (``"\\ud800"``), which no UTF-8 file (nor the run's Arrow strings, nor
    Lucene's Java strings) can carry; bm25s would drop it silently. One line names the topic."""
    for qid, query in zip(topics.qids, topics.queries):
        for what, text in (("topic id", qid), ("query", query)):
            try:
                (text or "").encode("utf-8")
            except UnicodeEncodeError:
                about = "" if what == "topic id" else f" of topic {qid!r}"
                raise InputError(topics.source, None, f"{what}{about} {text[:60]!r} is not valid "
                                 "Unicode (it holds a lone surrogate, a JSON \\ud800-\\udfff "
                                 "escape); correct it") from None


def hits_to_run(topics, hits: dict, runid: str, source: str, why_empty: str = ""):
    """A Run from ``{topic index: [(score, docid), ...]}`` (already ordered), in topic order;
    topics without a hit are left out, with one warning (why_empty says why, if known)."""
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
    """n threads or processes; None or < 1: one per CPU."""
    return usable_cpus() if n is None or n < 1 else int(n)
