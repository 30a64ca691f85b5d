"""The report's "OCP requirements" page (pts.report.pages.ocp): on a run whose counters are
each real drive's recorded logs (the KIOXIA CD8's and the FADU DELTA U.2's, through
tests/support/synthetic/drive_logs.py), every requirement of the table on it, judged ones in
rows of their own; no page for a run on the emulated SSD."""

import re

from pts.cli.main import main
from pts.config.ocp_all_ids import all_ids
from tests.support import ocp_spec_ids
from tests.support.helpers import pdf_text
from tests.support.synthetic.drive_logs import growing, recorded_counters
from tests.support.synthetic.runfactory import build_run


def page_of(monkeypatch, tmp_path, drive: str) -> str:
    """The report's text for a run (the factory's 0.96 TB drive, one Format SES=1 of 12.5 s)
    whose smart-log and C0h readings are the drive's recorded ones, growing step by step."""
    folder = build_run(tmp_path, drive, counters=growing(recorded_counters(monkeypatch,
                                                                           tmp_path, drive)),
                       counters_source="smart-log")
    assert main(["report", str(folder)]) == 0
    text = pdf_text(folder / "report.pdf")
    assert "OCP requirements — OCP Datacenter NVMe SSD 2.7" in text
    for rid in ocp_spec_ids.ids("2.7"):     # never left out: the spec text's IDs, not the table's
        assert re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text), rid
    shown = set(re.findall(r"(?<![\w-])([A-Za-z][\w-]*-\d+)(?![\w-])", text))
    missing = [e.id for e in all_ids("2.7") if e.id not in shown]
    assert not missing, missing[:10]          # every ID of the v2.7 text is on the page
    assert "OCP requirement groups" in text and "OCP requirements not applicable" in text
    return text


def test_the_page_of_the_kioxia_cd8s_logs(monkeypatch, tmp_path):
    text = page_of(monkeypatch, tmp_path, "kioxia-cd8")
    # Counted by hand: 24 C0h field rows, all given by the CD8's version 3 page (SMART-4 all
    # ones, the value the text defines; SMART-20, -29, -31 are version 3 fields, OCP 2.0 r21:
    # given); SMART-13 (DSSD 2.0.0) and SMART-27 (version 3) FAIL, SMART-28 passes; NUSE-1,
    # STD-LOG-2, -3, -23 pass;
    # CTO-8 FAILs (0.96 TB, Format 12.5 s > 9.6 s + 1 s); CTO-2/7/11 not checked (no such
    # purge): 29 PASS, 3 FAIL; and v2.7's own 22 C0h field rows (SMART-30, -32..-52), judged
    # from the page's bytes, FAIL: a version 3 page does not carry them: 29 PASS, 25 FAIL;
    # of the text's other 1,582 IDs, 59 NOT APPLICABLE (obsolete), the rest NOT CHECKED (the
    # run recorded no Identify / log facts; the form factor is not known)
    assert "CTO-8" in text and "log page version 3, not 6" in text
    assert "declares DSSD 2.0.0 (errata 0), not 2.7" in text
    assert "29 PASS, 25 FAIL, 59 NOT APPLICABLE, 1604 NOT CHECKED of the 1717 requirement IDs" in text


def test_the_page_of_the_fadu_delta_u2s_logs(monkeypatch, tmp_path):
    text = page_of(monkeypatch, tmp_path, "fadu-delta-u2")
    # Counted by hand from tests/data/recorded/nvme-ocp-smart-add-log_fadu-delta-u2.json and
    # nvme-smart-log_fadu-delta-u2.json: "Log page version": 2, so of the 24 C0h field rows
    # SMART-20 (NVMe Base Errata), -29 (PCIe Link Retraining) and -31 (Power State Change),
    # fields from version 3 on, FAIL; the other 21 are printed and none is all ones (bad
    # system NAND blocks raw 0, normalised 100: SMART-4 passes, unlike the CD8's); SMART-13
    # FAILs (the DSSD version fields start at version 3), SMART-27 FAILs (version 2, not 6),
    # SMART-28 passes (the OCP GUID); NUSE-1 (NUSE 0 after the Format), STD-LOG-2, -3
    # (percent_used 0 at every step) and -23 pass; CTO-8 FAILs (0.96 TB, Format 12.5 s >
    # 9.6 s + 1 s): 26 PASS, 6 FAIL; and v2.7's own 22 C0h field rows FAIL (not in version 2)
    assert "log page version 2, not 6" in text
    assert "the page (log page version 2) gives no DSSD specification version" in text
    assert "pcie_link_retraining_count: not in log page version 2" in text
    assert "26 PASS, 28 FAIL, 59 NOT APPLICABLE, 1604 NOT CHECKED of the 1717 requirement IDs" in text


def test_no_page_for_the_emulated_ssd(tmp_path):
    folder = build_run(tmp_path, emulated=True)
    assert main(["report", str(folder)]) == 0
    assert "OCP requirements" not in pdf_text(folder / "report.pdf")
