"""The HTML report: built from real data, opened in a real headless Chromium.

The browser is Debian's chromium with its chromedriver, driven by selenium (``.ci/run``
installs both). Without them the browser tests skip, unless CI is set: then they fail. Every
wait is on a DOM condition (``body[data-ready]``, a counter the page bumps after each render),
never a sleep. The page's numbers are checked against ``trecqr compare --format json``, its
grades against the qrels file, its top k against the run file.

Screenshots in docs/ are rewritten only with ``TRECQR_UPDATE_SCREENSHOTS=1``; otherwise the
test checks that the committed ones exist.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, data_path, run_cli
from trecqr.errors import InputError

DEMO = ROOT / "fixtures" / "cast2021-demo"
QDEMO = ROOT / "fixtures" / "qrecc-demo"
SHOTS = {"cast": ROOT / "docs" / "report-cast2021-demo.png",
         "qrecc": ROOT / "docs" / "report-qrecc-demo.png",
         "candidates": ROOT / "docs" / "report-qrecc-candidates.png"}
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1500")
PLANTED = "<script>window.pwned = 1</script><b>bold?</b>"
PLANTED_DOC = "MARCO_D684514-1"  # the relevant passage of 106_2 in the CAsT 2021 demo


def _browser_paths():
    chrome = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)),
                  None)
    driver = shutil.which("chromedriver") or next(
        (p for p in ("/usr/lib/chromium/chromedriver",) if os.path.exists(p)), None)
    return chrome, driver


@pytest.fixture(scope="module")
def browser():
    chrome, driver_path = _browser_paths()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        selenium = None
    else:
        selenium = webdriver
    missing = [what for what, ok in (("chromium", chrome), ("chromedriver", driver_path),
                                     ("selenium", selenium)) if not ok]
    if missing:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI is set but {', '.join(missing)} is missing (.ci/run installs them)")
        pytest.skip(f"no headless browser: {', '.join(missing)} not installed (Debian: "
                    "apt-get install chromium chromium-driver; pip install selenium)")
    os.environ.setdefault("SE_AVOID_STATS", "true")  # selenium: no usage statistics sent
    profile = tempfile.mkdtemp(prefix="trecqr-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for flag in FLAGS + (f"--user-data-dir={profile}",):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    drv = webdriver.Chrome(options=opts, service=Service(driver_path))
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def open_page(drv, path: Path):
    """Load a page and wait until its script has rendered the table."""
    from selenium.webdriver.support.ui import WebDriverWait

    drv.get_log("performance")  # drop what earlier pages logged
    drv.get(path.resolve().as_uri())
    WebDriverWait(drv, 20).until(
        lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    errors = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []


def js(drv, script, *args):
    return drv.execute_script(script, *args)


def first_column(drv, col: int) -> list:
    return js(drv, "return [...document.querySelectorAll('#turns tbody tr')]"
                   ".map(tr => tr.cells[arguments[0]].textContent)", col)


def header_index(drv, key: str) -> int:
    return js(drv, "return [...document.querySelectorAll('#turns thead th')]"
                   ".findIndex(th => th.dataset.key === arguments[0])", key)


def qrels_grades(path) -> dict:
    out = defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        q, _, d, g = line.split()
        out[q][d] = int(g)
    return out


def run_topk(path, k: int) -> dict:
    """{qid: the first k docnos}, trec_eval's order (score desc, docno desc), read plainly."""
    rows = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        rows[q].append((float(np.float32(s)), d))
    return {q: [d for _, d in sorted(r, key=lambda x: (x[0], x[1]), reverse=True)[:k]]
            for q, r in rows.items()}


# ---------------------------------------------------------------------------------------------
# pages built from real data


