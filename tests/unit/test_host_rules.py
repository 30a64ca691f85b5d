"""The v2.7 requirements a field of Identify, a feature or a log decides (pts.stored.host_rules,
pts.stored.fdp_rules), judged on what QEMU 10's controller really answered
(tests/data/qemu-10/fdp, its README) and, for the paths QEMU does not take, on constructed
facts: each labelled "constructed" and made from QEMU's by changing the one field named."""

from __future__ import annotations

import copy
from collections import Counter

import pytest

from pts.stored import fdp_rules
from pts.stored.host_judge import RULES, ids, judge
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.tools import nvme_facts as F
from pts.tools import pci_facts
from tests.support.helpers import DATA

FDP = DATA / "qemu-10" / "fdp"

# What the v2.7 text asks of each field, against QEMU 10.0.2's answers (README): the verdict
# of every rule on them, written out by hand from the recorded values
QEMU = {
    "PWR-1": PASS, "PWR-3": NOT_CHECKED, "PWR-4": NOT_CHECKED, "PWR-5": FAIL,
    "PWR-6": NOT_CHECKED, "PWR-7": NOT_CHECKED, "PWR-8": PASS, "PWR-9": PASS,
    "NVMe-CFG-2": PASS, "NVMe-CFG-7": FAIL, "NVMe-CFG-8": FAIL, "NVMe-CFG-14": PASS,
    "NVMe-CFG-15": PASS, "NVMe-CFG-18": FAIL, "NVMe-CFG-19": PASS,
    "NVMe-AD-1": PASS, "NVMe-AD-2": FAIL, "NVMe-AD-3": PASS, "NVMe-AD-4": PASS,
    "NVMe-AD-5": FAIL, "NVMe-AD-6": FAIL, "NVMe-AD-7": FAIL, "NVMe-AD-10": FAIL,
    "NVMe-AD-12": FAIL, "NVMe-AD-14": FAIL, "NVMe-AD-17": FAIL, "NVMe-AD-18": PASS,
    "NVMe-AD-23": PASS, "NVMe-AD-24": PASS, "NVMe-AD-28": FAIL,
    "NVMe-IO-1": PASS, "NVMe-IO-2": PASS, "NVMe-IO-3": FAIL, "NVMe-IO-4": PASS,
    "NVMe-IO-8": PASS, "NVMe-IO-9": FAIL, "NVMe-IO-15": PASS, "NVMe-IO-16": FAIL,
    "NVMe-IO-17": PASS, "NVMe-IO-18": PASS,
    "NVMe-OPT-2": PASS, "NVMe-OPT-7": PASS, "NVMe-OPT-8": FAIL, "NVMe-OPT-9": PASS,
    "NVMe-OPT-10": FAIL, "NVMe-OPT-16": PASS, "NVMe-OPT-17": PASS,
    "FDPG-2": NOT_CHECKED, "FDPSRG-1": PASS, "FDPSRG-2": FAIL, "FDPSRG-3": FAIL,
    "FDPSRG-4": FAIL, "FDPSRG2-2": FAIL, "FDPSRG-6": PASS, "FDPSRG-7": NOT_CHECKED,
    "FDPDP-1": NOT_APPLICABLE, "FDPDP-2": NOT_APPLICABLE,
    # PCI configuration space, CAP, supported features (the README's second boot)
    "PCI-1": FAIL, "PCI-4": FAIL, "PCI-6": PASS, "PCI-8": PASS, "PCI-9": PASS,
    "PCI-10": PASS, "PCI-11": NOT_APPLICABLE, "PCI-13": FAIL, "PCI-17": PASS,
    "PCI-18": PASS, "PCI-19": PASS, "PCI-20": PASS, "PCI-21": PASS, "PCI-22": PASS,
    "NVMe-CFG-5": PASS, "NVMe-CFG-9": PASS, "NVMe-CFG-12": FAIL, "NVMe-CFG-13": FAIL,
    "NVMe-CFG-16": PASS, "NVMe-CFG-17": PASS, "NVMe-CFG-20": PASS, "NVMe-CFG-21": FAIL,
    "NVMe-OPT-12": FAIL, "NVMe-OPT-13": PASS, "NVMe-OPT-18": FAIL, "NVMe-OPT-19": FAIL,
    "NVMe-OPT-21": PASS,
    # standard logs answered or refused (the README's third boot), LPA, PELS, EDSTT
    "STD-LOG-1": PASS, "STD-LOG-2": PASS, "STD-LOG-5": PASS, "STD-LOG-6": PASS,
    "STD-LOG-7": FAIL, "STD-LOG-8": FAIL, "STD-LOG-9": FAIL, "STD-LOG-13": FAIL,
    "STD-LOG-14": FAIL, "STD-LOG-15": FAIL, "STD-LOG-17": PASS, "STD-LOG-18": FAIL,
    "STD-LOG-22": FAIL, "STD-LOG-24": FAIL, "STD-LOG-27": FAIL, "SELFTST-3": FAIL,
    # namespaces, firmware update, the OCP UUID (Identify Controller)
    "NSM-4": PASS, "NSM-7": FAIL, "NSM-8": FAIL, "FWUP-3": FAIL, "FWUP-4": FAIL,
    "FWUP-6": FAIL, "FWUP-7": PASS, "UUID-1": FAIL,
    # telemetry, self-test, thermal thresholds, error recovery (the tests at the end)
    **dict.fromkeys(("TEL-4", "TEL-5", "TEL-6", "TEL-7", "TEL-8", "TEL-14", "TEL-15", "TEL-22",
                     "TEL-23", "TEL-25", "SELFTST-1", "SELFTST-2", "SELFTST-4", "SELFTST-5",
                     "SELFTST-6", "SELFTST-7", "SELFTST-10", "SELFTST-11", "TTHROTTLE-9",
                     "TTHROTTLE-10"),
                    FAIL),
    "TEL-26": NOT_APPLICABLE,
    **{f"EREC-{n}": NOT_CHECKED for n in range(1, 18)},     # C1h: no recorded answer
    # Lockdown, Sanitize, Format NVM, Write Uncorrectable, CAP.AMS/CMBS, FDP configuration 2
    "NVMe-CFG-1": FAIL, "NVMe-CFG-11": NOT_APPLICABLE, "NVMe-AD-15": FAIL, "NVMe-AD-16": FAIL,
    "NVMe-AD-26": FAIL, "NVMe-AD-29": FAIL, "NVMe-AD-33": NOT_APPLICABLE, "FDPSRG2-1": FAIL,
    **dict.fromkeys(("NVMe-IO-11", "NVMe-IO-12", "NVMe-IO-13", "NVMe-IO-14"), NOT_APPLICABLE),
    "PCI-2": FAIL, "PCI-35": PASS, "PCI-42": NOT_APPLICABLE,
}
# where each log's answer was recorded (the first boot's files, then the third's)
LOGS = {"02h": "log-02h.bin", "05h": "log-05h_0.bin", "06h": "log-06h.bin",
        "07h": "log-07h.bin", "09h": "log-09h_0.bin", "12h": "log-12h_0.bin"} | {
    f"{i}h": f"log-{i.lower()}h_support.bin" for i in ("01", "03", "08", "0D", "13", "14",
                                                       "19", "25")}


