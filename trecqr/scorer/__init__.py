"""The scorer: joins a run with qrels into per-query rankings, runs measures, averages them."""
