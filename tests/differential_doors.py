"""The doors of the differential harness: one call of a case through each of trecqr's ways in,
read back into one shape (Out). The command-line doors run in-process (click's CliRunner, as
tests/conftest.py's run_cli). What each output says about the topics it averages is read by
differential_stated, the one place that knows the wording of those fields.

A door takes the names it can take: RelevanceEvaluator (like pytrec_eval) trec_eval names only,
the ir_measures provider and pt.Experiment ir_measures names only and no trec_eval option.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pandas as pd

import trecqr
from conftest import run_cli
from differential_cases import RUNS, Case, qrels_dict, run_dict
from differential_refs import own_pipeline
import differential_stated as stated

FAST = ["--permutations", "1", "--bootstrap", "1"]   # compare/report: no long resampling


@dataclass
class Out:
    """A door's answer. means / topics / stated are keyed (run, key); pairs (base, run, key) ->
    (n, mean_base, mean_run); groups (group, run, key) -> (n, mean); refusal the error's text
    (lines counted by the checks) when the door refused the call."""

    door: str
    variant: str = "file"                   # which reference applies: "file" or "dict"
    scope: str = "all"                      # "all" names, "trec" or "irm" names only
    means: dict = field(default_factory=dict)
    topics: dict = field(default_factory=dict)
    stated: dict = field(default_factory=dict)
    pairs: dict = field(default_factory=dict)
    groups: dict = field(default_factory=dict)
    refusal: str | None = None
    stderr: str = ""
    pair_note: dict = field(default_factory=dict)   # compare's topics line: {run: n} it states
    text_n: dict = field(default_factory=dict)      # breakdown's text table: (group, run, key)
    columns: list = field(default_factory=list)     # pt.Experiment's measure columns, in order


def _cli(out: Out, args) -> str | None:
    """stdout of trecqr ARGS, or None with out.refusal set (stderr, or the traceback)."""
    try:
        result = run_cli(args)
    except Exception as exc:   # a traceback is a door's answer too: the checks flag it
        out.refusal = f"traceback: {type(exc).__name__}: {exc}\n(internal)"
        return None
    if result.exit_code:
        out.refusal = result.stderr.strip() or f"exit {result.exit_code}, no message"
        return None
    out.stderr = result.stderr
    return result.stdout


def _api(out: Out, call):
    try:
        return call()
    except (trecqr.TrecqrError, ValueError) as exc:
        out.refusal = str(exc)
    except Exception as exc:
        out.refusal = f"traceback: {type(exc).__name__}: {exc}\n(internal)"
    return None


def _names(case: Case, scope="all"):
    """The names as -m takes them (P.5, RR@3): the API takes trec_eval's spelling too."""
    keys = {"all": lambda k: True, "trec": lambda k: k in case.trec_keys(),
            "irm": lambda k: k in case.irm_keys()}[scope]
    return [a for a, k in case.measures if keys(k)]


def _m(case):
    return [x for a in _names(case) for x in ("-m", a)]


def door_eval(case: Case, paths: dict, per_topic: bool) -> Out:
    """trecqr eval [-q] --places 17 (trec format) per run; the stderr coverage line."""
    out = Out("eval -q" if per_topic else "eval")
    for name in RUNS:
        text = _cli(out, ["eval", "--places", "17"] + (["-q"] if per_topic else []) +
                    case.cli_options() + _m(case) + [paths["qrels"], paths[name]])
        if text is None:
            return out
        for line in text.splitlines():
            if line.count("\t") != 2:
                continue
            key, qid, value = (f.strip() for f in line.split("\t"))
            if qid == "all":
                out.means[(name, key)] = float(value)
            elif per_topic:
                out.topics.setdefault((name, key), {})[qid] = float(value)
        for key, n in stated.eval_coverage(out.stderr, [k for _, k in case.measures]).items():
            out.stated[(name, key)] = n
    return out


def door_eval_json(case: Case, paths: dict) -> Out:
    out = Out("eval --format json")
    for name in RUNS:
        text = _cli(out, ["eval", "--format", "json", "--quiet"] + case.cli_options() +
                    _m(case) + [paths["qrels"], paths[name]])
        if text is None:
            return out
        obj = json.loads(text)
        for key, value in obj["summary"].items():
            out.means[(name, key)] = float(value)
        out.stated.update({(name, k): n for k, n in
                           stated.eval_json(obj, [k for _, k in case.measures]).items()})
    return out


def door_compare(case: Case, paths: dict) -> Out:
    out = Out("compare --format json")
    text = _cli(out, ["compare", "--format", "json"] + FAST + case.cli_options() + _m(case) +
                [paths["qrels"]] + [paths[n] for n in RUNS])
    if text is not None:
        _comparison(out, case, json.loads(text))
    return out


def door_compare_api(case: Case, paths: dict) -> Out:
    out = Out("trecqr.compare()")
    o = case.options
    c = _api(out, lambda: trecqr.compare(
        str(paths["qrels"]), [str(paths[n]) for n in RUNS], _names(case),
        complete=bool(o.get("complete")), relevance_level=o.get("relevance_level", 1),
        max_docs=o.get("max_docs"), judged_only=bool(o.get("judged_only")),
        compat=o.get("compat", "9.0.8"), permutations=1, bootstrap=1))
    if c is not None:
        _comparison(out, case, c.to_dict())
    return out


