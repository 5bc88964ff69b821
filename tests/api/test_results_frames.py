"""Results.to_dataframe: per-topic rows apart from the means, topics in natural order, and one
line naming the extra when pandas is not installed."""

from __future__ import annotations

import subprocess
import sys

import pytest

import trecqr
from conftest import ROOT, data_path
from trecqr.api.views import natural_key
from trecqr.errors import UsageError

MEASURES = ["map", "ndcg_cut.3", "RR@3"]


@pytest.fixture(scope="module")
def results():
    return trecqr.evaluate(data_path("cast2021", "qrels-docs.2021.qrel"),
                           data_path("cast2021", "docrun_org_manual_bm25.run"), MEASURES)


def test_natural_order_of_topic_ids():
    """Digits by their number, text as text, a total order for ids with leading zeros."""
    ids = ["106_10", "106_2", "b", "a10", "a9", "106", "106_1", "1", "01", "10", "9", "x_1_2"]
    assert sorted(ids, key=natural_key) == ["01", "1", "9", "10", "106", "106_1", "106_2",
                                            "106_10", "a9", "a10", "b", "x_1_2"]
    assert sorted(["b", "a", "c"], key=natural_key) == ["a", "b", "c"]


def test_long_frame_has_per_topic_rows_only(results):
    """No ``all`` rows: a mean over a measure's rows is its summary value."""
    long = results.to_dataframe()
    n_topics = len(results.per_query())
    assert list(long.columns) == ["query_id", "measure", "value"]
    assert len(long) == n_topics * len(MEASURES) and "all" not in set(long["query_id"])
    means = long.groupby("measure", sort=False)["value"].mean().to_dict()
    assert means == pytest.approx(results.aggregate(), abs=1e-15)


def test_means_frame_holds_the_summaries_with_their_counts(results):
    means = results.to_dataframe(means=True)
    assert list(means.columns) == ["measure", "value", "n"]
    assert dict(zip(means["measure"], means["value"])) == results.aggregate()
    assert dict(zip(means["measure"], means["n"])) == results.n
    assert means.attrs["n"] == results.n
    with pytest.raises(UsageError, match="wide=True or means=True, not both"):
        results.to_dataframe(wide=True, means=True)


def test_frames_list_topics_in_natural_order(results):
    """106_2 before 106_10 in the wide index and in the long rows (per_query() keeps
    trec_eval's text order)."""
    topics = list(results.per_query())
    assert topics.index("106_10") < topics.index("106_2")  # trec_eval's order
    natural = sorted(topics, key=natural_key)
    assert natural.index("106_2") < natural.index("106_10")
    assert list(results.to_dataframe(wide=True).index) == natural
    long = results.to_dataframe()
    assert list(dict.fromkeys(long["query_id"])) == natural


def test_without_pandas_one_line_names_the_extra():
    """pandas made unimportable in a fresh process: the error says what to install."""
    code = ("import sys; sys.modules['pandas'] = None\n"
            "import trecqr\n"
            "res = trecqr.evaluate({'q': {'d': 1}}, {'q': {'d': 1.0}}, ['map'])\n"
            "try:\n"
            "    res.to_dataframe()\n"
            "except ImportError as exc:\n"
            "    print(type(exc).__name__, exc.name, '|', exc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "ModuleNotFoundError pandas | to_dataframe() needs the pandas extra: "
        "pip install 'trecqr[pandas]'"]
