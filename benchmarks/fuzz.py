"""Fuzz campaign: every subcommand, as a hostile user would run it.

Usage (from the project root; ../shared/data must be present):

    nice python3 benchmarks/fuzz.py --cases 4000 --jobs 2 --report fuzz-report.json

Each case takes a valid command of one subcommand (real files of ../shared/data and fixtures/,
cut to a few hundred lines so a case takes about a second) and changes one or two things:

- a file: flipped or inserted bytes (NUL, 0xff), deleted / duplicated / swapped / shuffled
  lines, a field dropped, added or replaced by an odd value, a number replaced (huge, NaN, inf,
  negative, hex), re-encoded (UTF-16, Latin-1, a BOM, CRLF), truncated, compressed (gzip,
  truncated gzip, bzip2, xz, zstd), emptied, replaced by a folder, a missing file or a symlink
  loop; JSON files also get lone surrogates (``"\\ud800"``), deep nesting and huge numbers;
  index folders lose or damage a file;
- an option: odd values for numeric options (-1, 0, 2**31, 2**63, 1e309, nan, ...) and for
  text options (empty, ``,,``, ``a,b,c``, an unclosed quote, ``$x^$``, 10,000 characters);
- the environment: stdout closed or /dev/full, a non-UTF-8 file name, the input through stdin
  or a FIFO (with and without a writer), /dev/zero or /dev/urandom as an input, ``-o`` into a
  missing folder, SIGINT / SIGTERM / SIGHUP at a random moment.

A case is *clean* when the command exits 0, or 2 with at most one stderr line (click's usage
errors aside), or (for the environment cases that call for it) 1 or 128+signal with at most one
line; with no traceback, no "internal error", no file left behind by a failure (no output of a
failed command, no ``.trecqr-*`` temporary anywhere, nothing under ``~/.ir_datasets``), and
within the time limit. The table counts, per subcommand: cases, clean, tracebacks, internal
errors, other exit codes, multi-line errors, leftover files, hangs. --report writes every
unclean case (command line, what was changed, stderr) as JSON, to replay it.
"""

from __future__ import annotations

import argparse
import bz2
import collections
import contextlib
import gzip
import json
import lzma
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def shared_data() -> Path:
    env = os.environ.get("TRECQR_SHARED_DATA")
    if env:
        return Path(env)
    for folder in ROOT.parents:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared" / "data"
    return ROOT.parent / "shared" / "data"


D = shared_data()
FX = ROOT / "fixtures"
TE = D / "trec_eval-test"

# name -> (source, lines kept (None: all), binary: don't cut)
SOURCES = {
    "qrels": (TE / "qrels.test", None),
    "run": (TE / "results.test", 3000),
    "run2": (TE / "results.trunc", 3000),
    "zscores": (TE / "zscores_file", None),
    "prefs": (TE / "prefs.test", None),
    "prefsrun": (TE / "prefs.results.test", 2000),
    "teout": (TE / "out.test", None),
    "teout2": (TE / "v9.0.8" / "out.test", None),
    "cqrels": (FX / "cast2021" / "qrels.txt", None),
    "crun": (FX / "cast2021" / "manual_bm25.run", None),
    "crun2": (FX / "cast2021" / "convdr.run", None),
    "prun": (D / "cast2021" / "org_manual_bm25.trec", 3000),
    "castjson": (D / "cast2021" / "2021_manual_evaluation_topics_v1.0.json", None),
    "castqrels": (D / "cast2021" / "qrels-docs.2021.qrel", 3000),
    "qrecctsv": (D / "qrecc" / "qrecc_qrel.tsv", 400),
    "qreccjson": (D / "qrecc" / "qrels_dev.json", None),
    "scaigt": (D / "qrecc" / "scai-ground-truth.json", None),
    "dev2k": (D / "qrecc" / "dev-sampled2k_chatgpt_ICL.jsonl", 60),
    "topgold": (D / "topiocqa" / "dev_gold.trec", 400),
    "toptypes": (D / "topiocqa" / "dev_type.json", None),
    "aol": (D / "sessions" / "aol-sample.txt", None),
    "webis": (D / "sessions" / "webis-smc-12-missions.tsv", 400),
    "ctx": (D / "sessions" / "hredqs-test.ctx", None),
    "rnk": (D / "sessions" / "hredqs-test.rnk", None),
    "marco": (D / "sessions" / "marco-sessions-sample.txt", None),
    "coll": (FX / "cast2021-demo" / "collection.jsonl", 80),
    "dqrels": (FX / "cast2021-demo" / "qrels.txt", None),
    "dtopics": (FX / "cast2021-demo" / "topics-raw.tsv", 40),
    "dtopics2": (FX / "cast2021-demo" / "topics-manual.tsv", 40),
    "st13": (D / "sessions" / "sessiontrack2013.xml.gz", None),
    "cast22": (D / "cast2022" / "2022_evaluation_topics_tree_v1.0.json", None),
    "cast22ids": (D / "cast2022" / "2022_evaluation_topics_turn_ids.json", None),
    "topqrels": (D / "topiocqa" / "dev_gold.trec", 400),
}
# made from the real files at start: hredqs generated next queries (id<TAB>text, from the rnk)
DERIVED = {"hredgen": lambda src: b"".join(
    b"hredqs-%d\t%s\n" % (i, line) for i, line in
    enumerate(src["rnk"].read_bytes().splitlines(), 1)),
    # qid<TAB>label for breakdown --by labels: the CAsT turns, labelled by conversation
    "labels": lambda src: b"".join(
        b"%s\t%s\n" % (q, q.split(b"_")[0]) for q in dict.fromkeys(
            line.split()[0] for line in src["cqrels"].read_bytes().splitlines() if line))}

