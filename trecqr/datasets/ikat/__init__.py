"""TREC iKAT 2023-2025: topics with personal knowledge bases, official JSON runs."""
