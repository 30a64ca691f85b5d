"""report.html in a real browser (issue 22): Debian's Chromium, headless, driven by Selenium
through Debian's chromium-driver (both given by path: nothing is downloaded). A small stored
run rendered with `python -m pts report RUN --html`: the browser shows one page per page
marker, the band, the SNIA header block and the verdict as the PDF has them, every chart
(an SVG) decoded, and a drive's string that looks like markup as text, never run."""

from __future__ import annotations

import json
import subprocess

import pytest

from pts.cli.main import main
from tests.support.headers import header_block, pdf_pages
from tests.support.synthetic.runfactory import build_run

pytestmark = [pytest.mark.slow,
              pytest.mark.needs("chromium", "chromedriver", "selenium", "pdftotext")]

XSS = "<img src=x onerror=document.title='owned'>"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = build_run(tmp_path_factory.mktemp("browser"))
    info = json.loads((folder / "run.json").read_text())
    info["device"]["model"] = XSS
    (folder / "run.json").write_text(json.dumps(info))
    assert main(["report", str(folder), "--html"]) == 0
    return folder


def test_the_browser_shows_what_the_pdf_says(browser, report):
    from selenium.webdriver.common.by import By
    browser.get((report / "report.html").as_uri())
    assert browser.title == f"SNIA SSS PTS report: {XSS} SN-TEST-0042"   # text, not run
    assert not browser.find_elements(By.CSS_SELECTOR, "img[src=x]")
    sections = browser.find_elements(By.CSS_SELECTOR, "section.page")
    pdf = pdf_pages(report / "report.pdf")
    assert 5 < len(sections) <= len(pdf)
    checked = 0
    for section in sections:
        n = int(section.get_attribute("id").split("-")[1])
        band = section.find_element(By.CSS_SELECTOR, "header.band").text
        assert f"Page {n} of {len(pdf)}" in band and f"DUT: {XSS}" in band
        footer = section.find_element(By.TAG_NAME, "footer").text
        assert "COMPLIANT RUN" in footer
        block = header_block(pdf[n - 1])
        if block is None:
            continue
        heads, cells = [row.find_elements(By.TAG_NAME, "td") for row in section
                        .find_elements(By.CSS_SELECTOR, "table")[0]
                        .find_elements(By.TAG_NAME, "tr")]
        assert [h.text for h in heads] == ["Test platform", "Device under test",
                                           "Set-up parameters", "Test parameters"]
        assert [" ".join(c.text.split()) for c in cells] == block, n
        checked += 1
    assert checked >= 5


def test_every_chart_is_decoded_by_the_browser(browser, report):
    from selenium.webdriver.common.by import By
    browser.get((report / "report.html").as_uri())
    images = browser.find_elements(By.CSS_SELECTOR, "img.chart")
    assert images
    sizes = browser.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth]);")
    assert all(done and width > 100 for done, width in sizes), sizes


def test_chromium_is_debians():
    out = subprocess.run(["chromium", "--version"], capture_output=True, text=True)
    assert out.stdout.startswith("Chromium ") and "Debian" in out.stdout