def log_answers() -> dict:
    """Each log's first bytes' size, or the drive's refusal as nvme-cli printed it."""
    out = {}
    for log, name in LOGS.items():
        path = FDP / name
        out[log] = ({"bytes": min(512, path.stat().st_size)} if path.exists() else
                    {"refused": (FDP / f"{name}.stderr.txt").read_text()})
    return out


def qemu_facts() -> dict:
    """The facts as a run reads them (nvme_facts' decoders on the recorded bytes)."""
    def raw(name):
        return (FDP / name).read_bytes()
    return {"id_ctrl": F.id_ctrl(raw("nvme-id-ctrl.bin")),
            "id_ns": F.id_ns(raw("nvme-id-ns.bin")),
            "effects": F.effects(raw("log-05h_0.bin")),
            "feature_02h": F.feature_value((FDP / "feature-02h_current.txt").read_text()),
            "feature_02h_capabilities": F.feature_value(
                (FDP / "feature-02h_capabilities.txt").read_text()),
            "fdp_configs": F.fdp_configs(raw("log-20h_0.bin")),
            "fdp_host_events": F.fdp_events(
                raw("log-23h-lsp1-host-events_after-1MiB-phndl1-update.bin")),
            "pci": pci_facts.config_space(raw("pci-config.bin")),
            "pci_bars": pci_facts.bar_sizes((FDP / "pci-resource.txt").read_text()),
            "nvme_registers": pci_facts.registers(raw("nvme-regs-bar0.bin")),
            "features": {"0Eh": {"capabilities": F.feature_value(
                (FDP / "feature-0eh_capabilities.txt").read_text())}} | {
                fid: {"refused": (FDP / f"feature-{fid.lower()}_capabilities.txt.stderr.txt")
                      .read_text()} for fid in ("23h", "24h", "25h")},
            "logs": log_answers()}


