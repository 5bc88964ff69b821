"""Reports over evaluations (the command line's compare, breakdown, diff and plot commands
are in :mod:`trecqr.cli.report`):

* :mod:`.outputs`, :mod:`.trec_text`: an Evaluation as trec_eval's text, byte for byte, or as
  JSON/JSONL/CSV/TSV for pipelines;
* systems compared, in layers that import only downwards: :mod:`.comparison` (the plain data),
  :mod:`.comparison_stats` (computes it: scores through :mod:`.populations`, tests from
  :mod:`.stats`), the renderers :mod:`.comparison_text` (text, JSON, CSV) and :mod:`.tables`
  (Markdown, LaTeX, the notebook's HTML table), :mod:`.comparison_views` (the notebook's
  methods) and :mod:`.compare` on top (``trecqr.compare`` and ``render``); :mod:`.labels`: the
  measures' display labels, shared with ``cqr`` and the HTML page;
* :mod:`.breakdown`: means and tests per group of topics (turn depth, turn type, labels);
* :mod:`.diff`: two trec_eval outputs compared value by value;
* :mod:`.plots`: per-topic plots (matplotlib, imported when a plot is drawn);
* :mod:`.html` (with :mod:`.html_data`, :mod:`.html_svg`, :mod:`.html_assets`): the HTML page;
* :mod:`.stats`: the statistics (tests, corrections, ANOVA, agreement, reproductions).
"""
