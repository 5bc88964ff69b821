"""Command line: every click command, option and option type of trecqr, and the process
lifecycle (:mod:`trecqr.cli.lifecycle`: entry, signals, exit codes, the one error path).

``trecqr eval [OPTIONS] QRELS RUN`` takes trec_eval's own options and prints its output byte
for byte. Bad input is one line ``file:line: what is wrong`` on stderr and exit status 2.

One module per command family (eval, convert, retrieval, report, generative), imported only
when its command is used (:class:`LazyGroup`), so that ``trecqr eval`` does not pay for the
dataset adapters, retrieval backends or plots at start-up.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

import click

from trecqr.runtime.deferred import pa
from trecqr.cli.lifecycle import run_main
from trecqr.cli.options import CONTEXT


def _lean_arrow_memory() -> None:
    """Return freed Arrow memory to the OS at once (jemalloc, no decay): a command-line run
    reads a file of millions of lines once, and its peak memory is what users see."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):  # chosen (memory.fit_process, a user)
        return
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(0)
    except (NotImplementedError, AttributeError, pa.ArrowException):
        pass


class _WhenArrowLoads:
    """A one-shot import hook: :func:`_lean_arrow_memory` runs as soon as pyarrow is imported,
    and not before, so that a command that never needs Arrow (a small run) does not load it
    (~60 ms) only to set its allocator."""

    def find_spec(self, name, path=None, target=None):
        if name != "pyarrow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            load = spec.loader.exec_module

            def exec_module(module):
                load(module)
                _lean_arrow_memory()

            spec.loader.exec_module = exec_module
        return spec


def _lean_arrow_memory_when_loaded() -> None:
    if "pyarrow" in sys.modules:
        _lean_arrow_memory()
    elif not any(isinstance(f, _WhenArrowLoads) for f in sys.meta_path):
        sys.meta_path.insert(0, _WhenArrowLoads())


class LazyGroup(click.Group):
    """A click group whose subcommands are imported only when used, so that ``trecqr eval``
    does not pay for the dataset adapters at start-up. ``lazy`` maps a name to
    ("module:object", its short help): ``trecqr -h`` lists the commands from the table, without
    importing them (together they load numpy, scipy and the reports, about a second).
    tests/cli/test_help.py holds each short help to its command's."""

    def __init__(self, *args, lazy: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def format_commands(self, ctx, formatter):
        """click's list of commands, a lazy one named by a stand-in that carries its help
        (click shortens it to the terminal's width as it would the command's own)."""
        rows = [(name, self.lazy_help(name) if name in self.lazy else self.get_command(ctx, name))
                for name in self.list_commands(ctx)]
        rows = [(name, cmd) for name, cmd in rows if cmd is not None and not cmd.hidden]
        if rows:
            limit = formatter.width - 6 - max(len(name) for name, _ in rows)
            with formatter.section("Commands"):
                formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in rows])

    def lazy_help(self, name: str) -> click.Command:
        """A stand-in for lazy command ``name`` that only describes it."""
        return click.Command(name, help=self.lazy[name][1])

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            module, attr = self.lazy[name][0].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


