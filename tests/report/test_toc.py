"""The contents page of report.pdf (pts/report/pages/toc.py)."""

import re
import subprocess

import pytest

from pts.cli.main import main
from tests.support.synthetic.runfactory import build_run


@pytest.mark.needs("pdftotext")
def test_contents_page_gives_each_sections_page(tmp_path):
    """The contents page (pts/report/pages/toc.py) lists every heading with the page it is on."""
    folder = build_run(tmp_path)
    assert main(["report", str(folder)]) == 0
    pdf = folder / "report.pdf"

    def page(n: int) -> str:
        return subprocess.run(["pdftotext", "-f", str(n), "-l", str(n), "-layout", str(pdf),
                               "-"], capture_output=True, text=True, check=True).stdout

    contents = next(page(n) for n in range(1, 5) if "Contents — Table of contents" in page(n))
    found = dict(re.findall(r"^\s*(Steady State Convergence|Measurement Window Tabular "
                            r"Data: IOPS|IOPS test)\s+(\d+)\s*$", contents, re.M))
    assert set(found) == {"Steady State Convergence", "Measurement Window Tabular Data: IOPS",
                          "IOPS test"}
    for title, number in found.items():
        assert title in page(int(number)).split("Page ", 1)[1], title
