"""What `trecqr gen` and `trecqr suggest` share on the command line: option definitions (one
help text each) and the output of a result (per-instance file, JSON or table)."""

from __future__ import annotations

import json

import click


def _stack(*options):
    def apply(f):
        for option in reversed(options):
            f = option(f)
        return f
    return apply


text_options = _stack(
    click.option("--tokenizer", type=click.Choice(("alnum", "whitespace")), default="alnum",
                 show_default=True, help="tokens for PER and sim_emb"),
    click.option("--case-sensitive", is_flag=True, help="do not lowercase before tokenising"),
    click.option("--embeddings", default=None,
                 help="word2vec (text, or binary .bin) or GloVe file for sim_emb (default: "
                      "packaged GloVe 6B 50d)"),
)

ranking_overlap_options = _stack(
    click.option("--index", "index_dir", default=None, type=click.Path(file_okay=False),
                 help="trecqr index (bm25s, lucene or dense) for the retrieval-based "
                      "similarities (sim_ret+ needs bm25s, or lucene built with "
                      "--store-docvectors)"),
    click.option("--depth", type=int, default=10, show_default=True, help="sim_ret cut-off k"),
    click.option("--rbo-p", type=float, default=0.9, show_default=True, help="RBO persistence"),
    click.option("--overlap", type=click.Choice(("rbo", "jaccard", "overlap")), default="rbo",
                 show_default=True, help="sim_ret ranking-overlap measure"),
    click.option("--rm3-fb-docs", type=int, default=10, show_default=True,
                 help="sim_ret+: RM3 feedback passages (Anserini's first stage is 50 deep)"),
    click.option("--rm3-fb-terms", type=int, default=10, show_default=True,
                 help="sim_ret+: RM3 feedback terms"),
    click.option("--rm3-original-weight", type=float, default=0.5, show_default=True,
                 help="sim_ret+: weight of the original query in RM3"),
    click.option("--rm3-no-filter", is_flag=True,
                 help="sim_ret+: keep feedback terms that are not [a-z0-9]+ (Anserini's "
                      "filterTerms off)"),
)


def rm3_params(fb_docs: int, fb_terms: int, original_weight: float, no_filter: bool) -> dict:
    """sim_ret+'s RM3 parameters from the CLI options, checked."""
    from ..errors import UsageError

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
    from ..formats.writer import atomic_write_lines

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


def emit(result: dict, out_format: str, per_instance, sides, table) -> None:
    """The per-instance file (if asked), then the result without its per-instance values on
    stdout: JSON, or table(result)."""
    if per_instance:
        write_per_instance(sides, per_instance)
    if out_format == "json":
        click.echo(json.dumps({k: v for k, v in result.items() if k != "per_instance"},
                              indent=2))
    else:
        click.echo(table(result), nl=False)
