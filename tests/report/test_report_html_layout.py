"""The report page's layout in a real headless Chromium at 1400 px: plots whose titles and
notes do not collide and whose value axes have round ticks with 0, a per-turn table that stays
in the window with five long run names, per-depth intervals of five runs side by side,
passages shown as whole lines, document ids wrapped at their parts, the first relevant rank
said in words, ``#turn=ID`` links, and an oracle row shown as an upper bound outside the tests.

The pages are built from real data: the CAsT 2021 organisers' five document runs (under long
names, as a paper's file names are), and the QReCC demo's two candidate rewrites per turn
(InfoCQR's GPT and editor rewrites) with cqr's ``each`` and ``oracle`` rows. The browser, its
skip rule and the waits (DOM conditions, never a sleep) are those of test_report_html.py.
"""

from __future__ import annotations

import json
import math
from urllib.parse import quote

import pytest

from conftest import ROOT, data_path, run_cli
from test_report_html import _screenshot, browser, js, open_page  # noqa: F401 (browser: a fixture)
from trecqr.errors import UsageError

QDEMO = ROOT / "fixtures" / "qrecc-demo"
ORGANISERS = ("manual_bm25", "manual_ance", "convdr", "convdr_bert", "manual_ance_bert")
LONG = "organisers_{}_run_with_a_rather_long_descriptive_name"
SEPARATORS = "/_-.?&="


@pytest.fixture(scope="module")
def wide(browser):  # noqa: F811
    """The browser at 1400 px, the width the page is checked at."""
    browser.set_window_size(1400, 1000)
    return browser


@pytest.fixture(scope="module")
def organisers_page(tmp_path_factory):
    from trecqr.report.html import report_page

    d = data_path("cast2021")
    page = tmp_path_factory.mktemp("organisers") / "organisers.html"
    page.write_text(report_page(d / "qrels-docs.2021.qrel",
                                [d / f"docrun_org_{n}.run" for n in ORGANISERS],
                                ["map", "ndcg_cut.3"], names=[LONG.format(n) for n in ORGANISERS],
                                permutations=200, bootstrap=200))
    return page


@pytest.fixture(scope="module")
def candidates(tmp_path_factory):
    """cqr on the QReCC demo with candidates 1 and 2 of each turn (GPT_rewrite,
    Editor_rewrite): rows raw, .c1, .c2 and .oracle, the page with passages and history."""
    from trecqr.workflows.cqr import cqr

    tmp = tmp_path_factory.mktemp("candidates")
    editor = data_path("qrecc", "dev-sampled2k_chatgpt_ICL_editor.jsonl")
    report = cqr(QDEMO / "qrels.txt", [QDEMO / "topics-raw.tsv"], rewrites=[editor],
                 raw=QDEMO / "topics-raw.tsv", rewrite_field=["GPT_rewrite", "Editor_rewrite"],
                 candidates=["each", "oracle"], collection=QDEMO / "collection.jsonl",
                 runs_dir=tmp / "runs", names=["raw", "llm"])
    page = tmp / "candidates.html"
    page.write_text(report.to_html(raw=editor, manual=QDEMO / "topics-human.tsv",
                                   collection=QDEMO / "collection.jsonl",
                                   title="QReCC demo: candidate rewrites and their oracle"))
    return report, page


def page_data(drv) -> dict:
    return js(drv, "return JSON.parse(document.getElementById('trecqr-data').textContent)")


def open_turn(drv, qid: str) -> None:
    js(drv, "location.hash = '#turn=' + encodeURIComponent(arguments[0])", qid)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(drv, 10).until(lambda d: js(
        d, "const b = document.getElementById('turn'); return !b.hidden && b.dataset.qid"
           " === arguments[0]", qid))


# ---------------------------------------------------------------------------------------------
# plots


