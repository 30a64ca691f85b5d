"""Screenshots of the dashboard's pages as page baselines (issue 22), compared as the report's
PDF pages are (tests/support/snapshots.py: grey, quantised to its LEVELS, the same difference and
TOLERANCE): a layout regression of the web pages is seen, not guessed.

What is shot: `python -m pts serve` over two copies of the stored reference run
(tests/data/reference-run/, every test type), in headless Chromium at a fixed window width:
the runs list, the run page, the compare page of the two copies, and every page of the HTML
report (one screenshot per <section class="page">, as the PDF has one image per page).
A screenshot is reduced SCALE times (box filter) before it is quantised: what is compared is
the layout, not a font's anti-aliasing.

Baselines: tests/data/screen-baselines/<name>.png, made by `python tests/data/
make_screen_baselines.py` (REFRESH) on the machine CI runs on (Debian 12's Chromium and
fonts): another browser build or font set draws text a few pixels apart. The Chromium and
ChromeDriver builds they were made with are recorded beside them (snapshots.BUILDS, from
`builds`), and a shot that fails on another build says so (snapshots.explain).
"""

from __future__ import annotations

import contextlib
import fcntl
import shutil
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path

import numpy as np
from PIL import Image

from tests.support import snapshots

SCREENS = snapshots.DATA / "screen-baselines"
REFRESH = "python tests/data/make_screen_baselines.py"
SCALE = 3
WIDTH, HEIGHT = 1200, 1600      # the browser window
CHROMIUM_ARGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={WIDTH},{HEIGHT}", "--hide-scrollbars")
FIRST, SECOND = "Reference_SN-REF/first", "Reference_SN-REF/second"


def chromium():
    """Debian's headless Chromium through chromium-driver, both by path (nothing is
    downloaded), its console logged (tests/support/pages.console_errors)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in CHROMIUM_ARGS:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def builds(browser) -> dict[str, str]:
    """The Chromium and ChromeDriver builds a session runs (what the shots depend on)."""
    caps = browser.capabilities
    return {"chromium": snapshots.version(caps.get("browserVersion", "")),
            "chromedriver": snapshots.version(
                (caps.get("chrome") or {}).get("chromedriverVersion", ""))}


SHOTS_TOP = Path("/tmp/pts-screens")     # one path for every shot: the pages print it


@contextlib.contextmanager
def reports_folder() -> Iterator[Path]:
    """Two copies of the reference run (fixed names: the pages show them) in the reports
    folder SHOTS_TOP/reports, the same path wherever and by whoever it is made, held by an
    flock while in use: the pages print the path (the runs list's note names it), and
    another path changed the shot (seen: a pytest-xdist worker's longer folder wrapped a line
    more, 12 px on the compare page; a random suffix differed by 0.3 % of the runs list)."""
    with open(f"{SHOTS_TOP}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(SHOTS_TOP, ignore_errors=True)
        try:
            for name in (FIRST, SECOND):
                shutil.copytree(snapshots.REFERENCE_RUN, SHOTS_TOP / "reports" / name)
            yield SHOTS_TOP / "reports"
        finally:
            shutil.rmtree(SHOTS_TOP, ignore_errors=True)


def pages(base: str) -> list[tuple[str, str]]:
    """(baseline stem, URL) of every whole page shot."""
    return [("runs-list", f"{base}/"),
            ("run-page", f"{base}/runs/{FIRST}"),
            ("compare", f"{base}/compare?run={FIRST}&run={SECOND}"),
            ("report", f"{base}/runs/{FIRST}/report")]


def levels(png: bytes) -> np.ndarray:
    """A screenshot reduced SCALE times and quantised (tests/support/snapshots.py's levels)."""
    with Image.open(BytesIO(png)) as im:
        grey = im.convert("L")
        small = grey.resize((max(1, grey.width // SCALE), max(1, grey.height // SCALE)),
                            Image.Resampling.BOX)
    values = np.asarray(small, dtype=np.float64)
    return np.rint(values * (snapshots.LEVELS - 1) / 255).astype(np.uint8)


def capture(browser, base: str) -> dict[str, np.ndarray]:
    """Every screenshot, by baseline name, in page order."""
    from selenium.webdriver.common.by import By
    out: dict[str, np.ndarray] = {}
    for stem, url in pages(base):
        browser.get(url)
        _settled(browser)
        if stem == "report":
            for section in browser.find_elements(By.CSS_SELECTOR, "section.page"):
                out[f"report-{section.get_attribute('id')}.png"] = levels(
                    section.screenshot_as_png)
        else:
            out[f"{stem}.png"] = levels(_whole(browser))
    return out


def write(shots: dict[str, np.ndarray], made_with: dict[str, str],
          folder: Path = SCREENS) -> list[Path]:
    """Replace every baseline in `folder` by `shots`; INDEX lists them in order, BUILDS
    records `made_with` (builds())."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    for name, shot in shots.items():
        snapshots.save(shot, folder / name)
    (folder / snapshots.INDEX).write_text("".join(f"{n}\n" for n in shots), encoding="utf-8")
    return [folder / n for n in shots] + [snapshots.write_builds(folder, made_with)]


def _settled(browser) -> None:
    """Every image decoded and the fonts loaded, so a shot never catches a page half drawn."""
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 60).until(lambda b: b.execute_script(
        "return document.readyState === 'complete' && document.fonts.status === 'loaded' && "
        "Array.from(document.images).every(i => !i.getAttribute('src') || "
        "i.complete && i.naturalWidth > 0);"))


def _whole(browser) -> bytes:
    """The whole page, not only the window: the window made as tall as the page."""
    height = browser.execute_script("return document.documentElement.scrollHeight;")
    browser.set_window_size(WIDTH, max(HEIGHT, height + 200))
    try:
        return browser.find_element("tag name", "html").screenshot_as_png
    finally:
        browser.set_window_size(WIDTH, HEIGHT)
