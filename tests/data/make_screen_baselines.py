"""Make the dashboard's screenshot baselines (tests/e2e/test_page_screenshots.py):

    python tests/data/make_screen_baselines.py

`python -m pts serve` over two copies of the stored reference run, shot in Debian's headless
Chromium (tests/support/screens.py says what is shot and how it is reduced). Refresh them ON
PURPOSE, after a change to the pages that you have looked at (the failing test writes each
changed shot and a diff image and names them), on the machine CI runs on, then commit them.
The Chromium and ChromeDriver builds are recorded beside them (builds.toml).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))      # pts and tests, when run as a script from anywhere

from tests.support import screens, snapshots  # noqa: E402
from tests.support.helpers import REPORT_EPOCH, serving  # noqa: E402

os.environ.setdefault("SOURCE_DATE_EPOCH", REPORT_EPOCH)   # the report's Report Date


def main() -> int:
    driver = screens.chromium()
    try:
        with screens.reports_folder() as reports, serving(reports) as base:
            written = screens.write(screens.capture(driver, base), screens.builds(driver))
    finally:
        driver.quit()
    print(snapshots.written_line(written, screens.SCREENS, "screenshot baselines", ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