def test_plot_titles_and_notes_do_not_overlap_and_stay_in_the_plot(wide, organisers_page):
    open_page(wide, organisers_page)
    boxes = js(wide, "return [...document.querySelectorAll('svg.plot')].map(svg => {"
                     "const t = svg.querySelector('text.title').getBBox(),"
                     " n = svg.querySelector('text.note').getBBox();"
                     "return [svg.dataset.plot, svg.viewBox.baseVal.width,"
                     " [t.x, t.y, t.width, t.height], [n.x, n.y, n.width, n.height],"
                     " svg.querySelector('text.note').textContent,"
                     " svg.querySelector('title').textContent] })")
    assert [b[0] for b in boxes] == ["depth"] + ["winloss"] * 4 + ["dist"]
    base = LONG.format(ORGANISERS[0])
    for kind, width, (tx, ty, tw, th), (nx, ny, nw, nh), note, title in boxes:
        assert ty + th <= ny  # the note is under the title, not beside or over it
        assert 0 <= tx and tx + tw <= width and nx + nw <= width
        if kind == "winloss":
            better, worse, tied = (int(x) for x in note.replace(",", "").split()[::2])
            assert better + worse + tied == 158  # the judged turns of CAsT 2021
            run, baseline = title.split(" - ")  # the full names, as the tooltip
            assert baseline == base and run in {LONG.format(n) for n in ORGANISERS[1:]}


def test_value_axes_have_round_ticks_with_zero(wide, organisers_page):
    open_page(wide, organisers_page)
    axes = js(wide, "return [...document.querySelectorAll('svg.plot')].map(svg =>"
                    " [...svg.querySelectorAll('text.tick')].map(t => [t.textContent,"
                    " Number(t.getAttribute('y'))]))")
    assert len(axes) == 6
    # the distributions' value axis: across the plot, x in place of y
    axes.append(js(wide, "return [...document.querySelectorAll('svg[data-plot=dist] "
                         "text.xtick')].map(t => [t.textContent, Number(t.getAttribute('x'))])"))
    for ticks in axes:
        values = [float(text) for text, _ in ticks]
        assert 0.0 in values and len(values) >= 3
        steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
        assert len(steps) == 1
        step = abs(steps.pop())
        mantissa = step / 10 ** math.floor(math.log10(step))
        assert round(mantissa, 9) in (1, 2, 2.5, 5)
        assert all(abs(v / step - round(v / step)) < 1e-9 for v in values)  # multiples of it
        ys = [y for _, y in ticks]
        gaps = {round(b - a, 1) for a, b in zip(ys, ys[1:])}
        assert len(gaps) == 1  # evenly spaced on the axis


def test_five_runs_per_depth_side_by_side(wide, organisers_page):
    """Each depth group holds one interval per run, at five different places inside the
    group's own slot; no filled band lies over another."""
    open_page(wide, organisers_page)
    svg = "document.querySelector('svg[data-plot=depth]')"
    assert js(wide, f"return {svg}.querySelectorAll('polygon').length") == 0
    marks = js(wide, f"return [...{svg}.querySelectorAll('g[data-run] circle')].map(c =>"
                     " [Number(c.parentNode.dataset.run), Number(c.dataset.group),"
                     " c.getBBox().x, c.getBBox().width])")
    groups = sorted({g for _, g, _, _ in marks})
    assert len(groups) == 8  # depths 1..7 and 8+
    slot = (460 - 46 - 12) / len(groups)
    for g in groups:
        xs = sorted((x, r, w) for r, gg, x, w in marks if gg == g)
        assert [r for _, r, _ in xs] == list(range(5))  # one per run, in the runs' order
        for (x0, _, w0), (x1, _, _) in zip(xs, xs[1:]):
            assert x1 >= x0 + w0  # the markers do not cover each other
        left = 46 + slot * g
        assert left < xs[0][0] and xs[-1][0] + xs[-1][2] < left + slot
    bars = js(wide, f"return {svg}.querySelectorAll('line.err').length")
    assert bars == len(marks)  # every group of CAsT 2021 has at least two turns per run


# ---------------------------------------------------------------------------------------------
# the per-turn table