# Valid commands: (subcommand, argv with {input} placeholders and @output names, expected
# exit statuses when unmutated). "@x" is an output path inside the case folder.
TEMPLATES = [
    ("eval", ["eval", "-m", "map", "{qrels}", "{run}"]),
    ("eval", ["eval", "-q", "-m", "all_trec", "-o", "@out.txt", "{qrels}", "{run}"]),
    ("eval", ["eval", "-m", "RR@3", "-m", "nDCG@3", "-m", "R@100", "{cqrels}", "{crun}"]),
    ("eval", ["eval", "-q", "-m", "all_trec", "-Z", "{zscores}", "{qrels}", "{run}"]),
    ("eval", ["eval", "-R", "prefs", "-m", "all_prefs", "{prefs}", "{prefsrun}"]),
    ("eval", ["eval", "-c", "-M", "100", "-l", "1", "-N", "1000", "-m", "utility",
              "-m", "P.5,10", "--format", "json", "{qrels}", "{run2}"]),
    ("eval", ["eval", "--engine", "pytrec_eval", "-m", "P.5", "-m", "ndcg_cut.10", "{qrels}",
              "{run}"]),
    ("compare", ["compare", "{cqrels}", "{crun}", "{crun2}", "-m", "map", "-m", "ndcg_cut.3",
                 "--permutations", "200", "--bootstrap", "200", "-o", "@cmp.txt"]),
    ("compare", ["compare", "{qrels}", "{run}", "{run2}", "-m", "P.10", "--all-pairs",
                 "--format", "latex", "--permutations", "100", "--bootstrap", "100"]),
    ("breakdown", ["breakdown", "{cqrels}", "{crun}", "{crun2}", "-m", "ndcg_cut.3",
                   "-o", "@bd.txt"]),
    ("plot", ["plot", "depth", "{cqrels}", "{crun}", "{crun2}", "-m", "ndcg_cut.3",
              "-o", "@p.png"]),
    ("plot", ["plot", "diff", "{cqrels}", "{crun}", "{crun2}", "-m", "map", "-o", "@p.svg"]),
    ("plot", ["plot", "dist", "{cqrels}", "{crun}", "-m", "map", "--title", "x", "-o", "@p.png"]),
    ("diff", ["diff", "{teout}", "{teout2}", "--ignore", "runid"]),
    ("diff", ["diff", "{teout}", "--qrels", "{qrels}", "--run", "{run}", "--eval-args", "-m map"]),
    ("collapse", ["collapse", "{prun}", "-o", "@docs.run"]),
    ("convert", ["convert", "qrecc", "--qrels", "{qrecctsv}", "--qrels-out", "@q.qrels"]),
    ("convert", ["convert", "qrecc", "--qrels", "{qreccjson}", "--qrels-out", "@q.qrels"]),
    ("convert", ["convert", "topiocqa", "--qrels", "{topgold}", "--qrels-out", "@t.qrels"]),
    ("convert", ["convert", "cast", "--topics", "{castjson}", "--query-field", "manual",
                 "--topics-out", "@c.tsv", "--meta-out", "@meta.jsonl", "--qrels", "{castqrels}",
                 "--qrels-out", "@c.qrels"]),
    ("convert", ["convert", "topics", "{dtopics}", "@t.jsonl"]),
    ("convert", ["convert", "rewrites", "{dev2k}", "@rw.tsv", "--rewrite-field", "GPT_rewrite"]),
    ("convert", ["convert", "irds", "trec-cast/v1/2021", "--topics-out", "@irds.tsv"]),
    ("convert", ["convert", "sessions", "aol", "{aol}", "--topics", "@s.tsv", "--qrels",
                 "@s.qrels"]),
    ("convert", ["convert", "sessions", "webis", "{webis}", "--split", "mission", "--topics",
                 "@s.tsv"]),
    ("convert", ["convert", "sessions", "hredqs", "{ctx}", "--rnk", "{rnk}", "--topics",
                 "@s.tsv", "--qrels", "@s.qrels"]),
    ("gen", ["gen", "{dev2k}", "{dev2k}", "--pred-field", "GPT_rewrite", "--metric", "per",
             "--metric", "bleu", "--metric", "rougeL"]),
    ("gen", ["gen", "{dev2k}", "{dev2k}", "--pred-field", "GPT_rewrite", "--pred-id-field",
             "Conversation_no,Turn_no", "--ref-id-field", "Conversation_no,Turn_no",
             "--metric", "per", "--per-instance", "@inst.tsv"]),
    ("suggest", ["suggest", "hredqs", "{ctx}", "--rnk", "{rnk}", "--generated", "{rnk}",
                 "--tgt", "{rnk}", "--metric", "per"]),
    ("suggest", ["suggest", "marco", "{marco}", "--metric", "per", "--metric", "bleu",
                 "--generated", "{marco}"]),
    ("suggest", ["suggest", "hredqs", "{ctx}", "--rnk", "{rnk}", "--generated", "{hredgen}",
                 "--metric", "bleu"]),
    ("convert", ["convert", "sessions", "trec-session", "{st13}", "--topics", "@s.tsv",
                 "--results-out", "@r.jsonl"]),
    ("convert", ["convert", "cast", "--topics", "{cast22}", "--turn-ids", "{cast22ids}",
                 "--query-field", "raw", "--topics-out", "@c22.tsv"]),
    ("convert", ["convert", "irds", "msmarco-passage/dev/small", "--topics-out", "@irds.tsv"]),
    ("eval", ["eval", "--engine", "pytrec_eval", "-m", "P.99999999999999999999", "{qrels}",
              "{run}"]),
    ("eval", ["eval", "-N", "2147483648", "-m", "utility", "{qrels}", "{run}"]),
    ("breakdown", ["breakdown", "{cqrels}", "{crun}", "{crun2}", "-m", "map", "--by", "labels",
                   "--labels", "{labels}", "--format", "json"]),
    ("index", ["index", "{coll}", "-o", "@idx", "--quiet"]),
    ("index", ["index", "{coll}", "-o", "@lidx", "--backend", "lucene", "--quiet"], 0.3, 3),
    ("search", ["search", "{lindex}", "{dtopics}", "-k", "10", "-o", "@l.run", "--quiet"], 0.3, 3),
    ("search", ["search", "{dindex}", "{dtopics}", "-k", "10", "-o", "@d.run", "--quiet"], 0.1, 4),
    ("search", ["search", "{index}", "{dtopics}", "-k", "10", "-o", "@s.run", "--quiet"]),
    ("cqr", ["cqr", "--qrels", "{dqrels}", "--index", "{index}", "--topics", "{dtopics}",
             "--topics", "{dtopics2}", "-k", "10", "--runs-dir", "@runs", "-o", "@cqr.txt",
             "--quiet"]),
    ("fuse", ["fuse", "{crun}", "{crun2}", "-o", "@f.run"]),
    ("fuse", ["fuse", "{crun}", "{crun2}", "-o", "@f.run", "--method", "combmnz", "--norm",
              "zmuv", "--runid", "x"]),
    ("fuse", ["fuse", "{crun}", "{crun2}", "-o", "@f.run", "--method", "wsum", "--optimize",
              "map", "--train-qrels", "{cqrels}"]),
    ("fuse", ["fuse", "{crun}", "{crun2}", "-o", "@f.run", "--method", "probfuse", "--params",
              "n_segments=5", "--train-qrels", "{cqrels}"]),
    ("report", ["report", "{cqrels}", "{crun}", "{crun2}", "-m", "map", "-m", "ndcg_cut.3",
                "--permutations", "50", "--bootstrap", "50", "-o", "@r.html"]),
    ("report", ["report", "{cqrels}", "{crun}", "{crun2}", "-m", "recip_rank", "-l", "2",
                "--baseline", "{crun2}", "--title", "t", "--permutations", "20",
                "--bootstrap", "20", "-o", "@r.html"]),
    ("measures", ["measures"]),
    ("measures", ["measures", "--kind", "ir_measures", "--compat", "9.0.8"]),
]