@pytest.fixture(scope="module")
def cast_demo(tmp_path_factory):
    """The CAsT 2021 demo: raw, manual and automatic utterances searched on its collection;
    the raw topics (106_1) and the passage text (106_2's relevant passage) carry a planted
    <script> for the escaping check."""
    from trecqr.workflows.cqr import cqr

    tmp = tmp_path_factory.mktemp("cast-demo")
    report = cqr(DEMO / "qrels.txt", [DEMO / "topics-raw.tsv", DEMO / "topics-manual.tsv",
                                      DEMO / "topics-automatic.tsv"],
                 collection=DEMO / "collection.jsonl", runs_dir=tmp / "runs",
                 names=["raw", "manual", "automatic"])
    planted = tmp / "raw-planted.tsv"
    lines = (DEMO / "topics-raw.tsv").read_text().splitlines()
    assert lines[0].startswith("106_1\t")
    planted.write_text("\n".join([lines[0] + " " + PLANTED] + lines[1:]) + "\n")
    collection = tmp / "collection-planted.jsonl"
    docs = [json.loads(line) for line in (DEMO / "collection.jsonl").read_text().splitlines()]
    for doc in docs:
        if doc["id"] == PLANTED_DOC:
            doc["contents"] += " " + PLANTED
    collection.write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    page = tmp / "cast-demo.html"
    page.write_text(report.to_html(raw=planted, manual=DEMO / "topics-manual.tsv",
                                   collection=collection,
                                   title="CAsT 2021 demo: raw, manual, automatic (BM25)"))
    return report, page


@pytest.fixture(scope="module")
def qrecc_demo(tmp_path_factory):
    """The QReCC demo: raw question vs GPT_rewrite vs Editor_rewrite of InfoCQR's editor file,
    grouped by Conversation_source."""
    from trecqr.datasets.rewrites.topics import read_rewrites
    from trecqr.datasets.topics import read_topics, write_topics
    from trecqr.workflows.cqr import cqr

    tmp = tmp_path_factory.mktemp("qrecc-demo")
    editor = data_path("qrecc", "dev-sampled2k_chatgpt_ICL_editor.jsonl")
    raw = read_topics(QDEMO / "topics-raw.tsv")
    paths = []
    for field in ("GPT_rewrite", "Editor_rewrite"):
        rw = read_rewrites(editor, rewrite_field=field, raw=raw)
        paths.append(tmp / f"{field}.tsv")
        write_topics(rw.topics.subset(raw.qids), paths[-1])
    groups = {}
    for line in editor.read_text().splitlines():
        rec = json.loads(line)
        groups[f"{rec['Conversation_no']}_{rec['Turn_no']}"] = rec["Conversation_source"]
    (tmp / "groups.json").write_text(json.dumps(groups))
    report = cqr(QDEMO / "qrels.txt", [QDEMO / "topics-raw.tsv", *paths],
                 collection=QDEMO / "collection.jsonl", runs_dir=tmp / "runs",
                 names=["raw", "GPT_rewrite", "Editor_rewrite"])
    page = tmp / "qrecc-demo.html"
    page.write_text(report.to_html(raw=editor,  # the raw questions and their history
                                   manual=QDEMO / "topics-human.tsv",
                                   collection=QDEMO / "collection.jsonl",
                                   groups=tmp / "groups.json",
                                   title="QReCC demo: raw vs GPT_rewrite vs Editor_rewrite"))
    return report, page, groups


# ---------------------------------------------------------------------------------------------
# in the browser