def test_long_run_names_keep_the_table_in_the_window(wide, organisers_page):
    open_page(wide, organisers_page)
    width = js(wide, "return window.innerWidth")
    assert width >= 1380
    assert js(wide, "return document.documentElement.scrollWidth") <= width
    heads = js(wide, "return [...document.querySelectorAll('#turns thead th')].map(th =>"
                     " [th.dataset.key, th.title, th.getBoundingClientRect().right])")
    first_rel = [h for h in heads if h[0].startswith("f:")]
    assert [title for _, title, _ in first_rel] == [f"1st rel {LONG.format(n)}"
                                                   for n in ORGANISERS]
    assert max(right for _, _, right in heads) <= width  # the "1st rel" columns are shown
    shown = js(wide, "return [...document.querySelectorAll('#turns thead th[data-key^=\"f:\"]"
                     " .rn')].map(e => e.textContent)")
    assert shown == list(ORGANISERS)  # the words all names share are left out
    # the comparisons table wraps the names too, so the page is no wider than the window
    assert js(wide, "return document.getElementById('pairs').getBoundingClientRect().right") \
        <= width


# ---------------------------------------------------------------------------------------------
# the turn view


def _line_breaks(drv, selector: str) -> list:
    """Per element: its text and the offsets where a new line starts (from the characters'
    boxes in the browser's layout)."""
    return js(drv, "return [...document.querySelectorAll(arguments[0])].map(e => {"
                   "const text = e.textContent, walker = document.createTreeWalker(e, 4);"
                   "const tops = []; let n;"
                   "while ((n = walker.nextNode())) for (let i = 0; i < n.length; i++) {"
                   " const r = document.createRange(); r.setStart(n, i); r.setEnd(n, i + 1);"
                   " const box = r.getClientRects()[0]; tops.push(box ? box.top : null); }"
                   "const breaks = [];"
                   "for (let i = 1; i < tops.length; i++)"
                   " if (tops[i] !== null && tops[i - 1] !== null && tops[i] > tops[i - 1] + 2)"
                   "  breaks.push(i);"
                   "return [text, breaks] })", selector)


def test_document_ids_wrap_at_their_parts(wide, candidates):
    report, page = candidates
    open_page(wide, page)
    data = page_data(wide)
    qid = data["ids"][0]
    open_turn(wide, qid)
    cells = _line_breaks(wide, "#turn td.docid")
    assert len(cells) == 4 * 10  # 4 rows, top 10 each
    wrapped = 0
    for text, breaks in cells:
        assert text in data["docs"]  # the break opportunities add no character
        for i in breaks:
            assert text[i - 1] in SEPARATORS, (text, text[:i])
        wrapped += bool(breaks)
    assert wrapped > 0  # the URL ids of QReCC do not fit one line


def test_passages_show_whole_lines_and_open_on_click(wide, candidates):
    _, page = candidates
    open_page(wide, page)
    open_turn(wide, page_data(wide)["ids"][0])
    boxes = js(wide, "return [...document.querySelectorAll('#turn .passage')].map(p =>"
                     " [p.clientHeight, p.scrollHeight,"
                     " parseFloat(getComputedStyle(p).lineHeight)])")
    assert len(boxes) == 40
    clamped = 0
    for height, full, line in boxes:
        lines = height / line
        assert abs(lines - round(lines)) * line < 1 and 1 <= round(lines) <= 3
        clamped += full > height + 1
    assert clamped > 0
    js(wide, "const p = [...document.querySelectorAll('#turn .passage')]"
             ".find(p => p.scrollHeight > p.clientHeight + 1); p.dataset.probe = '1'; p.click()")
    height, full = js(wide, "const p = document.querySelector('.passage[data-probe]');"
                            "return [p.clientHeight, p.scrollHeight]")
    assert height == full and height > 3 * boxes[0][2]  # the whole passage