def _comparison(out: Out, case: Case, d: dict):
    """Read compare's JSON (its runs are named by file name: runA.run is runA)."""
    d = json.loads(json.dumps(d).replace('.run"', '"'))
    for run, means in d["means"].items():
        for key, value in means.items():
            if value is not None:
                out.means[(run, key)] = float(value)
    out.stated.update(stated.compare_counts(d, [k for _, k in case.measures]))
    for p in d["pairs"]:
        out.pairs[(p["baseline"], p["run"], p["measure"])] = (
            p["n"], p["mean_baseline"], p["mean_run"])
    out.pair_note = stated.compare_note(d)


def door_breakdown(case: Case, paths: dict) -> Out | None:
    """breakdown --by depth: its JSON rows (n, mean per group, run and name), and the n column
    of its text table."""
    if case.options.get("max_docs") or case.options.get("judged_only"):
        return None                                         # breakdown has no -M, -J
    out = Out("breakdown")
    common = ["breakdown", "--by", "depth", "--max-depth", "0"] + case.cli_options() + _m(case)
    files = [paths["qrels"]] + [paths[n] for n in RUNS]
    text = _cli(out, common + ["--format", "json"] + files)
    if text is None:
        return out
    for row in json.loads(text.replace('.run"', '"'))["rows"]:   # runs named by file name
        if row["mean"] is not None or row["n"]:
            out.groups[(row["group"], row["run"], row["measure"])] = (row["n"], row["mean"])
    table = _cli(out, common + ["--places", "17"] + files)
    if table is not None:
        out.text_n = stated.breakdown_text_n(re.sub(r"\b(run[AB])\.run\b", r"\1", table),
                                             list(RUNS))
    return out


def door_report(case: Case, paths: dict, folder) -> Out:
    """report's page: the JSON embedded in it (per-topic values, compare's means, coverage)."""
    out = Out("report data")
    page = folder / "page.html"
    text = _cli(out, ["report", "-o", page] + FAST + case.cli_options() + _m(case) +
                [paths["qrels"]] + [paths[n] for n in RUNS])
    if text is None:
        return out
    html = page.read_text()
    data = json.loads(re.search(r'<script id="trecqr-data" type="application/json">(.*?)'
                                r'</script>', html, re.S).group(1))
    _comparison(out, case, data["comparison"])
    for r, run in enumerate(name.removesuffix(".run") for name in data["runs"]):
        for m, key in enumerate(data["measures"]):
            values = data["values"][r][m]
            out.topics[(run, key)] = {q: float(v) for q, v in zip(data["ids"], values)
                                      if v is not None}
    out.stated.update(stated.report_coverage(data, [k for _, k in case.measures]))
    return out


def door_evaluate(case: Case, paths: dict, kind: str) -> Out:
    """trecqr.evaluate on files, dicts (with the case's empty rankings) or DataFrames."""
    out = Out(f"evaluate({kind})", variant="dict" if kind == "dicts" else "file")
    o = case.options
    kwargs = dict(complete=bool(o.get("complete")), relevance_level=o.get("relevance_level", 1),
                  max_docs=o.get("max_docs"), judged_only=bool(o.get("judged_only")),
                  compat=o.get("compat", "9.0.8"))
    for name in RUNS:
        qrels, run = {"files": lambda: (str(paths["qrels"]), str(paths[name])),
                      "dicts": lambda: (qrels_dict(case), run_dict(case, name, True)),
                      "frames": lambda: frames(case, name)}[kind]()
        res = _api(out, lambda: trecqr.evaluate(qrels, run, _names(case), **kwargs))
        if res is None:
            return out
        out.means.update({(name, k): float(v) for k, v in res.aggregate().items()})
        for qid, values in res.per_query().items():
            for key, v in values.items():
                out.topics.setdefault((name, key), {})[qid] = float(v)
        wide = res.to_dataframe(wide=True)
        for key in wide.columns:
            col = wide[key].dropna()
            if {q: float(v) for q, v in col.items()} != out.topics.get((name, key), {}):
                out.topics[(name, key + " [wide DataFrame]")] = {q: float(v)
                                                                 for q, v in col.items()}
        out.stated.update({(name, k): n for k, n in
                           stated.results_counts(res, [k for _, k in case.measures]).items()})
    return out


def frames(case: Case, name: str):
    """(qrels, run) as ir_measures-style DataFrames (duplicated judgments kept)."""
    q = pd.DataFrame(case.qrels, columns=["query_id", "doc_id", "relevance"])
    r = pd.DataFrame(case.runs[name], columns=["query_id", "doc_id", "score"])
    r["score"] = r["score"].round(3)
    return q, r


def door_relevance_evaluator(case: Case) -> Out | None:
    """trecqr.RelevanceEvaluator as pytrec_eval's: trec_eval names, -l and -J (no -c, -M,
    --compat)."""
    o = case.options
    if not case.trec_keys() or o.get("complete") or o.get("max_docs") or o.get("compat"):
        return None
    out = Out("RelevanceEvaluator", variant="dict", scope="trec")
    for name in RUNS:
        ev = _api(out, lambda: trecqr.RelevanceEvaluator(
            qrels_dict(case), set(_names(case, "trec")),
            relevance_level=o.get("relevance_level", 1),
            judged_docs_only_flag=bool(o.get("judged_only"))))
        got = ev and _api(out, lambda: ev.evaluate(run_dict(case, name, True)))
        if got is None:
            return out
        for qid, values in got.items():
            for key, v in values.items():
                out.topics.setdefault((name, key), {})[qid] = float(v)
        for (run, key), topics in list(out.topics.items()):
            if run == name:
                out.means[(run, key)] = sum(topics[q] for q in sorted(topics)) / len(topics)
                out.stated[(run, key)] = len(topics)   # pytrec_eval's: the topics it returns
    return out