def test_sort_filter_and_turn_view(browser, cast_demo):
    report, page = cast_demo
    open_page(browser, page)
    ids = [l.split("\t")[0] for l in (DEMO / "topics-raw.tsv").read_text().splitlines()]
    assert js(browser, "return document.getElementById('count').textContent") == \
        f"{len(ids)} of {len(ids)} turns"
    assert len(first_column(browser, 0)) == 100  # paged: one page of rows in the DOM
    assert first_column(browser, 0)[:3] == ["106_1", "106_2", "106_3"]

    # sorting by the difference (manual - raw, MRR: the first measure) reorders the rows
    import trecqr

    assert js(browser, "return document.getElementById('f-measure').selectedOptions[0]"
                       ".textContent") == "MRR"
    rr = [trecqr.evaluate(DEMO / "qrels.txt", row.run, ["recip_rank"]).per_query()
          for row in report.rows[:2]]
    want = sorted((rr[1][q]["recip_rank"] - rr[0][q]["recip_rank"] for q in ids), reverse=True)
    col = header_index(browser, "diff")
    before = first_column(browser, 0)
    js(browser, "document.querySelector('#turns th button[data-key=diff]').click()")
    diffs = [float(x) for x in first_column(browser, col)]
    assert diffs == [round(x, 4) for x in want[:100]]
    assert first_column(browser, 0) != before
    js(browser, "document.querySelector('#turns th button[data-key=diff]').click()")
    assert [float(x) for x in first_column(browser, col)] == [round(x, 4) for x in want[::-1][:100]]

    # filtering by depth leaves the turns of that depth
    depth3 = sum(1 for q in ids if q.split("_")[1] == "3")
    js(browser, "const s = document.getElementById('f-depth'); s.value = '3';"
                "s.dispatchEvent(new Event('change'))")
    assert js(browser, "return document.getElementById('count').textContent") == \
        f"{depth3} of {len(ids)} turns"
    assert {q.split("_")[1] for q in first_column(browser, 0)} == {"3"}
    js(browser, "const s = document.getElementById('f-sign'); s.value = 'loss';"
                "s.dispatchEvent(new Event('change'))")
    losses = first_column(browser, 0)
    assert 0 < len(losses) < depth3
    assert all(float(x) < 0 for x in first_column(browser, col))

    # opening a turn shows its rewrites and each run's top k, grades as in the qrels
    qid = losses[0]
    js(browser, "document.querySelector(`#turns tbody tr[data-qid='${arguments[0]}']`).click()",
       qid)
    assert js(browser, "return document.getElementById('turn').dataset.qid") == qid
    rewrites = js(browser, "return Object.fromEntries([...document.querySelectorAll("
                           "'#rewrites tr')].map(tr => [tr.dataset.run, tr.cells[1].textContent]))")
    for name, file in (("manual", "topics-manual.tsv"), ("automatic", "topics-automatic.tsv")):
        text = dict(l.split("\t") for l in (DEMO / file).read_text().splitlines())[qid]
        assert rewrites[name] == text
    assert rewrites["manual rewrite"] == rewrites["manual"]
    grades = qrels_grades(DEMO / "qrels.txt")
    seen = set()
    for row in report.rows:
        shown = js(browser, "return [...document.querySelectorAll(`#turn div[data-run="
                            "'${arguments[0]}'] table.ranking tr`)].slice(1).map(tr => "
                            "[tr.cells[1].textContent, tr.cells[2].textContent])", row.name)
        assert [d for d, _ in shown] == run_topk(row.run, 10)[qid]
        assert [g for _, g in shown] == [str(grades[qid][d]) if d in grades[qid] else "unjudged"
                                         for d, _ in shown]
        seen |= {g for _, g in shown}
    assert seen == {"1", "unjudged"}  # the known item, and passages nobody judged


def test_no_request_leaves_the_page_and_inputs_stay_text(browser, cast_demo):
    _, page = cast_demo
    open_page(browser, page)
    js(browser, "document.querySelector(`#turns tbody tr[data-qid='106_2']`).click()")
    utterances = js(browser, "return [...document.querySelectorAll('#conversation .utt')]"
                             ".map(e => e.textContent)")
    assert utterances[0].endswith(PLANTED)  # 106_1, shown as text
    passages = js(browser, "return [...document.querySelectorAll('#turn table.ranking tr')]"
                           ".filter(tr => tr.cells[1].textContent === arguments[0])"
                           ".map(tr => tr.cells[3].textContent)", PLANTED_DOC)
    assert passages and all(p.endswith(PLANTED) for p in passages)  # a passage, as text
    assert js(browser, "return window.pwned === undefined")
    assert js(browser, "return document.querySelectorAll('#turn b, #turn script').length") == 0
    assert js(browser, "return performance.getEntriesByType('resource').length") == 0
    requests = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in requests
            if m["method"] == "Network.requestWillBeSent"]
    assert urls == [page.resolve().as_uri()]  # the page itself, nothing else


