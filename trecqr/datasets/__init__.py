"""Datasets: TopiOCQA, QReCC, CAsT, iKAT, sessions, topic and rewrite files, to TREC topics,
runs and qrels."""
