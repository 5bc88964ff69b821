"""``trecqr convert qrecc``, ``topiocqa`` and ``cast`` (conversational datasets to TREC topics,
qrels and runs): the commands of trecqr/datasets/' dataset conversions. iKAT (``convert ikat``,
``validate ikat``) is in :mod:`trecqr.cli.convert_ikat`; topic files, rewrites, ir_datasets and
session logs are in :mod:`trecqr.cli.convert_files`."""

from __future__ import annotations

import click

from trecqr.datasets import topiocqa
from trecqr.datasets.cast import topics as cast
from trecqr.datasets.qrecc import files as qrecc
from trecqr.datasets.cast.resolved import add_resolved
from trecqr.datasets.qrecc.files import write_turn_qrels
from trecqr.protocols.scai import convert_scai_run
from trecqr.datasets.topics import write_topics
from trecqr.datasets.turn_ids import check_style, restyle
from trecqr.errors import UsageError
from trecqr.formats.writer import atomic_write_text
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT, alternatives, needed_together
from trecqr.cli.types import OutputFile


@click.command("cast", context_settings=CONTEXT)
@click.option("--topics", "topics_path", required=True, metavar="FILE",
              help="Organisers' CAsT topic JSON of any year 2019-2022 (e.g. "
                   "2021_manual_evaluation_topics_v1.0.json, 2022_evaluation_topics_tree_v1.0.json"
                   "); the year is told from the file's shape.")
@click.option("--query-field", type=click.Choice(cast.FIELD_CHOICES), default=None,
              help="raw_utterance (2022: utterance), manual_rewritten_utterance, "
                   "automatic_rewritten_utterance, or context (the turn's branch: earlier "
                   "utterances and responses, then the utterance, joined by ' [SEP] ').")
@click.option("--topics-out", type=OutputFile(), default=None, metavar="OUT",
              help="Topics to write: TSV if OUT ends in .tsv, JSONL for .jsonl, else TREC <top>.")
@click.option("--turn-ids", "turn_ids", default=None, metavar="FILE",
              help="CAsT 2022: the evaluated turns (default: 2022_evaluation_topics_turn_ids.json "
                   "beside the topic file, when present).")
@click.option("--provenance-run", "provenance_out", type=OutputFile(), default=None, metavar="OUT",
              help="CAsT 2022: write the system responses' passage provenance of each kept turn "
                   "as a ranked TREC run (the organisers' canonical passages).")
@click.option("--meta-out", type=OutputFile(), default=None, metavar="FILE",
              help="Also write per-turn metadata (canonical passage id) as JSONL.")
@click.option("--qrels", "qrels_path", default=None, metavar="FILE",
              help="CAsT qrels to check against the turn ids and write to --qrels-out.")
@click.option("--qrels-out", type=OutputFile(), default=None, metavar="OUT",
              help="Where to write the qrels.")
@click.option("--resolved", default=None, metavar="FILE",
              help="CAsT 2019: the resolved utterances TSV (qid<TAB>rewrite), read as the "
                   "manual query field.")
