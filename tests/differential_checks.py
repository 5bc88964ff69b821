"""The checks of the differential harness, on one case: (a) each door against its reference,
(b) the doors against each other, (c) the population each output states against the one its
reference averages. A failure's class names the check, the door(s) and the kind of name
(trec_eval or ir_measures, -c and its version, an empty ranking in a dict), so that one
disagreement found in many cases counts as one class.

Values are compared to 12 significant digits (a mean's summation order may differ by an ulp;
the conformance suites check the digits). A refusal (an error the door raises or prints) agrees
with a reference that refuses (duplicated judgments: trec_eval's "duplicate docs"), or with an
ir_measures name given a trec_eval option (no reference value), when it is one line without a
traceback; the doors that take the same names must then all refuse.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import differential_doors as doors
from differential_cases import Case, depth_of, is_irm
from differential_irm import door_pt_experiment, door_provider
from differential_refs import REFUSE, references, same


@dataclass
class Tally:
    """Checks made and failures found: {class: [(case, detail)]}."""

    checks: int = 0
    failures: dict = field(default_factory=dict)
    by_check: dict = field(default_factory=dict)    # {"a"/"b"/"c": [checks, failed]}

    def check(self, ok: bool, cls: str, case: Case, detail: str):
        self.checks += 1
        counts = self.by_check.setdefault(cls[0], [0, 0])
        counts[0] += 1
        counts[1] += not ok
        if not ok:
            self.failures.setdefault(cls, []).append((case, detail))


def all_doors(case: Case, paths: dict, folder: Path, with_pt: bool, tally: Tally):
    """Every door's Out (None where a door does not take the case's names or options). An
    output the harness cannot read (a changed format) is a failing check, not a crash."""
    calls = [("eval", lambda: doors.door_eval(case, paths, False)),
             ("eval -q", lambda: doors.door_eval(case, paths, True)),
             ("eval --format json", lambda: doors.door_eval_json(case, paths)),
             ("compare --format json", lambda: doors.door_compare(case, paths)),
             ("trecqr.compare()", lambda: doors.door_compare_api(case, paths)),
             ("breakdown", lambda: doors.door_breakdown(case, paths)),
             ("report data", lambda: doors.door_report(case, paths, folder)),
             ("evaluate(files)", lambda: doors.door_evaluate(case, paths, "files")),
             ("evaluate(dicts)", lambda: doors.door_evaluate(case, paths, "dicts")),
             ("evaluate(frames)", lambda: doors.door_evaluate(case, paths, "frames")),
             ("RelevanceEvaluator", lambda: doors.door_relevance_evaluator(case)),
             ("provider", lambda: door_provider(case)),
             ("pt.Experiment", lambda: door_pt_experiment(case) if with_pt else None)]
    outs = {}
    for door, call in calls:
        try:
            outs[door] = call()
        except Exception as exc:        # noqa: BLE001 - reported as a check
            tally.check(False, f"harness | output unreadable | {door}", case,
                        f"{type(exc).__name__}: {exc}")
            outs[door] = None
    pt_pair = outs.pop("pt.Experiment")
    return [o for o in outs.values() if o is not None], pt_pair


def check_case(case: Case, folder: Path, tally: Tally, te908=None, te10=None, with_pt=False):
    """Every check of one case, counted in tally; returns (door outputs, references). Python
    warnings are silenced: the doors' answers are their values and errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _check_case(case, folder, tally, te908, te10, with_pt)


def _check_case(case, folder, tally, te908, te10, with_pt):
    paths = case.write(folder)
    refs = references(case, te908, te10, paths)
    for what, ok, detail in refs["checks"]:
        tally.check(ok, f"a | {what}", case, detail)
    outs, pt_pair = all_doors(case, paths, folder, with_pt, tally)
    for out in outs:
        against_reference(case, out, refs[out.variant], tally)
    _across_doors(case, outs, tally)
    if pt_pair:
        _pt(case, *pt_pair, tally)
    return outs, refs


def _kind(case: Case, key: str, variant: str = "file", run: str = "") -> str:
    if is_irm(key):
        kind = "irm"
    else:
        kind = "trec"
        if case.options.get("complete"):
            kind += f" -c {case.options.get('compat', '9.0.8')}"
    if variant == "dict" and case.empty.get(run):
        kind += ", empty ranking in dict"
    return kind


def _refusal_ok(text: str) -> bool:
    return "\n" not in text.strip() and "traceback" not in text and "internal" not in text


TABLE_DOORS = ("compare --format json", "trecqr.compare()", "breakdown", "report data")


