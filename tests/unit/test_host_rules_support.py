"""The v2.7 requirements judged from what a drive supports beyond tests/unit/test_host_rules.py:
telemetry (TEL-1/10..13/16..21/24, NVMe-OPT-6), the Sanitize Status and LBA Status logs and the
DSSD Asynchronous Event Configuration feature (NVMe-AD-22/27/31/32), a stray NSID (NVMe-AD-11),
the Timestamp's Synch bit (NVMe-OPT-5), Write Zeroes and Write
Uncorrectable (NVMe-IO-5/6/7/10), Relaxed Ordering and the extended capabilities (PCI-14/25/26/
28), the doorbells' alignment (NVMe-CFG-10) and the form factors' link minimums (FFM2-5,
FFE1S-2, FFE1L-2, FFE2-2). On what QEMU 10's controller answered (tests/data/qemu-10/fdp, read
by the product's reader: qemu10_drive.recorded_facts; its README's support probe for logs
0Eh, 81h, C9h, features C8h, C9h, 0Eh's value and Identify with NSID 1) and, for the paths
QEMU does not take, on constructed facts: each labelled "constructed", made from QEMU's by
changing the one fact named."""

from __future__ import annotations

import copy
import struct

import pytest

from pts.config.ocp_all_ids import all_ids
from pts.stored.host_judge import ids, judge
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.tools import pci_facts
from tests.support.qemu10_drive import FDP, recorded_facts

FORM = ("FFM2-5", "FFE1S-2", "FFE1L-2", "FFE2-2")
TEL_FAIL = ("TEL-1", "TEL-10", "TEL-11", "TEL-12", "TEL-13", "TEL-16", "TEL-17", "TEL-18",
            "TEL-19", "TEL-20", "TEL-24")
# QEMU 10.0.2's answers (README), verdict by verdict, written out by hand from the values
QEMU = {
    **dict.fromkeys(TEL_FAIL, FAIL), "TEL-21": NOT_APPLICABLE, "NVMe-OPT-6": NOT_APPLICABLE,
    "NVMe-AD-22": FAIL, "NVMe-AD-27": FAIL, "NVMe-AD-31": FAIL, "NVMe-AD-32": FAIL,
    "NVMe-IO-5": NOT_CHECKED, "NVMe-IO-6": FAIL, "NVMe-IO-7": FAIL, "NVMe-IO-10": NOT_CHECKED,
    "PCI-14": NOT_CHECKED, "PCI-25": NOT_CHECKED, "PCI-26": NOT_CHECKED, "PCI-28": NOT_CHECKED,
    "NVMe-CFG-10": PASS, **dict.fromkeys(FORM, NOT_CHECKED),
    "NVMe-AD-11": FAIL, "NVMe-OPT-5": PASS,
}
ANSWERED = {"bytes": 512}
TIMEOUT = {"refused": "nvme get-log ...: exit status 1: timed out"}


@pytest.fixture(scope="module")
def qemu(tmp_path_factory) -> dict:
    return recorded_facts(tmp_path_factory.mktemp("qemu10"))


def verdicts(facts: dict) -> dict:
    return {v.req_id: v for v in judge(facts)}


def test_qemu_10s_answers(qemu):
    got = verdicts(qemu)
    assert {r: got[r].verdict for r in QEMU} == QEMU
    assert set(QEMU) <= set(ids())
    # the refusals QEMU gave are the evidence (the support probe's recorded words)
    words = (FDP / "log-81h_support.bin.stderr.txt").read_text().strip()
    assert words.endswith("(0x4002)") and words in got["NVMe-AD-22"].evidence[0].value
    assert got["NVMe-AD-31"].evidence[0].source == "nvme get-feature --feature-id=0xc9 --sel=0"
    assert got["TEL-20"].why == ("Telemetry String log C9h refused as not supported: no "
                                 "identifiers kept across a firmware update")
    assert got["TEL-12"].evidence[0].value == "0x7"                  # LPA bit 3 cleared
    assert got["NVMe-IO-6"].why == "its Deallocate bit not supported (DLFEAT bit 3 cleared)"
    assert got["NVMe-IO-6"].evidence[1].value == "0x1"
    assert got["NVMe-CFG-10"].why == "doorbells from 0xfebf1000: 4096-byte aligned"
    assert got["PCI-25"].why.startswith("the configuration space read holds no extended")
    assert got["PCI-14"].evidence[0].value == "0x0"
    assert {got[r].why for r in FORM} == {"not read in this run: run"}
    assert got["TEL-24"].line == 4288 and got["NVMe-AD-32"].line == 453


