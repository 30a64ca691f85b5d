"""The report's "OCP requirements" page (pts.report.pages.ocp): on a run whose counters are
the KIOXIA CD8's recorded logs (tests/support/synthetic/drive_logs.py), every requirement of
the table on it, judged ones in rows of their own; no page for a run on the emulated SSD."""

import re

from pts.cli.main import main
from pts.config import ocp_requirements as table
from tests.support.helpers import pdf_text
from tests.support.synthetic.drive_logs import growing, recorded_counters
from tests.support.synthetic.runfactory import build_run


def test_the_page_of_a_real_drives_logs(monkeypatch, tmp_path):
    folder = build_run(tmp_path, counters=growing(recorded_counters(monkeypatch, tmp_path,
                                                                    "kioxia-cd8")),
                       counters_source="smart-log")
    assert main(["report", str(folder)]) == 0
    text = pdf_text(folder / "report.pdf")
    assert "OCP requirements — OCP Datacenter NVMe SSD 2.7" in text
    # Counted by hand: 24 C0h field rows, of which the CD8's version 3 page fails 4 (SMART-4
    # all ones; SMART-20, -29, -31 from version 4 on); SMART-13 (DSSD 2.0.0) and SMART-27
    # (version 3) FAIL, SMART-28 passes; NUSE-1, STD-LOG-2, -3, -23 pass; CTO-8 FAILs (0.96
    # TB, Format 12.5 s > 9.6 s + 1 s); CTO-2/7/11 not checked (no such purge): 25 PASS, 7 FAIL
    assert "CTO-8" in text and "log page version 3, not 6" in text
    assert "declares DSSD 2.0.0 (errata 0), not 2.7" in text
    assert "25 PASS, 7 FAIL, 103 NOT CHECKED of the 135 requirements" in text
    for req in table.requirements("2.7"):          # never left out
        assert re.search(rf"(?<![\w-]){re.escape(req.id)}(?![\w-])", text), req.id


def test_no_page_for_the_emulated_ssd(tmp_path):
    folder = build_run(tmp_path, emulated=True)
    assert main(["report", str(folder)]) == 0
    assert "OCP requirements" not in pdf_text(folder / "report.pdf")
