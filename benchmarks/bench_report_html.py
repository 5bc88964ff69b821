"""How fast the report page opens and sorts in headless Chromium: QReCC's 8,209 test turns
with gold, three seeded runs of 10 passages (tests/report/test_report_html.py's
``qrecc_test_runs``), the question types as groups.

Usage: python benchmarks/bench_report_html.py [--repeat 3]

Prints the page's size, the time from navigation to the table's first render (the page's own
``window.trecqrReadyMs``) and the time one sort by the difference takes, the median of
``--repeat`` loads. Why here and not in the tests: a time depends on the machine and its load;
tests/report/test_report_html.py checks what makes the page fast (one page of rows in the DOM, one
render per sort, plots of at most MAX_POINTS bars) without a clock.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "report")]

from conftest import data_path  # noqa: E402
from test_report_html import qrecc_test_runs  # noqa: E402
from trecqr.report.html import report_page  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = qrecc_test_runs(folder)
        page = folder / "qrecc-test.html"
        page.write_text(report_page(data_path("qrecc", "qrecc_qrel.tsv"), runs,
                                    ["recip_rank", "ndcg_cut.3"],
                                    groups=data_path("qrecc", "test_question_types.json"),
                                    permutations=1000, bootstrap=1000))
        opts = webdriver.ChromeOptions()
        opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,1500",
                     f"--user-data-dir={folder / 'profile'}"):
            opts.add_argument(flag)
        drv = webdriver.Chrome(options=opts, service=Service(shutil.which("chromedriver")))
        opened, sorted_ = [], []
        try:
            for _ in range(args.repeat):
                drv.get("about:blank")
                drv.get(page.as_uri())
                WebDriverWait(drv, 60).until(
                    lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
                opened.append(drv.execute_script("return window.trecqrReadyMs"))
                sorted_.append(drv.execute_script(
                    "const t = performance.now();"
                    "document.querySelector('#turns th button[data-key=diff]').click();"
                    "return performance.now() - t"))
        finally:
            drv.quit()
        sys.stdout.write(f"8,209 turns x {len(runs)} runs: {page.stat().st_size / 1e6:.1f} MB, "
                         f"opened in {statistics.median(opened):.0f} ms, sorted in "
                         f"{statistics.median(sorted_):.0f} ms (median of {args.repeat})\n")


if __name__ == "__main__":
    main()