def cast_command(topics_path, query_field, topics_out, turn_ids, provenance_out, meta_out,
                 qrels_path, qrels_out, resolved):
    """TREC CAsT topic JSON to TREC topics with turn ids CONV_TURN (106_1, 2022: 132_1-3), as in
    the qrels."""

    def job():
        needed_together(("--qrels", qrels_path, "FILE (the CAsT qrels to check)"),
                        ("--qrels-out", qrels_out, "OUT (where the checked qrels go)"))
        needed_together(("--query-field", query_field, f"({alternatives(cast.FIELD_CHOICES)})"),
                        ("--topics-out", topics_out, "OUT (the topics file to write)"))
        if topics_out is None and provenance_out is None and meta_out is None \
                and qrels_out is None:
            raise UsageError("nothing to write: give --topics-out, --provenance-run, "
                             "--meta-out or --qrels-out")
        topics = cast.read_cast_topics(topics_path, turn_ids)
        if resolved is not None:  # trecqr/datasets/cast/resolved.py
            click.echo(f"cast: {add_resolved(topics, resolved)} manual rewrites read from "
                       f"{resolved}", err=True)
        published = cast.PUBLISHED.get(topics.year)
        kept = (f"{len(topics)} of {topics.user_turns} user turns kept (evaluated turns of "
                f"{topics.turn_ids_file})" if topics.turn_ids_file else f"{len(topics)} turns")
        pub = (f"; published: {published[1]} turns in {published[0]} topics"
               if published else "")
        click.echo(f"cast: CAsT {topics.year} topic file ({topics.shape}): {kept} in "
                   f"{topics.conversations} topics{pub}", err=True)
        pairs = topics.queries(query_field) if query_field is not None else None
        prov = cast.provenance_run(topics) if provenance_out is not None else None
        if pairs is not None:
            fmt = cast.write_topics(pairs, topics_out)
            canon = sum(t.canonical_passage_id is not None for t in topics.turns)
            json_key = cast.QUERY_FIELDS.get(query_field, "branch + utterance")
            click.echo(f"cast: {len(pairs)} turns in {topics.conversations} conversations, query "
                       f"field {query_field} ({json_key}), {canon} with a canonical "
                       f"passage; wrote {topics_out} ({fmt})", err=True)
        if prov is not None:
            atomic_write_text(provenance_out, "".join(prov))
            empty = sum(not t.provenance for t in topics.turns)
            click.echo(f"cast: provenance run: {len(prov)} passages for "
                       f"{len(topics) - empty} turns ({empty} turns without provenance); "
                       f"wrote {provenance_out}", err=True)
        if meta_out is not None:
            cast.write_metadata(topics, meta_out)
            click.echo(f"cast: wrote metadata of {len(topics)} turns to {meta_out}", err=True)
        if qrels_path is not None:
            c = cast.convert_cast_qrels(qrels_path, topics, qrels_out)
            click.echo(f"cast: qrels {c.pairs} pairs ({c.relevant_pairs} relevant) for "
                       f"{c.turns_judged} turns; {c.turns_unjudged} turns without judgments; "
                       f"wrote {qrels_out}", err=True)

    run_guarded(job)


@click.command("qrecc", context_settings=CONTEXT)
@click.option("--qrels", "qrels_in", default=None, metavar="FILE",
              help="Qrels as published (JSON, TSV, TREC or SCAI; detected from the content).")
@click.option("--qrels-out", "qrels_out", type=OutputFile(), default=None, metavar="OUT",
              help="Write TREC qrels with conv_turn ids here (from --qrels, else from the "
                   "Truth_passages of --turns).")
@click.option("--turns", "turns_in", default=None, metavar="FILE",
              help="Conversations: original QReCC JSON, SCAI turn JSON or InfoCQR JSONL.")
@click.option("--topics-out", "topics_out", type=OutputFile(), default=None, metavar="OUT",
              help="Write topics here (TREC, TSV or JSONL, from the extension).")
@click.option("--query-field", type=click.Choice(qrecc.QUERY_FIELDS), default="raw",
              show_default=True,
              help="raw: Question; human: Rewrite/Truth_rewrite; context: earlier turns then "
                   "the question joined by ' [SEP] '; rewrite: the --rewrites file.")
@click.option("--rewrites", "rewrites_in", default=None, metavar="FILE",
              help="Model rewrites (JSONL or TSV) for --query-field rewrite.")
@click.option("--rewrite-field", default=None, help="Rewrites JSONL: the rewrite field.")
@click.option("--id-field", default=None, help="Rewrites JSONL: id field (or CONV,TURN).")
@click.option("--missing", type=click.Choice(("raw", "drop", "error")), default="raw",
              show_default=True,
              help="A turn whose (human or supplied) rewrite is missing or empty: its raw "
                   "question, drop it, or fail.")
@click.option("--qid-style", default=None, metavar="STYLE",
              help="Write topic and qrels ids in this style (canonical, dash, QReCC-Test, "
                   "...); default canonical conv_turn.")
@click.option("--scai-run", "scai_run", default=None, metavar="FILE",
              help="A SCAI-QReCC-21 run (JSON: Conversation_no, Turn_no, Model_passages) to "
                   "convert to a TREC run (--run-out).")
@click.option("--run-out", "run_out", type=OutputFile(), default=None, metavar="OUT",
              help="Where to write the TREC run of --scai-run.")
