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
    does not pay for the dataset adapters at start-up. ``lazy`` maps a name to "module:object"."""

    def __init__(self, *args, lazy: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx):
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx, name):
        if name in self.lazy:
            module, attr = self.lazy[name].split(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, lazy={"eval": "trecqr.cli.eval:eval_command",
                                  "collapse": "trecqr.cli.convert_files:collapse_command",
                                  "diff": "trecqr.cli.report:diff_command",
                                  "compare": "trecqr.cli.report:compare_command",
                                  "agree": "trecqr.cli.agree:command",
                                  "breakdown": "trecqr.cli.report:breakdown_command",
                                  "plot": "trecqr.cli.report:plot_command",
                                  "gen": "trecqr.cli.generative:gen_command",
                                  "index": "trecqr.cli.retrieval:index_command",
                                  "search": "trecqr.cli.retrieval:search_command",
                                  "cqr": "trecqr.cli.retrieval:cqr_command",
                                  "suggest": "trecqr.cli.generative:suggest_command",
                                  "validate": "trecqr.cli.convert_ikat:validate_command",
                                  "fuse": "trecqr.cli.fuse:command",
                                  "report": "trecqr.cli.report_html:command",
                                  "measures": "trecqr.cli.measures:command",
                                  "kernels": "trecqr.cli.kernels:command"},
             context_settings=CONTEXT)
@click.version_option(package_name="trecqr")
def main():
    """trecqr: trec_eval-exact evaluation for conversational search and query suggestion."""
    _lean_arrow_memory_when_loaded()


@main.group("convert", cls=LazyGroup, context_settings=CONTEXT, lazy={
    "qrecc": "trecqr.cli.convert:qrecc_command",
    "topiocqa": "trecqr.cli.convert:topiocqa_command",
    "cast": "trecqr.cli.convert:cast_command",
    "topics": "trecqr.cli.convert_files:topics_command",
    "rewrites": "trecqr.cli.convert_files:rewrites_command",
    "irds": "trecqr.cli.convert_files:irds_command",
    "sessions": "trecqr.cli.convert_files:sessions_command",
    "ikat": "trecqr.cli.convert_ikat:ikat_command",
})
def convert():
    """Dataset files to TREC topics and qrels (canonical turn ids, counts on stderr)."""


def entry() -> None:
    """Console script ``trecqr`` (after :mod:`trecqr.runtime.launch`'s early signal handlers)."""
    run_main(main)