def test_first_relevant_rank_in_words(wide, candidates):
    _, page = candidates
    open_page(wide, page)
    data = page_data(wide)
    none = [i for i, f in enumerate(data["first_rel"][0]) if f is None]
    some = [i for i, f in enumerate(data["first_rel"][0]) if f is not None and f > 1]
    assert none and some
    for i in (none[0], some[0]):
        open_turn(wide, data["ids"][i])
        texts = js(wide, "return [...document.querySelectorAll('#turn .topk h3')]"
                         ".map(h => h.textContent)")
        for r, text in enumerate(texts):
            first = data["first_rel"][r][i]
            assert text.startswith(data["runs"][r])
            assert text.endswith("no relevant document in the ranking" if first is None else
                                 f"first relevant document at rank {first}")
            assert "(none)" not in text and " - " not in text


def test_turn_fragment_opens_the_turn_and_follows_the_open_turn(wide, candidates):
    _, page = candidates
    data = None
    open_page(wide, page)
    data = page_data(wide)
    later = sorted(data["ids"], key=lambda q: [int(x) for x in q.split("_")])[150]  # page 2
    wide.get("about:blank")
    wide.get(page.resolve().as_uri() + "#turn=" + quote(later))
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(wide, 20).until(lambda d: js(d, "return document.body.dataset.ready === '1'"))
    assert js(wide, "const b = document.getElementById('turn');"
                    "return [b.hidden, b.dataset.qid]") == [False, later]
    assert js(wide, "return document.getElementById('pageinfo').textContent") == "rows 101-200"
    assert js(wide, "return document.querySelector('#turns tbody tr.sel').dataset.qid") == later
    # opening a turn from the table writes its link; closing it takes the link away
    other = js(wide, "const tr = document.querySelector('#turns tbody tr:not(.sel)');"
                     "tr.click(); return tr.dataset.qid")
    assert js(wide, "return location.hash") == "#turn=" + quote(other)
    js(wide, "document.getElementById('close').click()")
    assert js(wide, "return [location.hash, document.getElementById('turn').hidden]") == \
        ["", True]
    # a link to a turn the page does not hold says so
    js(wide, "location.hash = '#turn=no-such-turn'")
    WebDriverWait(wide, 10).until(lambda d: js(
        d, "return !document.getElementById('hash-note').hidden"))
    assert js(wide, "return document.getElementById('hash-note').textContent") == \
        "#turn=no-such-turn: no such turn on this page"


# ---------------------------------------------------------------------------------------------
# an oracle row


def test_oracle_row_is_an_upper_bound_outside_the_tests(wide, candidates):
    from trecqr.report.compare import compare

    report, page = candidates
    assert [r.name for r in report.rows] == ["raw", "llm.c1", "llm.c2", "llm.oracle"]
    open_page(wide, page)
    data = page_data(wide)
    rows = js(wide, "return [...document.querySelectorAll('#summary tbody tr')].map(tr =>"
                    " [tr.cells[0].textContent, tr.dataset.upperBound || '',"
                    " [...tr.querySelectorAll('td[data-sig]')].map(td => td.dataset.sig)])")
    assert rows[-1][:2] == ["llm.oracle upper bound", "1"]
    assert set(rows[-1][2]) == {""}  # no significance mark
    assert all(up == "" for _, up, _ in rows[:-1]) and "+" in rows[1][2]
    assert js(wide, "return document.querySelectorAll('#pairs tr[data-run=\"llm.oracle\"]')"
                    ".length") == 0
    assert data["comparison"]["runs"] == ["raw", "llm.c1", "llm.c2"]
    assert "llm.oracle: upper bound" in js(
        wide, "return document.getElementById('upper-note').textContent")
    assert "2 runs vs baseline raw" in data["comparison"]["family"]
    # the tests are those of compare on the three other rows
    measures = ["recip_rank", "ndcg_cut.3", "recall.10,100"]  # CqrReport.to_html's, after
    if report.measures["RR@3"] not in measures:                # cqr's own RR@3, last: the
        measures.append(report.measures["RR@3"])               # page keeps the order given
    expected = compare(QDEMO / "qrels.txt", [r.run for r in report.rows[:3]], measures,
                       names=["raw", "llm.c1", "llm.c2"], complete=report.complete)
    assert data["comparison"]["pairs"] == expected.to_dict()["pairs"]
    # its values are shown and plotted, but it has no difference plot of its own
    oracle = data["runs"].index("llm.oracle")
    assert data["upper_bounds"] == [oracle]
    assert all(not t.endswith("llm.oracle - raw") for t in js(
        wide, "return [...document.querySelectorAll('svg title')].map(t => t.textContent)"))
    assert js(wide, "return document.querySelector('#turns th[data-key=\"f:3\"]').title") == \
        "1st rel llm.oracle (upper bound)"
    open_turn(wide, "6140_3")  # the turn docs/compare.md tells of: the editor answered "N/A"
    js(wide, "window.scrollTo(0, 0)")
    _screenshot(wide, "candidates")


