"""Process plumbing: signals, temporary files, output paths and transactions, workers, memory caps,
progress reporting, the extras hints, pyarrow's deferred handles and the console-script
bootstrap."""