def verdicts(facts: dict) -> dict:
    return {v.req_id: v for v in judge(facts)}


def test_every_rule_on_qemu_10s_answers():
    got = verdicts(qemu_facts())
    # the rules of this file's subjects (other modules' rules: their own tests)
    assert {k: v.verdict for k, v in got.items() if k in QEMU} == QEMU
    assert Counter(QEMU.values()) == {PASS: 52, FAIL: 75, NOT_CHECKED: 23, NOT_APPLICABLE: 11}
    assert all(v.why and v.line > 0 and v.version == "2.7" for v in got.values())
    # evidence names what was read and what it held
    assert got["PWR-1"].evidence[0].value == [(0, 25.0, "operational")]
    assert got["NVMe-AD-6"].evidence[0].value == "0x12a"
    # a bit field in hex, a count as read (host_rules.id_ctrl_field)
    assert [got[k].evidence[-1].value for k in ("PWR-9", "NVMe-CFG-2", "STD-LOG-17")] == \
        ["0x88010", 7, 1]
    assert [(got[k].evidence[0].where, got[k].evidence[0].value)
            for k in ("FDPSRG-1", "TEL-12")] == [
        ("CTRATT (byte 96) bit 19 (FDPS)", "0x88010"),
        ("LPA (byte 261) bit 3 (Telemetry Log Notices: the Telemetry Log Changed event)", "0x7")]
    assert got["FDPSRG-2"].why == "at most 4 reclaim unit handles"
    assert got["FDPG-2"].evidence[1].value == [
        ("Reclaim Unit Not Fully Written", ("PIV", "NSIDV", "LV"))]
    assert got["NVMe-IO-16"].as_record()["evidence"][0]["where"] == "SGLS (byte 536)"


def test_keys_are_version_and_id_and_the_lines_are_the_ids():
    # v2.0 keys: FB-PERF-7, and the power rules (pts.stored.power_rules: tests/power)
    assert all(ver == "2.7" or rid in ("FB-PERF-7",) + ("PCM-1", "PWR-3", "SMART-31")
               for ver, rid in RULES)
    assert set(QEMU) <= set(ids())
    assert RULES[("2.7", "PWR-8")][0] == 9925 and RULES[("2.7", "FDPSRG-1")][0] == 9248
    assert [(v.version, v.req_id) for v in judge(qemu_facts(), version="2.0")] == [
        ("2.0", r) for r in ("FB-PERF-7",) + ("PCM-1", "PWR-3", "SMART-31")] \
        and "FB-PERF-7" not in ids("2.7")


def constructed(**changes) -> dict:
    """QEMU's facts with the named Identify Controller fields changed (constructed)."""
    f = copy.deepcopy(qemu_facts())
    f["id_ctrl"].update(changes)
    return f


