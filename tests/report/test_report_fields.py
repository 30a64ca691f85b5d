"""Page 1's PTS-E 1.0 §5 fields, read from the rendered PDF (pdftotext) and compared with the
run.json they came from; a run without an operator and an older run without the `system`
block declare what is missing; the Report Date is the rendering date."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime

import pytest

from pts.export.json_doc import document
from pts.report import render
from pts.stored import report_fields
from tests.support.helpers import REPORT_EPOCH
from tests.support.synthetic.runfactory import build_run

pytestmark = pytest.mark.needs("pdftotext")

INFO = {"operator": "Ada Operator", "auditor": "Bo Auditor", "sponsor": "Acme Storage Lab",
        "system_make": "Given Make", "system_model": "Given Model", "motherboard": None,
        "host_adapter": None, "interface": None, "form_factor": "U.2 2.5 inch 15 mm",
        "media_type": "3D TLC NAND", "notable_features": "power-loss protection",
        "file": "/srv/pts/report-info.toml"}
SYSTEM = {"read_on": "this host",
          "dmi": {"sys_vendor": None, "product_name": None, "board_vendor": "Gigabyte",
                  "board_name": "MZ32-AR0"},
          "host_adapter": {"pci_function": "0000:40:01.1", "vendor": "AMD",
                           "device": "Starship GPP Bridge", "names_from": "lspci -mm"},
          "interface": {"kind": "NVMe over PCIe", "speed": "8.0 GT/s PCIe x4",
                        "source": "sysfs current_link_speed/current_link_width of "
                                  "0000:41:00.0"},
          "drive_reports": "the NVMe Identify Controller data has no form-factor or "
                           "media-type field"}


def page1(pdf) -> str:
    out = subprocess.run(["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"],
                         check=True, capture_output=True, text=True).stdout
    return " ".join(out.split())      # a wrapped cell continues under a blank label cell


def folder_with(tmp_path, **blocks):
    folder = build_run(tmp_path)
    info = json.loads((folder / "run.json").read_text())
    info.update(blocks)
    (folder / "run.json").write_text(json.dumps(info))
    return folder, info


def test_page_1_shows_exactly_the_stored_fields(tmp_path):
    folder, info = folder_with(tmp_path, report_info=INFO, system=SYSTEM)
    text = page1(render(folder, tmp_path / "r.pdf"))
    day = datetime.fromtimestamp(int(REPORT_EPOCH), UTC).strftime("%Y-%m-%d")
    a, link = SYSTEM["host_adapter"], SYSTEM["interface"]
    for line in (
            f"Test Operator {INFO['operator']}",
            f"Auditor {INFO['auditor']}",
            f"Test Sponsor {INFO['sponsor']}",
            f"Report Date {day} (rendering date, fixed by SOURCE_DATE_EPOCH)",
            "Test dates 2026-11-21 12:00:00 UTC to 2026-11-21 ",
            # DMI blank: the given make/model; DMI board: as read
            f"System make / model {INFO['system_make']} {INFO['system_model']} (given in "
            "report info, system_make, system_model)",
            f"Motherboard {SYSTEM['dmi']['board_vendor']} {SYSTEM['dmi']['board_name']} "
            "(DMI board_vendor, board_name)",
            f"DUT host adapter {a['vendor']} {a['device']} at PCI {a['pci_function']} "
            f"(names from {a['names_from']})",
            f"DUT interface and speed {link['kind']}, {link['speed']} ({link['source']})",
            f"DUT form factor {INFO['form_factor']} (given in report info, form_factor)",
            f"DUT media type {INFO['media_type']} (given in report info, media_type)",
            f"DUT notable features {INFO['notable_features']}",
            f"Report info file {INFO['file']}"):
        assert line in text, f"{line!r} not on page 1:\n{text}"
    assert "NOT GIVEN" not in text and "Required report fields missing" not in text
    assert info["started"] == "2026-11-21T12:00:00+00:00"


def test_without_operator_page_1_declares_it_and_warns(tmp_path):
    folder, _ = folder_with(tmp_path, report_info=dict(INFO, operator=None, media_type=None),
                            system=SYSTEM)
    text = page1(render(folder, tmp_path / "r.pdf"))
    assert ("Test Operator NOT GIVEN: required by PTS-E 1.0 §5; give --operator NAME"
            in text), text
    assert ("DUT media type NOT GIVEN (not reported by the drive: the NVMe Identify "
            "Controller data has no form-factor or media-type field): required by PTS-E 1.0 "
            "§5; give media_type in --report-info") in text
    assert ("WARNING: Required report fields missing (PTS-E 1.0 §5): Test Operator, DUT "
            "media type.") in text


def test_an_older_run_without_the_blocks_says_not_recorded(tmp_path):
    folder = build_run(tmp_path)
    info = json.loads((folder / "run.json").read_text())
    del info["report_info"], info["system"]
    (folder / "run.json").write_text(json.dumps(info))
    text = page1(render(folder, tmp_path / "r.pdf"))
    assert "Test Operator NOT GIVEN" in text
    assert "System and DUT facts NOT RECORDED: run.json has no `system` block" in text


def test_report_date_is_the_render_date_unless_fixed():
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert report_fields.report_date({}) == f"{today} (the date this report was rendered)"
    assert report_fields.report_date({"SOURCE_DATE_EPOCH": "0"}).startswith("1970-01-01 ")


def test_export_json_carries_the_blocks_as_stored(tmp_path):
    folder, info = folder_with(tmp_path, report_info=INFO, system=SYSTEM)
    doc = document(folder)
    assert (doc["report_info"], doc["system"]) == (info["report_info"], info["system"])


def test_the_declared_form_factor_is_the_dut_form_factor_too(tmp_path):
    """--form-factor (the OCP IDs' form factor, run.json options) is the page's DUT form
    factor where report info gives none, beside report info's where both are given (one
    fact, neither lost), and the fix for a missing one names both."""
    def form_factor_row(info, declared, name):
        folder, run_json = folder_with(tmp_path / name, report_info=info, system=SYSTEM)
        run_json["options"]["form_factor"] = declared
        (folder / "run.json").write_text(json.dumps(run_json))
        text = page1(render(folder, tmp_path / f"{name}.pdf"))
        return text[text.index("DUT form factor"):text.index("DUT media type")].strip()

    assert form_factor_row(dict(INFO, form_factor=None), "E1.S", "declared") == \
        "DUT form factor E1.S (declared with --form-factor)"
    assert form_factor_row(INFO, "U.2/U.3", "both") == \
        (f"DUT form factor {INFO['form_factor']} (given in report info, form_factor); "
         "U.2/U.3 (declared with --form-factor)")
    assert form_factor_row(dict(INFO, form_factor=None), None, "neither") == \
        ("DUT form factor NOT GIVEN (not reported by the drive: the NVMe Identify Controller "
         "data has no form-factor or media-type field): required by PTS-E 1.0 §5; give "
         "form_factor in --report-info or --form-factor")