def mixed_table_refusal(case: Case, out) -> bool:
    """A table trecqr composes (compare, breakdown, report) has one population for every
    column: trec_eval names without -c (the topics a run has) and ir_measures names (every
    qrels topic) cannot share one when a run lacks a qrels topic, so such a table is refused in
    one line that names the switch making them one (-c, or complete=True in Python)."""
    if out.door not in TABLE_DOORS or out.refusal is None or case.options.get("complete"):
        return False
    if not (case.trec_keys() and case.irm_keys()):
        return False
    judged = {q for q, _, _ in case.qrels}
    lacks = any(judged - {q for q, _, _ in rows} for rows in case.runs.values())
    return lacks and _refusal_ok(out.refusal) and ("-c" in out.refusal or
                                                   "complete=True" in out.refusal)


def against_reference(case: Case, out, refs: dict, tally: Tally):
    keys = {k for (_, k), r in refs.items() if out.scope == "all" or
            (out.scope == "irm") == is_irm(k)}
    expected = {k: r for k, r in refs.items() if k[1] in keys}
    # a call with an ir_measures name and a trec_eval option has no reference: it may refuse
    # and duplicated judgments may be refused wherever they are (trecqr reads the whole file)
    answers = all(r is not None for r in expected.values()) and \
        any(r is not REFUSE for r in expected.values()) and \
        not (case.duplicated and out.variant == "file")
    if mixed_table_refusal(case, out):
        tally.check(True, f"a | mixed-population table refused, naming -c | {out.door}", case, "")
        return
    if out.refusal is not None:
        # one line, and only where no reference answers for these names
        tally.check(_refusal_ok(out.refusal), f"a | refusal in one line | {out.door}", case,
                    out.refusal[:300])
        tally.check(not answers, f"a | refuses what the reference answers | {out.door}",
                    case, out.refusal[:300])
        return
    if any(r is REFUSE for r in expected.values()):
        tally.check(False, f"a | answers what the reference refuses | {out.door}", case,
                    "duplicated judgments" if case.duplicated else "no topic")
        return
    for (run, key), ref in expected.items():
        if ref is None:
            continue
        kind = _kind(case, key, out.variant, run)
        where = f"{run} {key}"
        if out.door != "breakdown":
            got = out.means.get((run, key))
            tally.check(got is not None and same(got, ref.mean),
                        f"a | mean | {out.door} | {kind}", case,
                        f"{where}: door {got} reference {ref.mean} over {len(ref.topics)}")
        topics = out.topics.get((run, key))
        if topics is not None or out.door in ("eval -q", "report data") \
                or out.door.startswith("evaluate("):
            topics = topics or {}
            ok = set(topics) in (set(ref.population), set(ref.listed))
            tally.check(ok, f"a | per-topic topics | {out.door} | {kind}", case,
                        f"{where}: door lists {_few(topics)}, reference {_few(ref.population)}")
            bad = [q for q in topics if q in ref.topics and not same(topics[q], ref.topics[q])]
            tally.check(not bad, f"a | per-topic value | {out.door} | {kind}", case,
                        f"{where}: {bad[:3]}")
        wide = out.topics.get((run, key + " [wide DataFrame]"))
        tally.check(wide is None, f"b | to_dataframe(wide=True) vs per_query() | {out.door}",
                    case, f"{where}: wide {_few(wide or {})}, per_query {_few(topics or {})}")
        n = out.stated.get((run, key))
        if out.door not in ("breakdown",):
            tally.check(n == len(ref.population), f"c | stated n | {out.door} | {kind}", case,
                        f"{where}: states {n}, averages {len(ref.population)} "
                        f"({_few(ref.population)})")
    _pairs(case, out, refs, tally)
    _groups(case, out, refs, tally)


def _pairs(case, out, refs, tally):
    for (base, run, key), (n, mean_b, mean_r) in out.pairs.items():
        ra, rb = refs.get((base, key)), refs.get((run, key))
        if not (ra and rb and ra is not REFUSE and rb is not REFUSE):
            continue
        common = ra.population & rb.population
        kind = _kind(case, key)
        tally.check(n == len(common), f"c | pair n | {out.door} | {kind}", case,
                    f"{base} vs {run} {key}: n {n}, common topics {len(common)}")
        for stated in out.pair_note.values():
            tally.check(stated == len(common), f"c | topics line | {out.door} | {kind}", case,
                        f"{base} vs {run} {key}: line says {stated}, pair uses {len(common)}")
        for got, ref in ((mean_b, ra), (mean_r, rb)):
            want = _mean(ref.topics, common)
            tally.check(want is None or (got is not None and same(got, want)),
                        f"a | pair mean | {out.door} | {kind}", case,
                        f"{base} vs {run} {key}: {got} vs {want} over {len(common)}")


