"""SATA and SCSI drives for real (issue 23 §1): the QEMU guest's SATA disk (ide-hd on the
ICH9 AHCI controller, so the guest's libata and SAT) and SCSI disk (scsi-hd on
virtio-scsi), driven by the suite as users run it, in the same boot as the NVMe tests
(tests/support/qemu_guest.py; fixture `guest` in conftest.py):

- `--purge security-erase` (SATA) and `--purge sanitize` (SCSI): QEMU 7.2 has neither the
  ATA Security feature set nor SCSI SANITIZE, so both refusal paths run for real and must
  fail closed before anything is written, with the drive's own answer on the report;
- `--purge sanitize` (SATA: no ATA SANITIZE feature set) and `--purge format` (SCSI: QEMU
  answers FORMAT UNIT with success and erases nothing, which the marker blocks catch);
- `--purge trim`, then the short IOPS test to a PDF on each: identity, transport, write cache
  set and read back (hdparm -W / sdparm WCE), smartctl at every step.

What QEMU answered is what these tests expect; what QEMU cannot do (a successful ATA
Security Erase or Sanitize, SCSI SANITIZE) stays on the recordings of tests/unit.
"""

from __future__ import annotations

import json

import pytest

from pts.results.ledger import read_ledger
from tests.support.helpers import pdf_text
from tests.support.ptsrun import check_outcomes
from tests.support.qemu_guest import SATA_MODEL, SATA_SERIAL, SCSI_MODEL, SCSI_SERIAL, SD_BYTES

pytestmark = [pytest.mark.qemu, pytest.mark.slow,
              pytest.mark.needs("root", "qemu-system-x86_64", "busybox", "cpio", "depmod",
                                "pdftotext", "/dev/fuse", "mfusepy", "hdparm", "sdparm",
                                "sg_format", "smartctl")]

SERIALS = {"sata": SATA_SERIAL, "scsi": SCSI_SERIAL}


def records(guest, name: str, kind: str) -> list[dict]:
    folder = guest.run_folder(name, SERIALS[kind])
    return [r.data for r in read_ledger(folder / "ledger.jsonl")[0]]


def refused(guest, name: str, kind: str, said: str) -> None:
    """The run `name` on the `kind` disk stopped at its purge, an ERROR (not a spec FAIL),
    saying `said`; nothing but the purge's own check was written; the report says why."""
    out = guest.text(name)
    assert guest.rc(name) == 1, out[-3000:]
    assert "1 error" in out and said in out, out[-3000:]
    recs = records(guest, name, kind)
    types = [r["type"] for r in recs]
    assert "wipc" not in types and "point" not in types and "round" not in types
    (purge,) = [r for r in recs if r["type"] == "purge"]
    assert not purge["ok"] and said in purge["error"]
    assert [r["status"] for r in recs if r["type"] == "test_end"] == ["error"]
    folder = guest.run_folder(name, SERIALS[kind])
    assert said in pdf_text(guest.report(folder))


def test_the_guest_has_a_sata_and_a_scsi_disk(guest):
    found = guest.disks()
    assert sorted(found) == ["sata", "scsi"] and found["sata"] != found["scsi"], found


def test_ata_security_erase_is_refused_as_qemu_has_no_security_feature_set(guest):
    refused(guest, "sata-refused", "sata",
            f"{guest.disks()['sata']} does not support the ATA Security feature set (hdparm -I "
            "shows no 'supported' in its Security section), so ATA Security Erase is "
            "impossible.")


def test_ata_sanitize_is_refused_as_qemu_has_no_sanitize_feature_set(guest):
    refused(guest, "sata-refused2", "sata",
            f"--purge sanitize: {guest.disks()['sata']} supports no ATA SANITIZE block erase or "
            "crypto scramble (hdparm -I). Nothing was erased.")


