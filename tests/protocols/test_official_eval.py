"""qrecc-official and topiocqa-official: the datasets' own evaluators, step by step.

The expected values are computed here from the scripts' definitions, written out literally
(apple/ml-qrecc @ cf44d03 utils/evaluate_retrieval.py, span_heuristic.py, evaluate_qa.py;
McGill-NLP/topiocqa @ 49b710e evaluate_retriever.py), on the demo collection fixtures/qrecc-demo
(real QReCC dev answers as passage text) searched with the real GPT rewrites of its 927 turns.
Data: ../shared/data/qrecc/dev-sampled2k_chatgpt_ICL.jsonl (answers: Truth_answer).
"""

from __future__ import annotations

import collections
import json
import re
import string
from difflib import SequenceMatcher

import pytest
from conftest import ROOT, data_path, run_cli

from trecqr.protocols.presets import protocol_evaluation
from trecqr.protocols.official_eval import (passage_texts, qrecc_answers, qrecc_official,
                                            topiocqa_official)

DEMO = ROOT / "fixtures" / "qrecc-demo"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("official")
    assert run_cli(["index", DEMO / "collection.jsonl", "-o", folder / "ix", "--k1", "0.82",
                    "--b", "0.68", "--quiet"]).exit_code == 0
    assert run_cli(["search", folder / "ix", DEMO / "topics-gpt.tsv", "-o", folder / "all.run",
                    "-k", "100", "--quiet"]).exit_code == 0
    lines = (folder / "all.run").read_text().splitlines()
    turns = list(dict.fromkeys(ln.split()[0] for ln in lines))[:60]
    keep = set(turns)
    small = folder / "small.run"  # 60 turns, 20 passages each: the literal script is slow
    small.write_text("".join(ln + "\n" for ln in lines
                             if ln.split()[0] in keep and int(ln.split()[3]) <= 20))
    return folder / "all.run", small


# ---- QReCC's scripts, literally ------------------------------------------------------------
def _normalize_answer(s):
    s = "".join(ch for ch in s.lower() if ch not in set(string.punctuation))
    s = re.sub(re.compile(r"\b(a|an|the)\b", re.UNICODE), " ", s)
    return " ".join(s.split())


def _get_tokens(s):
    return _normalize_answer(s).split() if s else []


def _f1_from_tokens(gold, pred):
    common = collections.Counter(gold) & collections.Counter(pred)
    num_same = sum(common.values())
    if len(gold) == 0 or len(pred) == 0:
        return int(gold == pred)
    if num_same == 0:
        return 0
    p, r = num_same / len(pred), num_same / len(gold)
    return 2 * p * r / (p + r)


def _compute_f1(gold, pred):
    return _f1_from_tokens(_get_tokens(gold), _get_tokens(pred))


def _approx(context, target):
    if target in context:
        return target, 1.0
    n = len(target.split())
    words = context.split()
    size = n + int(0.05 * n)
    best_val, best = 0, ""
    sm = SequenceMatcher()
    sm.set_seq2(target)
    for gram in zip(*(words[i:] for i in range(size))):  # nltk.util.ngrams
        cand = " ".join(gram)
        sm.set_seq1(cand)
        sim = sm.quick_ratio()
        if sim > best_val:
            best_val, best = sim, cand
        if sim == 1.0:
            break
    return best, best_val


def _norm_tokens(tokens, keep_empty=True):
    out = []
    for t in tokens:
        t = "".join(ch for ch in t.lower() if ch not in set(string.punctuation))
        t = re.sub(re.compile(r"\b(a|an|the)\b", re.UNICODE), "", t)
        if keep_empty or len(t):
            out.append(t)
    return out


def _closest_span(passage, gold):
    span, _ = _approx(passage, gold)
    span_tok = span.split()
    span_norm = _norm_tokens(span_tok)
    gold_norm = _norm_tokens(gold.split(), keep_empty=False)
    best_score, bi, bj = 0, None, None
    for i in range(len(span_norm)):
        for j in range(i + 1, len(span_norm) + 1):
            score = _f1_from_tokens(gold_norm, [t for t in span_norm[i:j] if len(t)])
            if score > best_score:
                best_score, bi, bj = score, i, j
    best = " ".join(span_tok[bi:bj])
    return best, _compute_f1(gold, best)


def _qrecc_script(answers, run_path, passages):
    docs = {}
    for line in run_path.read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        answer = answers.get(q, "")
        f1 = _compute_f1(answer, "") if len(answer) < 1 else _closest_span(passages[d], answer)[1]
        docs.setdefault(q, []).append({"rank": int(rank), "answer": answer, "f1": f1})
    mrr = 0
    for q, ds in docs.items():
        top = min((d["rank"] for d in ds if len(d["answer"]) > 0 and d["f1"] >= 0.8),
                  default=float("inf"))
        mrr += 1 / top if top != float("inf") else 0
    recall = {k: sum(any(len(d["answer"]) > 0 and d["f1"] >= 0.8 and d["rank"] <= k for d in ds)
                     for ds in docs.values()) / len(docs) for k in (10, 100)}
    return {"MRR": mrr / len(docs), "Recall@10": recall[10], "Recall@100": recall[100]}, len(docs)