NUM_OPTS = {"-M", "-l", "-N", "--permutations", "--bootstrap", "--seed", "--places", "--alpha",
            "--max-depth", "-k", "--depth", "--rbo-p", "--k1", "--b", "--batch-size",
            "--threads", "--gap", "--tol", "--rm3-fb-docs", "--rm3-fb-terms", "--rrf-k",
            "--fusion-depth", "--k"}
EXTRA_NUM = {
    "eval": ["-M", "-l", "-N", "--places"],
    "compare": ["--seed", "--permutations", "--bootstrap", "--alpha", "-M", "-l", "--places"],
    "breakdown": ["--max-depth", "--alpha", "-l", "--places"],
    "plot": ["-l", "--max-depth"],
    "diff": ["--tol"],
    "collapse": [],
    "convert": ["--k", "--gap"],
    "gen": ["--depth", "--rbo-p", "--rm3-fb-docs", "--rm3-fb-terms", "--rm3-original-weight"],
    "suggest": ["--gap", "--depth", "--rrf-k", "--fusion-depth", "--rbo-p"],
    "index": ["--k1", "--b", "--batch-size", "--threads", "--max-seq-length",
              "--query-max-length"],
    "search": ["-k", "--threads", "--k1", "--b"],
    "cqr": ["-k", "--threads"],
    "fuse": ["--params", "--weights"],
    "report": ["-k", "-l", "--alpha", "--permutations", "--bootstrap", "--seed", "--places"],
    "measures": [],
}
EXTRA_TEXT = {
    "eval": ["-m", "-m", "-m", "-R", "-Z", "--compat", "--format", "-o"],
    "compare": ["-m", "--baseline", "--test", "--correction", "--format", "-o"],
    "breakdown": ["-m", "--labels", "--baseline", "--by", "-o"],
    "plot": ["-m", "--title", "-o"],
    "diff": ["--ignore", "--eval-args", "--format", "-o"],
    "collapse": ["--runid", "-o"],
    "convert": ["--qid-style", "--id-field", "--query-field", "--missing", "--rewrite-field",
                "--sep", "--runid", "--topics-format", "--to", "--from"],
    "gen": ["--pred-id-field", "--ref-id-field", "--pred-field", "--ref-field", "--embeddings",
            "--index", "--per-instance", "--tokenizer", "--metric"],
    "suggest": ["--column", "--gen-field", "--embeddings", "--candidates", "--scores", "--index",
                "--per-instance", "--tgt", "--split", "--metric"],
    "index": ["--preset", "--model", "--format", "--backend", "--encoder"],
    "search": ["--run-id", "--preset", "--dataset-file", "--dataset", "--query-field",
               "--rewrites", "--topics-format"],
    "cqr": ["--name", "--preset", "--raw", "--dataset", "--rewrites", "--collection",
            "--query-field", "--backend"],
    "fuse": ["--method", "--norm", "--params", "--weights", "--optimize", "--runid",
             "--train-run", "-o"],
    "report": ["-m", "--baseline", "--correction", "--title", "--groups", "--compat", "-o"],
    "measures": ["--kind", "--compat"],
}
OUTPUT_OPTS = {"-o", "--per-instance"}
ODD_NUMBERS = ["-1", "0", "-0", "1", "2147483648", "-2147483649", "9223372036854775808",
               "99999999999999999999", "1e309", "-1e309", "nan", "inf", "-inf", "1.5", "0x10",
               "", "abc", " 7", "1_000", "1e-320", "0.9999999999999999"]