def psd(state: int, mp: int, flags: int = 0) -> dict:
    return {"state": state, "mp": mp, "flags": flags, "watts": round(F.power_watts(
        {"mp": mp, "flags": flags}), 4), "non_operational": bool(flags & 2)}


def test_power_states_constructed():
    """Constructed: three states, two with 12.00 W, one non-operational state; the rated
    envelope given as 20 W."""
    f = constructed(psds=[psd(0, 2500), psd(1, 1200), psd(2, 1200, flags=2)])
    f["rated_watts"] = 20
    got = verdicts(f)
    assert (got["PWR-8"].verdict, got["PWR-8"].why) == (
        FAIL, "states with the same Maximum Power: [[1, 2]]")
    assert (got["PWR-4"].verdict, got["PWR-4"].why) == (
        FAIL, "state(s) above the rated 20 W: [(0, 25.0)]")
    f["rated_watts"], f["feature_02h"] = 25, 7
    got = verdicts(f)
    assert got["PWR-4"].verdict == PASS
    assert (got["PWR-1"].verdict, got["PWR-1"].why) == (
        FAIL, "the state in use, 7, is not in the table (3)")
    f = constructed(psds=[psd(0, 2500), psd(1, 1200, flags=1)])   # 0.12 W: MXPS scale
    assert verdicts(f)["PWR-8"].verdict == PASS
    assert verdicts(constructed(ctratt=0x2))["PWR-9"].verdict == FAIL
    f = qemu_facts()
    f["feature_02h_capabilities"] = 0x5                        # saveable, changeable
    assert verdicts(f)["PWR-5"].verdict == PASS


@pytest.mark.parametrize(("rid", "changes", "verdict"), [
    ("NVMe-CFG-2", {"mdts": 5}, FAIL),                 # 128 KiB
    ("NVMe-CFG-2", {"mdts": 0}, PASS),                 # no limit
    ("NVMe-CFG-14", {"sqes": 0x55}, FAIL),
    ("NVMe-CFG-18", {"elpe": 255}, PASS),
    ("NVMe-AD-6", {"oacs": 0x12A | 1 << 6}, PASS),
    ("NVMe-AD-5", {"fna": 0x4}, PASS),
    ("NVMe-AD-17", {"sanicap": 1 << 30 | 7}, PASS),
    ("NVMe-AD-18", {"sanicap": 1 << 29}, FAIL),
    ("NVMe-AD-23", {"fna": 0x1}, FAIL),
    ("NVMe-AD-24", {"aerl": 2}, FAIL),
    ("NVMe-IO-3", {"vwc": 6}, PASS),
    ("NVMe-IO-17", {"sgls": 0x80003}, FAIL),
    ("NVMe-OPT-17", {"awupf": 0}, PASS),
])
def test_identify_fields_constructed(rid, changes, verdict):
    """Constructed: QEMU's Identify Controller with the one field changed."""
    assert verdicts(constructed(**changes))[rid].verdict == verdict


def test_namespace_and_effects_constructed():
    f = qemu_facts()
    f["id_ns"].update(nsfeat=0x30, fpi=0x80, npwg=7, eui64="0011223344556677")
    f["effects"]["admin"].remove(0x0C)
    got = verdicts(f)
    assert [got[r].verdict for r in ("NVMe-AD-28", "NVMe-AD-2", "NVMe-OPT-17", "NVMe-CFG-7",
                                     "NVMe-AD-1")] == [PASS, PASS, FAIL, PASS, FAIL]
    assert got["NVMe-AD-1"].why == "not supported: 0Ch Asynchronous Event Request"
    del f["effects"]
    assert verdicts(f)["NVMe-IO-1"].verdict == NOT_CHECKED          # log 05h not read
    assert verdicts(f)["NVMe-IO-1"].why == "not read in this run: effects"


