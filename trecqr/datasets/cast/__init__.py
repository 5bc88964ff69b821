"""TREC CAsT 2019-2022: topic files, manual rewrites, qrels."""