def _groups(case, out, refs, tally):
    for (group, run, key), (n, mean) in out.groups.items():
        ref = refs.get((run, key))
        if not ref or ref is REFUSE:
            continue
        topics = {q for q in ref.population if str(depth_of(q)) == group}
        kind = _kind(case, key)
        tally.check(n == len(topics), f"c | breakdown n (JSON) | {kind}", case,
                    f"group {group} {run} {key}: n {n}, averaged {len(topics)}")
        want = _mean(ref.topics, topics)
        tally.check((want is None and mean is None) or
                    (want is not None and mean is not None and same(mean, want)),
                    f"a | breakdown group mean | {kind}", case,
                    f"group {group} {run} {key}: {mean} vs {want}")
        text = out.text_n.get((group, run, key))
        tally.check(text is None or text == len(topics), f"c | breakdown n (text) | {kind}",
                    case, f"group {group} {run} {key}: table n {text}, mean over {len(topics)}")


def _across_doors(case: Case, outs, tally: Tally):
    """Within each variant (file and dict doors differ only where the case has an empty
    ranking or a duplicated judgment), the doors that take the same names all refuse or all
    answer; the doors giving a (run, name) all give one mean and list one topic set. A failure's
    class is the split: which doors give which answer."""
    split = bool(case.empty) or case.duplicated
    groups = {}
    for o in outs:
        groups.setdefault(o.variant if split else "all", []).append(o)
    for group in groups.values():
        full = [o for o in group if o.scope == "all" and not mixed_table_refusal(case, o)]
        refused = [o.door for o in full if o.refusal is not None]
        tally.check(not refused or len(refused) == len(full),
                    f"b | refusal | {' + '.join(refused)} refuse(s)", case,
                    f"{refused} refuse; {[o.door for o in full if o.refusal is None]} answer")
        answering = [o for o in group if o.refusal is None]
        for rk in sorted({rk for o in answering for rk in o.means}):
            _agree(case, tally, "mean", rk, [(o, o.means[rk]) for o in answering
                                              if rk in o.means], same)
        for rk in sorted({rk for o in answering for rk in o.topics if "[" not in rk[1]}):
            _agree(case, tally, "per-topic topics", rk,
                   [(o, frozenset(o.topics[rk])) for o in answering if rk in o.topics],
                   lambda a, b: a == b)


def _agree(case, tally, what, rk, answers, equal):
    """One check per door after the first: all answers equal; else the class names the
    doors of each answer, the largest group first."""
    parts = []
    for out, value in answers:
        for part in parts:
            if equal(part[0], value):
                part[1].append(out)
                break
        else:
            parts.append((value, [out]))
    for _ in answers[1:]:
        tally.check(len(parts) == 1, _split_class(what, parts, case, rk, answers), case,
                    f"{rk}: " + "; ".join(f"{', '.join(o.door for o in ds)}: {_value(v)}"
                                          for v, ds in parts))


def _split_class(what, parts, case, rk, answers) -> str:
    if len(parts) == 1:
        return f"b | {what}"
    parts = sorted(parts, key=lambda p: (-len(p[1]), p[1][0].door))
    split = " vs ".join("{" + ", ".join(o.door for o in ds) + "}" for _, ds in parts)
    return f"b | {what} | {split} | {_kind(case, rk[1], answers[0][0].variant, rk[0])}"


def _value(v) -> str:
    return _few(v) if isinstance(v, frozenset) else f"{v:.6f}"


def _pt(case, mine, own, tally):
    if own.refusal is not None or mine.refusal is not None:
        tally.check(mine.refusal is None or _refusal_ok(mine.refusal),
                    "a | refusal in one line | pt.Experiment", case, str(mine.refusal)[:300])
        return
    for rk, value in own.means.items():
        tally.check(same(mine.means.get(rk, float("nan")), value),
                    "a | mean | pt.Experiment | irm", case, f"{rk}: {mine.means.get(rk)} {value}")
    for rk, topics in own.topics.items():
        tally.check(mine.topics.get(rk) == topics, "a | per-topic | pt.Experiment | irm", case,
                    f"{rk}: {_few(mine.topics.get(rk, {}))} vs {_few(topics)}")
    # the same columns as pt.Experiment without trecqr; their ORDER under several hash seeds is
    # checked in subprocesses by tests/engine/test_populations.py (one process has one seed)
    tally.check(sorted(mine.columns) == sorted(own.columns), "b | columns | pt.Experiment",
                case, f"{mine.columns} with trecqr, {own.columns} without")


def _mean(topics: dict, subset):
    values = [topics[q] for q in sorted(subset) if q in topics]
    return sum(values) / len(values) if values else None


def _few(topics) -> str:
    names = sorted(topics)
    return f"{len(names)} [{', '.join(names[:4])}{', ...' if len(names) > 4 else ''}]"

