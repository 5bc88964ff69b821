"""The CQR papers' evaluation settings, as data read from their own evaluation code.

Each entry names the file and commit it was read from, so a number that does not match can be
traced to the setting that differs. :mod:`trecqr.protocols.presets` turns ``PRESETS`` into
:class:`~trecqr.protocols.presets.Preset` objects and ``PROTOCOLS`` into
:class:`~trecqr.protocols.presets.Protocol` objects; this module holds plain dicts so that it
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
_QRECC = dict(dataset="QReCC", split="test", depth=100, rel_threshold=1, evaluated_turns=8209,
              total_turns=16451, qrels_pairs=10507, qid_style="canonical")
_TOPIOCQA = dict(dataset="TopiOCQA", split="dev", depth=100, rel_threshold=1,
                 evaluated_turns=2514, total_turns=2514, qrels_pairs=2514, qid_style="dash")

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
         query_max_len=64,
         notes="ANCE dense retrieval, 1000 per turn"),
    dict(name="llm4cs-cast2020", dataset="TREC CAsT", split="2020",
         bm25_k1=None, bm25_b=None, depth=1000, rel_threshold=2,
         evaluated_turns=208, total_turns=216, qrels_pairs=40451, qid_style="canonical",
         protocol="llm4cs-cast2020", source=f"{LLM4CS} evaluation/eval_dense_retrieval.py",
         query_max_len=64),
    dict(name="llm4cs-cast2021", dataset="TREC CAsT", split="2021",
         bm25_k1=None, bm25_b=None, depth=1000, rel_threshold=1,
         evaluated_turns=158, total_turns=239, qrels_pairs=19334, qid_style="canonical",
         protocol="llm4cs-cast2021", source=f"{LLM4CS} evaluation/eval_dense_retrieval.py",
         query_max_len=64,
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
    # ---- the QReCC / TopiOCQA papers: BM25 at depth 100, relevance >= 1
    dict(name="convsearch-r1-qrecc", **_QRECC, bm25_k1=0.82, bm25_b=0.68,
         protocol="convsearch-r1-qrecc", missing="drop",
         source=f"{CONVSEARCH_R1} src/eval/get_metrics_using_bm25.py, eval.sh, "
                "get_metrics_using_ance.py, src/infer/infer.py",
         passage_max_len=384, query_max_len=512, bm25_query_tokens=512,
         notes="a generation whose <rewrite> does not parse is not written (infer.py), so it "
               "leaves the average: 8,124 of 8,209 turns in one table; ANCE queries at "
               "max_concat_length 512; BM25 queries cut at 512 tokens split on ' '"),
    dict(name="convsearch-r1-topiocqa", **_TOPIOCQA, bm25_k1=0.9, bm25_b=0.4,
         protocol="convsearch-r1-topiocqa", missing="drop",
         source=f"{CONVSEARCH_R1} src/eval/eval.sh, preprocess/topiocqa/preprocess.py",
         passage_max_len=384, query_max_len=512, bm25_query_tokens=512,
         title_join="Title Section text (' '.join(title.split(' [SEP] ')))"),
    dict(name="convgqr-qrecc", **_QRECC, bm25_k1=0.82, bm25_b=0.68,
         protocol="convsearch-r1-qrecc", source=f"{CONVGQR} bm25/bm25_qrecc.py, "
                                                "src/Config/test_qrecc.toml",
         passage_max_len=384, query_max_len=64),
    dict(name="convgqr-topiocqa", **_TOPIOCQA, bm25_k1=0.9, bm25_b=0.4,
         protocol="convsearch-r1-topiocqa", source=f"{CONVGQR} bm25/bm25_topiocqa.py, "
                                                   "src/Config/test_topiocqa.toml, "
                                                   "data/preprocess_topiocqa.py",
         passage_max_len=384, query_max_len=64,
         title_join="Title Section text (' '.join(title.split(' [SEP] ')))"),
    dict(name="retpo-qrecc", **_QRECC, bm25_k1=0.82, bm25_b=0.68,
         protocol="convsearch-r1-qrecc", source=f"{RETPO} eval/bm25_qrecc.py, "
                                                "eval/dense_qrecc.py",
         passage_max_len=384, query_max_len=128),
    dict(name="retpo-topiocqa", **_TOPIOCQA, bm25_k1=0.9, bm25_b=0.4, min_results=100,
         protocol="convsearch-r1-topiocqa", source=f"{RETPO} eval/bm25_topiocqa.py, "
                                                   "eval/dense_topiocqa.py, eval/utils.py",
         passage_max_len=384, query_max_len=128,
         title_join="title[SEP]text for the dense encoder (eval/utils.py)",
         notes="a turn for which BM25 returns fewer than top_k = 100 passages is excluded"),
    dict(name="chiq-qrecc", **_QRECC, bm25_k1=0.82, bm25_b=0.68,
         protocol="convsearch-r1-qrecc", source=f"{CHIQ} bm25/bm25_qrecc.py, "
                                                "dense/test_qrecc.py",
         passage_max_len=384, query_max_len=32, bm25_query_tokens=512,
         notes="turns without gold passages are skipped before search; cast: query 128 "
               "(dense/test_cast.py)"),
    dict(name="infocqr-qrecc", **_QRECC, bm25_k1=0.82, bm25_b=0.68,
         protocol="convsearch-r1-qrecc", missing="empty",
         source=f"{INFOCQR} BM25.py, cs-shortcut/run_dense_search.py, "
                "cs-shortcut/eval_breakdown.py",
         passage_max_len=384, query_max_len=384,
         notes="an empty query keeps an empty ranking (scores[qid] = {}), which counts 0; "
               "dense retriever GTR-T5-base (sentence-transformers), max_seq_length 384; "
               "breakdown by test_question_types.json with an 'all' group"),
    dict(name="adacqr-qrecc", **_QRECC, bm25_k1=0.82, bm25_b=0.68,
         protocol="convsearch-r1-qrecc", missing="human",
         source=f"{ADACQR} src/test_BM25_direct.py, src/obtain_ranking_ance.py, "
                "src/cs_shortcut/build_dense_index.py",
         passage_max_len=384, query_max_len=512,
         notes="an empty chatgpt_rewrite falls back to gold_rewrite (the human rewrite)"),
]
