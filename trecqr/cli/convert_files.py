"""``trecqr convert topics``, ``rewrites``, ``irds`` and ``sessions`` (topic and rewrite files,
ir_datasets, session logs) and ``trecqr collapse`` (passage runs to document runs): the commands
of trecqr/datasets/' file conversions. The conversational datasets' are in
:mod:`trecqr.cli.convert`."""

from __future__ import annotations

import click

from trecqr.datasets import collapse, irds, topics as topic_files
from trecqr.datasets.rewrites import topics as rewrites
from trecqr.datasets.sessions import logs as sessions
from trecqr.datasets.rewrites.candidates import convert_candidates, first_note
from trecqr.datasets.sessions.model import CONTEXT_SEP, DEFAULT_GAP, MISSING_LAST, MISSING_ZERO
from trecqr.datasets.topics import read_topics, write_topics
from trecqr.errors import UsageError
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT
from trecqr.cli.types import OutputFile, RunTag


@click.command("collapse", context_settings=CONTEXT)
@click.argument("run", type=str)
@click.option("-o", "--output", type=OutputFile(), required=True, metavar="OUT",
              help="Document run to write (atomically; '-' for stdout).")
@click.option("--runid", default=None, type=RunTag(),
              help="Runid of the output (default: the input's).")
def collapse_command(run, output, runid):
    """Collapse a passage run (DOC-N ids) to a document run: each document's best passage,
    ranks renumbered, scores and runid kept (TREC CAsT 2021/2022 document judgments)."""

    def job():
        counts = collapse.collapse_file(run, output, runid=runid)
        click.echo(collapse.counts_line(counts, output), err=True)

    run_guarded(job)




@click.command("sessions", context_settings=CONTEXT)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(sessions.FORMATS))
@click.argument("path", metavar="IN")
@click.option("--rnk", default=None, help="hredqs: the rnk (candidates) file; IN is the ctx file.")
@click.option("--tgt", default=None, help="hredqs: targets, one per line.")
@click.option("--split", type=click.Choice(["time", "mission", "block"]), default="time",
              show_default=True, help="webis: 30-minute rule, mission labels or blank-line blocks.")
@click.option("--gap", type=float, default=DEFAULT_GAP, show_default=True,
              help="Inactivity (seconds) that ends a session; 0 or less: no time rule.")
@click.option("--keep-duplicates", is_flag=True, help="Keep consecutive duplicate queries.")
@click.option("--topics", "topics_out", type=OutputFile(), default=None,
              help="Write topics (id -> context).")
@click.option("--qrels", "qrels_out", type=OutputFile(), default=None,
              help="Write qrels (id -> target id, grade 1).")
@click.option("--run", "run_out", type=OutputFile(), default=None,
              help="Write a run from --scores.")
@click.option("--scores", default=None,
              help="Candidate scores: TSV/JSONL, or for hredqs a score file "
                   "(one line per candidate).")
@click.option("--column", default=None,
              help="hredqs score file: column name or index (default last).")
@click.option("--missing", type=click.Choice([MISSING_ZERO, MISSING_LAST]), default=MISSING_ZERO,
              show_default=True, help="Target missing from the candidates: zero (trec_eval) or "
                                      "last (HRED-qs: 1/len).")
@click.option("--sep", default=CONTEXT_SEP, show_default=True, help="Context separator in topics.")
@click.option("--runid", default="trecqr", show_default=True, type=RunTag(),
              help="Run id written in the --run file.")
@click.option("--results-out", type=OutputFile(), default=None,
              help="trec-session: write the shown results (title + snippet per ClueWeb id) as a "
                   "JSONL collection, to index for sim_ret.")
def sessions_command(fmt, path, rnk, tgt, split, gap, keep_duplicates, topics_out, qrels_out,
                     run_out, scores, column, missing, sep, runid, results_out):
    """Session logs to next-query instances, written as TREC topics, qrels and a run.

    IN is the session file; for hredqs the ctx file (with --rnk); for aol-ia the ir_datasets
    dataset id (aol-ia), read from local files only, never downloaded."""

    def run():
        if results_out is not None and fmt != "trec-session":
            raise UsageError("--results-out is for trec-session files")
        insts = sessions.load_sessions_instances(fmt, path, split=split,
                                                 gap=gap if gap > 0 else None,
                                                 dedup=not keep_duplicates, rnk=rnk, tgt=tgt)
        if results_out is not None:
            click.echo(f"results: {sessions.write_results_collection(path, results_out)} passages",
                       err=True)
        sc = None
        if scores is not None:
            sc = (sessions.read_hredqs_scores(insts, scores, column) if fmt == "hredqs"
                  else sessions.read_candidate_scores(scores))
        counts = sessions.write_trec_files(insts, topics_out=topics_out, qrels_out=qrels_out,
                                  run_out=run_out, scores=sc, missing=missing, sep=sep,
                                  runid=runid)
        click.echo(" ".join(f"{k}={v}" for k, v in counts.items()), err=True)

    run_guarded(run)


# --------------------------------------------------------------------------- command
@click.command("rewrites", context_settings=CONTEXT)
@click.argument("input_path", metavar="REWRITES")
@click.argument("output_path", type=OutputFile(), metavar="OUT")
@click.option("--raw", "raw_path", default=None,
              help="topics file with the raw questions (any topics format): the turn set, and the "
                   "fallback for --missing raw")
@click.option("--missing", type=click.Choice(rewrites.POLICIES), default="raw", show_default=True,
              help="turns with a missing, empty or unreadable rewrite: the raw question, drop "
                   "(leaves the average), the human rewrite, an empty query, or fail")
@click.option("--format", "in_format", type=click.Choice(("jsonl", "tsv")),
              help="rewrites format (default: .tsv/.tab/.txt is TSV, anything else JSONL)")