def qrecc_command(qrels_in, qrels_out, turns_in, topics_out, query_field, rewrites_in,
                  rewrite_field, id_field, missing, qid_style, scai_run, run_out):
    """QReCC qrels and conversations to TREC qrels and topics with conv_turn ids.

    Turns without gold are left out of the qrels and counted (on stderr).
    """
    needed_together(("--scai-run", scai_run, "FILE (the SCAI run to convert)"),
                    ("--run-out", run_out, "OUT (where its TREC run goes)"), click.UsageError)
    if scai_run is not None:
        turns, pairs, empty = run_guarded(lambda: convert_scai_run(scai_run, run_out))
        click.echo(f"qrecc: SCAI run: {pairs} (turn, passage) pairs for {turns} turns"
                   + (f"; {empty} turns with empty Model_passages (the SCAI evaluator "
                      "counts them 0; a TREC run cannot hold them)" if empty else "")
                   + f"; wrote {run_out}", err=True)
        if qrels_in is None and turns_in is None:
            return
    if qrels_in is not None and qrels_out is None:
        raise click.UsageError("--qrels needs --qrels-out")
    if qrels_in is None and turns_in is None:
        raise click.UsageError("give --qrels FILE --qrels-out OUT and/or --turns FILE")
    if topics_out is not None and turns_in is None:
        raise click.UsageError("--topics-out needs --turns")
    if turns_in is not None and topics_out is None and qrels_out is None:
        raise click.UsageError("--turns needs --topics-out and/or --qrels-out")
    if rewrites_in is not None and query_field != "rewrite":
        raise click.UsageError("--rewrites needs --query-field rewrite")
    if query_field == "rewrite" and rewrites_in is None and topics_out is not None:
        raise click.UsageError("--query-field rewrite needs --rewrites FILE")

    def job():
        if qid_style is not None:
            check_style(qid_style)
        out = {}
        turns = None
        if turns_in is not None:
            turns = qrecc.read_qrecc_turns(turns_in)
            out["turns"] = len(turns)
        if qrels_out is not None:
            if qrels_in is not None:
                qrels, counts = qrecc.read_qrecc_qrels(qrels_in)
            else:
                qrels, counts = qrecc.turns_qrels(turns, str(turns_in))
            out["qrels"], out["counts"] = qrels, counts
        elif turns is not None and all(t.passages is not None for t in turns):
            out["counts"] = qrecc.turns_qrels(turns, str(turns_in))[1]
        if topics_out is not None:
            topics, tcounts = qrecc.qrecc_topics(turns, query_field, rewrites=rewrites_in,
                                           missing=missing, rewrite_field=rewrite_field,
                                           id_field=id_field, source=str(turns_in))
            if qid_style is not None:
                topics = topics.restyle(qid_style)
            out["tcounts"] = tcounts
            write_topics(topics, topics_out)
        if qrels_out is not None:
            qrels = out["qrels"]
            if qid_style is not None:
                qrels = restyle(qrels, qid_style)
            qrecc.write_turn_qrels(qrels, qrels_out)
        return out

    out = run_guarded(job)
    if "tcounts" in out:
        click.echo(out["tcounts"].summary("qrecc"), err=True)
    elif "turns" in out:
        click.echo(f"qrecc: {out['turns']} turns read", err=True)
    if "counts" in out:
        counts = out["counts"]
        if "qrels" in out:
            click.echo(counts.summary("qrecc"), err=True)
        else:
            click.echo(f"qrecc: {counts.turns_with_gold} turns with gold, "
                       f"{counts.pairs} (turn, passage) pairs (no qrels written)", err=True)
        if "qrels" in out:
            message = qrecc.qrecc_note(out["qrels"])
            if message:
                click.echo(message, err=True)


@click.command("topiocqa", context_settings=CONTEXT)
@click.option("--qrels", "qrels_in", default=None, metavar="FILE",
              help="Gold qrels as published (dev_gold.trec, or JSON {qid: {passage: grade}}).")
@click.option("--qrels-out", "qrels_out", type=OutputFile(), default=None, metavar="OUT",
              help="Write TREC qrels with canonical conv_turn ids here (atomically); from --qrels, "
                   "else from the gold passages of --turns.")
@click.option("--turns", "turns_in", default=None, metavar="FILE",
              help="Conversations: the raw TopiOCQA JSON or a DPR-style retriever file.")
@click.option("--topics-out", "topics_out", type=OutputFile(), default=None, metavar="OUT",
              help="Write topics here (format from the extension: .trec/.txt, .tsv, .jsonl).")
@click.option("--topics-format", type=click.Choice(("trec", "tsv", "jsonl")), default=None,
              help="Topics format (default: from the --topics-out extension).")
@click.option("--query-field", type=click.Choice(topiocqa.QUERY_FIELDS), default=None,
              help="raw: the question; history: context + question joined with ' [SEP] '; "
                   "last-k: the last k turns (questions and answers) + question; rewrite: "
                   "--rewrites. Default: rewrite with --rewrites, else raw.")
