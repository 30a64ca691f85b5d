"""`python -m pts serve` in a real browser (issue 22): the server started as a user starts it,
Debian's headless Chromium driven by Selenium. The runs list shows a finished and a running
run; the running run's page takes a new round from the event stream WITHOUT a reload (a
marker set in the page survives), and its convergence chart is redrawn; the finished run's
report page shows the header block cells of its PDF. (The dashboard beside a live
`pytest pts/ --serve` run: tests/e2e/test_demo.py.)"""

from __future__ import annotations

import urllib.request

import pytest

from pts.cli.main import main
from tests.support.headers import header_block, pdf_pages
from tests.support.helpers import serving
from tests.support.pages import chart_shows, console_errors
from tests.support.serve_runs import append, make, round_record, unfinished

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("chromium", "chromedriver", "selenium", "pdftotext")]

DONE = "Done_SN-D/20261101T000000"
OTHER = "Other_SN-O/20261102T000000"
RUNNING = "Live_SN-L/20261103T000000"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("dash") / "reports"
    done = make(root, DONE, model="Done", serial="SN-D", report=False)
    assert main(["report", str(done)]) == 0               # the real report.pdf
    make(root, OTHER, model="Other", serial="SN-O", curve=[0.9] * 7)
    unfinished(root, RUNNING, model="Live", serial="SN-L", age=None)
    with serving(root) as base:     # a browser page's event stream must not hold it
        yield root, base


def test_the_runs_list_shows_both_runs_with_their_state(browser, served):
    from selenium.webdriver.common.by import By
    _, base = served
    browser.get(base + "/")
    text = browser.find_element(By.TAG_NAME, "body").text
    rows = {r.get_attribute("data-id"): r.text
            for r in browser.find_elements(By.CSS_SELECTOR, "tr[data-id]")}
    assert "Done" in text and "Live" in text, text
    assert "finished" in rows[DONE] and "running" in rows[RUNNING], rows


def test_a_new_round_shows_without_a_reload(browser, served):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    root, base = served
    browser.get(f"{base}/runs/{RUNNING}")

    def live(key: str) -> str:
        return browser.find_element(By.CSS_SELECTOR, f'[data-live="{key}"]').text

    # 60 s: only a bound that stops a hang (a new round shows within the server's 1 s
    # poll and the browser's event handling: 15 s was 8-15x that, which chromium on a
    # loaded 2-core host can come near)
    WebDriverWait(browser, 60).until(lambda _: live("round") == "5")
    browser.execute_script("window.ptsNoReload = 42;")
    append(root / RUNNING, **round_record(5, {"RND 4KiB 0/100": 41234.5}))
    WebDriverWait(browser, 60).until(lambda _: live("round") == "6")
    assert browser.execute_script("return window.ptsNoReload;") == 42     # same page
    assert "41" in browser.find_element(By.ID, "tracking").text
    WebDriverWait(browser, 60).until(lambda _: chart_shows(browser, 5))
    row = browser.find_element(By.CSS_SELECTOR, '#tests tr[data-test="iops"]')
    assert [row.find_element(By.CLASS_NAME, c).text for c in ("t-state", "t-rounds")] == \
        ["running", "5 of 25"]                   # the Tests table follows the run too


def test_the_report_page_has_the_pdfs_header_blocks(browser, served):
    from selenium.webdriver.common.by import By
    root, base = served
    browser.get(f"{base}/runs/{DONE}/report")
    pdf = pdf_pages(root / DONE / "report.pdf")
    checked = 0
    for section in browser.find_elements(By.CSS_SELECTOR, "section.page"):
        n = int(section.get_attribute("id").split("-")[1])
        block = header_block(pdf[n - 1])
        if block is None:
            continue
        rows = section.find_elements(By.CSS_SELECTOR, "table")[0] \
            .find_elements(By.TAG_NAME, "tr")
        cells = [" ".join(c.text.split()) for c in rows[1].find_elements(By.TAG_NAME, "td")]
        assert cells == block, n
        checked += 1
    assert checked >= 5


def test_two_runs_ticked_are_compared_with_their_downloads(browser, served):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    root, base = served
    browser.get(base + "/")
    for rid in (DONE, OTHER):
        browser.find_element(By.CSS_SELECTOR, f'input[name="run"][value="{rid}"]').click()
    browser.find_element(By.CSS_SELECTOR, '#compare button[type="submit"]').click()
    WebDriverWait(browser, 60).until(lambda _: browser.find_elements(By.ID, "comparison"))
    assert browser.current_url.startswith(base + "/compare?")
    rows = [[c.text for c in tr.find_elements(By.TAG_NAME, "td")]
            for tr in browser.find_elements(By.CSS_SELECTOR, "#comparison tr")]
    # in the list's order (newest first): the first one ticked is the reference
    assert ["Cell", "#1 Other SN-O", "#2 Done SN-D", "diff vs #1"] in rows
    assert any(len(r) == 4 and r[3].endswith(" %") and r[3] != "n/a" for r in rows), rows
    charts = browser.execute_script(
        "return Array.from(document.querySelectorAll('#comparison img'))"
        ".map(i => [i.complete, i.naturalWidth]);")
    assert charts and all(done and width > 100 for done, width in charts), charts
    link = browser.find_element(By.LINK_TEXT, "compare.pdf").get_attribute("href")
    with urllib.request.urlopen(link, timeout=60) as r:
        assert r.read(5) == b"%PDF-"
    assert console_errors(browser) == []        # on every page this module's tests opened

