"""Z-scores (-Z FILE): per-topic values expressed in standard deviations from a reference mean.

The file has one ``qid measure mean stddev`` line per (topic, value name), as trec_eval's
get_zscores.c reads it: exactly four white-space separated fields on every line (blank lines
are malformed), numbers read with C ``atof`` (garbage reads as 0). Conversion is
convert_zscores.c's, applied to every per-topic value before averaging, so summaries are means
(sums for counts, geometric means for gm_*) of z-scores:

* topic not in the file: all its values become MISSING_ZSCORE_VALUE (-1000000);
* value name not listed for the topic: that value becomes MISSING_ZSCORE_VALUE;
* stddev != 0: (value - mean) / stddev; stddev == 0: 0 if value == mean, else MISSING.

trec_eval looks entries up with a binary search whose upper bound is one past the end; for a
name sorting after every measure of its topic it reads the first entry of the next topic, and
finds it when that entry has the same name. That is reproduced (past the last topic it finds
nothing). Among duplicate lines the entry the binary search lands on is used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trecqr.errors import InputError
from trecqr.formats.textio import read_source
from trecqr.measures._libm import c_atof

MISSING_ZSCORE_VALUE = -1000000.0

@dataclass(frozen=True)
class ZEntry:
    meas: bytes
    mean: float
    stddev: float


def _search(entries: list, start: int, num: int, key: bytes, limit: int):
    """trec_eval's find_meas: binary search over entries[start:start+num] with end = num.

    The probe one past the end reads entries[start+num] (the next topic's first entry) when it
    exists in the file (index < limit).
    """
    lo, hi = 0, num
    while lo <= hi:
        cur = (lo + hi) // 2
        if start + cur >= limit:
            return None
        probe = entries[start + cur].meas
        if key < probe:
            hi = cur - 1
        elif key > probe:
            lo = cur + 1
        else:
            return entries[start + cur]
    return None


class ZScores:
    """Means and standard deviations per (topic, value name), in trec_eval's sorted order."""

    def __init__(self, entries: list, topics: dict, source: str = ""):
        self.entries = entries    # ZEntry sorted by (qid, meas), stable
        self.topics = topics      # qid bytes -> (start, count)
        self.source = source

    def lookup(self, qid: str, name: str):
        """The entry trec_eval would use, or None (missing)."""
        span = self.topics.get(qid.encode("utf-8"))
        if span is None:
            return None
        key = name.encode("utf-8")
        exact = self._exact(span)
        if exact is not None and key in exact:
            return exact[key]
        return _search(self.entries, span[0], span[1], key, len(self.entries))

    def _exact(self, span):
        """name -> entry for a topic without duplicate names (else None: search instead)."""
        cache = self.__dict__.setdefault("_cache", {})
        if span not in cache:
            chunk = self.entries[span[0]: span[0] + span[1]]
            names = {e.meas: e for e in chunk}
            cache[span] = names if len(names) == len(chunk) else None
        return cache[span]

    def apply(self, qids, per_measure) -> list:
        """Convert per-topic values to z-scores in place; returns [(qid, value name)] missing.

        per_measure: [(measure, params, values (n_topics, k))]. runid has no per-topic value
        in trec_eval and is left alone; integer arrays are replaced by float ones.
        """
        missing = []
        for pos, (measure, params, values) in enumerate(per_measure):
            if measure.name == "runid":
                continue
            if values.dtype.kind != "f":
                if values.dtype.kind not in "iub":
                    continue
                values = values.astype(np.float64)
                per_measure[pos] = (measure, params, values)
            for j, name in enumerate(measure.value_names(params)):
                found = [self.lookup(q, name) for q in qids]
                have = np.array([e is not None for e in found], dtype=bool)
                mean = np.array([e.mean if e else 0.0 for e in found])
                std = np.array([e.stddev if e else 0.0 for e in found])
                v = values[:, j]
                scaled = std != 0.0
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = np.where(scaled, (v - mean) / np.where(scaled, std, 1.0), 0.0)
                ok = have & (scaled | (v == mean))
                values[:, j] = np.where(ok, z, MISSING_ZSCORE_VALUE)
                missing.extend((qids[i], name) for i in np.flatnonzero(~ok))
        return missing


def _parse_line(line: bytes):
    """Four fields or None, as parse_zscore_line (white space = C isspace)."""
    fields = line.split()
    return fields if len(fields) == 4 else None


def read_zscores(path) -> ZScores:
    """Read a trec_eval z-score file (``qid measure mean stddev`` per line)."""
    src = read_source(path)
    data = src.data
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    rows = []
    for number, line in enumerate(lines, start=1):
        fields = _parse_line(line)
        if fields is None:
            found = len(line.split())
            what = "blank line" if found == 0 else f"{found} fields"
            raise InputError(src.name, number,
                             f"malformed z-score line ({what}; expected: qid measure mean stddev)")
        qid, meas, mean, stddev = fields
        rows.append((qid, meas, c_atof(mean.decode("latin-1")),
                     c_atof(stddev.decode("latin-1"))))
    rows.sort(key=lambda r: (r[0], r[1]))  # strcmp order; stable like glibc's merge sort
    entries, topics = [], {}
    for qid, meas, mean, stddev in rows:
        if qid not in topics:
            topics[qid] = [len(entries), 0]
        topics[qid][1] += 1
        entries.append(ZEntry(meas, mean, stddev))
    return ZScores(entries, {q: tuple(v) for q, v in topics.items()}, src.name)
