"""Session query logs to next-query instances, and instances to TREC files."""
