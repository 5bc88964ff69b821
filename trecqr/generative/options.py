"""Click options that `trecqr gen` and `trecqr suggest` share: one definition, one help text."""

from __future__ import annotations

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
    click.option("--depth", type=int, default=10, show_default=True, help="sim_ret cut-off k"),
    click.option("--rbo-p", type=float, default=0.9, show_default=True, help="RBO persistence"),
    click.option("--overlap", type=click.Choice(("rbo", "jaccard", "overlap")), default="rbo",
                 show_default=True, help="sim_ret ranking-overlap measure"),
)