@click.option("--k", "k", type=click.IntRange(min=0), default=3, show_default=True,
              help="Turns of context for --query-field last-k.")
@click.option("--rewrites", "rewrites_in", default=None, metavar="FILE",
              help="Model rewrites (JSONL or TSV), for --query-field rewrite.")
@click.option("--missing", type=click.Choice(("raw", "drop", "error")), default="raw",
              show_default=True, help="A turn with a missing or empty rewrite: use the raw "
                                      "question, drop it, or fail.")
@click.option("--types", "types_in", default=None, metavar="FILE",
              help="Turn types (dev_type.json), kept as topic metadata 'turn_type'.")
@click.option("--qid-style", default=None, metavar="STYLE",
              help="Write topic and qrels ids in this style: canonical (1_1), dash (1-1), "
                   "topiocqa-dev, TopiOCQA-Dev, any PREFIX or WORD-dash.")
def topiocqa_command(qrels_in, qrels_out, turns_in, topics_out, topics_format, query_field, k,
            rewrites_in, missing, types_in, qid_style):
    """TopiOCQA gold qrels, conversations and rewrites to TREC qrels and topics with canonical
    conv_turn ids; counts are printed on stderr."""
    field_ = query_field or ("rewrite" if rewrites_in is not None else "raw")

    def job():
        if qrels_out is None and topics_out is None:
            raise UsageError("nothing to write: give --qrels-out and/or --topics-out")
        if qrels_in is not None and qrels_out is None:
            raise UsageError("--qrels needs --qrels-out")
        if qrels_out is not None and qrels_in is None and turns_in is None:
            raise UsageError("--qrels-out needs --qrels or --turns (gold passages)")
        if topics_out is not None and turns_in is None and rewrites_in is None:
            raise UsageError("--topics-out needs --turns (or --rewrites)")
        if field_ == "rewrite" and rewrites_in is None:
            raise UsageError("--query-field rewrite needs --rewrites")
        if rewrites_in is not None and field_ != "rewrite":
            raise UsageError(f"--rewrites given with --query-field {field_}")
        if topics_out is None and (rewrites_in is not None or query_field):
            raise UsageError("--query-field/--rewrites need --topics-out")
        if qid_style is not None:
            check_style(qid_style)
        lines = []
        turns = topiocqa.read_topiocqa_turns(turns_in) if turns_in is not None else None
        types = topiocqa.read_turn_types(types_in) if types_in is not None else None
        if turns is not None:
            gold = sum(t.gold is not None for t in turns.turns)
            lines.append(f"topiocqa: {len(turns)} turns read from {turns.source} "
                         f"({'raw JSON' if turns.kind == 'raw' else 'DPR file'}), "
                         f"{gold} with a gold passage")
        if qrels_out is not None:
            qrels, counts = (topiocqa.read_topiocqa_qrels(qrels_in) if qrels_in is not None
                             else topiocqa.turns_to_qrels(turns))
            if types is not None and topics_out is None:
                missing_t, extra_t = topiocqa.turn_type_coverage(types, qrels)
                covered = len(qrels.qid.unique()) - len(missing_t)
                lines.append(f"topiocqa: turn types cover {covered}"
                             f" qrels turns; {len(missing_t)} without a type, {len(extra_t)} "
                             "typed turns not in the qrels")
            out_q = restyle(qrels, qid_style) if qid_style else qrels
            write_turn_qrels(out_q, qrels_out)
            lines.append(counts.summary("topiocqa"))
        if topics_out is not None:
            if field_ == "rewrite":
                topics, report = topiocqa.rewrite_topics(rewrites_in, turns, missing)
                lines.append(report.summary())
            else:
                topics = topiocqa.turns_to_topics(turns, field_, k)
            how = {"raw": "the raw question",
                   "history": "context + question joined with ' [SEP] '",
                   "last-k": f"the last {k} turns + question joined with ' [SEP] '",
                   "rewrite": f"rewrites from {rewrites_in} (missing: {missing})"}[field_]
            if types is not None:
                topics, tcounts, untyped = topiocqa.with_turn_types(topics, types)
                lines.append(topiocqa.type_summary(tcounts, untyped, len(topics)))
            if qid_style:
                topics = topics.restyle(qid_style)
            write_topics(topics, topics_out, topics_format)
            lines.append(f"topiocqa: {len(topics)} topics written (query: {how})")
        return lines

    for line in run_guarded(job):
        click.echo(line, err=True)
