"""``trecqr gen`` and ``trecqr suggest``: the generative-metric commands (trecqr/generative/
scores)."""

from __future__ import annotations

import json

import click

from trecqr.datasets.sessions import logs as S
from trecqr.protocols.scai import qr_from_files, qr_table
from trecqr.errors import UsageError
from trecqr.generative import METRICS
from trecqr.generative import gen, suggest
from trecqr.generative.options import rm3_params, write_per_instance
from trecqr.cli.lifecycle import run_guarded
from trecqr.cli.options import CONTEXT, ranking_overlap_options, text_options
from trecqr.cli.types import FiniteFloat, OutputFile


@click.command("gen", context_settings=CONTEXT)
@click.argument("pred_path", metavar="PRED")
@click.argument("ref_path", metavar="REF")
@click.option("--metric", "metrics", multiple=True, type=click.Choice(METRICS),
              help="metric to compute (repeatable; default: all)")
@click.option("--format", "out_format", type=click.Choice(("table", "json")), default="table",
              show_default=True, help="result as an aligned table or as JSON")
@click.option("--per-instance", "per_instance", type=OutputFile(), default=None,
              help="write per-pair values here (JSONL if it ends in .jsonl/.json, else TSV)")
@click.option("--pred-field", default=None, help="PRED JSONL text field (default: auto)")
@click.option("--ref-field", default=None,
              help="REF JSONL text field (default: first human-rewrite field, e.g. Truth_rewrite)")
@click.option("--pred-id-field", default=None, help="PRED JSONL id field (or CONV,TURN)")
@click.option("--ref-id-field", default=None, help="REF JSONL id field (or CONV,TURN)")
@click.option("--pred-format", type=click.Choice(("jsonl", "tsv")), default=None,
              help="PRED file format (default: from its extension)")
@click.option("--ref-format", type=click.Choice(("jsonl", "tsv", "trec")), default=None,
              help="REF file format (default: from its extension)")
@text_options
@click.option("--bleu-lowercase", is_flag=True, help="case-insensitive BLEU")
@click.option("--rouge-stemmer", is_flag=True, help="Porter stemming in ROUGE")
@click.option("--sim-ret", "sim_ret", is_flag=True,
              help="also compute sim_ret and sim_ret+ (RM3) with --index")
@ranking_overlap_options
@click.option("--protocol", type=click.Choice(("scai-qrecc21",)), default=None,
              help="scai-qrecc21: the SCAI-QReCC-21 evaluator's QR (ROUGE-1 recall) of PRED (a "
                   "SCAI run or rewrites file) against REF (a SCAI ground truth JSON).")
@click.option("--eval-missing-truth", is_flag=True,
              help="scai-qrecc21: also score turns with an empty Truth_rewrite.")
@click.option("--eval-turn-one-rewrites", is_flag=True,
              help="scai-qrecc21: also score first turns.")
@click.option("--bootstrap-seed", type=int, default=None,
              help="scai-qrecc21: also give the evaluator's bootstrap median, drawn from this "
                   "numpy seed.")
def gen_command(pred_path, ref_path, metrics, out_format, per_instance, pred_field, ref_field,
            pred_id_field, ref_id_field, pred_format, ref_format, tokenizer, case_sensitive,
            embeddings, bleu_lowercase, rouge_stemmer, sim_ret, index_dir, depth, rbo_p,
            overlap, rm3_fb_docs, rm3_fb_terms, rm3_original_weight, rm3_no_filter, protocol,
            eval_missing_truth, eval_turn_one_rewrites, bootstrap_seed):
    """Generative metrics (PER, sim_emb, BLEU, ROUGE) of PRED texts against REF texts by id."""

    if protocol is not None:  # trecqr/protocols/scai.py

        result = run_guarded(lambda: qr_from_files(
            pred_path, ref_path, eval_missing_truth=eval_missing_truth,
            eval_turn_one_rewrites=eval_turn_one_rewrites, bootstrap_seed=bootstrap_seed))
        click.echo(qr_table(result, eval_missing_truth, eval_turn_one_rewrites), nl=False)
        return
    if eval_missing_truth or eval_turn_one_rewrites or bootstrap_seed is not None:
        raise click.UsageError("--eval-missing-truth, --eval-turn-one-rewrites and "
                               "--bootstrap-seed go with --protocol scai-qrecc21")

    def run():
        result = gen.evaluate_gen(
            pred_path, ref_path, metrics or METRICS, pred_field=pred_field, ref_field=ref_field,
            pred_id_field=pred_id_field, ref_id_field=ref_id_field, pred_format=pred_format,
            ref_format=ref_format, tokenizer=tokenizer, lowercase=not case_sensitive,
            embeddings=embeddings, bleu_lowercase=bleu_lowercase, rouge_stemmer=rouge_stemmer,
            index=index_dir, sim_ret=sim_ret, depth=depth, rbo_p=rbo_p, overlap=overlap,
            rm3=rm3_params(rm3_fb_docs, rm3_fb_terms, rm3_original_weight, rm3_no_filter))
        emit(result, out_format, per_instance, [result["per_instance"]], gen.result_table)

    run_guarded(run)


@click.command("suggest", context_settings=CONTEXT)
@click.argument("fmt", metavar="FORMAT", type=click.Choice(S.FORMATS + (suggest.TASKS,)))
@click.argument("sessions_path", metavar="SESSIONS")
@click.option("--candidates", default=None,
              help="Candidate scores (TSV id/candidate/score or JSONL) for MRR.")
