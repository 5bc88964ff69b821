"""``trecqr convert ikat`` and ``trecqr validate ikat``: TREC iKAT's topics and official JSON
runs. Kept apart from :mod:`trecqr.cli.convert` (the CAsT, QReCC and TopiOCQA conversions)
because iKAT's runs are checked as well as converted: the ``validate`` group lives here with
the one command it holds."""

from __future__ import annotations

import json
import sys

import click

from trecqr.datasets.cast import topics as cast
from trecqr.datasets.ikat import topics as ikat
from trecqr.datasets.ikat import runs as ikat_runs
from trecqr.errors import UsageError
from trecqr.formats.run import write_run
from trecqr.formats.writer import atomic_write_text
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT, alternatives, needed_together
from trecqr.cli.types import OutputFile


@click.command("ikat", context_settings=CONTEXT)
@click.option("--topics", "topics_path", default=None, metavar="FILE",
              help="iKAT test topics JSON (2023, 2024 or 2025).")
@click.option("--query-field", type=click.Choice(ikat.QUERY_FIELDS), default=None,
              help="raw (utterance), resolved (resolved_utterance) or context (earlier "
                   "utterances and responses, then the utterance, joined by ' [SEP] ').")
@click.option("--topics-out", type=OutputFile(), default=None, metavar="OUT",
              help="Topics to write: TSV for .tsv, JSONL for .jsonl, else TREC <top> format.")
@click.option("--meta-out", type=OutputFile(), default=None, metavar="FILE",
              help="Per-turn metadata as JSONL: topic, turn, title, the topic's PTKB, the PTKB "
                   "statements marked relevant, the response provenance.")
@click.option("--run", "run_path", default=None, metavar="FILE",
              help="An official iKAT JSON run (run_name, run_type, turns).")
@click.option("--run-out", type=OutputFile(), default=None, metavar="OUT",
              help="The run's passage provenance as a TREC run (best score per passage).")
@click.option("--ptkb-run-out", type=OutputFile(), default=None, metavar="OUT",
              help="PTKB provenance as a statement ranking (of --run, or else the topics' "
                   "relevant statements), for the PTKB qrels.")
def ikat_command(topics_path, query_field, topics_out, meta_out, run_path, run_out, ptkb_run_out):
    """TREC iKAT topics (PTKB as metadata) and official JSON runs to TREC files."""
    def job():
        needed_together(("--query-field", query_field, f"({alternatives(ikat.QUERY_FIELDS)})"),
                        ("--topics-out", topics_out, "OUT (the topics file to write)"))
        outputs = (topics_out, meta_out, run_out, ptkb_run_out)  # an empty name is a name
        if (topics_out is not None or meta_out is not None) and topics_path is None:
            raise UsageError("--topics-out and --meta-out need --topics")
        if run_out is not None and run_path is None:
            raise UsageError("--run-out needs --run")
        if ptkb_run_out is not None and run_path is None and topics_path is None:
            raise UsageError("--ptkb-run-out needs --run or --topics")
        if all(out is None for out in outputs):
            raise UsageError("nothing to write: give --topics-out, --meta-out, --run-out or "
                             "--ptkb-run-out")
        topics = ikat.read_ikat_topics(topics_path) if topics_path is not None else None
        if topics is not None:
            ntopics = len(topics.ptkb)
            click.echo(f"ikat: {len(topics)} turns in {ntopics} topics ({topics.shape}), "
                       f"{sum(len(p) for p in topics.ptkb.values())} PTKB statements, "
                       f"{sum(bool(t.relevant_ptkb) for t in topics.turns)} turns with relevant "
                       f"PTKB statements", err=True)
        doc = name = None
        if run_path is not None:
            doc, name = ikat_runs.read_ikat_run(run_path)
        # build everything before writing anything
        pairs = topics.queries(query_field) if topics_out is not None else None
        prun = counts = None
        if run_out is not None:
            prun, counts = ikat_runs.passage_run(doc, name)
        ptkb_lines = None
        if ptkb_run_out is not None:
            ptkb_lines = (ikat_runs.ptkb_run(doc, name) if doc is not None
                          else ikat.topics_ptkb_run(topics))
        if pairs is not None:
            fmt = cast.write_topics(pairs, topics_out)
            click.echo(f"ikat: query field {query_field}; wrote {topics_out} ({fmt})", err=True)
        if meta_out is not None:
            atomic_write_text(meta_out, "".join(
                json.dumps(topics.metadata(t), ensure_ascii=False) + "\n" for t in topics.turns))
            click.echo(f"ikat: wrote metadata of {len(topics)} turns to {meta_out}", err=True)
        if prun is not None:
            write_run(prun, run_out)
            click.echo(f"ikat: run {prun.runid!r}: {counts.turns} turns, {counts.responses} "
                       f"responses, {counts.provenances} passage provenances; "
                       f"{counts.duplicates} repeats of a passage in its turn dropped (best "
                       f"score kept); {counts.passages} passages written to {run_out}", err=True)
        if ptkb_lines is not None:
            atomic_write_text(ptkb_run_out, "".join(ptkb_lines))
            nt = len({ln.split(" ", 1)[0] for ln in ptkb_lines})
            click.echo(f"ikat: PTKB run: {len(ptkb_lines)} statements for {nt} turns; wrote "
                       f"{ptkb_run_out}", err=True)

    run_guarded(job)


@click.command("ikat", context_settings=CONTEXT)
@click.argument("run_path", metavar="RUN")
@click.option("--topics", "topics_path", default=None, metavar="FILE",
              help="The year's test topics: also check turn ids and PTKB statement numbers.")
def validate_ikat_command(run_path, topics_path):
    """Check an official iKAT JSON run as the organisers' validator does; one line per problem
    ('file: turn T: what'), exit status 2 if any (warnings do not fail)."""

    def job():
        topics = ikat.read_ikat_topics(topics_path) if topics_path is not None else None
        doc, name = ikat_runs.read_ikat_run(run_path)
        probs = ikat_runs.validate_run(doc, topics)
        for p in probs:
            click.echo(p.line(name), err=True)
        errors = sum(not p.warning for p in probs)
        if errors:
            return 2
        turns = doc["turns"]
        nresp = sum(len(t["responses"]) for t in turns)
        nprov = sum(len(r.get("passage_provenance", [])) for t in turns for r in t["responses"])
        click.echo(f"{name}: valid iKAT run {doc['run_name']!r}: {len(turns)} turns, {nresp} "
                   f"responses, {nprov} passage provenances; {len(probs)} warnings"
                   + ("" if topics is None else f"; every turn is a turn of {topics.source}"),
                   err=True)
        return 0

    code = run_guarded(job)
    if code:
        sys.exit(code)


@click.group("validate", context_settings=CONTEXT)
def validate_command():
    """Check official run files (one line per problem, exit status 2 if any)."""


validate_command.add_command(validate_ikat_command, "ikat")