# ---------------------------------------------------------------------------------------------
# without a browser


def test_report_upper_bound_option_and_its_errors(tmp_path):
    d = data_path("cast2021")
    runs = [d / f"docrun_org_{n}.run" for n in ORGANISERS[:3]]
    page = tmp_path / "page.html"
    args = ["report", d / "qrels-docs.2021.qrel", *runs, "-m", "map", "--permutations", "50",
            "--bootstrap", "50", "-o", page]
    res = run_cli(args + ["--upper-bound", "docrun_org_convdr.run"])
    assert res.exit_code == 0, res.output
    data = json.loads(page.read_text().split('type="application/json">')[1]
                      .split("</script>")[0])
    assert data["runs"] == [r.name for r in runs] and data["upper_bounds"] == [2]
    assert data["comparison"]["runs"] == [r.name for r in runs[:2]]
    page.unlink()
    for extra, message in (
            (["--upper-bound", "nope.run"], "trecqr: upper bound nope.run: no such run (the "
                                            "runs: " + ", ".join(r.name for r in runs) + ")"),
            (["--upper-bound", "docrun_org_manual_bm25.run"],
             "trecqr: the baseline docrun_org_manual_bm25.run is also an upper bound, which "
             "is in no test: choose another baseline")):
        if "bm25" in extra[1]:
            extra = extra + ["--baseline", "docrun_org_manual_bm25.run"]
        res = run_cli(args + extra)
        assert res.exit_code == 2 and res.stderr == message + "\n"
        assert not page.exists()


def test_round_axis_short_names_and_upper_bound_errors():
    from trecqr.report.html import short_names
    from trecqr.report.html_svg import nice_axis

    assert nice_axis(-0.07, 0.62) == (-0.2, 0.8, [-0.2, 0.0, 0.2, 0.4, 0.6, 0.8], 1)
    assert nice_axis(0.0, 1.0)[2] == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_axis(-1.0, 1.0)[2:] == ([-1.0, -0.5, 0.0, 0.5, 1.0], 1)
    assert nice_axis(0.0, 0.013)[2:] == ([0.0, 0.005, 0.01, 0.015], 3)
    assert nice_axis(-0.9, 0.05)[2][-2:] == [0.0, 0.2]
    tiny = nice_axis(0.0, 1.1e-17)  # P at a cutoff of 2**63 - 1: per-topic values near 1e-17
    assert tiny[1] > tiny[0] == 0.0 and len(set(tiny[2])) == len(tiny[2]) >= 3
    assert short_names([LONG.format(n) for n in ORGANISERS]) == list(ORGANISERS)
    assert short_names(["docrun_org_convdr.run", "docrun_org_manual_bm25.run"]) == \
        ["convdr", "manual_bm25"]
    assert short_names(["raw", "raw.x"]) == ["raw", "raw.x"]
    from trecqr.report.html import report_page

    d = data_path("cast2021")
    runs = [d / f"docrun_org_{n}.run" for n in ORGANISERS[:2]]
    with pytest.raises(UsageError, match="upper bound x: no such run"):
        report_page(d / "qrels-docs.2021.qrel", runs, ["map"], upper_bounds=["x"])
    with pytest.raises(UsageError, match=r"the tests need two runs besides the upper bounds "
                                         r"\(docrun_org_manual_ance.run\); 1 left"):
        report_page(d / "qrels-docs.2021.qrel", runs, ["map"], upper_bounds=[runs[1]])
