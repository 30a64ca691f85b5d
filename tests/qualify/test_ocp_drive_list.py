"""The drive's own list of the OCP requirement IDs it does not meet (its C5h page) beside the
suite's verdicts (pts.stored.ocp_drive_list): `qualify --ocp` marks each listed ID "drive says
unsupported (C5h)", counts them in a last line, and gives a line to each listed ID the suite
PASSes; the report's OCP page says the same. On a run with QEMU 10's recorded host facts
(tests/support/ocp_run) whose C5h answer is a CONSTRUCTED page (QEMU 10 refuses C5h; built
with the product's encoder): PWR-1 (the suite's PASS on QEMU's power state table),
STD-LOG-7 (FAIL: log 07h refused) and XYZ-9 (no ID of the text)."""

import json

from reportlab.platypus import Paragraph, Table

from pts.cli.main import main
from pts.config.ocp_log_pages import C5
from pts.report.pages import ocp as ocp_page
from pts.report.renderers.layout import esc
from pts.stored.data import load_run
from pts.stored.ocp_drive_list import MARK, drive_list
from pts.stored.ocp_every_id import judge_every
from pts.tools.nvme_facts import json_safe
from pts.tools.ocp_log_decode import encode
from pts.tools.ocp_page_facts import page_fact
from tests.support.ocp_run import add_host_facts
from tests.support.synthetic.runfactory import build_run

LISTED = ["PWR-1", "STD-LOG-7", "XYZ-9"]


def with_c5h(folder, ids: list[str] | None) -> None:
    """The run's nvme_facts record given a constructed C5h page listing `ids` (None: as QEMU
    answered, refused)."""
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text().splitlines()
    rec = json.loads(lines[-1])
    assert rec["type"] == "nvme_facts" and "refused" in rec["facts"]["ocp_pages"]["C5h"]
    if ids is not None:
        page = encode(C5, {"unsupported_count": len(ids),
                           "unsupported_requirements": ids + [""] * (253 - len(ids))}, 1)
        rec["facts"]["ocp_pages"]["C5h"] = json_safe(
            {"command": "nvme get-log /dev/nvme0 --log-id=0xc5 --log-len=4096 --raw-binary",
             "exit": 0, "file": "log-c5h.bin", **page_fact(C5, page)})
    ledger.write_text("\n".join(lines[:-1] + [json.dumps(rec)]) + "\n")


def qualify(folder, capsys) -> list[str]:
    main(["qualify", str(folder), "--ocp", "2.7"])
    return capsys.readouterr().out.splitlines()


def test_the_drives_list_beside_the_verdicts(tmp_path, capsys):
    folder = build_run(tmp_path)
    add_host_facts(folder, tmp_path / "facts")
    with_c5h(folder, LISTED)
    out = qualify(folder, capsys)
    marked = [line.split()[:2] for line in out if line.endswith(f" | {MARK}")]
    assert marked == [["FAIL", "STD-LOG-7"], ["PASS", "PWR-1"]]      # in text order
    assert out[-2] == ("The drive's C5h page (Unsupported Requirements) lists 3 requirement "
                       "ID(s) it does not meet: 2 of this text (the suite: 1 PASS, 1 FAIL); "
                       "not IDs of this text: XYZ-9")
    assert out[-1].startswith("suite PASS on PWR-1, which the drive's C5h says it does not "
                              "meet: Get Features 02h answered")
    urlp = next(line for line in out if " URLP-3 " in line)
    assert urlp.startswith("PASS") and "3 entries in alphabetical order" in urlp
    found = drive_list(load_run(folder), judge_every(load_run(folder), "2.7"))
    assert found.ids == tuple(LISTED) and [v.id for v in found.passed] == ["PWR-1"]
    # the report's OCP page: the same lines in a paragraph, the judged rows marked
    page = ocp_page.build(load_run(folder))
    texts = [f.text for f in page if isinstance(f, Paragraph)]
    assert esc("; ".join(found.lines)) in texts
    rows = [r for f in page if isinstance(f, Table) for r in f._cellvalues]
    def text(cell):
        return getattr(cell, "text", str(cell))
    marked = sorted(text(r[0]) for r in rows if len(r) == 5 and text(r[3]).endswith(MARK))
    assert marked == ["PWR-1", "STD-LOG-7"], marked


def test_no_list_when_the_drive_refuses_c5h(tmp_path, capsys):
    """QEMU 10's own answer: C5h refused, so nothing is marked and no line is added; the
    URLP rows FAIL on the refusal."""
    folder = build_run(tmp_path)
    add_host_facts(folder, tmp_path / "facts")
    with_c5h(folder, None)
    out = qualify(folder, capsys)
    assert not [line for line in out if MARK in line or "C5h page (Unsupported" in line]
    assert out[-1].startswith("OCP DC NVMe SSD 2.7: ")
    urlp = next(line for line in out if " URLP-1 " in line)
    assert urlp.startswith("FAIL") and "Get Log Page C5h: Invalid Field in Command (0x4002), " \
        "exit 1" in urlp
    assert drive_list(load_run(folder), judge_every(load_run(folder), "2.7")) is None
    page = ocp_page.build(load_run(folder))
    assert not [f for f in page if isinstance(f, Paragraph) and "C5h page" in f.text]
