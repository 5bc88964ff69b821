"""The QReCC demo collection: rebuilt from the real file, same as the fixtures."""

from __future__ import annotations

import collections
import json
import warnings

import pytest
from conftest import ROOT, data_path

from trecqr.datasets.topics import read_topics
from trecqr.formats import read_qrels
from trecqr.retrieval.demo import CAST_TOPICS, FILES, TOPICS, build_cast_demo, build_qrecc_demo

FIX = ROOT / "fixtures" / "qrecc-demo"
WELDON = ("http://web.archive.org/web/20160730223422id_/"
          "https://en.wikipedia.org/wiki/Weldon_Humble_p2")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("qrecc-demo")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no query had to be changed to fit the TSV format
        stats = build_qrecc_demo(data_path("qrecc", "dev-sampled2k_chatgpt_ICL.jsonl"), out)
    return out, stats


def _collection(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_rebuild_is_identical_to_shipped_fixtures(built):
    out, _ = built
    for name in FILES:
        assert (out / name).read_bytes() == (FIX / name).read_bytes(), name
    assert (FIX / "README.md").read_text().count("build_qrecc_demo") >= 1
    assert sum((FIX / n).stat().st_size for n in FILES) < 1_000_000  # small, so not gzipped


def test_counts(built):
    _, stats = built
    assert (stats.turns, stats.with_gold, stats.without_gold) == (2000, 927, 1073)
    assert (stats.passages, stats.pairs) == (996, 1101)
    assert (stats.shared_passages, stats.joined_passages) == (93, 89)
    coll = _collection(FIX / "collection.jsonl")
    assert len(coll) == 996
    ids = [d["id"] for d in coll]
    assert len(set(ids)) == 996
    assert ids == sorted(ids, key=lambda s: s.encode("utf-8"))
    assert all(d["contents"] and set(d) == {"id", "contents"} for d in coll)
    assert sum(len(d["contents"]) for d in coll) == 124294
    qrels = read_qrels(FIX / "qrels.txt")
    assert len(qrels) == 1101
    assert set(qrels.grade.tolist()) == {1}
    per_turn = collections.Counter(qrels.qid.to_pylist())
    assert len(per_turn) == 927
    assert per_turn.most_common(2) == [("5135_2", 43), ("10602_4", 13)]


def test_qrels_passages_in_collection_and_topics_in_qrels():
    ids = {d["id"] for d in _collection(FIX / "collection.jsonl")}
    qrels = read_qrels(FIX / "qrels.txt")
    assert set(qrels.docno.to_pylist()) == ids  # every gold id is a passage, every passage is gold
    qids = list(dict.fromkeys(qrels.qid.to_pylist()))
    for kind in TOPICS:
        topics = read_topics(FIX / TOPICS[kind], "tsv")
        assert topics.qids == qids, kind  # same turns, same (conversation, turn) order
        assert all(q.strip() for q in topics.queries), kind
    assert qids[:3] == ["5_2", "10_2", "10_11"]


def test_exact_texts():
    coll = {d["id"]: d["contents"] for d in _collection(FIX / "collection.jsonl")}
    # gold for turns 1, 2, 3 and 9 of conversation 3728: the four distinct answers, in turn order
    text = coll[WELDON]
    assert text.startswith("Weldon Humble began play on Rice's freshman team as an end in 1940.")
    pos = [text.index(s) for s in ("coach Jess Neely", "Brackenridge High School", "Oil Bowl")]
    assert pos == sorted(pos)
    assert text.endswith(
        "won six straight games and was selected to play in the first Oil Bowl in Houston.")
    topics = {k: read_topics(FIX / f, "tsv").as_dict() for k, f in TOPICS.items()}
    assert topics["raw"]["3728_9"] == "Did Weldon set any records?"
    assert topics["human"]["3728_9"] == (
        "Did Weldon Humble set any records as he played alongside enlistees from Tulane "
        "University, the University of Tulsa and Louisiana State University on a military team?")
    # GPT_rewrite of this turn is a chat-completion object in the source file
    assert topics["gpt"]["3728_9"] == (
        "Did Weldon Humble set any records during his college football career?")
    assert topics["raw"]["10_2"] == "Was she raised there?"
    assert topics["gpt"]["10_2"] == (
        "Did Sara Evans grow up in Boonville, Missouri, where she was born?")
    # the source's first two turns have gold; its third (343_5) has none and is left out everywhere
    assert "9467_1" in topics["raw"] and "1490_4" in topics["raw"]
    for kind in TOPICS:
        assert "343_5" not in topics[kind] and "3335_2" not in topics[kind]


CAST_FIX = ROOT / "fixtures" / "cast2021-demo"


def test_cast_demo_rebuild_is_identical_and_counts(tmp_path):
    counts = build_cast_demo(data_path("cast2021", "2021_manual_evaluation_topics_v1.0.json"),
                             data_path("cast2021", "2021_automatic_evaluation_topics_v1.0.json"),
                             tmp_path)
    assert counts == {"turns": 239, "with_passage": 239, "passages": 234,
                      "passages_with_two_texts": 1}
    names = ["collection.jsonl", "qrels.txt", *CAST_TOPICS.values()]
    for name in names:
        assert (tmp_path / name).read_bytes() == (CAST_FIX / name).read_bytes(), name
    assert "build_cast_demo" in (CAST_FIX / "README.md").read_text()
    coll = _collection(CAST_FIX / "collection.jsonl")
    assert len(coll) == 234 and coll[0]["id"] < coll[-1]["id"]
    first = next(d for d in coll if d["id"] == "MARCO_D59865-7")
    assert first["contents"].startswith("More research is needed. Types Breast cancer can be:")
    qrels = read_qrels(CAST_FIX / "qrels.txt")
    assert len(qrels) == 239 and len(set(qrels.qid.to_pylist())) == 239
    manual = read_topics(CAST_FIX / "topics-manual.tsv").as_dict()
    auto = read_topics(CAST_FIX / "topics-automatic.tsv").as_dict()
    raw = read_topics(CAST_FIX / "topics-raw.tsv").as_dict()
    assert manual["106_2"] == ("Once it breaks out, how likely is lobular carcinoma breast cancer "
                               "to spread?")
    assert auto["106_2"] == "Once the cancer breaks out, how likely is it to spread?"
    assert raw["106_2"] == "Once it breaks out, how likely is it to spread?"
