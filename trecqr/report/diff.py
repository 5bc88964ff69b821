"""``trecqr diff A B``: compare two trec_eval-format outputs.

Both files hold lines ``measure<TAB>qid<TAB>value`` as trec_eval and ``trecqr eval`` print them
(measure names padded with spaces, ``Z``-prefixed rows under -Z, string values such as ``runid``
and ``relstring``). Fields are split on tabs when a line has any, else on runs of whitespace;
blank lines are skipped. A line without exactly three fields, or a (measure, qid) given twice in
one file, is bad input (``file:line: message``, exit status 2).

Two values agree when their text is equal, or when both are numbers and equal (``0.1230`` and
``0.123``); with ``--tol T`` two numbers agree when they differ by at most T (plus a hair of
float slack, so ``--tol 0.0001`` covers ``0.1234`` vs ``0.1235``). Non-numeric values are
compared as text. Two NaNs agree. The report lists every differing (measure, qid), every
(measure, qid) present on one side only, and a summary. Exit status 0 when the files agree,
1 when they differ, 2 on bad input.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np

from trecqr.errors import InputError, UsageError
from trecqr.formats.textio import unreadable
from trecqr.runtime.special_files import read_bounded


@dataclass
class TrecOutput:
    """One trec_eval-format file: values by (measure, qid), in file order."""

    source: str
    values: dict = field(default_factory=dict)  # (measure, qid) -> value text


@dataclass
class DiffResult:
    a: str
    b: str
    tolerance: float
    compared: int
    differing: list  # (measure, qid, value_a, value_b, abs_diff or None)
    only_in_a: list  # (measure, qid, value)
    only_in_b: list  # (measure, qid, value)

    @property
    def agree(self) -> bool:
        return not (self.differing or self.only_in_a or self.only_in_b)

    def summary(self) -> dict:
        return {"compared": self.compared, "differing": len(self.differing),
                "only_in_a": len(self.only_in_a), "only_in_b": len(self.only_in_b)}


def _split(raw: str):
    return raw.split("\t") if "\t" in raw else raw.split()


def parse_trec_output(text: str, source: str) -> TrecOutput:
    """Parse trec_eval output text; raise InputError(source, line, ...) on a malformed line."""
    out = TrecOutput(source)
    values = out.values
    n_lines = 0
    for n, raw in enumerate(text.splitlines(), 1):
        parts = raw.split("\t")
        if len(parts) == 3:
            measure, qid, value = parts[0].strip(), parts[1].strip(), parts[2].strip()
            if measure and qid and value:
                n_lines += 1
                values[(measure, qid)] = value
                if len(values) == n_lines:
                    continue
                _duplicate(text, source, n, (measure, qid))
        if not raw.strip():
            continue
        parts = _split(raw)
        if len(parts) != 3:
            raise InputError(source, n, f"expected 3 fields 'measure<TAB>qid<TAB>value', "
                                        f"found {len(parts)}: {raw.strip()[:80]!r}")
        measure, qid, value = (p.strip() for p in parts)
        if not measure or not qid or not value:
            raise InputError(source, n, f"empty field in {raw.strip()[:80]!r}")
        n_lines += 1
        values[(measure, qid)] = value
        if len(values) != n_lines:
            _duplicate(text, source, n, (measure, qid))
    return out


def _duplicate(text: str, source: str, n: int, key) -> None:
    first = next(i for i, raw in enumerate(text.splitlines(), 1)
                 if len(p := [x.strip() for x in _split(raw)]) == 3 and (p[0], p[1]) == key)
    raise InputError(source, n, f"measure {key[0]!r} for query {key[1]!r} given twice "
                                f"(first on line {first})")


def line_of(text: str, key) -> int | None:
    """1-based line of key in text (for messages; not kept while parsing, to save memory)."""
    for i, raw in enumerate(text.splitlines(), 1):
        p = [x.strip() for x in _split(raw)]
        if len(p) == 3 and (p[0], p[1]) == key:
            return i
    return None


def read_trec_output(path: str) -> TrecOutput:
    """Read a trec_eval-format file (``-`` for stdin)."""
    path = str(path)
    if path == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:  # a text stream put in sys.stdin (tests, notebooks)
            return parse_trec_output(sys.stdin.read(), "<stdin>")
        try:  # bytes, decoded as a file is: a gzip stream on stdin is one line, not a crash
            text = read_bounded(stdin, "<stdin>").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("<stdin>", None, f"not UTF-8 text ({exc.reason})") from None
        return parse_trec_output(text, "<stdin>")
    try:
        with open(path, encoding="utf-8", errors="strict") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise unreadable(path, exc) from None
    return parse_trec_output(text, path)


def _to_floats(texts) -> tuple[np.ndarray, np.ndarray]:
    """Values as float64 (NaN where not numeric) and a mask of which parsed as numbers."""
    vals = np.full(len(texts), np.nan)
    ok = np.zeros(len(texts), dtype=bool)
    for i, t in enumerate(texts):
        try:
            vals[i] = float(t)
            ok[i] = True
        except ValueError:
            pass
    return vals, ok


def diff_outputs(a: TrecOutput, b: TrecOutput, tol: float = 0.0,
                 ignore=()) -> DiffResult:
    """Compare two parsed outputs; measures named in ``ignore`` are left out."""
    if tol < 0 or math.isnan(tol):
        raise UsageError(f"--tol must be a non-negative number (got {tol})")
    ignore = set(ignore)
    keys_a = [k for k in a.values if k[0] not in ignore]
    keys_b = [k for k in b.values if k[0] not in ignore]
    common = [k for k in keys_a if k in b.values]
    only_a = [(m, q, a.values[(m, q)]) for (m, q) in keys_a if (m, q) not in b.values]
    only_b = [(m, q, b.values[(m, q)]) for (m, q) in keys_b if (m, q) not in a.values]

    # Equal text agrees whatever the tolerance; only the rest (usually few) is parsed as numbers.
    va_all, vb_all = a.values, b.values
    cand = [k for k in common if va_all[k] != vb_all[k]]
    ta = [va_all[k] for k in cand]
    tb = [vb_all[k] for k in cand]
    va, oka = _to_floats(ta)
    vb, okb = _to_floats(tb)
    numeric = oka & okb
    with np.errstate(invalid="ignore"):
        absdiff = np.abs(va - vb)
        both_nan = np.isnan(va) & np.isnan(vb)
        if tol == 0:
            num_ok = (va == vb) | both_nan
        else:
            slack = 1e-9 * np.maximum(1.0, np.maximum(np.abs(va), np.abs(vb)))
            num_ok = (absdiff <= tol + tol * 1e-9 + slack) | both_nan
    agree = numeric & num_ok
    differing = []
    for i in np.flatnonzero(~agree):
        d = (float(f"{absdiff[i]:.12g}") if numeric[i] and not math.isnan(absdiff[i])
             else None)
        differing.append((cand[i][0], cand[i][1], ta[i], tb[i], d))
    return DiffResult(a.source, b.source, float(tol), len(common), differing, only_a, only_b)


def diff_files(path_a: str, path_b: str, tol: float = 0.0, ignore=()) -> DiffResult:
    """Read and compare two trec_eval-format files."""
    if str(path_a) == "-" and str(path_b) == "-":
        raise UsageError("A and B cannot both be '-' (stdin)")
    return diff_outputs(read_trec_output(path_a), read_trec_output(path_b), tol, ignore)


def _fmt_diff(d) -> str:
    return "" if d is None else f"{d:.6g}"


def render_text(res: DiffResult) -> str:
    out = []
    if res.differing:
        out.append(f"differing (measure, qid): A={res.a}  B={res.b}")
        out.append("measure\tqid\tA\tB\t|A-B|")
        for m, q, x, y, d in res.differing:
            out.append(f"{m}\t{q}\t{x}\t{y}\t{_fmt_diff(d) or '-'}")
    if res.only_in_a:
        out.append(f"only in A ({res.a}):")
        for m, q, x in res.only_in_a:
            out.append(f"{m}\t{q}\t{x}")
    if res.only_in_b:
        out.append(f"only in B ({res.b}):")
        for m, q, y in res.only_in_b:
            out.append(f"{m}\t{q}\t{y}")
    s = res.summary()
    out.append(f"compared {s['compared']}, differing {s['differing']}, "
               f"only in A {s['only_in_a']}, only in B {s['only_in_b']} "
               f"(tolerance {res.tolerance:g})")
    out.append("agree" if res.agree else "differ")
    return "\n".join(out) + "\n"


def render_json(res: DiffResult) -> str:
    doc = {
        "a": res.a, "b": res.b, "tolerance": res.tolerance, "agree": res.agree,
        "summary": res.summary(),
        "differing": [{"measure": m, "qid": q, "a": x, "b": y, "abs_diff": d}
                      for m, q, x, y, d in res.differing],
        "only_in_a": [{"measure": m, "qid": q, "value": x} for m, q, x in res.only_in_a],
        "only_in_b": [{"measure": m, "qid": q, "value": y} for m, q, y in res.only_in_b],
    }
    return json.dumps(doc, indent=2) + "\n"


def evaluation_text(qrels: str, run: str, eval_args: str = "") -> str:
    """What ``trecqr eval [eval_args] QRELS RUN`` prints: the command itself, run in a child
    process (this module sits below the command line and does not import it)."""
    try:
        args = shlex.split(eval_args)
    except ValueError as exc:  # an unclosed quote
        raise UsageError(f"--eval-args {eval_args!r}: {exc}") from None
    result = subprocess.run([sys.executable, "-m", "trecqr", "eval", "--quiet", *args,
                             os.fspath(qrels), os.fspath(run)],
                            capture_output=True, text=True, errors="surrogateescape",
                            stdin=subprocess.DEVNULL)  # a file name that is not UTF-8
    if result.returncode != 0:
        message = (result.stderr or result.stdout).strip().splitlines()
        raise UsageError(message[-1] if message else f"trecqr eval failed on {run}")
    return result.stdout


