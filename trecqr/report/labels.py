"""The display labels of measures: one table, so that ``compare``'s tables, the HTML page and
``cqr``'s report call the same measure by the same name (``recip_rank`` is the papers' MRR,
``ndcg_cut_3`` their NDCG@3).

A label is for the reader only: JSON and CSV keep trecqr's measure names (the JSON gives the
labels beside them), and ``-m`` takes the names. ir_measures names (``RR@3``, ``nDCG@3``) are
already what papers print and are shown as given; a name the table does not know too.
"""

from __future__ import annotations

import re

from trecqr.errors import UsageError

# trec_eval output names -> labels (cutoff families below)
LABELS = {"recip_rank": "MRR", "map": "MAP", "ndcg": "NDCG", "Rprec": "R-Prec",
          "bpref": "bpref", "infAP": "infAP", "num_rel_ret": "rel. ret."}
# a trec_eval family with a cutoff (ndcg_cut_3) -> its label, k the cutoff (NDCG@3)
CUTOFF_LABELS = {"ndcg_cut": "NDCG@{k}", "P": "P@{k}", "recall": "R@{k}", "map_cut": "MAP@{k}",
                 "success": "Success@{k}", "iprec_at_recall": "iP@R={k}"}
_CUTOFF = re.compile(r"^(?P<stem>.+)_(?P<k>[0-9][0-9.]*)$")


def measure_label(name: str) -> str:
    """The label of the output measure ``name`` (``ndcg_cut_3`` -> ``NDCG@3``, ``recip_rank``
    -> ``MRR``); the name itself when the table has none."""
    if name in LABELS:
        return LABELS[name]
    m = _CUTOFF.match(name)
    if m and m["stem"] in CUTOFF_LABELS:
        return CUTOFF_LABELS[m["stem"]].format(k=m["k"])
    return name


def parse_pairs(given, what: str, option: str) -> dict:  # option: the command line's
    """{KEY: LABEL} from ``KEY=LABEL`` strings (the command line's ``--name``/``--label``), or
    a mapping as it is; a string without ``=`` is refused in one line."""
    if isinstance(given, dict):
        return dict(given)
    out = {}
    for item in given or ():
        key, sep, label = str(item).partition("=")
        if not sep or not key or not label:
            raise UsageError(f"{option} {item!r}: expected {what}=LABEL")
        out[key] = label
    return out


def measure_labels(measures, given=None) -> dict:
    """{output measure: label} for every measure of a table: the default label, or the one
    ``given`` names it by (its output name, ``ndcg_cut_3``, or its -m name, ``ndcg_cut.3``).
    A given key that is none of the measures is refused, naming them."""
    given = parse_pairs(given, "MEASURE", "--label")
    out = {m: measure_label(m) for m in measures}
    for key, label in given.items():
        hits = [m for m in measures if m in (key, _as_output(key))]
        if not hits:
            what = f"{key!r} is none of the measures ({', '.join(measures)})"
            raise UsageError(f"labels: {what}", cli=f"--label {key}={label}: {what}")
        out[hits[0]] = label
    return out


def _as_output(name: str) -> str:
    """A -m name with parameters as trec_eval prints it (``ndcg_cut.3`` -> ``ndcg_cut_3``)."""
    base, sep, params = name.partition(".")
    return f"{base}_{params}" if sep and params and "," not in params else name
