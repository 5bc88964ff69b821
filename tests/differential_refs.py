"""The references of the differential harness, computed without trecqr.

- trec_eval names: pytrec_eval (trec_eval 9.0.8's code) per topic, averaged by trec_eval's
  rule: the topics in both run and qrels; with -c every qrels topic, a missing one counting 0.
  pytrec_eval has no -M and no -c: -M is applied to the run first (trec_eval's order: score
  descending, then docno descending), -c is computed. When trec_eval binaries are given
  (--te908/--te10), pytrec_eval's reference is checked against their -q output (4 decimals:
  to half a unit of the 4th, the same topics listed, the same refusals).
- ir_measures names: ir_measures' own pipeline (its default providers without trecqr's, and
  without ranx's, see tests/oracle_cases.py), whose Evaluator yields every qrels topic, a
  topic without results getting the measure's default 0 (providers/base.py, iter_calc).

Two variants: "file" (what a file or DataFrame holds: no empty ranking, duplicated judgments
kept, which trec_eval refuses in a topic it evaluates: "form_res_rels: duplicate docs"; trecqr
may refuse them anywhere, in one line) and "dict" (a dict holds one
grade per document, and may hold empty rankings, which pytrec_eval scores: 0 for every measure
used here, the topic counted). An ir_measures name with a trec_eval option has no reference
value: the doors must then agree with each other (all refuse in one line, or all give one
value).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

import ir_measures
import pytrec_eval

from differential_cases import Case, is_irm, qrels_dict, run_dict

REFUSE = "refuse"
HALF = 5e-5 + 1e-12    # half a unit of trec_eval's 4th decimal (0.03125 prints 0.0312)


@dataclass
class Ref:
    """One (run, name)'s reference: per-topic values of the averaged population, the mean, and
    the topics a per-topic listing shows (9.0.8's -q -c lists only the run's topics)."""

    topics: dict
    mean: float
    listed: frozenset

    @property
    def population(self) -> frozenset:
        return frozenset(self.topics)


def own_pipeline():
    return ir_measures.providers.FallbackProvider(
        [p for p in ir_measures.DefaultPipeline.providers if p.NAME not in ("trecqr", "ranx")])


def references(case: Case, te908=None, te10=None, paths=None) -> dict:
    """{variant: {(run, key): Ref | REFUSE | None}} plus {"checks": [(what, ok, detail)]}."""
    out = {"checks": []}
    qrels = qrels_dict(case)
    for variant in ("file", "dict"):
        refs = {}
        for name in case.runs:
            run = run_dict(case, name, with_empty=(variant == "dict"))
            for key, value in _trec(case, qrels, run).items():
                refs[(name, key)] = value
            if case.irm_keys() and case.has_options():
                refs.update({(name, k): None for k in case.irm_keys()})
            elif case.irm_keys():
                refs.update({(name, k): v for k, v in _irm(case, qrels, run).items()})
        if (variant == "file" and _duplicate_read(case)) or _stops_10(case, qrels, variant):
            refs = {k: REFUSE for k in refs}
        out[variant] = refs
    binary = te10 if case.options.get("compat") == "10.0" else te908
    if binary and paths and case.trec_keys():
        got = {name: trec_eval_binary(binary, case, paths, name) for name in case.runs}
        stopped = any(g is REFUSE for g in got.values())   # a door stops at the first refusal
        for (name, key), ref in out["file"].items():
            if is_irm(key):
                continue
            b = REFUSE if stopped else got[name].get(key)
            ok = (b is REFUSE and ref is REFUSE) or (
                b is not REFUSE and ref is not REFUSE and b is not None and
                abs(b.mean - ref.mean) <= HALF and set(b.topics) == set(ref.listed) and
                all(abs(v - ref.topics[q]) <= HALF for q, v in b.topics.items()))
            out["checks"].append(("pytrec_eval = trec_eval binary", ok,
                                  f"{name} {key}: binary {_show(b)} pytrec_eval {_show(ref)}"))
    return out


def _duplicate_read(case: Case) -> bool:
    """trec_eval stops at a duplicated judgment ("form_res_rels: duplicate docs") of a topic it
    evaluates: one in a run (a door stops at its first refusal, so any run counts) or, under
    10.0 with -c, any qrels topic (10.0 reads the judgments of the topics -c adds; 9.0.8
    scores them without reading them)."""
    seen, dup = set(), set()
    for q, d, _ in case.qrels:
        (dup if (q, d) in seen else seen).add((q, d))
    if dup and case.options.get("compat") == "10.0" and case.options.get("complete"):
        return True
    return bool({q for q, _ in dup} & {q for rows in case.runs.values() for q, _, _ in rows})


def _stops_10(case: Case, qrels: dict, variant: str) -> bool:
    """trec_eval 10.0 without -c stops at a qrels topic the run lacks ("result qid not found");
    an empty ranking in a dict is a topic the run has."""
    if case.options.get("compat") != "10.0" or case.options.get("complete"):
        return False
    return any(set(qrels) - set(run_dict(case, n, variant == "dict")) for n in case.runs)


def same(a: float, b: float) -> bool:
    """Equal up to the summation order of a mean (12 significant digits)."""
    return abs(a - b) <= 1e-12 * max(1.0, abs(a), abs(b))


def _show(r) -> str:
    return r if isinstance(r, str) or r is None else f"{r.mean:.6f} over {len(r.topics)}"


def truncated(run: dict, max_docs) -> dict:
    """The first max_docs documents of each ranking in trec_eval's order (score descending,
    docno descending); scores with 3 decimals sort alike as doubles and as 32-bit floats."""
    if not max_docs:
        return run
    return {q: dict(sorted(r.items(), key=lambda x: (x[1], x[0]), reverse=True)[:max_docs])
            for q, r in run.items()}


def _trec(case: Case, qrels: dict, run: dict) -> dict:
    keys = case.trec_keys()
    if not keys:
        return {}
    o = case.options
    run = truncated(run, o.get("max_docs"))
    nonempty = {q: r for q, r in run.items() if r}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {a for a, k in case.measures if k in keys},
        relevance_level=int(o.get("relevance_level", 1)),
        judged_docs_only_flag=bool(o.get("judged_only", False)))
    per_topic = evaluator.evaluate(nonempty) if nonempty else {}
    # an empty ranking of a judged topic: pytrec_eval scores it (0 for every name used here);
    # computed, not asked, since pytrec_eval misreads an empty first ranking
    for q, r in run.items():
        if not r and q in qrels:
            per_topic[q] = {k: 0.0 for k in keys}
    listed = frozenset(per_topic)
    if o.get("complete"):
        for q in qrels:
            per_topic.setdefault(q, {k: 0.0 for k in keys})
        if o.get("compat") == "10.0":       # 10.0's -q -c lists the qrels-only topics too
            listed = frozenset(per_topic)
    out = {}
    for key in keys:
        topics = {q: float(v[key]) for q, v in per_topic.items()}
        mean = sum(topics[q] for q in sorted(topics)) / len(topics) if topics else None
        out[key] = Ref(topics, mean, listed) if topics else REFUSE
    return out


def _irm(case: Case, qrels: dict, run: dict) -> dict:
    keys = case.irm_keys()
    measures = [ir_measures.parse_measure(k) for k in keys]
    nonempty = {q: r for q, r in run.items() if r}   # ir_measures: no results = default 0
    result = own_pipeline().calc(measures, qrels, nonempty)
    out = {}
    for key, m in zip(keys, measures):
        topics = {x.query_id: float(x.value) for x in result.per_query if x.measure == m}
        out[key] = Ref(topics, float(result.aggregated[m]), frozenset(topics))
    return out


def trec_eval_binary(binary: str, case: Case, paths: dict, name: str):
    """{key: Ref of the listed topics} from a trec_eval binary's -q output (4 decimals), or
    REFUSE when it exits non-zero."""
    args = [binary, "-q"] + [a.replace("--compat", "") for a in case.cli_options()
                             if a not in ("--compat", "10.0")]
    for arg, key in case.measures:
        if not is_irm(key):
            args += ["-m", arg]
    proc = subprocess.run(args + [str(paths["qrels"]), str(paths[name])], capture_output=True,
                          text=True, timeout=60)
    if proc.returncode:
        return REFUSE
    per, means = {}, {}
    for line in proc.stdout.splitlines():
        key, qid, value = (f.strip() for f in line.split("\t"))
        if qid == "all":
            means[key] = float(value)
        else:
            per.setdefault(key, {})[qid] = float(value)
    out = {}
    for key, mean in means.items():
        listed = per.get(key, {})
        out[key] = Ref(dict(listed), mean, frozenset(listed))
    return out