def test_fdp_configurations_constructed():
    """Constructed: FDP not claimed; a configuration of 8 persistently isolated handles; one
    of 2 reclaim groups (die placement) with 8 handles."""
    got = verdicts(constructed(ctratt=0x8010))
    fdp_ids = [r for r in QEMU if r.startswith("FDP")]
    assert {got[r].verdict for r in fdp_ids} == {NOT_APPLICABLE}
    f = qemu_facts()
    f["fdp_configs"][0].update(nruh=8, ruhts=[2] * 8)
    f["id_ctrl"]["vwc"] = 0
    got = verdicts(f)
    assert [got[r].verdict for r in ("FDPSRG-2", "FDPSRG-3", "FDPSRG-4", "FDPSRG2-2")] == [
        PASS, PASS, NOT_APPLICABLE, PASS]
    f["fdp_configs"][0].update(nrg=2)
    got = verdicts(f)
    assert [got[r].verdict for r in ("FDPSRG-1", "FDPDP-2", "FDPDP-1")] == [
        NOT_APPLICABLE, PASS, NOT_CHECKED]
    f["fdp_configs"][0]["valid"] = False
    assert verdicts(f)["FDPDP-2"].verdict == NOT_APPLICABLE


def test_the_fdp_waf_of_each_window():
    readings = [(m, F.fdp_stats((FDP / f"log-22h_{m}.bin").read_bytes())) for m in (
        "0", "after-64MiB-phndl0", "after-16MiB-plain")]
    windows = fdp_rules.waf_windows(readings)
    assert [(w["window"], w["waf"]) for w in windows] == [
        ("0 -> after-64MiB-phndl0", 1.03125),
        ("after-64MiB-phndl0 -> after-16MiB-plain", 16785408 / 16777216)]
    assert windows[0]["hbmw"] == (0, 67108864) and windows[0]["mbmw"] == (0, 69206016)


def test_pci_registers_and_features_constructed():
    """Constructed: QEMU's facts with MPS 512, Completion Timeout ranges A-C and its disable,
    speeds 2.5, 5 and 16 GT/s (8 missing), an I/O BAR, a 32-bit BAR, CAP.CPS 11b, a saveable
    Timestamp, feature 25h answering, 23h answering."""
    f = copy.deepcopy(qemu_facts())
    f["pci"].update(devcap=0x10008022, devcap2=0x1F, lnkcap2=0b10110)
    f["pci"]["bars"][2] = 0x1
    f["pci_bars"][2].update(bytes=256, io=True, mem=False)
    f["nvme_registers"]["cps"] = 3
    f["features"].update({"0Eh": {"capabilities": 0x5}, "25h": {"capabilities": 0},
                          "23h": {"capabilities": 0}})
    got = verdicts(f)
    assert [got[r].verdict for r in ("PCI-1", "PCI-4", "PCI-13", "PCI-17", "PCI-20",
                                     "NVMe-CFG-12", "NVMe-OPT-12", "NVMe-OPT-13",
                                     "NVMe-OPT-19", "NVMe-OPT-21")] == [
        PASS, PASS, PASS, FAIL, FAIL, PASS, PASS, FAIL, PASS, FAIL]
    assert got["PCI-17"].why == "speeds [2.5, 5.0, 16.0] GT/s, missing [8.0]"
    f["pci"]["bars"][0] = 0xFEBF0000                   # BAR0 32-bit
    assert verdicts(f)["PCI-21"].verdict == FAIL
    f["nvme_registers"]["cmbs"] = 1
    assert verdicts(f)["PCI-22"].verdict == NOT_APPLICABLE
    del f["nvme_registers"]                            # the kernel would not map BAR0
    got = verdicts(f)
    assert [got[r].verdict for r in ("NVMe-CFG-5", "PCI-8")] == [NOT_CHECKED, NOT_CHECKED]
    f["features"]["24h"] = {"refused": "nvme get-feature ...: exit status 1: timed out"}
    assert verdicts(f)["NVMe-OPT-18"].verdict == NOT_CHECKED