# trecqr's commands: (module:object, the short help -h lists; tests/cli/test_help.py checks it)
COMMANDS = {
    "eval": ("trecqr.cli.eval:eval_command",
             "Evaluate each RUN against QRELS, as trec_eval does (same options, same output)."),
    "collapse": ("trecqr.cli.convert_files:collapse_command",
                 "Collapse a passage run (DOC-N ids) to a document run: each document's best "
                 "passage, ranks renumbered, scores and runid kept (TREC CAsT 2021/2022 document "
                 "judgments)."),
    "diff": ("trecqr.cli.report:diff_command",
             "Compare two trec_eval-format outputs A and B (e.g. trec_eval's and trecqr's), or a "
             "trec_eval output A with trecqr's evaluation of a run (--qrels QRELS --run RUN "
             "--eval-args)."),
    "compare": ("trecqr.cli.report:compare_command",
                "Compare RUNs on QRELS: means, paired tests vs a baseline, corrected p-values."),
    "agree": ("trecqr.cli.agree:command",
              "Agreement: two qrels' labels, the system rankings two qrels give, a run and its "
              "reproduction."),
    "breakdown": ("trecqr.cli.report:breakdown_command",
                  "Per-group (turn depth, turn type, label) means, counts and t-tests vs a "
                  "baseline."),
    "plot": ("trecqr.cli.report:plot_command",
             "Plots (PNG, SVG or PDF, from -o's extension): measure by turn depth, per-topic "
             "differences, distributions."),
    "gen": ("trecqr.cli.generative:gen_command",
            "Generative metrics (PER, sim_emb, BLEU, ROUGE) of PRED texts against REF texts by "
            "id."),
    "index": ("trecqr.cli.retrieval:index_command",
              "Build a retrieval index of a TSV/JSONL collection or irds:<dataset id>."),
    "search": ("trecqr.cli.retrieval:search_command",
               "Search an index (any backend) with a topics file or a dataset's turns; write a "
               "TREC run."),
    "cqr": ("trecqr.cli.retrieval:cqr_command",
            "Search each topics/rewrites input and report RR@3, MRR, NDCG@3, R@10, R@100 + "
            "coverage."),
    "suggest": ("trecqr.cli.generative:suggest_command",
                "Query suggestion: MRR over candidates and generative metrics of next-query "
                "instances; FORMAT tasks: a TREC Tasks track suggestion run (SESSIONS) scored "
                "against diversity qrels (--qrels) with alpha-nDCG@k and ERR-IA@k."),
    "validate": ("trecqr.cli.convert_ikat:validate_command",
                 "Check official run files (one line per problem, exit status 2 if any)."),
    "fuse": ("trecqr.cli.fuse:command",
             "Fuse two or more runs into one with ranx's algorithms and normalisations."),
    "report": ("trecqr.cli.report_html:command",
               "Write one self-contained HTML page comparing RUNs on QRELS: compare's summary, "
               "plots, a sortable per-turn table and, per turn, the conversation, rewrites and "
               "top k."),
    "measures": ("trecqr.cli.measures:command",
                 "List every measure name -m takes: trec_eval's measures and nicknames, and "
                 "ir_measures' names, each with its family and a one-line description."),
    "kernels": ("trecqr.cli.kernels:command",
                "List trecqr's C kernels (run-file scanner, dicts ranker, fusion pool): each one "
                "loaded, with its file, or missing, with why."),
}


# trecqr convert's commands, as COMMANDS
CONVERTERS = {
    "qrecc": ("trecqr.cli.convert:qrecc_command",
              "QReCC qrels and conversations to TREC qrels and topics with conv_turn ids."),
    "topiocqa": ("trecqr.cli.convert:topiocqa_command",
                 "TopiOCQA gold qrels, conversations and rewrites to TREC qrels and topics with "
                 "canonical conv_turn ids; counts are printed on stderr."),
    "cast": ("trecqr.cli.convert:cast_command",
             "TREC CAsT topic JSON to TREC topics with turn ids CONV_TURN (106_1, 2022: 132_1-3), "
             "as in the qrels."),
    "topics": ("trecqr.cli.convert_files:topics_command",
               "Convert a topics file between TREC, TSV and JSONL, optionally restyling turn ids."),
    "rewrites": ("trecqr.cli.convert_files:rewrites_command",
                 "Model rewrites (JSONL/TSV) to a topics file; counts are printed on stderr."),
    "irds": ("trecqr.cli.convert_files:irds_command",
             "Convert an ir_datasets dataset's queries and qrels to TREC files (no downloads)."),
    "sessions": ("trecqr.cli.convert_files:sessions_command",
                 "Session logs to next-query instances, written as TREC topics, qrels and a run."),
    "ikat": ("trecqr.cli.convert_ikat:ikat_command",
             "TREC iKAT topics (PTKB as metadata) and official JSON runs to TREC files."),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings=CONTEXT)
@click.version_option(package_name="trecqr")
def main():
    """trecqr: trec_eval-exact evaluation for conversational search and query suggestion."""
    _lean_arrow_memory_when_loaded()


@main.group("convert", cls=LazyGroup, context_settings=CONTEXT, lazy=CONVERTERS)
def convert_group():  # not `convert`: trecqr/cli/convert.py would rebind that name when imported
    """Dataset files to TREC topics and qrels (canonical turn ids, counts on stderr)."""


def entry() -> None:
    """Console script ``trecqr`` (after :mod:`trecqr.runtime.launch`'s early signal handlers)."""
    run_main(main)
