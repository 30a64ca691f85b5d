"""Real SATA SSDs read with the command the suite runs (`smartctl --json -x`, issue 47 §2):
what a Samsung 860 EVO and a Samsung 840 printed for `smartctl -x -j` (scrutiny's testdata),
and an HPE MK000960GWSSD and a SanDisk SDSSDH3 512G for `smartctl --xall --json=ov`
(cdi-grading-tool's mock_data, serials masked), answer pts.device.health_smartctl.read as the
drive would: percentage used and the drive's own host-write count (ATA Device Statistics, GP
log 04h) are recorded. Media-write attributes of unknown unit are named and not used (Micron
5300, Samsung PM883: smartctl_exporter's testdata, another command, the same attribute
table); an NVMe drive read through smartctl keeps its host writes in its own 512,000-byte
unit. Provenance of every file: tests/data/recorded/README.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reportlab.platypus import Paragraph, Table

from pts.device import health_smartctl, media_writes
from pts.report.pages import counters as counters_page
from pts.results import records
from pts.stored import waf
from pts.stored.data import load_run
from pts.tools import nvme, smartctl
from tests.support.helpers import RECORDED, RecordedRunner, Reply
from tests.support.synthetic.runfactory import build_run

X_FLAGS = ("-x", "--xall")          # smartctl(8): -x prints -l devstat for ATA; -a does not
DEVSTAT_LOG = 0x04                  # ATA General Purpose Log address of Device Statistics

# file, smartctl's exit status, percentage used, Logical Sectors Written (as the drive
# printed them, JSON and, where the file keeps it, smartctl's own text)
REAL_X = [
    ("samsung-860evo-500gb", 0, 19, 64_777_770_148),
    ("hpe-mk000960gwssd", 4, 0, 373_526_415),
    ("sandisk-sdssdh3-512g", 0, 11, 239_064_859_452),
]


def doc(name: str) -> dict:
    return json.loads((RECORDED / f"smartctl-json_ata_{name}.json").read_text())


def read(name: str, rc: int = 0) -> tuple[dict, RecordedRunner]:
    """The counters the suite records for the drive, smartctl answering from its file."""
    run = RecordedRunner({("smartctl",): [Reply(out=f"smartctl-json_ata_{name}.json", rc=rc)]})
    counters, error = health_smartctl.read("/dev/sdz", run=run)
    assert error is None
    return counters, run


def test_the_suite_asks_for_the_device_statistics():
    """The command the suite runs is one that prints ATA Device Statistics (-x), and every
    recorded real ATA output agrees with smartctl(8): the block is there exactly when it was
    asked for (-x / --xall) and the drive's log directory lists GP log 04h; `--all` and
    `--attributes` print none, whatever the drive has (the Micron 5300 and the PM883 are SSDs
    of 2019-2020 with Device Statistics, printed without it)."""
    assert smartctl.argv("smartctl", "/dev/sdz") == ["smartctl", "--json", "-x", "/dev/sdz"]
    assert smartctl.COMMAND == "smartctl --json -x"
    seen = {"asked": 0, "not asked": 0}
    for path in sorted(RECORDED.glob("smartctl-json_ata_*.json")):
        d = json.loads(path.read_text())
        argv = d["smartctl"].get("argv")
        if argv is None:            # constructed files say no command
            continue
        asked = any(a in X_FLAGS for a in argv)
        logs = [t.get("address") for t in (d.get("ata_log_directory") or {}).get("table", [])]
        assert ("ata_device_statistics" in d) == (asked and DEVSTAT_LOG in logs), path.name
        seen["asked" if asked else "not asked"] += 1
    assert seen == {"asked": 4, "not asked": 5}


@pytest.mark.parametrize("name, status, used, sectors", REAL_X)
def test_percentage_used_and_host_writes_of_real_sata_ssds(name, status, used, sectors):
    counters, run = read(name, status)
    assert run.calls == [("smartctl", "--json", "-x", "/dev/sdz")]
    assert (counters["protocol"], counters["exit_status"]) == ("ATA", status)
    assert (counters["percent_used"], counters["sectors_written"]) == (used, sectors)
    # the drive's own host writes, for the WAF: logical sectors of logical_block_size bytes
    assert (counters["host_writes"], counters["page_size"]) == (sectors, 512)
    # what smartctl printed as text beside the JSON (--json=o keeps it) says the same
    text = doc(name)["smartctl"].get("output")
    if text is not None:
        assert any(line.endswith(f"{sectors:>12}  ---  Logical Sectors Written")
                   for line in text)
        assert any(f" {used}  N--  Percentage Used Endurance Indicator" in line
                   for line in text)


def test_a_drive_without_device_statistics_has_none_to_give():
    """The Samsung 840 read with -x: its log directory has no GP log 04h, so no percentage
    used and no host-write count are recorded (None / absent), not 0; its WAF has no drive
    host counter and says which counter is missing."""
    counters, _ = read("samsung-840")
    assert DEVSTAT_LOG not in [t["address"] for t in doc("samsung-840")["ata_log_directory"]
                               ["table"]]
    assert (counters["percent_used"], counters["sectors_written"]) == (None, None)
    assert "host_writes" not in counters and "page_size" not in counters
    assert waf.lifetime(counters) is None


def test_attribute_241_is_not_the_host_write_count():
    """The SanDisk SDSSDH3 was not in smartctl's drive database (7.3/5528, its text says), so
    smartctl named attribute 241 Total_LBAs_Written; its raw 113,995 counts GiB: the Device
    Statistics' 239,064,859,452 sectors of 512 bytes are 113,995.4 GiB. Read as sectors it
    would be 58 MB of host writes on a drive 11 % worn. The suite takes the Device
    Statistics."""
    counters, _ = read("sandisk-sdssdh3-512g")
    (raw,) = [a["raw"]["value"] for a in doc("sandisk-sdssdh3-512g")["ata_smart_attributes"]
              ["table"] if a["id"] == 241]
    assert raw == 113_995 == counters["host_writes"] * 512 // 2**30
    assert counters["host_writes"] * counters["page_size"] == 122_401_208_039_424


def test_the_counters_page_of_a_real_sata_ssd(tmp_path):
    """The 860 EVO's reading at two steps (the second 1 GB later, 1,953,125 sectors, made by
    hand): the page's health table gives its percentage used and the counters table the
    drive's own host writes; the WAF line says what is true of this drive (no media-write
    attribute), and the note names the command the suite ran."""
    first, _ = read("samsung-860evo-500gb")
    later = first | {"host_writes": first["host_writes"] + 1_953_125,
                     "sectors_written": first["sectors_written"] + 1_953_125}
    run = load_run(build_run(tmp_path, counters={"after purge": first, "after WIPC": later},
                             counters_source="smartctl"))
    story = counters_page.build(run, run.tests[0])
    texts = [f.getPlainText() for f in story if isinstance(f, Paragraph)]
    rows = [[c.getPlainText() if isinstance(c, Paragraph) else str(c) for c in row]
            for f in story if isinstance(f, Table) for row in f._cellvalues]
    assert ["Percentage used", "19", "19", "19", "+0"] in rows
    host = [r for r in rows if r[0] == "after WIPC"]
    assert host and host[0][1] == counters_page._gb(later["host_writes"] * 512) == "33,167"
    assert "WAF: not reported by this drive: no media-write attribute among its SMART " \
        "attributes." in texts
    assert any("Read with `smartctl --json -x` at every step" in t for t in texts)


@pytest.mark.parametrize("name, named", [
    ("micron-5300-mtfddak1t9tds", "ATA attribute 247 Host_Program_Page_Count (no unit "
     "stated), ATA attribute 248 Bckgnd_Program_Page_Cnt (no unit stated)"),
    ("samsung-pm883-mz7lh1t9hmlt", "ATA attribute 251 NAND_Writes (no unit stated)"),
])
def test_media_write_attributes_of_unknown_unit_are_named_not_used(name, named):
    """smartctl's drive database names these attributes for the NAND writes without a unit:
    Micron's in NAND pages of a size it does not give, Samsung's 251 NAND_Writes in nothing
    stated (its raw 64,213,448,960 against 241 Total_LBAs_Written 63,180,483,059 looks like
    sectors, a WAF of 1.016, but nothing says so). The record names them and says they are
    not used; the drive is not said to report no media writes."""
    counters, _ = read(name)
    assert counters["media_unknown"] == named
    assert (counters["media_bytes"], counters["media_source"]) == (None, None)
    assert counters["media_note"] == (f"{media_writes.NOT_USED}: media-write attributes the "
                                      f"WAF cannot use: {named}")
    assert not counters["media_note"].startswith(media_writes.NOT_REPORTED)
    found = waf.from_records([records.DeviceCounters(test="iops", when=w, round=None,
                                                     source="smartctl", counters=counters)
                              for w in ("after purge", "test end")], Path("."))
    assert (found.source, found.value, found.note) == (None, None, counters["media_note"])
    text = " ".join(f.text for f in counters_page.waf_block(found))
    assert text == f"WAF: not used: media-write attributes the WAF cannot use: {named}."


def test_a_media_write_attribute_whose_unit_is_named_is_used():
    """The Kingston SA400 (Phison): smartctl's database names 233 Flash_Writes_GiB, so its raw
    979 is 979 GiB written to the flash, at 1 GiB resolution."""
    counters, _ = read("kingston-sa400m8120g", rc=4)
    assert counters["media_bytes"] == 979 * 2**30 == 1_051_193_245_696
    assert (counters["media_source"], counters["media_unit"]) == (
        "smartctl: ATA attribute 233 Flash_Writes_GiB", 2**30)
    assert counters["media_unknown"] is None


def test_an_nvme_drive_read_through_smartctl_keeps_its_own_unit():
    """The Micron 7450 through smartctl (an NVMe drive on transport "scsi", e.g. behind a USB
    bridge, is read so): Data Units Written 1,248,078 recorded as units of 512,000 bytes, as
    nvme-cli's smart-log records keep them, so the WAF's resolution rule works at the
    drive's unit: 99 units (50.7 MB) is under MIN_UNITS and gives no WAF; at the 512-byte
    unit it was recorded in before, the same move passed the rule as 99,000 sectors. Its
    media writes are said to be not read through smartctl, not "not reported by this drive"."""
    run = RecordedRunner({("smartctl",): [Reply(
        out="smartctl-json_nvme_micron-7450-mtfdkcc3t2tfs.json")]})
    counters, error = health_smartctl.read("/dev/sdz", run=run)
    assert error is None
    assert (counters["host_writes"], counters["page_size"]) == (1_248_078, nvme.DATA_UNIT_BYTES)
    assert counters["host_writes"] * counters["page_size"] == 1_248_078 * 512_000
    moved = 99 * nvme.DATA_UNIT_BYTES
    assert waf.coarse(10**12, 1, moved, counters["page_size"]).startswith("not given")
    assert waf.coarse(10**12, 1, moved, 512) == ""
    assert counters["media_note"] == (f"{media_writes.NOT_READ_BY_SMARTCTL}: "
                                      f"{health_smartctl.NVME_MEDIA}")


def test_lifetime_waf_of_a_sata_ssd_from_its_own_counters():
    """With the host writes from the Device Statistics recorded, a SATA SSD with a NAND-write
    attribute of stated unit has a lifetime WAF. No real -x output with both was found
    (tests/data/recorded/README.md), so this is the constructed Intel file: 243
    NAND_Writes_32MiB 1,831,054 x 33,554,432 B = 61,439,976,931,328 B over Logical Sectors
    Written 81,920,000,000 x 512 B = 41,943,040,000,000 B: 1.4648."""
    run = RecordedRunner({("smartctl",): [Reply(
        out="smartctl-json_ata_intel-nand-writes_constructed.json")]})
    counters, error = health_smartctl.read("/dev/sdz", run=run)
    assert error is None
    assert counters["media_bytes"] == 1_831_054 * 2**25 == 61_439_976_931_328
    assert counters["host_writes"] * counters["page_size"] == 41_943_040_000_000
    assert waf.lifetime(counters) == pytest.approx(61_439_976_931_328 / 41_943_040_000_000)
    assert round(waf.lifetime(counters), 4) == 1.4648
