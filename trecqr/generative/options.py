"""What `trecqr gen` and `trecqr suggest` share: sim_ret+'s RM3 parameters, checked, and the
per-instance file of a result."""

from __future__ import annotations

import json

from trecqr.errors import UsageError
from trecqr.formats.writer import atomic_write_lines



def rm3_params(fb_docs: int, fb_terms: int, original_weight: float, no_filter: bool) -> dict:
    """sim_ret+'s RM3 parameters from the CLI options, checked."""
    if fb_docs < 1 or fb_terms < 1:
        raise UsageError("--rm3-fb-docs and --rm3-fb-terms must be at least 1")
    if not 0 <= original_weight <= 1:
        raise UsageError(f"--rm3-original-weight must be in [0, 1] (got {original_weight})")
    return {"fb_docs": fb_docs, "fb_terms": fb_terms, "original_weight": original_weight,
            "filter_terms": not no_filter}


def write_per_instance(sides, path) -> None:
    """One row per instance id over sides ({"ids": [...], "values": {metric: [...]}} each):
    JSONL when path ends in .jsonl/.json, else TSV (6 decimals; empty where a side lacks the
    id). Written atomically."""
    rows: dict = {}
    names: list = []
    for side in sides:
        for m, vals in side["values"].items():
            names.append(m)
            for q, v in zip(side["ids"], vals):
                rows.setdefault(q, {})[m] = v
    if str(path).lower().endswith((".jsonl", ".json")):
        lines = [json.dumps({"id": q, **vals}) for q, vals in rows.items()]
    else:
        lines = ["id\t" + "\t".join(names)]
        lines += [q + "\t" + "\t".join("" if m not in vals else f"{vals[m]:.6f}" for m in names)
                  for q, vals in rows.items()]
    atomic_write_lines(path, lines)