def test_qrecc_official_is_the_scripts_computation(demo_run):
    _, run = demo_run
    turns = data_path("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl")
    answers = qrecc_answers(turns)
    assert len(answers) == 2000
    passages = passage_texts(DEMO / "collection.jsonl")
    want, n = _qrecc_script(answers, run, passages)
    got = qrecc_official(answers, run, passages)
    assert got.turns == n == 60
    assert got.scores == pytest.approx(want, abs=1e-15)
    assert 0 < got.scores["MRR"] < got.scores["Recall@100"] <= 1
    ev, note = protocol_evaluation("qrecc-official", turns, run,
                                   collection=DEMO / "collection.jsonl")
    agg = {c.name: float(c.summary) for c in ev.columns}
    assert agg["recip_rank"] == pytest.approx(want["MRR"], abs=1e-12)
    assert agg["success_10"] == pytest.approx(want["Recall@10"], abs=1e-12)
    assert "MRR over the 60 run turns" in note
    res = run_cli(["eval", "--protocol", "qrecc-official", "--collection",
                   DEMO / "collection.jsonl", turns, run])
    assert res.exit_code == 0, res.stderr
    assert f"recip_rank            \tall\t{want['MRR']:.4f}" in res.stdout
    res = run_cli(["eval", "--protocol", "qrecc-official", turns, run])
    assert res.exit_code == 2 and "give --collection" in res.stderr


def test_span_heuristic_matches_the_script_on_every_pair(demo_run):
    from trecqr.protocols.official_eval import span_f1

    _, run = demo_run
    answers = qrecc_answers(data_path("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl"))
    passages = passage_texts(DEMO / "collection.jsonl")
    pairs = [(ln.split()[0], ln.split()[2]) for ln in run.read_text().splitlines()][:400]
    for q, d in pairs:
        if answers[q]:
            assert span_f1(passages[d], answers[q]) == _closest_span(passages[d], answers[q])


def _run_docs(run, q, _cache={}):
    if not _cache:
        for line in run.read_text().splitlines():
            qq, _, d, _, _, _ = line.split()
            _cache.setdefault(qq, []).append((d, None))
    return _cache.get(q, [])


DUPLICATE_WINS = 37  # turns whose gold text is found under another id first


# ---- TopiOCQA's script, literally ----------------------------------------------------------
def test_topiocqa_official_is_the_scripts_computation(demo_run):
    run, _ = demo_run
    qrels = DEMO / "qrels.txt"
    texts = passage_texts(DEMO / "collection.jsonl")
    data, gold = [], {}
    for line in qrels.read_text().splitlines():
        q, _, d, _ = line.split()
        if q not in gold:
            gold[q] = d
            data.append({"id": q, "positive_ctxs": [{"title": "", "text": texts[d]}]})
    results = {}
    for line in run.read_text().splitlines():
        q, _, d, _, _, _ = line.split()
        results.setdefault(q, []).append({"title": "", "text": texts[d]})
    ranks = []
    for sample in data:
        g = sample["positive_ctxs"][0]
        for rank, ctx in enumerate(results.get(sample["id"], [])):
            if ctx["title"] == g["title"] and ctx["text"] == g["text"]:
                ranks.append(float(rank + 1))
                break
        else:
            ranks.append(1000.0)
    want = {f"Hits@{n}": round(len([x for x in ranks if x <= n]) * 100.0 / len(ranks), 2)
            for n in (1, 3, 5, 10, 20, 30, 50, 100)}
    got = topiocqa_official(gold, run, texts)
    assert got.turns == 927
    assert {k: round(v, 2) for k, v in got.scores.items()} == want
    # duplicates under other ids count, as title + text equality makes them: the demo holds
    # passages whose text is another's, so matching ids alone ranks some turns lower
    by_id = {q: next((i for i, ln in enumerate(r, 1) if ln == gold[q]), 1000.0)
             for q, r in ((q, [d for d, t in _run_docs(run, q)]) for q in gold)}
    assert sum(by_id[q] != got.per_turn[q] for q in gold) == DUPLICATE_WINS
    res = run_cli(["eval", "--protocol", "topiocqa-official", "--collection",
                   DEMO / "collection.jsonl", qrels, run])
    assert res.exit_code == 0, res.stderr
    lines = dict(ln.split("\t")[0::2] for ln in res.stdout.splitlines())
    for k in (1, 10, 100):
        assert float(lines[f"success_{k}".ljust(22)]) == pytest.approx(want[f"Hits@{k}"] / 100,
                                                                        abs=5e-5)
    assert "927 topics evaluated" in res.stderr or "topiocqa-official" in res.stderr


def test_collection_goes_with_the_official_protocols(demo_run):
    _, run = demo_run
    res = run_cli(["eval", "--collection", DEMO / "collection.jsonl", DEMO / "qrels.txt", run])
    assert res.exit_code == 2
    assert "--collection goes with --protocol qrecc-official or topiocqa-official" in res.stderr
