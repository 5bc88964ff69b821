"""Model rewrites (JSONL or TSV) as topics, with one or several candidates per turn."""
