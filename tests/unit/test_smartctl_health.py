"""ATA and SCSI/SAS health through smartctl (pts.tools.smartctl, pts.device.health):
parsing of recorded `smartctl --json` output (tests/data/recorded/README.md says which file
is recorded, derived or constructed, and which command printed it), the device_counters
records prepare writes for a "scsi" transport device, the health-failure verdict, and the
report's health table. smartctl is faked (tests.support.helpers.RecordedRunner in place of
commands.run). Real SATA SSDs read with the command the suite runs: test_real_sata_drives."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pts.conditioning import prepare
from pts.device import health
from pts.procedure.rounds import Outcome
from pts.procedure.runner import health_verdict
from pts.report import render
from pts.results import records
from pts.tools import smartctl
from tests.support.fake_run import NVME, FakeRun, ledger
from tests.support.helpers import RECORDED, RecordedRunner, Reply, pdf_text
from tests.support.synthetic.runfactory import build_run

SAS = dataclasses.replace(NVME, path="/dev/sdz", given="/dev/sdz", kname="sdz",
                          transport="scsi")
WD, TOSHIBA = "smartctl-json_ata_wd5002abys.json", "smartctl-json_scsi_toshiba-al13sxb60en.json"
EVO = "smartctl-json_ata_samsung-860evo-500gb.json"     # `smartctl -x -j` of a real SATA SSD
ATA_FAILING, SCSI_ERRORS = "smartctl-json_ata_failing_derived.json", \
    "smartctl-json_scsi_errors_derived.json"
OPEN_FAILED = "smartctl-json_open-failed_constructed.json"


def parse(name):
    return smartctl.parse((RECORDED / name).read_text())


def fake(monkeypatch, *names, rc=0) -> RecordedRunner:
    replies = [Reply(out=n, rc=rc) for n in names]
    return RecordedRunner({("smartctl", "--json", "-x"): replies}).install(monkeypatch)


def test_ata_recorded():
    h = parse(WD)
    assert h == smartctl.Health(
        protocol="ATA", smart_passed=1, temperature_c=36, reallocated_sectors=0,
        pending_sectors=0, offline_uncorrectable=0, media_errors=None, percent_used=None,
        power_on_hours=10871, exit_status=4)


def test_scsi_recorded():
    h = parse(TOSHIBA)
    assert h == smartctl.Health(
        protocol="SCSI", smart_passed=1, temperature_c=41, reallocated_sectors=0,
        pending_sectors=None, offline_uncorrectable=None, media_errors=0, percent_used=None,
        power_on_hours=64579, exit_status=0)


def test_derived_failing_drives():
    ata = parse(ATA_FAILING)
    assert (ata.smart_passed, ata.reallocated_sectors, ata.pending_sectors) == (0, 12, 3)
    scsi = parse(SCSI_ERRORS)
    assert (scsi.reallocated_sectors, scsi.media_errors) == (5, 2)


def test_scsi_percent_used_where_reported():
    """SCSI: smartctl's key for the Solid State Media log's Percentage Used Endurance
    Indicator, set in the recorded Toshiba output (an HDD, which has none; no real SAS SSD's
    JSON was found). ATA's, from its Device Statistics, on real SSDs: test_real_sata_drives."""
    scsi = json.loads((RECORDED / TOSHIBA).read_text())
    scsi["scsi_percentage_used_endurance_indicator"] = 3
    assert smartctl.parse(json.dumps(scsi)).percent_used == 3


@pytest.mark.parametrize("text,needle", [
    ("smartctl: not json", "printed no JSON"),
    ('{"a": 1}', 'no "smartctl" block'),
    ((RECORDED / OPEN_FAILED).read_text(), "smartctl exit status 2: Smartctl open device: "
                                           "/dev/sdz failed: No such device"),
])
def test_bad_output_is_a_clear_error(text, needle):
    with pytest.raises(smartctl.SmartctlError, match=needle):
        smartctl.parse(text)


