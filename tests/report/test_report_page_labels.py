"""The report page names each measure as compare's tables do (MRR, NDCG@3, ``--label``'s),
with the rule behind the label (``trec_eval 9.0.8 recip_rank``, ``ir_measures RR@3``) in a
note and in the tooltips, in the summary, the comparisons, the plots, the measure selector and
the per-turn table; ``trecqr report --label`` is compare's option, refused alike.

The browser, its skip rule and the waits are those of test_report_html.py; the pages are built
from the CAsT 2021 organisers' runs and the CAsT 2021 demo (cqr, whose JSON keys are the same
labels).
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import ROOT, data_path, run_cli
from test_report_html import browser, js, open_page  # noqa: F401 (browser: a fixture)

DEMO = ROOT / "fixtures" / "cast2021-demo"
MEASURES = ["-m", "ndcg_cut.3", "-m", "map", "-m", "recip_rank", "-m", "RR@3"]
LABELS = ["NDCG@3", "AP", "MRR", "RR@3"]  # map labelled AP with --label, the others by default
RULES = ["trec_eval 9.0.8 ndcg_cut_3", "trec_eval 9.0.8 map", "trec_eval 9.0.8 recip_rank",
         "ir_measures RR@3"]


def _args():
    d = data_path("cast2021")
    return [d / "qrels-docs.2021.qrel", d / "docrun_org_manual_bm25.run",
            d / "docrun_org_manual_ance.run", *MEASURES, "-c", "--label", "map=AP",
            "--permutations", "200", "--bootstrap", "200"]


@pytest.fixture(scope="module")
def labelled_page(tmp_path_factory):
    page = tmp_path_factory.mktemp("labels") / "labels.html"
    res = run_cli(["report", *_args(), "-o", page])
    assert res.exit_code == 0, res.output
    return page


def _data(text: str) -> dict:
    return json.loads(text.split('type="application/json">')[1].split("</script>")[0])


def test_page_headers_are_compares_labels_with_the_rules_beside(labelled_page):
    """Without a browser: the summary's headers are the Markdown table's, in the order given,
    each with its rule as its tooltip; the note names the measure behind every label; the
    comparisons name the measures by label too; trec_eval's names are left in the tooltips,
    the note and the data attributes only."""
    text = labelled_page.read_text()
    md = run_cli(["compare", *_args(), "--format", "markdown"])
    assert md.exit_code == 0, md.output
    assert md.stdout.splitlines()[0] == "| run | " + " | ".join(LABELS) + " |"
    heads = re.findall(r'<th class="n" data-measure="([^"]+)" title="([^"]+)">([^<]+)</th>',
                       text.split('<table id="summary">')[1].split("</thead>")[0])
    assert heads == [(m, r, label) for m, r, label in
                     zip(["ndcg_cut_3", "map", "recip_rank", "RR@3"], RULES, LABELS)]
    note = re.search(r'<p class="note" id="measures">([^<]+)</p>', text)[1]
    assert note == "measures: " + "; ".join(f"{l} = {r}" for l, r in zip(LABELS, RULES))
    pairs = text.split('<table id="pairs">')[1].split("</table>")[0]
    assert re.findall(r'<td><span title="([^"]+)">([^<]+)</span></td>', pairs) == \
        list(zip(RULES, LABELS))
    data = _data(text)
    assert data["labels"] == LABELS and data["rules"] == RULES
    assert data["comparison"]["labels"] == dict(zip(data["measures"], LABELS))
    shown = re.sub(r'<p class="note" id="measures">[^<]*</p>|<script.*?</script>|'
                   r'<title>.*?</title>|<[^>]*>', " ", text, flags=re.S)
    assert not re.search(r"ndcg_cut|recip_rank|\bmap\b", shown)  # tooltips aside
    assert re.search(r'<h2 id="plots-title" title="trec_eval 9.0.8 ndcg_cut_3">plots '
                     r'\(NDCG@3\)</h2>', text)


def test_cqr_page_labels_are_its_json_keys(tmp_path):
    """cqr --html: the page calls each measure by the key cqr's JSON gives its value under
    (MRR for recip_rank, NDCG@3 for ndcg_cut_3, R@10, R@100, RR@3), the same value."""
    page = tmp_path / "cqr.html"
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--collection",
                   DEMO / "collection.jsonl", "--topics", DEMO / "topics-raw.tsv",
                   "--topics", DEMO / "topics-manual.tsv", "--quiet", "--html", page,
                   "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    data = _data(page.read_text())
    assert report["measures"] == {"MRR": "recip_rank", "NDCG@3": "ndcg_cut.3",
                                  "R@10": "recall.10", "R@100": "recall.100", "RR@3": "RR@3"}
    assert data["measures"] == ["recip_rank", "ndcg_cut_3", "recall_10", "recall_100", "RR@3"]
    assert data["labels"] == ["MRR", "NDCG@3", "R@10", "R@100", "RR@3"]
    for m, label in zip(data["measures"], data["labels"]):
        assert report["rows"][1]["scores"][label] == pytest.approx(
            data["comparison"]["means"]["topics-manual"][m], abs=1e-12)


@pytest.mark.parametrize("extra,message", [
    (["--label", "P.5=P@5"], "trecqr: --label P.5=P@5: 'P.5' is none of the measures "
                             "(ndcg_cut_3, map, recip_rank, RR@3)\n"),
    (["--label", "map"], "trecqr: --label 'map': expected MEASURE=LABEL\n"),
])
def test_report_bad_label_is_one_line_and_no_page(tmp_path, extra, message):
    page = tmp_path / "page.html"
    res = run_cli(["report", *_args(), *extra, "-o", page])
    assert res.exit_code == 2 and res.stderr == message
    assert not page.exists()


def test_labels_in_the_browser(browser, labelled_page):  # noqa: F811
    """In the page as shown: the measure selector lists the labels (rules as tooltips), the
    per-turn table heads each run's column with the chosen measure's label (its rule in the
    header's tooltip) and follows the selector; the plots name the first measure by its label,
    the rule in their tooltips."""
    open_page(browser, labelled_page)
    options = js(browser, "return [...document.getElementById('f-measure').options]"
                          ".map(o => [o.textContent, o.title])")
    assert options == [list(x) for x in zip(LABELS, RULES)]
    assert js(browser, "return document.getElementById('f-measure').title") == RULES[0]

    def value_heads():
        return js(browser, "return [...document.querySelectorAll('#turns thead th')]"
                           ".filter(th => th.dataset.key.startsWith('v:')).map(th =>"
                           " [th.querySelector('.grp').textContent, th.title])")

    runs = ["docrun_org_manual_bm25.run", "docrun_org_manual_ance.run"]
    assert value_heads() == [["NDCG@3", f"NDCG@3 {r} ({RULES[0]})"] for r in runs]
    js(browser, "const s = document.getElementById('f-measure'); s.value = '1';"
                "s.dispatchEvent(new Event('change'))")
    assert value_heads() == [["AP", f"AP {r} ({RULES[1]})"] for r in runs]
    assert js(browser, "return document.getElementById('f-measure').title") == RULES[1]
    plots = js(browser, "return [...document.querySelectorAll('svg.plot')].map(svg =>"
                        " [svg.dataset.plot, svg.querySelector('text.title').textContent,"
                        " svg.querySelector('title').textContent,"
                        " svg.lastElementChild.textContent])")
    assert plots[0] == ["depth", "NDCG@3 by turn depth", f"NDCG@3 by turn depth ({RULES[0]})",
                        "turn depth"]
    assert plots[1][0] == "winloss" and plots[1][3] == "158 turns, sorted by the NDCG@3 " \
                                                       "difference"
    assert plots[2] == ["dist", "NDCG@3: distribution over turns",
                        f"NDCG@3: distribution over turns ({RULES[0]})", "NDCG@3"]
    summary = js(browser, "return [...document.querySelectorAll('#summary thead th')]"
                          ".map(th => [th.textContent, th.title])")
    assert summary[1:-1] == [list(x) for x in zip(LABELS, RULES)]
    text = js(browser, "return document.body.innerText")
    note = js(browser, "return document.getElementById('measures').innerText")
    assert "ndcg_cut" not in text.replace(note, "") and "recip_rank" not in text.replace(note, "")


def test_compare_text_names_the_measure_behind_each_label(tmp_path):
    """compare's text output heads means and pairs with the same labels, and its labels line
    says which measure each label is (ir_measures names are their own labels)."""
    from conftest import data_path, run_cli

    d = data_path("cast2021")
    res = run_cli(["compare", str(d / "qrels-docs.2021.qrel"), str(d / "docrun_org_convdr.run"),
                   str(d / "docrun_org_manual_bm25.run"), "-m", "recip_rank", "-m", "RR@3",
                   "--permutations", "200", "--bootstrap", "200"])
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert "labels: MRR = recip_rank" in lines
    pairs = [l.split()[2] for l in lines if l.startswith("docrun_org_convdr.run  docrun_")]
    assert pairs == ["MRR", "RR@3"]