def test_telemetry_answered_constructed(qemu):
    """Constructed: logs 07h, 08h and C9h answered, LPA bit 3 set, feature C8h refused (one
    profile at most), then answered; then log 08h refused for a timeout."""
    f = copy.deepcopy(qemu)
    f["logs"].update({"07h": ANSWERED, "08h": ANSWERED, "C9h": ANSWERED})
    f["id_ctrl"]["lpa"] = 0x0F
    got = verdicts(f)
    assert {r: got[r].verdict for r in TEL_FAIL + ("TEL-21", "NVMe-OPT-6")} == {
        **dict.fromkeys(TEL_FAIL + ("TEL-21", "NVMe-OPT-6"), NOT_CHECKED),
        "TEL-16": FAIL, "TEL-17": FAIL, "TEL-18": FAIL}
    assert got["TEL-16"].why == ("Telemetry Profile feature (C8h) refused as not supported: "
                                 "two Telemetry Profiles cannot be selected")
    f["features"]["C8h"] = {"capabilities": 5}
    got = verdicts(f)
    assert {got[r].verdict for r in ("TEL-16", "TEL-17", "TEL-18")} == {NOT_CHECKED}
    assert got["TEL-17"].evidence[-1].value == 5
    f["logs"]["08h"] = TIMEOUT
    got = verdicts(f)
    assert got["TEL-21"].verdict == NOT_CHECKED and "failed otherwise" in got["TEL-21"].why
    assert got["TEL-16"].why.startswith("the telemetry log read failed otherwise")


def test_admin_logs_and_dssd_feature_constructed(qemu):
    """Constructed: logs 0Eh and 81h and feature C9h answered, then each read timed out."""
    f = copy.deepcopy(qemu)
    f["logs"].update({"0Eh": ANSWERED, "81h": ANSWERED})
    f["features"]["C9h"] = {"capabilities": 4}
    del f["dssd_features"]        # AD-31/32: a run recorded before C9h's default was read
    got = verdicts(f)
    rids = ("NVMe-AD-22", "NVMe-AD-27", "NVMe-AD-31", "NVMe-AD-32")
    assert [got[r].verdict for r in rids] == [NOT_CHECKED, PASS, NOT_CHECKED, NOT_CHECKED]
    assert "Media Ready AEN Enabled 0b" in got["NVMe-AD-32"].why
    f["logs"].update({"0Eh": TIMEOUT, "81h": TIMEOUT})
    f["features"]["C9h"] = TIMEOUT
    assert {verdicts(f)[r].verdict for r in rids} == {NOT_CHECKED}
    del f["logs"]["0Eh"]                 # a run from before the log was read
    assert verdicts(f)["NVMe-AD-27"].why == "not read in this run: 0Eh"


@pytest.mark.parametrize(("oncs", "dlfeat", "io5", "io6", "io7"), [
    (0x75D, 0x9, NOT_CHECKED, PASS, NOT_CHECKED),      # DEAC supported, reads zeroes
    (0x75D, 0xA, NOT_CHECKED, FAIL, FAIL),             # deallocated blocks read as FFh
    (0x755, 0x9, FAIL, FAIL, FAIL),                    # no Write Zeroes (ONCS bit 3)
])
def test_write_zeroes_constructed(qemu, oncs, dlfeat, io5, io6, io7):
    f = copy.deepcopy(qemu)
    f["id_ctrl"]["oncs"], f["id_ns"]["dlfeat"] = oncs, dlfeat
    got = verdicts(f)
    assert (got["NVMe-IO-5"].verdict, got["NVMe-IO-6"].verdict, got["NVMe-IO-7"].verdict) == \
        (io5, io6, io7)


