"""ir_datasets datasets read from local files only: every download refused.

``load(dataset_id)`` is ``ir_datasets.load`` (plus TREC CAsT 2021 and 2022, which ir_datasets
knows the files of but does not register: see ``QUERIES_QRELS_ONLY``); ``required_files`` lists
the files a handler reads, ``offline`` makes any ir_datasets fetch raise ``OfflineDownload``,
and ``check_local``/``offline_guard`` turn a missing file into a UsageError naming every file to
place (and where ir_datasets would fetch it from). ``trecqr convert irds``, ``index``,
``search`` and ``cqr`` read datasets through here (:mod:`trecqr.datasets.irds`), and so do
``irds:<dataset id>`` qrels and runs (:func:`irds_qrels`, :func:`irds_run`: the dataset's
``qrels_iter()`` / ``scoreddocs_iter()`` rows, as the input layer reads any rows).
"""

from __future__ import annotations

import contextlib
import os
import sys

from trecqr.errors import InputError, UsageError
from trecqr.runtime.transactions import at_command_end, dirs_under, remove_new_empty_dirs
from trecqr.formats.qrels import Qrels
from trecqr.formats.run import Run
from trecqr.formats.tables import qrels_from_table, rows_table, run_from_table

# ids ir_datasets knows the files of but does not register (queries + qrels only)
QUERIES_QRELS_ONLY = {
    "trec-cast/v2/2021": ("trec-cast", "2021/queries", "Cast2021Query", "2021/qrels"),
    "trec-cast/v3/2022": ("trec-cast", "2022/queries", "Cast2022Query", "2022/qrels"),
}


class OfflineDownload(RuntimeError):
    """ir_datasets tried to fetch a file: not allowed here."""


def _irds():
    os.environ.setdefault("IR_DATASETS_SKIP_DISK_FREE", "true")
    if "ir_datasets" not in sys.modules:  # its import makes a folder per dataset under its

        home = os.environ.get("IR_DATASETS_HOME") or os.path.expanduser("~/.ir_datasets")
        before = dirs_under(home)  # command removes again those it left empty
        # a dataset's folder gets an irds_version.txt when its documents are looked up
        at_command_end(lambda: remove_new_empty_dirs(home, before, ("irds_version.txt",)))
    try:
        import ir_datasets
    except ImportError:
        raise UsageError("reading ir_datasets datasets needs the ir_datasets package "
                         "(pip install ir_datasets)") from None
    return ir_datasets


def load(dataset_id: str):
    """The ir_datasets dataset named dataset_id (see QUERIES_QRELS_ONLY for the extra ids)."""
    ir_datasets = _irds()
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        if dataset_id not in QUERIES_QRELS_ONLY:
            raise UsageError(f"ir_datasets {ir_datasets.__version__} has no dataset "
                             f"{dataset_id!r}") from None
    ns, queries_key, query_cls, qrels_key = QUERIES_QRELS_ONLY[dataset_id]
    import ir_datasets.datasets.trec_cast as cast
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import DownloadConfig

    dlc = DownloadConfig.context(ns, ir_datasets.util.home_path() / ns)
    return Dataset(cast.CastQueries(dlc[queries_key], getattr(cast, query_cls)),
                   TrecQrels(dlc[qrels_key], cast.QRELS_DEFS))


# ---------------------------------------------------------------- files and downloads
def _downloads(obj, seen=None, depth=0):
    """Every ir_datasets Download object reachable from obj's attributes."""
    from ir_datasets.util.download import Download

    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 8:
        return []
    seen.add(id(obj))
    if isinstance(obj, Download):
        return [obj]
    found = []
    if isinstance(obj, (list, tuple)):
        children = obj
    elif isinstance(obj, dict):
        children = obj.values()
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("ir_datasets"):
        children = vars(obj).values()
    else:
        return []
    for child in children:
        found.extend(_downloads(child, seen, depth + 1))
    return found


