"""The CQR papers' evaluation settings, as data read from their own evaluation code.

Each entry names the file and commit it was read from, so a number that does not match can be
traced to the setting that differs. :mod:`trecqr.adapters.presets` turns ``PRESETS`` into
:class:`~trecqr.adapters.presets.Preset` objects and ``PROTOCOLS`` into
:class:`~trecqr.adapters.presets.Protocol` objects; this module holds plain dicts so that it
imports nothing.

Settings that move the numbers most, beyond BM25's k1/b and the measures:

* ``depth`` (documents retrieved per turn, trec_eval ``-M``) and ``complete`` (``-c``: a judged
  turn without results counts 0);
* the relevance threshold of binary measures (the papers binarise the qrels at it before
  pytrec_eval; nDCG keeps the grades, which is what trec_eval ``-l`` does);
* the turn policy: ``missing`` (what a turn without a usable rewrite becomes: ``raw`` question,
  ``drop`` it from the average, ``human`` rewrite, ``empty`` ranking, ``error``) and
  ``min_results`` (RetPO leaves a turn out when BM25 returns fewer passages);
* dense and query settings: passage and query max lengths in tokens, TopiOCQA's title/section
  join, and BM25 query truncation at N whitespace tokens.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- sources
CONVGQR = "fengranMark/ConvGQR @ 732ecad"
LLM4CS = "kyriemao/LLM4CS @ a292fb8"
CHATTY = "castorini/chatty-goose @ ac9066c"
CQE = "castorini/CQE @ d6774e0"
CONVDR = "thunlp/ConvDR @ 4dfdd7b"
CHIQ = "fengranMark/CHIQ @ 4fa68a5"
CONVSEARCH_R1 = "BeastyZ/ConvSearch-R1 @ e7854c8"
RETPO = "dmis-lab/RetPO @ 80192ff"
INFOCQR = "smartyfh/InfoCQR @ 2953c46"
ADACQR = "init0xyz/AdaCQR @ 9ffcaab"

# the measures the papers' pytrec_eval calls ask for (qrels binarised at the threshold;
# nDCG on the graded qrels)
_CONVGQR_MEASURES = ("map", "recip_rank", "recall.5,20,100", "ndcg_cut.3")
_LLM4CS_MEASURES = ("map", "recip_rank", "recall.5,10,20,100", "ndcg_cut.3")
_PYTREC_TURNS = "turns both in the qrels and the run (pytrec_eval evaluates only those)"

PROTOCOLS = [
    dict(name="cast2019", dataset="TREC CAsT 2019",
         source=f"{CONVGQR} src/test_cast19.py (print_trec_res) with src/Config/test_cast19.toml "
                f"(top_n 100, rel_threshold 1); the same setting in {CONVDR} and {CHIQ}",
         rel_threshold=1, depth=100, complete=False, measures=_CONVGQR_MEASURES,
         dedup="none", turns=f"{_PYTREC_TURNS}; 173 of the 479 turns are judged",
         notes="grades 0-4 in 2019qrels.txt; relevance >= 1"),
    dict(name="llm4cs-cast2019", dataset="TREC CAsT 2019 (LLM4CS)",
         source=f"{LLM4CS} evaluation/eval_dense_retrieval.py (top_n 1000, run score top_n - "
                "rank) and evaluation/trec_eval.py",
         rel_threshold=1, depth=1000, complete=False, measures=_LLM4CS_MEASURES,
         dedup="none", turns=_PYTREC_TURNS,
         notes="--rel_threshold help: 'CAsT-20: 2, Others: 1'"),
    dict(name="llm4cs-cast2020", dataset="TREC CAsT 2020 (LLM4CS)",
         source=f"{LLM4CS} evaluation/eval_dense_retrieval.py, run_eval_dense_retrieval.sh "
                "(--rel_threshold=2 for cast20)",
         rel_threshold=2, depth=1000, complete=False, measures=_LLM4CS_MEASURES,
         dedup="none", turns=_PYTREC_TURNS),
    dict(name="llm4cs-cast2021", dataset="TREC CAsT 2021 (LLM4CS)",
         source=f"{LLM4CS} evaluation/eval_dense_retrieval.py ('CAsT-20: 2, Others: 1')",
         rel_threshold=1, depth=1000, complete=False, measures=_LLM4CS_MEASURES,
         dedup="none", turns=_PYTREC_TURNS,
         notes="threshold 1, where NIST (cast2021-nist, preset cast2021) counts grade >= 2; "
               "LLM4CS scores its own passage qrels datasets/cast21_qrel.tsv"),
    dict(name="chatty-goose-cast2019", dataset="TREC CAsT 2019 (chatty-goose)",
         source=f"{CHATTY} docs/cqr_experiments.md: python -m pyserini.eval.trec_eval -c "
                "-mndcg_cut.3,1 -mrecall.1000 -mmap (runs of --hits 1000, BM25 0.82/0.68)",
         rel_threshold=1, depth=1000, complete=True,
         measures=("ndcg_cut.3,1", "recall.1000", "map"),
         dedup="none", turns="every judged turn (173); -c: a judged turn missing from the run "
                             "counts 0"),
    dict(name="cqe-cast2019", dataset="TREC CAsT 2019 (CQE)",
         source=f"{CQE} README.md: trec_eval -c -mndcg_cut.3,1000 and trec_eval -c -l 2 "
                "-mrecall.100,1000 (runs of --topk 1000)",
         rel_threshold=2, depth=1000, complete=True,
         measures=("ndcg_cut.3,1000", "recall.100,1000"),
         dedup="none", turns="every judged turn (173); -c",
         notes="one call for CQE's two: -l only changes binary measures, so -l 2 leaves "
               "ndcg_cut as CQE's first call computes it"),
]

PROTOCOLS += [
    dict(name="qrecc-official", dataset="QReCC (its own evaluator)",
         source="apple/ml-qrecc @ cf44d03 utils/evaluate_retrieval.py (span_heuristic.py, "
                "evaluate_qa.py)",
         rel_threshold=1, depth=None, complete=False,
         measures=("recip_rank", "success.10,100"), dedup="none", kind="qrecc-official",
         turns="every turn of the run (a turn without an answer scores 0)",
         notes="QRELS is the QReCC turns file (Truth_answer); --collection gives the passage "
               "text; relevant: answer-span F1 >= 0.8"),
    dict(name="topiocqa-official", dataset="TopiOCQA (its own evaluator)",
         source="McGill-NLP/topiocqa @ 49b710e evaluate_retriever.py",
         rel_threshold=1, depth=None, complete=True,
         measures=("success.1,3,5,10,20,30,50,100",), dedup="none", kind="topiocqa-official",
         turns="every gold turn (rank 1000, so 0, when the gold passage is not retrieved)",
         notes="QRELS is the gold qrels (first passage per turn); --collection gives the text; "
               "a retrieved passage with the gold's title and text counts"),
]

# --------------------------------------------------------------------------- presets
PRESETS = [
    dict(name="cast2019", dataset="TREC CAsT", split="2019",
         bm25_k1=None, bm25_b=None, depth=100, rel_threshold=1,
         evaluated_turns=173, total_turns=479, qrels_pairs=29350, qid_style="canonical",
         protocol="cast2019", source=f"{CONVGQR} src/Config/test_cast19.toml",
         passage_max_len=384, query_max_len=64,
         notes="official 2019qrels.txt (grades 0-4, CAR_/MARCO_ ids); relevance >= 1 at depth "
               "100 (ConvDR, ConvGQR, CHIQ)"),
    dict(name="llm4cs-cast2019", dataset="TREC CAsT", split="2019",
         bm25_k1=None, bm25_b=None, depth=1000, rel_threshold=1,
         evaluated_turns=173, total_turns=479, qrels_pairs=29350, qid_style="canonical",
         protocol="llm4cs-cast2019", source=f"{LLM4CS} evaluation/eval_dense_retrieval.py",
         passage_max_len=384, query_max_len=64,
         notes="ANCE dense retrieval, 1000 per turn"),
    dict(name="llm4cs-cast2020", dataset="TREC CAsT", split="2020",
         bm25_k1=None, bm25_b=None, depth=1000, rel_threshold=2,
         evaluated_turns=208, total_turns=216, qrels_pairs=40451, qid_style="canonical",
         protocol="llm4cs-cast2020", source=f"{LLM4CS} evaluation/eval_dense_retrieval.py",
         passage_max_len=384, query_max_len=64),
    dict(name="llm4cs-cast2021", dataset="TREC CAsT", split="2021",
         bm25_k1=None, bm25_b=None, depth=1000, rel_threshold=1,
         evaluated_turns=158, total_turns=239, qrels_pairs=19334, qid_style="canonical",
         protocol="llm4cs-cast2021", source=f"{LLM4CS} evaluation/eval_dense_retrieval.py",
         passage_max_len=384, query_max_len=64,
         notes="threshold 1 (LLM4CS: 'CAsT-20: 2, Others: 1'); preset cast2021 keeps NIST's 2"),
    dict(name="chatty-goose-cast2019", dataset="TREC CAsT", split="2019",
         bm25_k1=0.82, bm25_b=0.68, depth=1000, rel_threshold=1, complete=True,
         evaluated_turns=173, total_turns=479, qrels_pairs=29350, qid_style="canonical",
         protocol="chatty-goose-cast2019", source=f"{CHATTY} chatty_goose/settings.py, "
                                                  "docs/cqr_experiments.md"),
    dict(name="cqe-cast2019", dataset="TREC CAsT", split="2019",
         bm25_k1=0.82, bm25_b=0.68, depth=1000, rel_threshold=2, complete=True,
         evaluated_turns=173, total_turns=479, qrels_pairs=29350, qid_style="canonical",
         protocol="cqe-cast2019", source=f"{CQE} retrieval/sparse.search.py, README.md"),
]
