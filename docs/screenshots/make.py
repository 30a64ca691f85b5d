"""Make the dashboard screenshots of docs/dashboard.md from a real run: `python -m pts demo
--serve` on an emulated SSD watched by Debian's headless Chromium (live.png: the run page while
it runs), then `python -m pts serve` over the finished run (runs.png, report.png).

    sudo .venv/bin/python docs/screenshots/make.py      # about 5 minutes; needs root (demo)

Writes docs/screenshots/*.png. Not a test: the pages' content is tested in tests/e2e."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1100,1500", "--hide-scrollbars"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def wait_for(check, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if found := check():
                return found
        except Exception:           # not serving yet, element not there yet
            pass
        time.sleep(1)
    raise SystemExit(f"gave up waiting for {what}")


def main() -> int:
    from selenium.webdriver.common.by import By
    reports = Path(tempfile.mkdtemp(prefix="pts-screens-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    demo = subprocess.Popen([sys.executable, "-m", "pts", "demo", "--reports-dir",
                             str(reports), "--serve", str(port)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    b = browser()
    try:
        def running():
            b.get(base + "/")
            rows = b.find_elements(By.CSS_SELECTOR, "tr[data-id]")
            return next((r.get_attribute("data-id") for r in rows if "running" in r.text),
                        None)
        run_id = wait_for(running, 300, "the demo on the runs list")
        b.get(f"{base}/runs/{run_id}")
        wait_for(lambda: int(b.find_element(By.ID, "convergence")
                             .get_attribute("data-rounds")) >= 4, 600, "round 4")
        time.sleep(2)                                   # the chart loads
        b.save_screenshot(str(HERE / "live.png"))
        if demo.wait(timeout=1200) != 0:
            raise SystemExit("the demo failed")
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        serve = subprocess.Popen([sys.executable, "-m", "pts", "serve", str(reports),
                                  "--port", str(port)], cwd=REPO, stdout=subprocess.DEVNULL)
        try:
            wait_for(lambda: urllib.request.urlopen(base + "/metrics", timeout=5), 30,
                     "the server")
            b.get(base + "/")
            b.save_screenshot(str(HERE / "runs.png"))
            b.get(f"{base}/runs/{run_id}/report")
            b.save_screenshot(str(HERE / "report.png"))
        finally:
            serve.terminate()
            serve.wait(timeout=20)
    finally:
        b.quit()
        if demo.poll() is None:
            demo.terminate()
            demo.wait(timeout=120)
    for name in ("live.png", "runs.png", "report.png"):
        print(HERE / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