def test_scsi_sanitize_fails_closed_with_the_drives_invalid_opcode(guest):
    refused(guest, "scsi-refused", "scsi",
            f"SCSI Sanitize (block erase) of {guest.disks()['scsi']} could not start, nothing "
            "was erased (fail closed): exit status 9 (invalid opcode: the device does not "
            "support this command): Sanitize failed: Illegal request, Invalid opcode")


def test_a_scsi_format_unit_that_erases_nothing_is_caught_by_the_markers(guest):
    """QEMU's scsi-hd answers FORMAT UNIT with GOOD status and leaves the data: the marker
    blocks written before the purge are still there, so the run stops (fail closed)."""
    refused(guest, "scsi-refused2", "scsi",
            f"SCSI Format Unit of {guest.disks()['scsi']} reported success, but marker blocks "
            "written before it are still readable at offsets [0, ")
    assert "the device was NOT purged. Stopping (fail closed)." in guest.text("scsi-refused2")


@pytest.mark.parametrize("kind, model, link, how", [
    ("sata", SATA_MODEL, ("SATA", "1.5 Gbps"), "hdparm -W0, read back with hdparm -W"),
    ("scsi", f"QEMU {SCSI_MODEL}", ("scsi (virtio_scsi)", None),
     "sdparm --set=WCE=0, read back with sdparm --get=WCE=1")])
def test_iops_run_on_the_disk_to_a_report(guest, kind, model, link, how):
    name = f"{kind}-iops"
    out = guest.text(name)
    folder = guest.run_folder(name, SERIALS[kind])
    expected = check_outcomes(guest.rendered(folder))["iops"]         # the verdict its rounds give
    assert guest.rc(name) == (0 if expected.passed else 1), out[-3000:]
    run_json = json.loads((folder / "run.json").read_text())
    device = run_json["device"]
    # identity from sysfs: the model (vendor "ATA" is libata's, not the maker's) and the
    # serial of VPD page 80h (no udev in the guest, as on a minimal host)
    assert (device["model"], device["serial"], device["firmware"], device["transport"]) == \
        (model, SERIALS[kind], "2.5+", "scsi")
    # the DUT interface as sysfs shows it: libata's link speed, virtio-scsi's driver
    interface = run_json["system"]["interface"]
    assert (interface["kind"], interface["speed"]) == link, interface   # QEMU's AHCI: 1.5
    assert device["capacity_bytes"] == SD_BYTES and device["given"] == guest.disks()[kind]
    recs = records(guest, name, kind)
    (purge,) = [r for r in recs if r["type"] == "purge"]
    assert purge["ok"] and purge["method"] == "trim" and purge["deviation"]
    caches = [r for r in recs if r["type"] == "write_cache"]
    assert [(c["when"], c["actual"], c["settable"], c["how"]) for c in caches] == [
        ("before WIPC", "disabled", True, how), ("before test loop", "disabled", True, how)]
    assert not any("Write cache" in r["text"] for r in recs if r["type"] == "deviation")
    assert guest.report(folder).stat().st_size > 0


def test_smartctl_health_is_read_at_every_step_as_qemu_answers(guest):
    """SATA: QEMU's IDE disk has SMART (overall health passed, attributes); SCSI: no SMART
    support, so only what smartctl reads (no pass/fail) is recorded, at every step too."""
    for kind, protocol, passed in (("sata", "ATA", 1), ("scsi", "SCSI", None)):
        smart = [r for r in records(guest, f"{kind}-iops", kind)
                 if r["type"] == "device_counters" and r["source"] == "smartctl"]
        whens = [r["when"] for r in smart]
        assert whens[:3] == ["test start", "after purge", "after WIPC"], whens
        assert whens[-1] == "test end" and len(whens) >= 5
        assert {(r["counters"]["protocol"], r["counters"]["smart_passed"]) for r in smart} == \
            {(protocol, passed)}
        raw = json.loads(guest.text(f"{kind}-smart"))
        assert raw["serial_number"] == SERIALS[kind]