@click.option("--to", "out_format", type=click.Choice(("trec", "tsv", "jsonl")),
              help="output topics format (default: from OUT's extension)")
@click.option("--id-field", default=None, help="JSONL id field (or CONV,TURN fields)")
@click.option("--rewrite-field", "rewrite_fields", multiple=True,
              help="JSONL rewrite field; a field holding a list, or the option repeated, gives "
                   "candidates 1..n")
@click.option("--candidates", "policy", default="first", show_default=True,
              metavar="first|each",
              help="several candidates per turn: candidate 1 to OUT, or each candidate i to "
                   "OUT with .ci before its extension (out.c1.tsv, out.c2.tsv...); fuse, mean, "
                   "sc and oracle are trecqr cqr's")
@click.option("--qid-style", default=None, help="write turn ids in this style (see topics)")
@click.option("--human", "human_path", default=None,
              help="--missing human: topics file of the human rewrites (default: each record's "
                   "Truth_rewrite)")
def rewrites_command(input_path, output_path, raw_path, missing, in_format, out_format, id_field,
                     rewrite_fields, policy, qid_style, human_path):
    """Model rewrites (JSONL/TSV) to a topics file; counts are printed on stderr."""
    def run():
        raw = read_topics(raw_path) if raw_path is not None else None
        field = list(rewrite_fields) if len(rewrite_fields) > 1 else \
            (rewrite_fields[0] if rewrite_fields else None)
        outputs, stats = convert_candidates(
            input_path, output_path, policy=policy, format=in_format, id_field=id_field,
            rewrite_field=field, missing=missing, raw=raw, qid_style=qid_style,
            human=read_topics(human_path) if human_path is not None else None)
        for path, result in outputs:
            write_topics(result.topics, path, out_format)
        if stats.n > 1:
            click.echo(stats.summary(), err=True)
            if len(outputs) == 1:
                click.echo(f"trecqr: {first_note(stats)}", err=True)
        for path, result in outputs:
            click.echo(result.report.summary() + (f" -> {path}" if len(outputs) > 1 else ""),
                       err=True)

    run_guarded(run)


# ---------------------------------------------------------------- CLI


@click.command("irds", context_settings=CONTEXT)
@click.argument("dataset_id", metavar="DATASET_ID")
@click.option("--topics-out", type=OutputFile(), default=None,
              help="write the queries here (.trec/.tsv/.jsonl)")
@click.option("--qrels-out", type=OutputFile(), default=None,
              help="write the qrels here (TREC qrels)")
@click.option("--query-field", default=None,
              help="query field to use as the query text (default: `text`, or the dataset's "
                   "default_text(), e.g. raw_utterance; CAsT: manual_rewritten_utterance)")
@click.option("--qid-style", default=None,
              help="rewrite turn ids: canonical (31_4), dash (31-4), topiocqa-dev, TopiOCQA-Dev, "
                   "QReCC-Test, dev-dash (dev-31-4), any PREFIX or WORD-dash")
@click.option("--topics-format", type=click.Choice(("trec", "tsv", "jsonl")), default=None,
              help="topics format (default: from the --topics-out extension)")
def irds_command(dataset_id, topics_out, qrels_out, query_field, qid_style, topics_format):
    """Convert an ir_datasets dataset's queries and qrels to TREC files (no downloads)."""

    r = run_guarded(lambda: irds.convert(dataset_id, topics_out=topics_out, qrels_out=qrels_out,
                                     query_field=query_field, qid_style=qid_style,
                                     topics_format=topics_format))
    if r.topics is not None:
        msg = f"{dataset_id}: {len(r.topics)} queries ({query_field or 'default text'})"
        if r.queries_missing_text:
            msg += (f", {len(r.queries_missing_text)} of {r.queries_read} left out with an empty "
                    f"{query_field or 'text'} (first: {r.queries_missing_text[0]})")
        click.echo(msg, err=True)
    if r.qrels is not None:
        click.echo(f"{dataset_id}: {len(r.qrels)} qrels for {r.qrels_topics} queries", err=True)




@click.command("topics", context_settings=CONTEXT)
@click.argument("input_path", metavar="IN")
@click.argument("output_path", type=OutputFile(), metavar="OUT")
@click.option("--from", "in_format", type=click.Choice(topic_files.FORMATS),
              help="input format (default: from IN's extension)")
@click.option("--to", "out_format", type=click.Choice(topic_files.FORMATS),
              help="output format (default: from OUT's extension)")
@click.option("--qid-style", default=None,
              help="rewrite turn ids to a style, named here with the id it gives turn 31_4: "
                   "canonical (31_4), dash (31-4), QReCC-Test (QReCC-Test_31_4), topiocqa-dev "
                   "(topiocqa-dev_31_4), TopiOCQA-Dev (TopiOCQA-Dev_31_4), dev-dash (dev-31-4); "
                   "or any PREFIX (PREFIX_31_4) or WORD-dash (WORD-31-4)")
@click.option("--qid-field", default=None, help="JSONL input: id field (or CONV,TURN fields)")
@click.option("--query-field", default=None, help="JSONL input: query field")
def topics_command(input_path, output_path, in_format, out_format, qid_style, qid_field,
                   query_field):
    """Convert a topics file between TREC, TSV and JSONL, optionally restyling turn ids."""

    def run():
        topics = topic_files.read_topics(input_path, in_format, qid_field=qid_field,
                                         query_field=query_field)
        if qid_style is not None:
            topics = topics.restyle(qid_style)
        topic_files.write_topics(topics, output_path, out_format)
        return topics

    topics = run_guarded(run)
    click.echo(f"trecqr: {len(topics)} topics written to {output_path}", err=True)
