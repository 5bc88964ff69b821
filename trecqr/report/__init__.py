"""Output: trec_eval's text format, and JSON/JSONL/CSV/TSV for pipelines."""