ODD_TEXT = ["", ",", ",,", "a,b,c", "'unclosed", "\"", "$x^$", "$\\frac{$", "\\", "map.",
            "P.99999999999999999999", "P.-1", "ndcg_cut.1e309", "RR@0", "RR@-3", "nDCG@nan",
            "P(rel=)@", "utility.1,2", "all", "-", "/", "/nonexistent/x", "é", "\u202e",
            "x" * 10000, "map,map,map", "--", "-q", "9.0.8", "official", "recip_rank.3",
            "lucene", "dense", "bm25s", "irds", "qrecc", "topiocqa", "cast", "/dev/stdin",
            "/dev/null", "irds:msmarco-passage", "trec", "jsonl", "tsv", "qrecc-test", "raw",
            "manual", "rewrite", "mission", "bleu", "sim_emb", "markdown", "latex", "json"]
ODD_MEASURES = ["P.99999999999999999999", "RR@3", "P.0", "ndcg_cut.-1", "recall.1e309",
                "iprec_at_recall..1.5", "utility.1,a", "P(rel=99999999999)@3", "nDCG@99999999999",
                "map_cut.", "Rprec_mult.nan", "ndcg.1=nan", "success.0", "AP@0", "map@3"]

ENV_KINDS = ["stdout_closed", "stdout_full", "non_utf8_name", "stdin", "fifo_writer",
             "fifo_no_writer", "dev_zero", "dev_urandom", "missing_out_dir", "signal"]


