"""End-to-end flows that join the layers: ``cqr`` (rewrites -> retrieval -> scores) and its
candidates."""