def test_logs_and_self_test_constructed():
    """Constructed: log 07h answered, 13h refused for another reason (a timeout), two
    Endurance Groups, LPA bit 0 cleared, PELS 80 (5 MiB), self-test with EDSTT 31."""
    f = copy.deepcopy(qemu_facts())
    f["logs"]["07h"] = {"bytes": 512}
    f["logs"]["12h"] = {"bytes": 512}
    f["logs"]["13h"] = {"refused": "nvme get-log ...: exit status 1: timed out"}
    f["id_ctrl"].update(endgidmax=2, lpa=6, pels=80, oacs=0x12A | 1 << 4, edstt=31)
    got = verdicts(f)
    assert [got[r].verdict for r in ("STD-LOG-7", "STD-LOG-27", "STD-LOG-17", "STD-LOG-18",
                                     "STD-LOG-22", "SELFTST-3")] == [
        PASS, NOT_CHECKED, FAIL, PASS, PASS, FAIL]
    f["id_ctrl"]["edstt"] = 30
    assert verdicts(f)["SELFTST-3"].verdict == PASS
    assert got["STD-LOG-9"].why == "Persistent Event: log 0Dh refused as not supported"


def test_namespaces_firmware_and_uuid_constructed():
    """Constructed: 8 namespaces, capacities reported, no extended LBA formats, 3 slots with
    slot 1 read-only and activation without reset, firmware download, MTFA 11, a UUID List;
    and a namespace with a non-zero NGUID and UIDREUSE set."""
    f = constructed(nn=8, tnvmcap=1 << 30, unvmcap=0, ctratt=0x80210, frmw=0x17,
                    oacs=0x12E, mtfa=11)
    f["id_ns"].update(nguid="01" * 16, nsfeat=0x3C)
    got = verdicts(f)
    assert [got[r].verdict for r in ("NSM-4", "NSM-7", "NSM-8", "FWUP-3", "FWUP-4", "FWUP-6",
                                     "FWUP-7", "UUID-1", "NVMe-CFG-8")] == [
        FAIL, PASS, PASS, PASS, PASS, PASS, FAIL, NOT_CHECKED, PASS]
    assert got["FWUP-6"].why == "3 slot(s), 2 read/write"
    f["id_ns"]["nsfeat"] = 0x34
    assert verdicts(f)["NVMe-CFG-8"].why == "UIDREUSE (NSFEAT bit 3) cleared"
    assert verdicts(constructed(ctratt=0x88010 | 1 << 10))["NVMe-OPT-12"].why == \
        "CAP.CPS 00b, CTRATT bit 10 (MDS) 1"
    f = constructed(ctratt=0x88010 | 1 << 16)           # MEM (bit 16) is not MDS
    f["nvme_registers"]["cps"] = 3
    assert verdicts(f)["NVMe-OPT-12"].verdict == PASS
    f["id_ctrl"]["ctratt"] |= 1 << 10
    assert verdicts(f)["NVMe-OPT-12"].verdict == FAIL


def test_the_same_verdicts_from_the_ledger_record():
    """The verdict code reads the facts back from the run's ledger (JSON): the record of
    nvme_facts.Facts round-trips and judges the same, evidence included."""
    import json
    facts = F.Facts(values=qemu_facts())
    stored = json.loads(json.dumps(facts.as_record("before"), default=F.json_safe))
    again = {v.req_id: json.loads(json.dumps(v.as_record(), default=F.json_safe))
             for v in judge(stored["facts"])}
    first = {v.req_id: json.loads(json.dumps(v.as_record(), default=F.json_safe))
             for v in judge(qemu_facts())}
    assert again == first and len(again) == len(ids())


# --- telemetry, self-test, thermal thresholds, error recovery (pts.stored.telemetry_rules,
# self_test_rules, thermal_rules, error_recovery_rules)
TEL_LOGS = ("TEL-4", "TEL-5", "TEL-6", "TEL-7", "TEL-8", "TEL-14", "TEL-15", "TEL-22",
            "TEL-23", "TEL-25")