def test_summary_equals_compare_json(browser, tmp_path):
    """The CAsT 2021 organisers' runs: the page's means, marks and tests are compare's."""
    d = data_path("cast2021")
    runs = [d / f"docrun_org_{n}.run" for n in ("manual_bm25", "manual_ance", "convdr",
                                                "convdr_bert", "manual_ance_bert")]
    args = [d / "qrels-docs.2021.qrel", *runs, "-m", "map", "-m", "ndcg_cut.3", "-m",
            "recip_rank", "--permutations", "2000", "--bootstrap", "2000"]
    res = run_cli(["compare", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    expected = json.loads(res.stdout)
    page = tmp_path / "cast2021.html"
    res = run_cli(["report", *args, "-o", page])
    assert res.exit_code == 0, res.output
    assert res.stderr == f"trecqr: report written to {page}\n"
    open_page(browser, page)
    data = js(browser, "return JSON.parse(document.getElementById('trecqr-data').textContent)")
    # the page states compare's population too (topics_note); only the p-values of the
    # randomization test are drawn again
    assert data["comparison"] == {k: v for k, v in expected.items() if k != "randomization_p"}
    cells = js(browser, "return [...document.querySelectorAll('#summary td[data-measure]')]"
                        ".map(td => [td.dataset.run, td.dataset.measure, td.dataset.value,"
                        " td.dataset.sig, td.textContent])")
    assert len(cells) == 5 * 3
    sig = {(p["run"], p["measure"]): "+" if p["diff"] > 0 else "-"
           for p in expected["pairs"] if p["significant"]}
    assert sig  # ANCE beats BM25 significantly
    for run, measure, value, mark, text in cells:
        assert float(value) == expected["means"][run][measure]
        assert mark == sig.get((run, measure), "")
        assert text == f"{expected['means'][run][measure]:.4f}{mark}"
    pairs = js(browser, "return [...document.querySelectorAll('#pairs tbody tr')].map(tr => "
                        "[tr.dataset.run, tr.dataset.measure, tr.dataset.diff, tr.dataset.adj,"
                        " tr.dataset.significant])")
    assert [(r, m, float(df), float(a), s == "1") for r, m, df, a, s in pairs] == \
        [(p["run"], p["measure"], p["diff"], p["p_t_adj"], p["significant"])
         for p in expected["pairs"]]
    assert js(browser, "return document.getElementById('family').textContent") == \
        f"family: {expected['family']}; correction: holm; alpha = 0.05"
    coverage = js(browser, "return [...document.querySelectorAll('#coverage tbody tr')]"
                           ".map(tr => [...tr.cells].map(c => c.textContent))")
    assert [c[:3] for c in coverage] == [[r.name, "158", "0"] for r in runs]


def qrecc_test_runs(folder: Path, n_runs: int = 3, k: int = 10) -> list:
    """Three runs over the 8,209 QReCC test turns with gold (qrecc_qrel.tsv), k passages each:
    a turn's gold passage at a random rank with probability 0.3, 0.5, 0.7, the other places
    taken by passages judged for other turns (so unjudged here). Seeded: the same every time."""
    qrels = defaultdict(list)
    for line in data_path("qrecc", "qrecc_qrel.tsv").read_text().splitlines():
        q, _, d, _ = line.split("\t")
        qrels[q].append(d)
    pool = np.array(sorted({d for ds in qrels.values() for d in ds}))
    paths = []
    for r in range(n_runs):
        rng = np.random.default_rng(r)
        lines = []
        for q, gold in qrels.items():
            docs = [d for d in pool[rng.integers(0, len(pool), 3 * k)] if d not in gold]
            docs = list(dict.fromkeys(docs))[:k]
            if rng.random() < 0.3 + 0.2 * r:
                docs.insert(int(rng.integers(0, k)), gold[0])
            lines += [f"{q} Q0 {d} {i + 1} {k - i} run{r}" for i, d in enumerate(docs[:k])]
        paths.append(folder / f"run{r}.trec")
        paths[-1].write_text("\n".join(lines) + "\n")
    return paths


def test_8209_turns_render_one_page_of_rows_and_bounded_plots(browser, tmp_path):
    """What keeps 8,209 turns fast, checked without a clock: the page writes PAGE_SIZE rows
    into the DOM, after opening, sorting, filtering and paging alike, sorting renders once,
    and each difference plot draws at most MAX_POINTS bars (quantiles of the sorted values).
    How long it takes is benchmarks/bench_report_html.py's to print."""
    from trecqr.report.html import report_page
    from trecqr.report.html_assets import PAGE_SIZE
    from trecqr.report.html_svg import MAX_POINTS

    runs = qrecc_test_runs(tmp_path)
    page = tmp_path / "qrecc-test.html"
    page.write_text(report_page(data_path("qrecc", "qrecc_qrel.tsv"), runs,
                                ["recip_rank", "ndcg_cut.3"],
                                groups=data_path("qrecc", "test_question_types.json"),
                                permutations=1000, bootstrap=1000))
    open_page(browser, page)
    rows = "return document.querySelectorAll('#turns tbody tr').length"
    rendered = "return Number(document.getElementById('turns').dataset.rendered)"
    assert js(browser, "return document.getElementById('count').textContent") == \
        "8209 of 8209 turns"
    assert js(browser, rows) == PAGE_SIZE
    before = js(browser, rendered)
    js(browser, "document.querySelector('#turns th button[data-key=diff]').click()")
    assert js(browser, rendered) == before + 1 and js(browser, rows) == PAGE_SIZE
    col = header_index(browser, "diff")
    diffs = [float(x) for x in first_column(browser, col)]
    assert diffs == sorted(diffs, reverse=True) and diffs[0] > 0
    js(browser, "document.getElementById('next').click()")
    assert js(browser, rows) == PAGE_SIZE
    assert js(browser, "return document.getElementById('pageinfo').textContent") == \
        f"rows {PAGE_SIZE + 1}-{2 * PAGE_SIZE}"
    bars = js(browser, "return [...document.querySelectorAll('svg[data-plot=winloss] path')]"
                       ".map(p => (p.getAttribute('d').match(/M/g) || []).length)")
    assert len(bars) == 2 * 2 and sum(bars[:2]) <= MAX_POINTS and sum(bars[2:]) <= MAX_POINTS
    # the question types of test_question_types.json, counted as the published breakdowns do
    names = js(browser, "return [...document.getElementById('f-group').options].map(o => o.text)")
    counts = {}
    for g in ("trec", "quac", "nq", "no-switch", "switch", "first"):
        js(browser, "const s = document.getElementById('f-group');"
                    "s.value = String(arguments[0]); s.dispatchEvent(new Event('change'))",
           names.index(g) - 1)
        counts[g] = int(js(browser, "return document.getElementById('count').textContent")
                        .split()[0])
        assert js(browser, rows) == min(PAGE_SIZE, counts[g])
    assert counts == {"trec": 371, "quac": 6396, "nq": 1442, "no-switch": 279, "switch": 573,
                      "first": 267}


def _screenshot(drv, key: str) -> None:
    """Rewrite docs/<screenshot> only when asked (TRECQR_UPDATE_SCREENSHOTS=1)."""
    if os.environ.get("TRECQR_UPDATE_SCREENSHOTS") == "1":
        drv.save_screenshot(str(SHOTS[key]))
    assert SHOTS[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert SHOTS[key].stat().st_size < 300_000


def test_cast_demo_page_screenshot(browser, cast_demo):
    _, page = cast_demo
    open_page(browser, page)
    js(browser, "document.querySelector('#turns th button[data-key=diff]').click()")
    assert len(js(browser, "return document.querySelectorAll('svg.plot')")) == 4  # depth,
    _screenshot(browser, "cast")                                       # 2 win/loss, distribution


def test_qrecc_demo_page_groups_rewrites_screenshot(browser, qrecc_demo):
    report, page, groups = qrecc_demo
    open_page(browser, page)
    ids = [l.split("\t")[0] for l in (QDEMO / "topics-raw.tsv").read_text().splitlines()]
    names = js(browser, "return [...document.getElementById('f-group').options].map(o => o.text)")
    assert names == ["all", "nq", "quac"]  # the dev sample holds no TREC CAsT conversation
    for k, g in enumerate(names[1:]):
        js(browser, "const s = document.getElementById('f-group'); s.value = String(arguments[0]);"
                    "s.dispatchEvent(new Event('change'))", k)
        want = sum(groups[q] == g for q in ids)
        assert js(browser, "return document.getElementById('count').textContent") == \
            f"{want} of {len(ids)} turns"
    # quac turns (the last group chosen) where the editor's rewrite did worse than GPT's
    js(browser, "for (const [id, v] of [['f-run', 2], ['f-base', 1], ['f-sign', 'loss']]) {"
                "const s = document.getElementById(id); s.value = String(v);"
                "s.dispatchEvent(new Event('change')) }")
    js(browser, "document.querySelector('#turns th button[data-key=diff]').click()")
    qid = first_column(browser, 0)[-1]
    js(browser, "document.querySelector(`#turns tbody tr[data-qid='${arguments[0]}']`).click()",
       qid)
    editor = {f"{r['Conversation_no']}_{r['Turn_no']}": r for r in map(
        json.loads, data_path("qrecc", "dev-sampled2k_chatgpt_ICL_editor.jsonl").read_text()
        .splitlines())}
    rewrites = js(browser, "return Object.fromEntries([...document.querySelectorAll("
                           "'#rewrites tr')].map(tr => [tr.dataset.run, tr.cells[1].textContent]))")
    assert rewrites["raw"] == editor[qid]["Question"]
    assert rewrites["GPT_rewrite"] == editor[qid]["GPT_rewrite"]
    assert rewrites["manual rewrite"] == editor[qid]["Truth_rewrite"]
    assert rewrites["Editor_rewrite"] != rewrites["GPT_rewrite"]
    conv = js(browser, "return [...document.querySelectorAll('#conversation li')]"
                       ".map(li => [li.dataset.qid, li.textContent])")
    history = editor[qid]["NewContext"]
    assert conv[-1] == [qid, editor[qid]["Question"]]
    assert [text for _, text in conv[:-1]] == [
        "".join(history[j:j + 2]) for j in range(0, len(history), 2)]
    assert len(conv) == int(qid.split("_")[1])  # every earlier turn, with its answer
    js(browser, "document.getElementById('controls').scrollIntoView()")
    browser.set_window_size(1400, 1000)
    try:
        _screenshot(browser, "qrecc")
    finally:
        browser.set_window_size(1400, 1500)


# ---------------------------------------------------------------------------------------------
# without a browser: the command, its errors, the Python entry points


def test_cqr_html_writes_the_page_of_its_rows(tmp_path):
    page = tmp_path / "cqr.html"
    res = run_cli(["cqr", "--qrels", DEMO / "qrels.txt", "--collection",
                   DEMO / "collection.jsonl", "--topics", DEMO / "topics-raw.tsv",
                   "--topics", DEMO / "topics-manual.tsv", "--raw", DEMO / "topics-raw.tsv",
                   "--quiet", "--html", page])
    assert res.exit_code == 0, res.output
    assert "topics-manual  0.5160" in res.stdout  # the table is unchanged (RR@3 column)
    text = page.read_text()
    data = json.loads(text.split('type="application/json">')[1].split("</script>")[0])
    assert data["runs"] == ["topics-raw", "topics-manual"]
    assert data["comparison"]["means"]["topics-manual"]["RR@3"] == pytest.approx(0.5160, abs=5e-5)
    assert data["rewrites"][1][data["ids"].index("106_2")] == \
        "Once it breaks out, how likely is lobular carcinoma breast cancer to spread?"
    assert data["text"] is not None  # the collection's passages
    assert list(tmp_path.iterdir()) == [page]  # the runs were not kept


def test_cqr_html_takes_the_manual_rewrites_and_the_groups(tmp_path):
    """cqr --html --manual --groups: the page shows the manual rewrite of each turn and
    filters by the groups, as trecqr report's page does (before: cqr had no --manual and
    kept its --groups for the text breakdown only); --manual without --html, and --html with
    one row, are refused before any search."""
    page, groups = tmp_path / "cqr.html", tmp_path / "groups.json"
    groups.write_text(json.dumps({"first turns": ["106_1", "107_1"], "topic 106": ["106_1",
                                                                                   "106_2"]}))
    args = ["cqr", "--qrels", DEMO / "qrels.txt", "--collection", DEMO / "collection.jsonl",
            "--topics", DEMO / "topics-raw.tsv", "--raw", DEMO / "topics-raw.tsv", "--quiet"]
    one = run_cli(args + ["--html", page])  # before: searched, then "compare needs two runs"
    assert one.exit_code == 2 and one.stderr.startswith("trecqr: --html compares the rows")
    assert not page.exists()
    args += ["--topics", DEMO / "topics-automatic.tsv"]
    res = run_cli(args + ["--html", page, "--manual", DEMO / "topics-manual.tsv",
                          "--groups", groups])
    assert res.exit_code == 0, res.output
    text = page.read_text()
    data = json.loads(text.split('type="application/json">')[1].split("</script>")[0])
    ids = data["ids"]
    assert data["manual"][ids.index("106_2")] == \
        "Once it breaks out, how likely is lobular carcinoma breast cancer to spread?"
    names = data["group_names"]
    assert sorted(names) == ["first turns", "topic 106"]
    assert sorted(names[g] for g in data["groups"][ids.index("106_1")]) == \
        ["first turns", "topic 106"]
    assert data["groups"][ids.index("107_2")] == []
    refused = run_cli(args + ["--manual", DEMO / "topics-manual.tsv"])
    assert refused.exit_code == 2 and refused.stderr == \
        "trecqr: --manual goes with --html\n"


def test_page_is_self_contained_and_escaped(cast_demo):
    _, page = cast_demo
    text = page.read_text()
    assert "<script>window.pwned" not in text and "\\u003cscript\\u003ewindow.pwned" in text
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    for attr in (" src=", " href=", "@import", "url("):
        assert attr not in text
    assert text.count("<script") == 2  # the data (not executed) and the page's own script


def test_comparison_to_html_is_report_page(tmp_path):
    from trecqr.report.compare import compare
    from trecqr.report.html import report_page

    d = data_path("cast2021")
    runs = [d / "docrun_org_manual_bm25.run", d / "docrun_org_convdr.run"]
    qrels = d / "qrels-docs.2021.qrel"
    cmp = compare(qrels, runs, ["map", "P.5"], permutations=200, bootstrap=200)
    page = cmp.to_html(qrels, runs, ["map", "P.5"], k=5)
    assert page == report_page(qrels, runs, ["map", "P.5"], k=5, permutations=200,
                               bootstrap=200)
    data = json.loads(page.split('type="application/json">')[1].split("</script>")[0])
    assert data["measures"] == ["map", "P_5"] and {len(t) for t in data["topk"][0]} == {5}


def test_groups_both_shapes():
    from trecqr.report.groups import groups_by_turn, read_groups

    assert groups_by_turn(read_groups({"quac": ["1_1", "1_2"], "switch": ["1_2"]})) == \
        {"1_1": ["quac"], "1_2": ["quac", "switch"]}
    assert read_groups({"1_1": "nq", "1_2": "nq"}) == {"nq": ["1_1", "1_2"]}
    with pytest.raises(InputError, match="group 'a': expected a list of turn ids"):
        read_groups({"a": "1_1"}, labels=False)


@pytest.mark.parametrize("extra, message", [
    (["--groups", "GROUPS"], "GROUPS: expected a JSON object {group: [turn ids]} or "
                             "{turn id: group}"),
    (["--rewrites", "fixtures/cast2021-demo/topics-raw.tsv"],
     "trecqr: 1 rewrites for 2 runs: give one per run, in the order of the runs"),
    (["--collection", "fixtures/cast2021-demo/collection.jsonl", "--index", "x"],
     "trecqr: give the passage text as --collection or --index, not both"),
])
def test_report_bad_input_is_one_line_and_no_page(tmp_path, extra, message):
    groups = tmp_path / "groups.json"
    groups.write_text("[1, 2]")
    page = tmp_path / "page.html"
    d = data_path("cast2021")
    res = run_cli(["report", d / "qrels-docs.2021.qrel", d / "docrun_org_manual_bm25.run",
                   d / "docrun_org_convdr.run", "-m", "map", "--permutations", "10",
                   "--bootstrap", "10", "-o", page,
                   *[str(groups) if x == "GROUPS" else x for x in extra]], cwd=ROOT)
    assert res.exit_code == 2
    assert res.stderr == message.replace("GROUPS", str(groups)) + "\n"
    assert not page.exists() and list(tmp_path.iterdir()) == [groups]


def test_index_gives_the_passage_text_and_options_shape_the_top_k(tmp_path, cast_demo):
    """--index: the text of the collection the index names; -J and -M as the measures see the
    ranking: -J drops the unjudged documents, -M cuts the top k."""
    from trecqr.report.html import report_page

    report, _ = cast_demo
    index = tmp_path / "index"
    assert run_cli(["index", DEMO / "collection.jsonl", "-o", index]).exit_code == 0
    page = tmp_path / "page.html"
    res = run_cli(["report", DEMO / "qrels.txt", *[r.run for r in report.rows], "-m", "P.10",
                   "--permutations", "10", "--bootstrap", "10", "-o", page, "--index", index])
    assert res.exit_code == 0, res.output
    data = json.loads(page.read_text().split('type="application/json">')[1]
                      .split("</script>")[0])
    passages = {json.loads(l)["id"]: json.loads(l)["contents"]
                for l in (DEMO / "collection.jsonl").read_text().splitlines()}
    assert data["text"] == [passages[d] for d in data["docs"]]

    d = data_path("cast2021")
    qrels, runs = d / "qrels-docs.2021.qrel", [d / "docrun_org_manual_bm25.run",
                                               d / "docrun_org_manual_ance.run"]
    grades = qrels_grades(qrels)
    for opts in ({"judged_only": True}, {"max_docs": 3}):
        data = json.loads(report_page(qrels, runs, ["P.10"], permutations=10, bootstrap=10,
                                      **opts).split('type="application/json">')[1]
                          .split("</script>")[0])
        i = data["ids"].index("106_4")
        shown = [data["docs"][c] for c in data["topk"][0][i]]
        if "judged_only" in opts:
            assert shown == [x for x in run_topk(runs[0], 1000)["106_4"]
                             if x in grades["106_4"]][:10]
            assert data["unjudged"][0][i] == 0
        else:
            assert shown == run_topk(runs[0], 3)["106_4"]


def test_committed_screenshots_exist_and_are_small():
    """Taken by the browser tests (TRECQR_UPDATE_SCREENSHOTS=1), shown in docs/compare.md."""
    doc = (ROOT / "docs" / "compare.md").read_text()
    for path in SHOTS.values():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 20_000 < path.stat().st_size < 300_000
        assert f"]({path.name})" in doc


def test_jsonl_rewrites_are_the_rewrites_and_jsonl_raw_topics_the_questions():
    from trecqr.report.html_data import read_texts

    editor = data_path("qrecc", "dev-sampled2k_chatgpt_ICL_editor.jsonl")
    raw, meta = read_texts(editor)
    rewrites, _ = read_texts(editor, raw=raw, rewrites=True)
    assert raw["1490_4"] == "What happened in 1954?"
    assert rewrites["1490_4"] == json.loads(editor.read_text().splitlines()[1])["GPT_rewrite"]
    assert meta["1490_4"]["Truth_answer"].startswith("Stan Musial accomplished")


def test_topics_in_another_id_style_are_matched_by_turn():
    from trecqr.report.html_data import _aligned

    assert _aligned({"1_2": "a", "2_1": "b"}, ["QReCC-Test_1_2", "QReCC-Test_1_3", "2_1"]) == \
        ["a", None, "b"]