# ---------------------------------------------------------------------------- file mutations
def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _num_re():
    return re.compile(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def mutate_bytes(rng: random.Random, data: bytes, is_json: bool) -> tuple[bytes, str]:
    ops = ["flip", "insert_nul", "insert_ff", "del_line", "dup_line", "swap_lines", "shuffle",
           "drop_field", "add_field", "odd_field", "odd_number", "utf16", "latin1", "bom",
           "crlf", "no_final_newline", "truncate", "gzip", "gzip_truncated", "bz2", "xz", "zstd",
           "empty", "spaces", "long_line", "blank_lines", "comment_lines", "tabs_spaces"]
    if is_json:
        ops += ["surrogate", "deep", "huge_number", "json_type", "surrogate", "json_truncate"]
    op = rng.choice(ops)
    lines = _lines(data)
    n = len(lines)
    i = rng.randrange(max(n - 1, 1))
    if op == "flip":
        b = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b), op
    if op in ("insert_nul", "insert_ff"):
        pos = rng.randrange(len(data) + 1)
        return data[:pos] + (b"\x00" if op == "insert_nul" else b"\xff\xfe") + data[pos:], op
    if op == "del_line":
        return b"\n".join(lines[:i] + lines[i + 1:]), op
    if op == "dup_line":
        return b"\n".join(lines[:i + 1] + lines[i:]), op
    if op == "swap_lines":
        j = rng.randrange(max(n - 1, 1))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines), op
    if op == "shuffle":
        body = lines[:-1] if lines and lines[-1] == b"" else lines
        rng.shuffle(body)
        return b"\n".join(body) + b"\n", op
    if op in ("drop_field", "add_field", "odd_field", "tabs_spaces"):
        line = lines[i]
        sep = b"\t" if b"\t" in line else b" "
        fields = line.split(sep)
        k = rng.randrange(len(fields))
        if op == "drop_field":
            del fields[k]
        elif op == "add_field":
            fields.insert(k, b"extra")
        elif op == "tabs_spaces":
            sep = b" \t" if sep == b"\t" else b"\t"
        else:
            fields[k] = rng.choice(ODD_NUMBERS + ODD_TEXT[:12]).encode("utf-8", "surrogatepass")
        lines[i] = sep.join(fields)
        return b"\n".join(lines), f"{op}@{i + 1}"
    if op == "odd_number":
        matches = list(_num_re().finditer(data))
        if not matches:
            return data + b"\n1e309\n", op
        m = rng.choice(matches)
        odd = rng.choice(ODD_NUMBERS).encode()
        return data[:m.start()] + odd + data[m.end():], f"{op}:{odd.decode()}"
    if op == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16"), op
    if op == "latin1":
        return data.decode("utf-8", "replace").replace("e", "é", 3).encode("latin-1", "replace"), op
    if op == "bom":
        return b"\xef\xbb\xbf" + data, op
    if op == "crlf":
        return data.replace(b"\n", b"\r\n"), op
    if op == "no_final_newline":
        return data.rstrip(b"\n"), op
    if op == "truncate":
        return data[:rng.randrange(len(data) + 1)], op
    if op == "gzip":
        return gzip.compress(data), op
    if op == "gzip_truncated":
        z = gzip.compress(data)
        return z[:rng.randrange(2, max(len(z) - 1, 3))], op
    if op == "bz2":
        return bz2.compress(data), op
    if op == "xz":
        return lzma.compress(data), op
    if op == "zstd":
        return b"\x28\xb5\x2f\xfd" + data[:100], op
    if op == "empty":
        return b"", op
    if op == "spaces":
        return b" \n\t\n  \n", op
    if op == "long_line":
        return data + b"x" * rng.choice([70000, 2_000_000]) + b"\n", op
    if op == "blank_lines":
        return b"\n\n" + data.replace(b"\n", b"\n\n", 5), op
    if op == "comment_lines":
        return b"# a comment\n" + data, op
    if op == "surrogate":
        m = re.search(rb'"([^"\\]{1,40})"', data[rng.randrange(max(len(data) // 2, 1)):])
        if not m:
            return data, op
        start = data.find(m.group(0))
        return data[:start] + b'"\\ud800"' + data[start + len(m.group(0)):], op
    if op == "deep":
        return b"[" * 100000 + b"]" * 100000, op
    if op == "huge_number":
        return re.sub(rb"\d+", b"1" + b"0" * 400, data, count=3), op
    if op == "json_type":
        return rng.choice([b"[]", b"{}", b"null", b"42", b'"x"', b"[1,2]", b'{"a": []}']), op
    if op == "json_truncate":
        return data[:len(data) // 2], op
    return data, op


def damage_index(rng: random.Random, folder: Path) -> str:
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if not files:
        return "none"
    f = rng.choice(files)
    op = rng.choice(["delete", "empty", "truncate", "flip", "json_byte", "append"])
    rel = f.relative_to(folder)
    data = f.read_bytes()
    if op == "delete":
        f.unlink()
    elif op == "empty":
        f.write_bytes(b"")
    elif op == "truncate":
        f.write_bytes(data[:rng.randrange(len(data) + 1)])
    elif op == "flip":
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] ^= 0xFF
        f.write_bytes(bytes(b))
    elif op == "json_byte":
        b = bytearray(data)
        if b:
            b[rng.randrange(len(b))] = ord(rng.choice("{}[],:\"x\xff"[:8]))
        f.write_bytes(bytes(b))
    else:
        f.write_bytes(data + b"garbage\n")
    return f"index:{op}:{rel}"


# ---------------------------------------------------------------------------- cases
class Case:
    def __init__(self, number: int, sub: str, argv: list, changes: list, env_kind: str | None,
                 folder: Path, inputs: set, outputs: list, stdin_data: bytes | None = None):
        self.number, self.sub, self.argv, self.changes = number, sub, argv, changes
        self.env_kind, self.folder, self.inputs, self.outputs = env_kind, folder, inputs, outputs
        self.stdin_data = stdin_data
        self.fifo_data = None
        self.signal = None


def _prepare_sources(base: Path, backends=("bm25s", "lucene", "dense")) -> dict:
    """Cut every source once into base/src/; build the demo index once."""
    src = base / "src"
    src.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, (path, keep) in SOURCES.items():
        if not path.exists():
            continue
        data = path.read_bytes()
        if keep is not None:
            data = b"\n".join(data.split(b"\n")[:keep]) + b"\n"
        target = src / (name + "".join(path.suffixes[-1:]))
        target.write_bytes(data)
        out[name] = target
    for name, make in DERIVED.items():
        target = src / (name + ".tsv")
        target.write_bytes(make(out))
        out[name] = target
    for name, backend in (("index", "bm25s"), ("lindex", "lucene"), ("dindex", "dense")):
        if backend not in backends:
            continue
        idx = base / "src" / name
        if not idx.exists():
            res = subprocess.run(trecqr_cmd() + ["index", str(out["coll"]), "-o", str(idx),
                                                 "--backend", backend, "--quiet"],
                                 capture_output=True, timeout=900)
            if res.returncode != 0:  # a backend not installed: its templates are left out
                continue
        out[name] = idx
    return out


def trecqr_cmd() -> list:
    return [sys.executable, "-c", "import sys; sys.argv[0] = 'trecqr'; "
            "from trecqr.launch import entry; entry()"]


def make_case(rng: random.Random, number: int, base: Path, sources: dict,
              only: set | None) -> Case:
    templates = [t for t in TEMPLATES if (not only or t[0] in only) and all(
        n in sources for n in re.findall(r"\{(\w+)\}", " ".join(t[1])))]
    sub = rng.choice(sorted({x[0] for x in templates}))  # every subcommand as often
    templates = [x for x in templates if x[0] == sub]
    t = rng.choices(templates, weights=[x[2] if len(x) > 2 else 1.0 for x in templates])[0]
    sub, argv = t[0], list(t[1])
    slow = t[3] if len(t) > 3 else 1
    folder = base / f"case{number:05d}"
    folder.mkdir(parents=True)
    home = folder / "home"
    home.mkdir()
    changes = []
    # copy the inputs
    names = [re.fullmatch(r"\{(\w+)\}", a).group(1) for a in argv if re.fullmatch(r"\{\w+\}", a)]
    paths = {}
    for name in dict.fromkeys(names):
        s = sources[name]
        dst = folder / s.name
        if s.is_dir():
            shutil.copytree(s, dst)
        else:
            shutil.copyfile(s, dst)
        paths[name] = dst
    outputs = [folder / a[1:] for a in argv if a.startswith("@")]
    argv = [str(paths[a[1:-1]]) if re.fullmatch(r"\{\w+\}", a) else
            str(folder / a[1:]) if a.startswith("@") else a for a in argv]
    r = rng.random()
    env_kind = None
    n_mut = 1 if rng.random() < 0.8 else 2
    for _ in range(n_mut):
        r = rng.random()
        if r < 0.5 and paths:  # a file
            name = rng.choice(list(paths))
            p = paths[name]
            if p.is_symlink() or not p.exists():
                continue
            if p.is_dir():
                changes.append(damage_index(rng, p))
                continue
            special = rng.random()
            if special < 0.04:
                p.unlink()
                p.mkdir()
                changes.append(f"{name}:directory")
            elif special < 0.07:
                p.unlink()
                changes.append(f"{name}:missing")
            elif special < 0.09:
                p.unlink()
                os.symlink(p.name, p)
                changes.append(f"{name}:symlink-loop")
            else:
                data, op = mutate_bytes(rng, p.read_bytes(), p.suffix in (".json", ".jsonl"))
                p.write_bytes(data)
                changes.append(f"{name}:{op}")
        elif r < 0.85:  # an option
            pool_num = EXTRA_NUM.get(sub, [])
            pool_text = EXTRA_TEXT.get(sub, [])
            opts_in = [i for i, a in enumerate(argv) if a in NUM_OPTS]
            if opts_in and rng.random() < 0.4:
                i = rng.choice(opts_in)
                argv[i + 1] = rng.choice(ODD_NUMBERS)
                changes.append(f"opt {argv[i]}={argv[i + 1]!r}")
            elif pool_num and rng.random() < 0.5:
                o = rng.choice(pool_num)
                v = rng.choice(ODD_NUMBERS)
                argv[len(argv):] = [o, v]
                changes.append(f"opt {o}={v!r}")
            elif pool_text:
                o = rng.choice(pool_text)
                if o not in OUTPUT_OPTS and rng.random() < 0.3:  # a real file of another kind
                    other = sources[rng.choice([n for n in sources if n not in paths])]
                    dst = folder / ("other-" + other.name)
                    if not dst.exists():
                        (shutil.copytree if other.is_dir() else shutil.copyfile)(other, dst)
                    v = str(dst)
                else:
                    v = rng.choice(ODD_MEASURES if o == "-m" else ODD_TEXT)
                argv[len(argv):] = [o, v]
                changes.append(f"opt {o}={v[:60]!r}")
        elif env_kind is None:
            env_kind = rng.choice(ENV_KINDS)
            changes.append(f"env:{env_kind}")
    case = Case(number, sub, argv, changes, env_kind, folder, set(), outputs)
    case.slow = slow
    _apply_env(rng, case, paths)
    case.inputs = {p for p in folder.rglob("*")}
    return case


def _apply_env(rng, case: Case, paths: dict) -> None:
    kind = case.env_kind
    file_inputs = [(n, p) for n, p in paths.items() if p.is_file()]
    if kind in ("non_utf8_name", "stdin", "fifo_writer", "fifo_no_writer", "dev_zero",
                "dev_urandom") and not file_inputs:
        case.env_kind = None
        return
    if kind is None:
        return
    if kind in ("non_utf8_name", "stdin", "fifo_writer", "fifo_no_writer", "dev_zero",
                "dev_urandom"):
        name, p = rng.choice(file_inputs)
        i = case.argv.index(str(p))
        if kind == "non_utf8_name":
            new = os.fsencode(p.parent) + b"/x\xff\xfe" + os.fsencode(p.name)
            os.rename(p, new)
            case.argv[i] = new
        elif kind == "stdin":
            case.stdin_data = p.read_bytes()
            case.argv[i] = "-"
        elif kind in ("fifo_writer", "fifo_no_writer"):
            data = p.read_bytes()
            p.unlink()
            os.mkfifo(p)
            if kind == "fifo_writer":
                case.fifo_data = (p, data)
        else:
            case.argv[i] = "/dev/zero" if kind == "dev_zero" else "/dev/urandom"
    elif kind == "missing_out_dir":
        outs = [i for i, a in enumerate(case.argv) if isinstance(a, str) and
                any(a == str(o) for o in case.outputs)]
        if outs:
            i = rng.choice(outs)
            case.argv[i] = str(case.folder / "no" / "such" / Path(case.argv[i]).name)
    elif kind == "signal":
        case.signal = (rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]),
                       rng.uniform(0.05, 2.5))


# ---------------------------------------------------------------------------- running
def run_case(case: Case, timeout: float) -> dict:
    env = dict(os.environ)
    env["HOME"] = str(case.folder / "home")
    env.pop("IR_DATASETS_HOME", None)
    env["TRECQR_FIFO_WAIT"] = "2"
    env["PYTHONWARNINGS"] = ""
    env.pop("TRECQR_DEBUG", None)
    stdout = subprocess.PIPE
    pass_fds = ()
    preexec = None
    if case.env_kind == "stdout_full":
        stdout = open("/dev/full", "wb")  # noqa: SIM115
    elif case.env_kind == "stdout_closed":
        stdout = subprocess.DEVNULL

        def preexec():
            os.close(1)
    writer = None
    if case.fifo_data is not None:
        p, data = case.fifo_data

        def write():
            try:
                with open(p, "wb") as fh:
                    fh.write(data)
            except OSError:
                pass
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
    start = time.monotonic()
    proc = subprocess.Popen(trecqr_cmd() + case.argv, cwd=case.folder, env=env,
                            stdin=subprocess.PIPE if case.stdin_data is not None
                            else subprocess.DEVNULL,
                            stdout=stdout, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=preexec, pass_fds=pass_fds)
    if case.signal is not None:
        signum, delay = case.signal

        def kill():
            time.sleep(delay)
            try:
                os.kill(proc.pid, signum)
            except OSError:
                pass
        threading.Thread(target=kill, daemon=True).start()
    hang = False
    try:
        out, err = proc.communicate(case.stdin_data, timeout=timeout)
    except subprocess.TimeoutExpired:
        hang = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    if case.env_kind == "stdout_full":
        stdout.close()
    if writer is not None:  # unblock a writer still waiting for a reader
        try:
            fd = os.open(case.fifo_data[0], os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
    return {"code": proc.returncode, "stderr": err.decode("utf-8", "replace"), "hang": hang,
            "seconds": time.monotonic() - start}


def classify(case: Case, res: dict) -> dict:
    err = res["stderr"]
    lines = [ln for ln in err.splitlines() if ln.strip()]
    code = res["code"]
    flags = {}
    if res["hang"]:
        flags["hang"] = True
    if "Traceback (most recent call last)" in err:
        flags["traceback"] = True
    if "internal error" in err:
        flags["internal"] = True
    allowed = {0, 2}
    done = {0}  # statuses of a command that did its work (its outputs may stay)
    if case.sub == "diff":
        allowed.add(1)  # the outputs differ: a report was written
        done.add(1)
    if case.env_kind in ("stdout_closed", "stdout_full"):
        allowed.add(1)
    if case.signal is not None:
        allowed.add(128 + case.signal[0])
    if not res["hang"] and code not in allowed:
        flags["exit"] = code
    usage = any(ln.startswith("Usage:") for ln in lines) and any(
        ln.startswith("Error:") for ln in lines)
    if code != 0 and len(lines) > 1 and not usage:
        flags["multiline"] = True
    # leftovers
    left = []
    for p in case.folder.rglob("*"):
        name = os.fsdecode(p.name)
        if name.startswith(".trecqr-"):
            left.append(str(p.relative_to(case.folder)))
    if code not in done:
        for o in case.outputs:
            if o.exists() or o.is_symlink():
                left.append(o.name)
        for p in case.folder.iterdir():
            if p not in case.inputs and p.name not in ("home",):
                if p.name not in [o.name for o in case.outputs]:
                    left.append(p.name)
    home = case.folder / "home"
    if (home / ".ir_datasets").exists():
        left.append("~/.ir_datasets")
    if left:
        flags["leftover"] = sorted(set(left))
    return flags


def summarise(results) -> list:
    table = collections.OrderedDict()
    for sub, flags in results:
        row = table.setdefault(sub, collections.Counter())
        row["cases"] += 1
        if not flags:
            row["clean"] += 1
        for key in ("traceback", "internal", "exit", "multiline", "leftover", "hang"):
            if key in flags:
                row[key] += 1
    return [(sub, table[sub]) for sub in sorted(table)]


COLUMNS = [("cases", "cases"), ("clean", "clean"), ("traceback", "tracebacks"),
           ("internal", "internal errors"), ("exit", "other exit codes"),
           ("multiline", "multi-line errors"), ("leftover", "leftover files"), ("hang", "hangs")]


def markdown(rows) -> str:
    out = ["| subcommand | " + " | ".join(c[1] for c in COLUMNS) + " |",
           "| --- |" + " ---: |" * len(COLUMNS)]
    total = collections.Counter()
    for sub, row in rows:
        total.update(row)
        out.append(f"| {sub} | " + " | ".join(str(row[c[0]]) for c in COLUMNS) + " |")
    out.append("| **all** | " + " | ".join(f"**{total[c[0]]}**" for c in COLUMNS) + " |")
    return "\n".join(out)


def _preload() -> None:
    """Import trecqr and its command modules once, before forking a child per case (a case
    then costs its work, not Python's start-up). pandas too: pyarrow imports it at its first
    array (to check for pandas objects) where it is installed, about half a second a case.
    ir_datasets is left out: it reads HOME when imported, and each case has its own HOME."""
    os.environ["TRECQR_FIFO_WAIT"] = "2"
    import importlib

    import trecqr.cli  # noqa: F401

    for name in ("trecqr.report.compare", "trecqr.report.breakdown", "trecqr.report.plots",
                 "trecqr.report.diff", "trecqr.adapters.collapse", "trecqr.adapters.qrecc",
                 "trecqr.adapters.topiocqa", "trecqr.adapters.cast", "trecqr.adapters.topics",
                 "trecqr.adapters.rewrites", "trecqr.adapters.sessions", "trecqr.generative.gen",
                 "trecqr.generative.suggest", "trecqr.retrieval.commands",
                 "trecqr.retrieval.cqr", "trecqr.retrieval.bm25", "matplotlib.pyplot",
                 "pandas"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module being edited: the child imports it again
            pass


class _Running:
    def __init__(self, case, pid, out, err, helpers, deadline, signal_at):
        self.case, self.pid, self.out, self.err = case, pid, out, err
        self.helpers, self.deadline, self.signal_at = helpers, deadline, signal_at
        self.start = time.monotonic()


def _fork_writer(path_or_fd, data: bytes, seconds: float) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            signal.alarm(int(seconds) + 1)
            if isinstance(path_or_fd, int):
                fd = path_or_fd
            else:
                fd = os.open(path_or_fd, os.O_WRONLY)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BaseException:  # noqa: BLE001
            pass
        os._exit(0)
    return pid


def start_case(case: Case, scratch: Path, timeout: float) -> _Running:
    env = dict(os.environ)
    env["HOME"] = str(case.folder / "home")
    env.pop("IR_DATASETS_HOME", None)
    env.pop("TRECQR_DEBUG", None)
    env["TRECQR_FIFO_WAIT"] = "2"
    out = scratch / f"{case.number}.out"
    err = scratch / f"{case.number}.err"
    helpers = []
    stdin_r = None
    if case.stdin_data is not None:
        stdin_r, stdin_w = os.pipe()
        helpers.append(_fork_writer(stdin_w, case.stdin_data, timeout))
        os.close(stdin_w)
    if case.fifo_data is not None:
        helpers.append(_fork_writer(str(case.fifo_data[0]), case.fifo_data[1], timeout))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: a fresh `trecqr ARGS` as far as it can tell
        try:
            os.setsid()
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM):
                signal.signal(s, signal.SIG_DFL)
            fd = os.open(os.devnull, os.O_RDONLY) if stdin_r is None else stdin_r
            os.dup2(fd, 0)
            if case.env_kind == "stdout_full":
                os.dup2(os.open("/dev/full", os.O_WRONLY), 1)
            else:
                os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
            os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
            if case.env_kind == "stdout_closed":
                os.close(1)
            os.closerange(3, 256)
            os.chdir(case.folder)
            os.environ.clear()
            os.environ.update(env)
            sys.argv = ["trecqr"] + [os.fsdecode(a) if isinstance(a, bytes) else a
                                     for a in case.argv]
            import io

            sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
            sys.stdout = None if case.env_kind == "stdout_closed" else \
                io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True,
                                          errors="backslashreplace")
            from trecqr.cli import entry

            entry()
        except BaseException:  # noqa: BLE001
            import traceback

            traceback.print_exc()
        os._exit(99)
    if stdin_r is not None:
        os.close(stdin_r)
    signal_at = None
    if case.signal is not None:
        signal_at = time.monotonic() + case.signal[1]
    return _Running(case, pid, out, err, helpers,
                    time.monotonic() + timeout * getattr(case, "slow", 1), signal_at)


def _reap_helpers(helpers) -> None:
    for h in helpers:
        try:
            os.kill(h, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(h, 0)
        except OSError:
            pass


def campaign(cases: int, seed: int = 0, jobs: int = 2, timeout: float = 90.0,
             only: set | None = None, report: str | None = None, keep: bool = False,
             progress: bool = True, base: str | None = None, fast: bool = False):
    """Run the campaign; returns (table rows, unclean cases)."""
    rng = random.Random(seed)
    base_dir = Path(base or tempfile.mkdtemp(prefix="trecqr-fuzz-"))
    scratch = base_dir / "_io"
    scratch.mkdir(parents=True, exist_ok=True)
    sources = _prepare_sources(base_dir, ("bm25s",) if fast else ("bm25s", "lucene", "dense"))
    _preload()
    results, bad = [], []
    specs = [(i, random.Random(rng.random())) for i in range(cases)]
    running: list[_Running] = []

    def finish(r: _Running, status: int, hang: bool) -> None:
        _reap_helpers(r.helpers)
        code = os.waitstatus_to_exitcode(status) if status is not None else -9
        if code < 0:
            code = 128 - code  # killed by a signal: as a shell reports it
        err = r.err.read_bytes().decode("utf-8", "replace") if r.err.exists() else ""
        res = {"code": code, "stderr": err, "hang": hang, "seconds": time.monotonic() - r.start}
        case = r.case
        flags = classify(case, res)
        results.append((case.sub, flags))
        if flags:
            bad.append({"case": case.number, "sub": case.sub,
                        "argv": [os.fsdecode(a) if isinstance(a, bytes) else a
                                 for a in case.argv],
                        "changes": case.changes, "code": code, "flags": flags,
                        "stderr": err[-3000:]})
            if report:  # as they come, to look at during a long run
                with open(report + ".unclean.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(bad[-1]) + "\n")
        for f in (r.out, r.err):
            with contextlib.suppress(OSError):
                f.unlink()
        if progress and len(results) % 100 == 0:
            print(f"{len(results)}/{cases} cases, {len(bad)} unclean", file=sys.stderr,
                  flush=True)
        if not keep and not flags:
            shutil.rmtree(case.folder, ignore_errors=True)

    def stop(signum, frame):
        raise KeyboardInterrupt

    old_term = signal.signal(signal.SIGTERM, stop)
    try:
        _loop(specs, running, jobs, base_dir, sources, only, scratch, timeout, finish)
    finally:  # stopped: no child is left running
        signal.signal(signal.SIGTERM, old_term)
        for r in running:
            with contextlib.suppress(OSError):
                os.killpg(r.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(r.pid, 0)
            _reap_helpers(r.helpers)
    rows = summarise(results)
    if report:
        with open(report, "w", encoding="utf-8") as fh:
            json.dump({"cases": cases, "seed": seed, "table": {s: dict(r) for s, r in rows},
                       "unclean": sorted(bad, key=lambda b: b["case"])}, fh, indent=1)
    if not keep:
        shutil.rmtree(base_dir, ignore_errors=True)
    return rows, bad


def _loop(specs, running, jobs, base_dir, sources, only, scratch, timeout, finish):
    while specs or running:
        while specs and len(running) < jobs:
            i, r = specs.pop(0)
            case = make_case(r, i, base_dir, sources, only)
            running.append(start_case(case, scratch, timeout))
        time.sleep(0.01)
        now = time.monotonic()
        for r in list(running):
            pid, status = os.waitpid(r.pid, os.WNOHANG)
            if pid:
                running.remove(r)
                finish(r, status, False)
                continue
            if r.signal_at is not None and now >= r.signal_at:
                with contextlib.suppress(OSError):
                    os.kill(r.pid, r.case.signal[0])
                r.signal_at = None
            if now >= r.deadline:
                with contextlib.suppress(OSError):
                    os.killpg(r.pid, signal.SIGKILL)
                _, status = os.waitpid(r.pid, 0)
                running.remove(r)
                finish(r, None, True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds per case (a hang)")
    ap.add_argument("--only", action="append",
                    help="a subcommand to fuzz, repeatable or comma-separated (default: all)")
    ap.add_argument("--report", help="write the unclean cases here (JSON)")
    ap.add_argument("--keep", action="store_true", help="keep every case folder")
    ap.add_argument("--fast", action="store_true",
                    help="leave out the Lucene and dense backends (JVM and torch start-up)")
    args = ap.parse_args(argv)
    only = {name.strip() for names in args.only or () for name in names.split(",")}
    unknown = only - {t[0] for t in TEMPLATES}
    if unknown:
        ap.error(f"--only: no such subcommand: {', '.join(sorted(unknown))}")
    start = time.monotonic()
    rows, bad = campaign(args.cases, args.seed, args.jobs, args.timeout,
                         only or None, args.report, args.keep,
                         fast=args.fast)
    print(markdown(rows))
    print(f"\n{args.cases} cases in {time.monotonic() - start:.0f} s (seed {args.seed}); "
          f"{len(bad)} unclean")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
