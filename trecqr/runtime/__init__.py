"""Process plumbing: signals, temporary files, output paths and transactions, workers, memory caps,
progress reporting, the extras hints and the console-script bootstrap."""