def test_write_uncorrectable_and_relaxed_ordering_constructed(qemu):
    """Constructed: ONCS bit 1 set (Write Uncorrectable), Device Control bit 4 set."""
    f = copy.deepcopy(qemu)
    f["id_ctrl"]["oncs"] |= 1 << 1
    f["pci"]["devctl"] = 0x2810
    got = verdicts(f)
    assert (got["NVMe-IO-10"].verdict, got["PCI-14"].verdict) == (PASS, PASS)


def test_stray_nsid_and_timestamp(qemu):
    """QEMU 10 completes Identify Controller sent with NSID 1 (the support probe: exit status
    0, "Admin Command Identify is Success"): FAIL; its Timestamp's Synch bit is 0b (byte 6 =
    02h): PASS. Constructed: the abort NVMe-AD-11 asks for, another status, a command that
    never reached the drive; Synch 1b; no Timestamp feature; a value not printed."""
    got = verdicts(qemu)
    assert got["NVMe-AD-11"].why == ("completed successfully: not aborted with Invalid Field "
                                     "in Command")
    assert got["NVMe-AD-11"].evidence[0].value == (0, "Admin Command Identify is Success and "
                                                   "result: 0x00000000")
    assert got["NVMe-OPT-5"].why.startswith("Synch 0b (Timestamp Origin 001b) at the reading")
    assert got["NVMe-OPT-5"].evidence[0].value == qemu["features"]["0Eh"]["current"]["bytes"]
    f = copy.deepcopy(qemu)
    for said, status, verdict in (
            ("NVMe status: Invalid Field in Command: A reserved coded value or an unsupported "
             "value in a defined field(0x4002)", 1, PASS),
            ("NVMe status: Invalid Namespace or Format(0x400b)", 1, FAIL),
            ("passthru: Permission denied", 1, NOT_CHECKED)):
        f["identify_stray_nsid"].update(exit_status=status, said=said)
        assert verdicts(f)["NVMe-AD-11"].verdict == verdict, said
    f["features"]["0Eh"]["current"].update(synch=1)
    assert verdicts(f)["NVMe-OPT-5"].verdict == FAIL
    f["features"]["0Eh"]["current"] = {"error": "no data buffer"}
    assert verdicts(f)["NVMe-OPT-5"].verdict == NOT_CHECKED
    f["features"]["0Eh"] = {"refused": (FDP / "feature-c9h_capabilities.txt.stderr.txt")
                            .read_text()}
    assert verdicts(f)["NVMe-OPT-5"].verdict == NOT_APPLICABLE


def extended_space(caps: list[tuple[int, bytes]]) -> bytes:
    """QEMU's 256 bytes of configuration space followed by an extended space holding `caps`
    (ID, body) chained from 100h (constructed)."""
    space = bytearray((FDP / "pci-config.bin").read_bytes().ljust(4096, b"\0"))
    at = 0x100
    for i, (cap, body) in enumerate(caps):
        nxt = at + 0x40 if i + 1 < len(caps) else 0
        struct.pack_into("<I", space, at, cap | 1 << 16 | nxt << 20)
        space[at + 4:at + 4 + len(body)] = body
        at = nxt
    return bytes(space)


def test_extended_capabilities_constructed(qemu):
    """Constructed: a 4096-byte configuration space with AER (0001h) and the Device Serial
    Number (0003h), no ATS; then one with none (the extended space all zero)."""
    serial = 0x0011223344556677
    f = copy.deepcopy(qemu)
    f["pci"] = pci_facts.config_space(extended_space([(0x1, b""), (0x3, serial.to_bytes(
        8, "little"))]))
    assert f["pci"]["extended_capabilities"] == {"Advanced Error Reporting": 0x100,
                                                 "Device Serial Number": 0x140}
    assert f["pci"]["dsn"] == "0011223344556677"
    got = verdicts(f)
    assert [got[r].verdict for r in ("PCI-25", "PCI-26", "PCI-28")] == [PASS, PASS, FAIL]
    assert got["PCI-28"].why == "no Address Translation Services extended capability"
    assert got["PCI-25"].evidence[0].value["serial"] == "0011223344556677"
    f["pci"] = pci_facts.config_space(extended_space([]))
    assert f["pci"]["extended_capabilities"] == {}
    assert {verdicts(f)[r].verdict for r in ("PCI-25", "PCI-26", "PCI-28")} == {FAIL}