SELFTST = ("SELFTST-1", "SELFTST-2", "SELFTST-4", "SELFTST-5", "SELFTST-6", "SELFTST-7",
           "SELFTST-10", "SELFTST-11")
REFUSED = ("NVMe status: Invalid Field in Command: A reserved coded value or an unsupported "
           "value in a defined field(0x4002)")


def test_qemu_10s_refusals_are_the_evidence():
    """QEMU 10 refuses logs 06h, 07h, 08h (recorded) and clears OACS bit 4 and LPA bit 3:
    the refusal is the evidence of each FAIL; TEL-26's Data Area 4 is not applicable."""
    got = verdicts(qemu_facts())
    assert [got[r].verdict for r in TEL_LOGS + SELFTST] == [FAIL] * 18
    assert got["TEL-6"].evidence[0].where == "log 07h"
    assert "Invalid Field in Command" in got["TEL-6"].evidence[0].value
    assert got["TEL-7"].why.startswith("Telemetry Controller-Initiated log 08h refused")
    assert got["TEL-26"].verdict == NOT_APPLICABLE and got["TEL-26"].evidence[0].value == "0x7"
    assert got["SELFTST-2"].evidence[0].value == "0x12a"          # OACS bit 4 cleared
    assert "Invalid Field in Command" in got["SELFTST-2"].evidence[1].value   # log 06h
    assert got["TTHROTTLE-9"].why == "WCTEMP 0157h (70 °C; 015Eh, 77 °C asked)"
    assert got["TTHROTTLE-10"].why == "CCTEMP 0175h (100 °C; 0166h, 85 °C asked)"
    assert {got[f"EREC-{n}"].why for n in range(1, 18)} == {"not read in this run: C1h"}
    assert got["EREC-12"].line == 2155 and got["TEL-6"].line == 4239


def test_telemetry_answered_constructed():
    """Constructed: logs 07h and 08h answered, LPA bit 3 set; then bit 6 (Data Area 4) set;
    then 08h refused for a timeout."""
    f = copy.deepcopy(qemu_facts())
    f["logs"].update({"07h": {"bytes": 512}, "08h": {"bytes": 512}})
    f["id_ctrl"]["lpa"] = 0x0F
    got = verdicts(f)
    assert [got[r].verdict for r in TEL_LOGS + ("TEL-26",)] == [NOT_CHECKED] * 11
    assert got["TEL-6"].why == ("log 07h answered; Data Area 1 Last Block (0040h as the "
                                "factory default): not decoded by the run")
    f["id_ctrl"]["lpa"] = 0x4F
    assert verdicts(f)["TEL-26"].verdict == PASS
    f["logs"]["08h"] = {"refused": "nvme get-log ...: exit status 1: timed out"}
    got = verdicts(f)
    assert (got["TEL-6"].verdict, got["TEL-7"].verdict) == (NOT_CHECKED, NOT_CHECKED)
    assert got["TEL-7"].why.startswith("the telemetry log read failed otherwise")


def test_self_test_and_thresholds_constructed():
    """Constructed: OACS bit 4 set (self-test supported, none run: NOT CHECKED); WCTEMP 015Eh
    and CCTEMP 0166h as asked (PASS), one kelvin off (FAIL)."""
    f = copy.deepcopy(qemu_facts())
    f["id_ctrl"].update(oacs=0x12A | 1 << 4, wctemp=0x15E, cctemp=0x166)
    got = verdicts(f)
    assert [got[r].verdict for r in SELFTST] == [NOT_CHECKED] * 8
    assert "needs a self-test run" in got["SELFTST-11"].why
    assert (got["TTHROTTLE-9"].verdict, got["TTHROTTLE-10"].verdict) == (PASS, PASS)
    f["id_ctrl"].update(wctemp=0x15F, cctemp=0x165)
    got = verdicts(f)
    assert (got["TTHROTTLE-9"].verdict, got["TTHROTTLE-10"].verdict) == (FAIL, FAIL)


