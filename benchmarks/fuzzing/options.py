"""Every option of every command, read from trecqr's click commands themselves, and the odd
values the campaign gives them: an option added to a valid command, or the value of one it
already has replaced. The option to add is one of those the command has had least often so
far, so a campaign of a few hundred cases per command gives every option at least one case;
:func:`uncovered` checks it at the end."""

from __future__ import annotations

import collections
import random

import click

ODD_NUMBERS = ["-1", "0", "-0", "1", "2147483648", "-2147483649", "9223372036854775808",
               "99999999999999999999", "1e309", "-1e309", "nan", "inf", "-inf", "1.5", "0x10",
               "", "abc", " 7", "1_000", "1e-320", "0.9999999999999999"]
SANE_NUMBERS = ["1", "2", "3", "10", "0.5"]
ODD_TEXT = ["", ",", ",,", "a,b,c", "'unclosed", "\"", "$x^$", "$\\frac{$", "\\", "map.",
            "P.99999999999999999999", "P.-1", "ndcg_cut.1e309", "RR@0", "RR@-3", "nDCG@nan",
            "P(rel=)@", "utility.1,2", "all", "-", "/", "/nonexistent/x", "é", "\u202e",
            "x" * 10000, "map,map,map", "--", "-q", "9.0.8", "official", "recip_rank.3",
            "lucene", "dense", "bm25s", "irds", "qrecc", "topiocqa", "cast", "/dev/stdin",
            "/dev/null", "irds:msmarco-passage", "trec", "jsonl", "tsv", "qrecc-test", "raw",
            "manual", "rewrite", "mission", "bleu", "sim_emb", "markdown", "latex", "json",
            "n_segments=0", "w=100000", "k=-1", "fuse:nope", "oracle", "each", "mean", "drop",
            "cast2021-nist", "cast2021", "ikat2023", "qrecc-official"]
ODD_MEASURES = ["P.99999999999999999999", "RR@3", "P.0", "ndcg_cut.-1", "recall.1e309",
                "iprec_at_recall..1.5", "utility.1,a", "P(rel=99999999999)@3", "nDCG@99999999999",
                "map_cut.", "Rprec_mult.nan", "ndcg.1=nan", "success.0", "AP@0", "map@3",
                "ndcg.2147483648=1", "utility.1,2", "MRR@3", "AP"]
# options that name an output: their value is a path in the case folder (or an odd one)
OUTPUT_HINTS = ("-o", "--output", "--per-instance", "--html", "--runs-dir", "--results-out",
                "--run-out", "--ptkb-run-out", "--topics-out", "--qrels-out", "--meta-out",
                "--provenance-run")
# the options the issue names: cases with one of them, or on these commands, are counted apart
FOCUS_COMMANDS = ("fuse", "report", "measures")
FOCUS_OPTIONS = ("--candidates", "--missing", "--min-results", "--protocol", "--groups",
                 "--html", "--manual")


def commands() -> dict:
    """{command path: [click.Option]} for every command of ``trecqr --help`` and its groups."""
    from trecqr.cli import main

    out = {}

    def walk(cmd, path, ctx):
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                walk(sub, path + [name], click.Context(sub, parent=ctx))
        else:
            out[" ".join(path)] = [p for p in cmd.params if isinstance(p, click.Option)
                                   and "--help" not in p.opts]

    walk(main, [], click.Context(main))
    return out


def flags(option: click.Option) -> list:
    return list(option.opts) + list(option.secondary_opts)


def is_output(option: click.Option) -> bool:
    return any(f in OUTPUT_HINTS or f.endswith("-out") for f in flags(option))


def _numeric(option: click.Option) -> bool:
    t = option.type
    return isinstance(t, (click.types.IntParamType, click.types.FloatParamType)) or \
        type(t).__name__.lower().startswith(("finite", "int", "float", "positive"))


def odd_value(rng: random.Random, option: click.Option, other_file) -> tuple:
    """(argv to add, or None for a flag's own presence, description)."""
    if option.is_flag or option.count:
        return [], "flag"
    name = max(flags(option), key=len)
    if isinstance(option.type, click.Choice) and rng.random() < 0.6:
        return [rng.choice(list(option.type.choices))], "choice"
    if _numeric(option):
        return [rng.choice(ODD_NUMBERS if rng.random() < 0.7 else SANE_NUMBERS)], "number"
    if is_output(option):
        return None, "output"  # the caller makes a path in the case folder
    if name in ("-m", "--measure", "--optimize") and rng.random() < 0.7:
        return [rng.choice(ODD_MEASURES)], "measure"
    if rng.random() < 0.35:
        return [other_file()], "file"
    return [rng.choice(ODD_TEXT)], "text"


class OptionPicker:
    """Chooses, per command path, the option to add: one of those used least so far."""

    def __init__(self):
        self.table = commands()
        self.used = {path: collections.Counter() for path in self.table}

    def pick(self, rng: random.Random, path: str) -> click.Option | None:
        options = self.table.get(path) or []
        if not options:
            return None
        counts = self.used[path]
        low = min(counts[max(flags(o), key=len)] for o in options)
        return rng.choice([o for o in options if counts[max(flags(o), key=len)] == low])

    def lacking(self, path: str) -> bool:
        """Whether an option of the command has had no case yet."""
        return any(not self.used[path][max(flags(o), key=len)] for o in self.table.get(path, ()))

    def seen(self, path: str, argv) -> None:
        """Count the options that argv (a generated case) holds."""
        words = {a for a in argv if isinstance(a, str)}
        for o in self.table.get(path, ()):
            if words & set(flags(o)):
                self.used[path][max(flags(o), key=len)] += 1


def uncovered(used: dict, table: dict) -> list:
    """'path option' for every option no case held."""
    return [f"{path} {max(flags(o), key=len)}" for path, options in sorted(table.items())
            for o in options if not used.get(path, {}).get(max(flags(o), key=len))]


def is_focus(path: str, argv) -> bool:
    words = {a for a in argv if isinstance(a, str)}
    return path.split()[0] in FOCUS_COMMANDS or bool(words & set(FOCUS_OPTIONS))