def test_scsi_transport_is_read_with_smartctl(tmp_path, monkeypatch):
    """A SATA SSD (transport "scsi" behind libata) read as the suite reads it, `smartctl
    --json -x`, answered by what a Samsung 860 EVO printed for that command: its percentage
    used and its own host-write count (Device Statistics) are in the record."""
    runner = fake(monkeypatch, EVO)
    run = FakeRun(tmp_path)
    run.device = SAS
    prepare.record_counters(run, "iops", "after purge")
    (rec,) = [r for r in ledger(run) if isinstance(r, records.DeviceCounters)]
    assert rec.source == "smartctl" and rec.error is None
    # plus the media-write keys (pts.device.media_writes): the 860 EVO has no NAND-write
    # attribute; and the drive's host writes as host_writes x page_size, for the WAF
    assert rec.counters == parse(EVO).as_dict() | {
        "media_bytes": None, "media_source": None,
        "media_note": "not reported by this drive: no media-write attribute among its SMART "
                      "attributes", "host_writes": 64_777_770_148, "page_size": 512}
    assert (rec.counters["percent_used"], rec.counters["sectors_written"]) == (19, 64_777_770_148)
    assert runner.calls == [("smartctl", "--json", "-x", "/dev/sdz")]


def test_health_bits_are_not_a_failed_read(tmp_path, monkeypatch):
    """Exit status 4 (a SMART command failed) or 8 (disk failing) still gives data."""
    fake(monkeypatch, ATA_FAILING, rc=12)
    snap = health.snapshot(SAS)
    assert snap.error is None and snap.counters["smart_passed"] == 0


def test_unreadable_is_recorded_and_declared(tmp_path, monkeypatch):
    fake(monkeypatch, OPEN_FAILED, rc=2)
    run = FakeRun(tmp_path)
    run.device = SAS
    prepare.record_counters(run, "iops", "after WIPC")
    found = ledger(run)
    (rec,) = [r for r in found if isinstance(r, records.DeviceCounters)]
    assert rec.counters is None and "Smartctl open device" in rec.error
    (dev,) = [r.text for r in found if isinstance(r, records.Deviation)]
    assert dev.startswith("SMART data (smartctl --json -x) could not be read at step "
                          "\"after WIPC\": smartctl exit status 2")


STEADY = Outcome("steady", 7, 7, (3, 7), {}, "steady state reached at round 7")


@pytest.mark.parametrize("names,expected", [
    ((WD, WD, WD), []),
    ((WD, ATA_FAILING), ["SMART overall-health self-assessment FAILED at 1 of 2 steps, first "
                         "at after round 1", "reallocated sectors (grown defects): +12 "
                         "during the test", "pending sectors: +3 during the test"]),
    ((TOSHIBA, SCSI_ERRORS), ["reallocated sectors (grown defects): +5 during the test",
                              "uncorrected media errors: +2 during the test"]),
])
def test_health_failure_verdict(tmp_path, monkeypatch, names, expected):
    fake(monkeypatch, *names)
    run = FakeRun(tmp_path)
    run.device = SAS
    for n in range(len(names)):
        prepare.record_counters(run, "iops", "test start" if n == 0 else f"after round {n}", n)
    out = health_verdict(run, "iops", STEADY)
    if not expected:
        assert out is STEADY
        return
    assert out.status == health.HEALTH_FAILURE
    assert out.message == ("DEVICE HEALTH FAILURE (not a spec result): " + "; ".join(expected)
                           + f". Spec outcome: {STEADY.message}")


def test_report_health_table(tmp_path):
    counters = {"after purge": parse(WD).as_dict(), "after WIPC": parse(ATA_FAILING).as_dict()}
    text = " ".join(pdf_text(render(build_run(tmp_path, counters=counters,
                                               counters_source="smartctl"))).split())
    assert "Device health (ATA / SCSI SMART, smartctl)" in text
    assert "Reallocated sectors / grown defects 0 12 12 +12" in text
    assert "Pending sectors 0 3 3 +3" in text
