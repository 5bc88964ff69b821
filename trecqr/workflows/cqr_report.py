"""The report of ``trecqr cqr``: one :class:`CqrRow` per searched input and the
:class:`CqrReport` that holds them, with its renderings (the text table, JSON, the HTML page,
the protocol's table).

Apart from :mod:`trecqr.workflows.cqr`, which searches and scores: what a row holds and how the
report prints it can be read here without the flow that fills it. :data:`COLUMNS` names the
measure behind each column and :data:`COVERAGE` the turn counts beside them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from trecqr.errors import UsageError
from trecqr.protocols.presets import protocol_table
from trecqr.report.html import report_page
from trecqr.report.labels import measure_label
from trecqr.report.text_table import aligned_table
from trecqr.runtime.progress import info as say

# report key -> (column header: the name whose value it shows, what it is); every column is
# averaged over the row's evaluated turns (POPULATION)
COLUMNS = {
    "RR@3": ("RR@3", "ir_measures RR@3 per turn: reciprocal rank, 0 below rank 3"),
    measure_label("recip_rank"): ("recip_rank", "trec_eval recip_rank over the full run, what "
                                                "the CQR papers print as MRR / MRR@3"),
    measure_label("ndcg_cut_3"): ("ndcg_cut_3", "trec_eval ndcg_cut.3"),
    measure_label("recall_10"): ("recall_10", "trec_eval recall.10"),
    measure_label("recall_100"): ("recall_100", "trec_eval recall.100"),
}  # keys: report/labels.py's labels, the same compare's tables and the HTML page show
# the trec_eval names behind MRR, NDCG@3, R@10 and R@100, scored at the preset's -l
TREC_MEASURES = ("recip_rank", "ndcg_cut.3", "recall.10,100")
POPULATION = ("every column: the mean over the row's evaluated turns (the qrels turns its run "
              "answered, trec_eval's rule, and --missing empty's turns counting 0); turns "
              "without a topic (--missing drop's too) or without results leave every column")
POPULATION_C = ("every column: the mean over every qrels turn (the preset's -c): a turn without "
                "a topic or without results counts 0 in every column")
COVERAGE = {
    "evaluated": "evaluated",
    "qrels_without_topic": "no topic",
    "qrels_without_result": "no result",
    "topics_without_gold": "no gold",
    "without_rewrite": "no rewrite",
}


@dataclass
class CqrRow:
    name: str
    source: str
    kind: str  # "topics" or "rewrites"
    run: str
    scores: dict
    coverage: dict
    rewrites: dict | None = None  # RewriteReport summary for rewrites inputs
    notes: list = field(default_factory=list)  # turn-policy lines (trecqr.protocols.turn_policy)
    candidates: dict | None = None  # rewrites inputs: the candidates policy (cqr_candidates)

    def __repr__(self) -> str:  # one line: the dataclass's prints every field in full
        scores = ", ".join(f"{k}={v:.4f}" for k, v in self.scores.items())
        return f"<CqrRow {self.name} ({self.kind}): {scores}>"


@dataclass
class CqrReport:
    rows: list
    index: str
    index_built: bool
    k1: float | None
    b: float | None
    depth: int
    runs_dir: str | None  # None: the runs were in a temporary folder, removed
    qrels: str
    preset: str | None = None
    rel_threshold: int = 1
    measures: dict = field(default_factory=dict)  # report key -> trecqr measure name
    backend: str = "bm25s"
    retriever: str = ""  # the backend's one-line description
    protocol: str | None = None  # an official protocol every row's run is also scored under
    protocol_rows: list = field(default_factory=list)  # (row name, protocol_scores)
    # {row name: Topics searched} of candidate rows: the HTML report's queries (not in JSON)
    candidate_queries: dict = field(default_factory=dict, repr=False)
    complete: bool = False  # the preset's -c: every column over every qrels turn

    def __repr__(self) -> str:  # one line: the dataclass's prints every row in full
        names = [r.name for r in self.rows]
        shown = ", ".join(names[:4]) + (f", ... ({len(names) - 4} more)" if len(names) > 4 else "")
        keys = list(self.rows[0].scores) if self.rows else list(self.measures)
        return (f"<CqrReport: {len(names)} rows ({shown}) x {len(keys)} measures "
                f"({', '.join(keys)}), {self.backend} index {self.index}>")

    def to_dict(self) -> dict:
        out = asdict(self)
        del out["protocol"], out["protocol_rows"]  # a table of their own (protocol_table)
        del out["candidate_queries"]
        out["columns"] = {k: COLUMNS[k][1] for k in COLUMNS}
        out["population"] = POPULATION_C if self.complete else POPULATION
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def to_html(self, **options) -> str:
        """The HTML report of the rows (:func:`trecqr.report.html.report_page`: raw, manual,
        collection or index, groups, k...); the rows' runs must have been kept."""
        if any(r.run is None for r in self.rows):
            raise UsageError("the runs were not kept: give cqr a runs folder for the report")
        measures = list(TREC_MEASURES)
        left = [] if self.complete else [  # -c: every name over every qrels turn
            r.name for r in self.rows
            if r.coverage["qrels_without_topic"] or r.coverage["qrels_without_result"]]
        if left:  # the page's means are trecqr eval's: RR@3's would be over every qrels turn
            say(f"--html: {self.measures['RR@3']} is left off the page: {left[0]}'s run lacks "
                "qrels turns, over which trecqr eval (and the page) would average "
                f"{self.measures['RR@3']} as 0 but the other columns not")
        elif self.rel_threshold == 1:  # the page scores every name at one level (-l): RR@3's
            measures.append(self.measures["RR@3"])  # own rel= joins at level 1 only; the page
            # shows measures in the order given and opens on the first: MRR, the papers' own
        return report_page(self.qrels, [r.run for r in self.rows], measures,
                           names=[r.name for r in self.rows],
                           rewrites=[None if r.kind == "field" else
                                     self.candidate_queries.get(r.name, r.source)
                                     for r in self.rows],
                           relevance_level=self.rel_threshold, complete=self.complete,
                           upper_bounds=[r.name for r in self.rows
                                         if (r.candidates or {}).get("upper_bound")],
                           **options)

    def table(self, places: int = 4) -> str:
        heads = ["run"] + [COLUMNS[k][0] for k in COLUMNS] + list(COVERAGE.values())
        body = []
        for r in self.rows:
            cells = [r.name] + [f"{r.scores[k]:.{places}f}" for k in COLUMNS]
            cells += ["-" if r.coverage[k] is None else str(r.coverage[k]) for k in COVERAGE]
            body.append(cells)
        out = aligned_table(body, heads)
        built = " (built for this call)" if self.index_built else ""
        out.append("")
        out.append(f"{self.retriever}, depth {self.depth}, index {self.index}{built}"
                   + (f", preset {self.preset}" if self.preset else ""))
        rr3 = self.measures.get("RR@3", "RR@3")
        over = (f"every qrels turn (preset {self.preset}'s -c; no topic, no result: 0 in every "
                "column)" if self.complete else "the row's evaluated turns (trec_eval's rule; no "
                "topic, no result: left out of every column)")
        own = "" if self.complete else f" (trecqr eval -m {rr3} averages over every qrels turn)"
        out.append(f"every column averages over {over}; {rr3} is a true cutoff at 3, per turn"
                   f"{own}; "
                   "recip_rank over the whole run is the papers' \"MRR\""
                   + (f"; relevant = grade >= {self.rel_threshold}"
                      if self.rel_threshold != 1 else ""))
        out.append(f"runs kept in {self.runs_dir}" if self.runs_dir else
                   "runs not kept (give a runs folder to keep them)")
        for r in self.rows:
            if r.rewrites is not None:
                out.append(f"{r.name}: {r.rewrites['summary']}")
            out += [f"{r.name}: {note}" for note in r.notes]
        return "\n".join(out) + "\n"

    def protocol_table(self) -> str:
        """Every row's run under the protocol, scored with the row's other measures."""
        return protocol_table(self.protocol, self.protocol_rows)
