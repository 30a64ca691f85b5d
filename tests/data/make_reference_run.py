"""Make the page snapshots' stored data (tests/report/test_page_snapshots.py):

    python tests/data/make_reference_run.py                      # the reference run folder
                                                                 # AND the page baselines
    python tests/data/make_reference_run.py --refresh-baselines  # the baselines only, from
                                                                 # the stored run folder

tests/data/reference-run/ is a small SYNTHETIC run folder with every page type of the report
(tests/support/synthetic/synthrun_more.build_reference: IOPS 4 x 3 with an N/A row, its FOB sweep
and FTL
counters, both Throughput sizes, Latency 3 x 3 with json+ bins, WSAT 40 samples, DIRTH and
CBW on a 3 x 3 grid, HIR, XSR, two datasheet requirements; made-up figures, 7 rounds). It
was made once and is committed: the tests read it, they do not make it. Re-making it gives
the same data as long as tests/support/synthetic/synthrun*.py are unchanged: the same files,
the ledger's records equal as the reader reads them (the stored one predates the names
point_seconds and host_bound); tests/report/test_reference_run.py checks it.

tests/data/page-baselines/ holds every page of its report as a small 2-bit grey PNG. Refresh
them ON PURPOSE, after a change to the report's layout that you have looked at (the failing
test writes each changed page and a diff image and names them), then commit them. The
poppler build that rasterised them is recorded beside them (builds.toml).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))      # pts and tests, when run as a script from anywhere

from pts.report import render  # noqa: E402
from tests.support import snapshots  # noqa: E402
from tests.support.helpers import REPORT_EPOCH  # noqa: E402
from tests.support.synthetic import synthrun_more  # noqa: E402

os.environ.setdefault("SOURCE_DATE_EPOCH", REPORT_EPOCH)   # the baselines' Report Date


def make_run() -> Path:
    folder = snapshots.REFERENCE_RUN
    if folder.exists():
        shutil.rmtree(folder)
    return synthrun_more.build_reference(folder)


def refresh_baselines() -> list[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        pdf = render(snapshots.REFERENCE_RUN, Path(tmp) / "report.pdf")
        return snapshots.write_baselines(pdf)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--refresh-baselines", action="store_true",
                    help="only re-render the page baselines from the stored run folder")
    args = ap.parse_args(argv)
    if not args.refresh_baselines:
        print(f"run folder: {make_run().relative_to(ROOT)}")
    print(snapshots.written_line(refresh_baselines(), snapshots.BASELINES, "page baselines",
                                 ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
