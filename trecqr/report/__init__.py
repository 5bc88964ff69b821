"""Reports over evaluations (the command line's compare, breakdown, diff and plot commands
are in :mod:`trecqr.cli.report`):

* :mod:`.outputs`, :mod:`.trec_text`: an Evaluation as trec_eval's text, byte for byte, or as
  JSON/JSONL/CSV/TSV for pipelines;
* :mod:`.compare`, :mod:`.comparison`, :mod:`.tables`: systems compared with paired tests and
  multiple-testing correction, rendered as text, CSV, JSON, Markdown or LaTeX;
* :mod:`.breakdown`: means and tests per group of topics (turn depth, turn type, labels);
* :mod:`.diff`: two trec_eval outputs compared value by value;
* :mod:`.plots`: per-topic plots (matplotlib, imported when a plot is drawn).
"""