def _urls(download) -> list[str]:
    out = []
    for m in getattr(download, "mirrors", []):
        for attr in ("url", "_url", "_path"):
            value = getattr(m, attr, None)
            if value:
                out.append(str(value))
                break
    return out


def required_files(handler) -> list[tuple[str, bool, list[str]]]:
    """(path, exists, urls) of every file an ir_datasets handler reads."""
    out = []
    for d in _downloads(handler):
        path = d.path(force=False)
        out.append((str(path) if path else "<no local path>",
                    bool(path) and os.path.exists(path), _urls(d)))
    return out


def _missing_message(dataset_id: str, what: str, files) -> str:
    lines = [f"ir_datasets {dataset_id!r}: the {what} files are not available locally "
             f"(trecqr never downloads); place them at:"]
    for path, _exists, urls in files:
        lines.append(f"  {path}" + (f"  (from {urls[0]})" if urls else ""))
    return "\n".join(lines)


@contextlib.contextmanager
def offline():
    """Make every ir_datasets network fetch raise OfflineDownload."""
    from ir_datasets.util import download as dl

    classes = [c for c in (getattr(dl, n, None) for n in
                           ("RequestsDownload", "GoogleDriveDownload", "GoogleCloudBucketStream"))
               if c is not None]
    saved = {c: c.__dict__.get("stream") for c in classes}

    def refuse(self, *args, **kwargs):
        raise OfflineDownload(f"download refused: {_urls(_Wrap(self)) or self}")

    for c in classes:
        c.stream = refuse
    try:
        yield
    finally:
        for c, s in saved.items():
            if s is None:
                del c.stream
            else:
                c.stream = s


class _Wrap:
    def __init__(self, mirror):
        self.mirrors = [mirror]


def check_local(dataset_id: str, handler, what: str) -> None:
    files = required_files(handler)
    missing = [f for f in files if not f[1]]
    if missing:
        raise UsageError(_missing_message(dataset_id, what, missing))


def guarded_read(dataset_id: str, handler, what: str, fn):
    check_local(dataset_id, handler, what)
    with offline_guard(dataset_id, handler, what):
        return fn()


@contextlib.contextmanager
def offline_guard(dataset_id: str, handler, what: str):
    """Run a (streaming) read with downloads refused; a refused download is a UsageError
    naming the files to place."""
    try:
        with offline():
            yield
    except OfflineDownload as e:
        raise UsageError(_missing_message(dataset_id, what, required_files(handler))
                         + f"\n  ({e})") from None


# ---------------------------------------------------------------- irds: inputs
def _rows(dataset_id: str, what: str, has, handler, rows):
    """The dataset's rows as an Arrow table, read with downloads refused."""
    name = f"irds:{dataset_id}"
    if not has():
        raise UsageError(f"ir_datasets {dataset_id!r} has no {what}")

    def read():
        it = iter(rows())
        for first in it:
            return rows_table(first, it, name)
        raise InputError(name, None, f"no {what}")

    try:
        return guarded_read(dataset_id, handler(), what, read)
    except OSError as exc:  # a local file that is missing or unreadable
        raise InputError(name, None, f"cannot read the {what} ({exc})") from None


def irds_qrels(dataset_id: str) -> Qrels:
    """``irds:<dataset id>`` as qrels: its ``qrels_iter()``, local files only."""
    ds = load(dataset_id)
    # getattr: a dataset without qrels may have no handler either (has_qrels() says so first)
    table = _rows(dataset_id, "qrels", ds.has_qrels, getattr(ds, "qrels_handler", None),
                  getattr(ds, "qrels_iter", None))
    return qrels_from_table(table, f"irds:{dataset_id}")


def irds_run(dataset_id: str) -> Run:
    """``irds:<dataset id>`` as a run: its ``scoreddocs_iter()``, local files only."""
    ds = load(dataset_id)
    table = _rows(dataset_id, "scoreddocs", ds.has_scoreddocs,
                  getattr(ds, "scoreddocs_handler", None), getattr(ds, "scoreddocs_iter", None))
    return run_from_table(table, f"irds:{dataset_id}", dataset_id)
