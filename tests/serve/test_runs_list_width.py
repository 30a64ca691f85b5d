"""The runs list fits a 1280-pixel-wide screen (issue 41 §2), seen in a real browser (Debian's
headless Chromium through Selenium, tests/support/screens.py): `python -m pts serve` over
runs with long names (the reference run's 11 tests, a long model and serial), the window
1280 pixels wide: nothing scrolls sideways, the table's right edge is inside the window, and
the run's folder-name column takes no more than a sixth of the table."""

from __future__ import annotations

import shutil

import pytest

from tests.support import snapshots
from tests.support.helpers import serving
from tests.support.pages import console_errors
from tests.support.serve_runs import make

pytestmark = [pytest.mark.slow, pytest.mark.needs("chromium", "chromedriver", "selenium")]

WIDTH = 1280
LONG = "SAMSUNG MZQL23T8HCLS-00A07_S64HNE0R700123/20261121T120000-resumed-after-power-loss"


@pytest.fixture(scope="module")
def browser():
    from tests.support.screens import chromium
    driver = chromium()
    driver.set_window_size(WIDTH, 900)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_runs_list_fits_1280_pixels(browser, tmp_path):
    root = tmp_path / "reports"
    shutil.copytree(snapshots.REFERENCE_RUN, root / "Reference_SN-REF/20261121T120000")
    make(root, LONG, model="SAMSUNG MZQL23T8HCLS-00A07", serial="S64HNE0R700123")
    with serving(root) as base:
        console_errors(browser)
        browser.get(base + "/")
        inner = browser.execute_script("return window.innerWidth;")
        scroll = browser.execute_script("return document.documentElement.scrollWidth;")
        table = browser.execute_script(
            "const r = document.getElementById('runs').getBoundingClientRect();"
            "return [r.left, r.right];")
        run_cell = browser.execute_script(
            "return document.querySelector('#runs tr[data-id] td:nth-child(2)')"
            ".getBoundingClientRect().width;")
        errors = console_errors(browser)
    assert inner <= WIDTH and not errors, errors
    assert scroll <= inner, f"the page is {scroll} px wide in a {inner} px window"
    assert table[1] <= inner, f"the table ends at {table[1]} px, the window at {inner}"
    assert run_cell <= (table[1] - table[0]) / 6, (run_cell, table)