def test_error_recovery_log_constructed():
    """Constructed: log C1h refused as QEMU 10 refuses it (its README's probe: Invalid Field in
    Command, 0x4002), then answered, then refused for a timeout."""
    f = copy.deepcopy(qemu_facts())
    f["logs"]["C1h"] = {"refused": REFUSED}
    got = verdicts(f)
    assert [got[f"EREC-{n}"].verdict for n in range(1, 18)] == [FAIL] * 17
    assert got["EREC-1"].why == ("Error Recovery log C1h refused as not supported: no Error "
                                 "Reset Wait Time (log C1h bytes 1:0)")
    f["logs"]["C1h"] = {"bytes": 512}
    assert {verdicts(f)[f"EREC-{n}"].verdict for n in range(1, 18)} == {NOT_CHECKED}
    f["logs"]["C1h"] = {"refused": "nvme get-log ...: exit status 1: timed out"}
    assert verdicts(f)["EREC-16"].why.startswith("log C1h's read failed otherwise")


def test_command_support_constructed():
    """Constructed: CAP.AMS bit 17 and CMBS set; Lockdown (OACS bit 10); sanitize with NDI 0,
    then NDI 1; cryptographic erase by Format NVM (FNA bit 2); Write Uncorrectable (ONCS bit
    1); FDP configuration 1's FDPSRG-2/3 met (8 handles, no volatile write cache)."""
    f = constructed(oacs=0x12A | 1 << 10, sanicap=0x3, fna=0x4, oncs=0x75F, vwc=0)
    f["nvme_registers"].update(ams=1, cmbs=1)
    f["fdp_configs"][0].update(nruh=8, ruhts=[2] * 8)
    got = verdicts(f)
    assert {r: got[r].verdict for r in ("NVMe-CFG-1", "NVMe-CFG-11", "NVMe-AD-15", "NVMe-AD-16",
                                        "NVMe-AD-26", "NVMe-AD-29", "NVMe-AD-33", "NVMe-IO-11",
                                        "NVMe-IO-14", "FDPSRG2-1")} == {
        "NVMe-CFG-1": PASS, "NVMe-CFG-11": NOT_CHECKED, "NVMe-AD-15": NOT_CHECKED,
        "NVMe-AD-16": NOT_CHECKED, "NVMe-AD-26": NOT_CHECKED, "NVMe-AD-29": PASS,
        "NVMe-AD-33": NOT_CHECKED, "NVMe-IO-11": NOT_CHECKED, "NVMe-IO-14": NOT_CHECKED,
        "FDPSRG2-1": NOT_CHECKED}
    assert got["FDPSRG2-1"].why == "configuration 1's FDPSRG-7 not decided"
    f["id_ctrl"]["sanicap"] |= 1 << 29
    assert verdicts(f)["NVMe-AD-29"].why.startswith("No-Deallocate Inhibited")


def test_pci_capabilities_constructed():
    """Constructed: Completion Timeout Ranges A and B (programmable), D1 supported, a Gen6
    link (Supported Link Speeds Vector bit 6), then a Gen5 one."""
    f = copy.deepcopy(qemu_facts())
    f["pci"].update(devcap2=0x3, pmc=0x3 | 1 << 9, lnkcap2=0x7E)
    got = verdicts(f)
    assert [got[r].verdict for r in ("PCI-2", "PCI-35", "PCI-42")] == [PASS, FAIL, NOT_CHECKED]
    assert got["PCI-35"].why == "D1 supported"
    f["pci"]["lnkcap2"] = 0x3E
    assert verdicts(f)["PCI-42"].why == "not a PCIe Gen6 device (at most 32.0 GT/s)"
    assert verdicts(qemu_facts())["PCI-42"].why == "not a PCIe Gen6 device (at most 2.5 GT/s)"
