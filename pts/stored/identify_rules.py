"""More OCP requirements a field of Identify Controller decides: namespaces (v2.7 4.4.1
NSM-*), firmware update (4.12 FWUP-*) and the OCP UUID (4.4 UUID-1). Rules are added to
pts.stored.host_rules.RULES (keyed by (version, ID)); pts.stored.host_judge applies them. Bit
positions: the NVMe Base Specification 2.0's Identify Controller, as libnvme @03297d8b names
them (NVME_CTRL_CTRATT_ELBAS 1 << 15, _UUID_LIST 1 << 9; NVME_CTRL_FRMW_*; NVME_CTRL_OACS_FW).
"""

from __future__ import annotations

from pts.stored.host_rules import FAIL, ID_CTRL, NOT_CHECKED, PASS, V27, Evidence, rule


def _field(f: dict, name: str, where: str) -> tuple[int, tuple[Evidence, ...]]:
    v = f["id_ctrl"][name]
    return v, (Evidence(ID_CTRL, where, v if v < 1 << 16 else f"0x{v:x}"),)


@rule(V27, "NSM-4", 475)
def nsm_4(f):
    nn, ev = _field(f, "nn", "NN (bytes 519:516)")
    return (PASS if nn >= 16 else FAIL), f"{nn} namespaces (16 asked; more by profile: NSM-5)", ev


@rule(V27, "NSM-7", 492)
def nsm_7(f):
    c = f["id_ctrl"]
    ev = (Evidence(ID_CTRL, "TNVMCAP (bytes 295:280), UNVMCAP (bytes 311:296)",
                   (c["tnvmcap"], c["unvmcap"])),)
    if c["tnvmcap"] == 0:
        return FAIL, "TNVMCAP is 0: the capacities are not reported", ev
    return PASS, f"TNVMCAP {c['tnvmcap']} bytes, UNVMCAP {c['unvmcap']} bytes", ev


@rule(V27, "NSM-8", 495)
def nsm_8(f):
    v, ev = _field(f, "ctratt", "CTRATT (byte 96) bit 15 (ELBAS)")
    on = v >> 15 & 1
    return (FAIL if on else PASS), f"Extended LBA Formats {'' if on else 'not '}supported", ev


@rule(V27, "FWUP-3", 7101)
def fwup_3(f):
    v, ev = _field(f, "frmw", "FRMW (byte 260) bit 4 (activation without reset)")
    return (PASS if v >> 4 & 1 else FAIL), (
        "Commit Action 011b (activate without reset) " + ("supported" if v >> 4 & 1 else
                                                          "not supported") +
        "; the other actions: NOT CHECKED (a firmware image and a commit)"), ev


@rule(V27, "FWUP-4", 7106)
def fwup_4(f):
    v, ev = _field(f, "oacs", "OACS (byte 256) bit 2 (Firmware Download and Commit)")
    return (PASS if v >> 2 & 1 else FAIL), ("Firmware Image Download " + (
        "supported" if v >> 2 & 1 else "not supported") + "; its performance impact: not "
        "measured"), ev


@rule(V27, "FWUP-6", 7110)
def fwup_6(f):
    v, ev = _field(f, "frmw", "FRMW (byte 260) bits 3:1 (slots), bit 0 (slot 1 read-only)")
    slots = v >> 1 & 7
    rw = slots - (v & 1)
    return (PASS if rw >= 2 else FAIL), f"{slots} slot(s), {rw} read/write", ev


@rule(V27, "FWUP-7", 7113)
def fwup_7(f):
    v, ev = _field(f, "mtfa", "MTFA (bytes 271:270), 100 ms units")
    return (PASS if v <= 0xA else FAIL), f"MTFA {v} ({v * 100} ms; 1 s at most)", ev


@rule(V27, "UUID-1", 530)
def uuid_1(f):
    v, ev = _field(f, "ctratt", "CTRATT (byte 96) bit 9 (UUID List)")
    if not v >> 9 & 1:
        return FAIL, "no UUID List (CTRATT bit 9 cleared): the OCP UUID is not listed", ev
    return NOT_CHECKED, "the UUID List (Identify CNS 17h) is not read by the run", ev
