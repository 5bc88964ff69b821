"""The fuzz campaign's inputs: real files of ../shared/data and fixtures/, cut to a few hundred
lines so that a case takes about a second, files derived from them, and the demo indexes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


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
    "ikatrun": (D / "ikat" / "2024_sample_run.json", None),
    "ikattopics": (D / "ikat" / "2024_test_topics.json", None),
    "ikat23": (D / "ikat" / "2023_test_topics.json", None),
    "qtypes": (D / "qrecc" / "test_question_types.json", None),
    "scairun": (D / "qrecc" / "scai-run.json", None),
    "editor": (D / "qrecc" / "dev-sampled2k_chatgpt_ICL_editor.jsonl", 60),
    "llm4cs": (D / "cast2019" / "llm4cs-rew-rewrites.jsonl", 40),
    "lhuman": (D / "llmjudge" / "human-test.qrels", 400),
    "lllm": (D / "llmjudge" / "willia-umbrela1.qrels", 400),
}
# made from the real files at start: hredqs generated next queries (id<TAB>text, from the rnk)
DERIVED = {"hredgen": lambda src: b"".join(
    b"hredqs-%d\t%s\n" % (i, line) for i, line in
    enumerate(src["rnk"].read_bytes().splitlines(), 1)),
    # qid<TAB>label for breakdown --by labels: the CAsT turns, labelled by conversation
    "labels": lambda src: b"".join(
        b"%s\t%s\n" % (q, q.split(b"_")[0]) for q in dict.fromkeys(
            line.split()[0] for line in src["cqrels"].read_bytes().splitlines() if line)),
    # {group: [turn ids]} of the demo's turns (cqr/report --groups)
    "dgroups": lambda src: _groups(src["dqrels"]),
    # the demo's turns with two candidate rewrites each (raw, manual): cqr --candidates
    "dcands": lambda src: _candidates(src["dtopics"], src["dtopics2"]),
    # agree: a second qrels (grades made binary), and "reproductions" of the CAsT runs (every
    # fourth document replaced by one the original lacks; same length per topic)
    "cqrels2": lambda src: b"".join(
        b"%s %s %s %d\n" % (*f[:3], int(f[3]) > 0) for f in
        (line.split() for line in src["cqrels"].read_bytes().splitlines()) if len(f) == 4),
    "crunrep": lambda src: _reproduced(src["crun"]),
    "crun2rep": lambda src: _reproduced(src["crun2"])}


def _reproduced(run: Path) -> bytes:
    lines = [line.split() for line in run.read_bytes().splitlines() if line.strip()]
    return b"".join(b" ".join([f[0], f[1], b"NEW%d" % i if i % 4 == 0 else f[2], *f[3:]]) +
                    b"\n" for i, f in enumerate(lines, 1))


def _qids(path: Path) -> list:
    return list(dict.fromkeys(line.split()[0].decode() for line in
                              path.read_bytes().splitlines() if line.strip()))


def _groups(qrels: Path) -> bytes:
    qids = _qids(qrels)
    return json.dumps({"first": [q for q in qids if q.endswith("_1")],
                       "later": [q for q in qids if not q.endswith("_1")]}).encode()


def _candidates(raw: Path, manual: Path) -> bytes:
    def table(p):
        return dict(line.split("\t", 1) for line in p.read_text().splitlines() if "\t" in line)

    a, b = table(raw), table(manual)
    return "".join(json.dumps({"qid": q, "rewrite": [a[q], b.get(q, a[q])]}) + "\n"
                   for q in a).encode()


def prepare_sources(base: Path, backends=("bm25s", "lucene", "dense")) -> dict:
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
        target = src / (name + (".json" if name == "dgroups" else
                                ".jsonl" if name == "dcands" else
                                ".run" if name.endswith("rep") else
                                ".qrels" if name == "cqrels2" else ".tsv"))
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
            "from trecqr.runtime.launch import entry; entry()"]
