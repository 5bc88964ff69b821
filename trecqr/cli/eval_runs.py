"""``trecqr eval QRELS RUN [RUN ...]``: the runs scored through
:func:`trecqr.api.many.run_many` with the command's per-run function, on this machine or a
Dask scheduler, and their outputs joined into one (a ``run`` column in the structured
formats). The command-line side of :mod:`trecqr.api.many`, which keeps what Python callers
use (``evaluate_many``, the RUN arguments' expansion)."""

from __future__ import annotations

import csv
import io
import json
import os

from trecqr.api.many import Relevance, read_relevance, run_many
from trecqr.errors import UsageError


def eval_runs(fn, qrels, paths, spec, out, *, several: bool, jobs=None, scheduler=None):
    """The eval command's several runs: (output text, one coverage line per run).

    fn(relevance, run, spec, out) -> (rendered text, coverage line) is the command's per-run
    function; spec is (measures, options, rel_format, zscores), out (fmt, query,
    summary, places). The trec text is the runs' texts in turn; json, jsonl, csv and tsv get
    a ``run`` column (several: the arguments named several runs)."""
    measures, options, rel_format, zscores = spec
    # the formats read here once; -R diversity travels as a path
    kind = rel_format if rel_format in ("qrels", "prefs", "qrels_prefs", "qrels_jg") else "raw"
    if qrels == "-":  # stdin is read here, once
        if kind == "raw":
            raise UsageError(f"-R {rel_format} reads QRELS from a file when scoring several "
                             "runs")
        qrels = read_relevance("-", kind, options)
    rel = Relevance.of(qrels, kind, options)
    names = [os.fspath(p) for p in paths]
    client = None
    executor = None
    if scheduler is not None:
        client = _dask_client(scheduler)
        executor = client.get_executor()
        paths = [os.path.abspath(p) for p in paths]
        if zscores is not None:
            spec = (measures, options, rel_format, os.path.abspath(zscores))
    try:
        results = run_many(fn, rel, paths, (spec, out), executor=executor, jobs=jobs)
    finally:
        if client is not None:
            client.close()
    text = join_outputs(out[0], names, [t for t, _ in results], several)
    lines = [line if not several else line.replace("trecqr: ", f"trecqr: {name}: ", 1)
             for name, (_, line) in zip(names, results)]
    return text, lines


def _dask_client(address: str):
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--scheduler needs Dask's distributed package: "
                         "pip install 'trecqr[dask]'") from None
    try:
        return Client(address, timeout="30s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--scheduler {address}: cannot connect ({exc})") from None


def join_outputs(fmt: str, names, texts, several: bool) -> str:
    """The outputs of several runs as one: trec text in turn; a ``run`` column (first) in the
    structured formats; JSON, a list of the runs' documents."""
    if fmt == "trec" or not several:
        return "".join(texts)
    if fmt == "json":
        docs = [{"run": name, **json.loads(t)} for name, t in zip(names, texts)]
        return json.dumps(docs, indent=2, allow_nan=False) + "\n"
    if fmt == "jsonl":
        return "".join(f'{{"run": {json.dumps(name)}, {line[1:]}\n' for name, t in
                       zip(names, texts) for line in t.splitlines() if line)
    delim = "," if fmt == "csv" else "\t"
    buf = io.StringIO()
    csv.writer(buf, delimiter=delim, lineterminator="\n").writerow(["run"])
    head = buf.getvalue().rstrip("\n")
    out = [head + delim + texts[0].split("\n", 1)[0] + "\n"]
    for name, t in zip(names, texts):
        buf = io.StringIO()
        csv.writer(buf, delimiter=delim, lineterminator="\n").writerow([name])
        cell = buf.getvalue().rstrip("\n")
        out += [cell + delim + line + "\n" for line in t.split("\n")[1:] if line]
    return "".join(out)
