"""Adapters: dataset files, conversations and model outputs to TREC topics, runs and qrels."""