@click.option("--rnk", default=None, help="hredqs: the rnk (candidates) file; SESSIONS is ctx.")
@click.option("--scores", default=None, help="hredqs: score file, one line per rnk candidate.")
@click.option("--tgt", default=None, help="hredqs: targets, one per line.")
@click.option("--column", default=None, help="hredqs score file: column name or index.")
@click.option("--generated", default=None,
              help="Generated next queries (JSONL id/text or TSV id<TAB>text).")
@click.option("--gen-field", default=None, help="JSONL text field of --generated.")
@click.option("--missing", type=click.Choice([S.MISSING_ZERO, S.MISSING_LAST]),
              default=S.MISSING_ZERO, show_default=True,
              help="Target missing from the candidates: zero (trec_eval) or last (HRED-qs 1/len).")
@click.option("--metric", "metrics", multiple=True, type=click.Choice(METRICS),
              help="generative metric (repeatable; default: all)")
@click.option("--format", "out_format", type=click.Choice(("table", "json")), default="table",
              show_default=True, help="result as an aligned table or as JSON")
@click.option("--per-instance", "per_instance", type=OutputFile(), default=None,
              help="write per-instance values here (JSONL if .jsonl/.json, else TSV)")
@click.option("--split", type=click.Choice(["time", "mission", "block"]), default="time",
              show_default=True, help="webis: session split.")
@click.option("--gap", type=FiniteFloat(), default=S.DEFAULT_GAP, show_default=True,
              help="Inactivity (seconds) that ends a session; 0 or less: no time rule.")
@click.option("--keep-duplicates", is_flag=True, help="Keep consecutive duplicate queries.")
@text_options
@click.option("--sim-ret", "sim_ret", is_flag=True,
              help="also compute sim_ret, sim_ret+ (RM3) and sim_ret++ (session fusion) of the "
                   "generated queries with --index")
@ranking_overlap_options
@click.option("--fusion", type=click.Choice(("rrf", "combsum")), default="rrf",
              show_default=True, help="sim_ret++: fusion of the next-half queries' rankings")
@click.option("--rrf-k", type=int, default=60, show_default=True, help="sim_ret++: RRF's k")
@click.option("--fusion-depth", type=int, default=100, show_default=True,
              help="sim_ret++: depth of each fused ranking")
@click.option("--qrels", "div_qrels", default=None, metavar="FILE",
              help="tasks: diversity qrels (task subtask suggestion grade); SESSIONS is then "
                   "the suggestion run (TREC run format).")
@click.option("--measure", "div_measures", multiple=True, metavar="NAME",
              help="tasks: an ndeval measure as ir_measures names it (repeatable; default "
                   "alpha_nDCG@10, alpha_nDCG@20, ERR_IA@10, ERR_IA@20).")
@click.option("--order", "div_order", type=click.Choice(tuple(suggest.ORDERS)), default="score",
              show_default=True,
              help="tasks: rank suggestions by score (ties by suggestion, as ir_measures' "
                   "pyndeval) or by the run's rank column (the ndeval program's default).")
def suggest_command(fmt, sessions_path, candidates, rnk, scores, tgt, column, generated, gen_field,
            missing, metrics, out_format, per_instance, split, gap, keep_duplicates, tokenizer,
            case_sensitive, embeddings, sim_ret, index_dir, depth, rbo_p, overlap, rm3_fb_docs,
            rm3_fb_terms, rm3_original_weight, rm3_no_filter, fusion, rrf_k, fusion_depth,
            div_qrels, div_measures, div_order):
    """Query suggestion: MRR over candidates and generative metrics of next-query instances;
    FORMAT tasks: a TREC Tasks track suggestion run (SESSIONS) scored against diversity
    qrels (--qrels) with alpha-nDCG@k and ERR-IA@k."""

    def run():
        if fmt == suggest.TASKS or div_qrels is not None or div_measures or div_order != "score":
            if fmt != suggest.TASKS or div_qrels is None:
                raise UsageError("--qrels, --measure and --order go with FORMAT tasks, which "
                                 "needs --qrels (diversity qrels)")
            if candidates or rnk or scores or generated or sim_ret:
                raise UsageError("FORMAT tasks scores the suggestion run SESSIONS against "
                                 "--qrels; --candidates, --rnk, --scores, --generated and "
                                 "--sim-ret are for session formats")
            result = suggest.suggest_tasks(sessions_path, div_qrels,
                                           div_measures or suggest.TASKS_MEASURES, div_order)
            emit(result, out_format, per_instance, list(result["per_instance"].values()),
                 suggest.result_table)
            return
        result = suggest.suggest(fmt, sessions_path, candidates=candidates, rnk=rnk, scores=scores,
                         tgt=tgt, column=column, generated=generated, gen_field=gen_field,
                         missing=missing, metrics=metrics or METRICS, split=split,
                         gap=gap if gap > 0 else None, dedup=not keep_duplicates,
                         tokenizer=tokenizer, lowercase=not case_sensitive,
                         embeddings=embeddings, sim_ret=sim_ret, index=index_dir, depth=depth,
                         rbo_p=rbo_p, overlap=overlap, fusion=fusion, rrf_k=rrf_k,
                         fusion_depth=fusion_depth,
                         rm3=rm3_params(rm3_fb_docs, rm3_fb_terms, rm3_original_weight,
                                        rm3_no_filter))
        emit(result, out_format, per_instance, list(result["per_instance"].values()),
             suggest.result_table)

    run_guarded(run)


def emit(result: dict, out_format: str, per_instance, sides, table) -> None:
    """The per-instance file (if asked), then the result without its per-instance values on
    stdout: JSON, or table(result)."""
    if per_instance:
        write_per_instance(sides, per_instance)
    if out_format == "json":
        click.echo(json.dumps({k: v for k, v in result.items() if k != "per_instance"},
                              indent=2))
    else:
        click.echo(table(result), nl=False)