def test_doorbell_alignment_constructed(qemu):
    """Constructed: BAR0 at an address 2 KiB off a 4 KiB boundary; then a 4 KiB BAR0."""
    f = copy.deepcopy(qemu)
    f["pci_bars"][0]["start"] += 0x800
    assert verdicts(f)["NVMe-CFG-10"].why == "doorbells from 0xfebf1800: not 4096-byte aligned"
    assert verdicts(f)["NVMe-CFG-10"].verdict == FAIL
    f["pci_bars"][0].update(start=0xFEBF0000, bytes=4096)
    assert verdicts(f)["NVMe-CFG-10"].verdict == FAIL


@pytest.mark.parametrize(("form_factor", "lnkcap", "lnkcap2", "expected"), [
    (None, 0x411, 0, dict.fromkeys(FORM, NOT_CHECKED)),
    ("U.2/U.3", 0x411, 0, dict.fromkeys(FORM, NOT_APPLICABLE)),
    # QEMU's own link (2.5 GT/s x1) on an E1.S drive
    ("E1.S", 0x411, 0, {"FFM2-5": NOT_APPLICABLE, "FFE1S-2": FAIL, "FFE1L-2": NOT_APPLICABLE,
                        "FFE2-2": NOT_APPLICABLE}),
    # Gen4 x4 by its speeds vector (2.5-16 GT/s): enough for an E1.L drive, not an E2 one
    ("E1.L", 0x441, 0x1E, {"FFM2-5": NOT_APPLICABLE, "FFE1S-2": NOT_APPLICABLE,
                           "FFE1L-2": PASS, "FFE2-2": NOT_APPLICABLE}),
    ("E2", 0x441, 0x1E, {"FFM2-5": NOT_APPLICABLE, "FFE1S-2": NOT_APPLICABLE,
                         "FFE1L-2": NOT_APPLICABLE, "FFE2-2": FAIL}),
    ("E2", 0x445, 0x3E, {"FFM2-5": NOT_APPLICABLE, "FFE1S-2": NOT_APPLICABLE,
                         "FFE1L-2": NOT_APPLICABLE, "FFE2-2": PASS}),
    ("M.2", 0x424, 0, {"FFM2-5": FAIL, "FFE1S-2": NOT_APPLICABLE,      # Gen4 x2
                       "FFE1L-2": NOT_APPLICABLE, "FFE2-2": NOT_APPLICABLE}),
])
def test_form_factor_link_minimums_constructed(qemu, form_factor, lnkcap, lnkcap2, expected):
    f = copy.deepcopy(qemu)
    f["run"] = {"form_factor": form_factor}
    f["pci"].update(lnkcap=lnkcap, lnkcap2=lnkcap2)
    got = verdicts(f)
    assert {r: got[r].verdict for r in FORM} == expected
    if form_factor == "E2" and lnkcap2 == 0x1E:
        assert got["FFE2-2"].why == "E2: up to 16.0 GT/s x4, PCIe Gen5 x4 (32.0 GT/s) asked"
        assert got["FFE2-2"].evidence[1].value == ("2.5 GT/s PCIe", "1")   # sysfs, beside


def test_the_ids_no_host_can_judge_say_what_they_need():
    """v2.7's judged groups: every ID either has a host rule or a class saying what it needs
    (none left "not yet judged" but those of another helper's group in progress)."""
    by_id = {e.id: e for e in all_ids("2.7")}
    assert by_id["TTHROTTLE-5"].cls == NOT_CHECKED and "temperature chamber" in \
        by_id["TTHROTTLE-5"].reason
    assert by_id["PCI-31"].reason.startswith("needs the out-of-band management path")
    assert by_id["NVMe-CFG-22"].reason.startswith("needs a PCIe protocol analyser")
    assert by_id["SELFTST-9"].reason.startswith("a vendor process, disclosure")
    assert by_id["NVMe-CFG-6"].reason.startswith("needs a power cycle, a power loss or a reset")
    left = [e.id for e in all_ids("2.7") if e.cls == "TO BE JUDGED" and e.id not in ids()
            and e.group != "META-PERF"]
    assert left == []
