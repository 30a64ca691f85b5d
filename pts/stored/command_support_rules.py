"""More OCP requirements a command's support decides, from Identify Controller and the
controller's CAP register (v2.7 4.3 NVMe-CFG-1/11, 4.5 NVMe-AD-15/16/26/29/33, 4.6
NVMe-IO-11..14) and FDP configuration 2's reference to configuration 1 (6.1.3 FDPSRG2-1); Write
Zeroes from ONCS and Identify Namespace's DLFEAT (NVMe-IO-5..7: DLFEAT bit 3, bits 2:0 as
libnvme names them, NVME_NS_DLFEAT_WRITE_ZEROES, _READ_VALUE_MASK), Write Uncorrectable
(NVMe-IO-10).

A requirement on how a command behaves, for a drive that does not support the command:
FAIL when the text also asks for the command (Lockdown: NVMe-AD-14; Sanitize: NVMe-AD-7), NOT
APPLICABLE when the requirement is conditional on it (Write Uncorrectable, needed only by
some Device Profiles: NVMe-IO-10; a Controller Memory Buffer; cryptographic erase by Format
NVM). For a drive that supports it: NOT CHECKED, as the run does not send the command (or
PASS on the part a field decides, saying which part it did not judge). Bit positions as
libnvme @03297d8b names them (NVME_CTRL_OACS_CFLS_SHIFT 10, NVME_CTRL_SANICAP_*,
NVME_CTRL_ONCS_WRITE_UNCORRECTABLE 1 << 1, NVME_CTRL_FNA_CES_SHIFT 2; CAP.AMS, CAP.CMBS in
pts.config.pci_layout). Rules are added to pts.stored.host_rules.RULES.
"""

from __future__ import annotations

from pts.stored.host_rules import (
    FAIL,
    ID_CTRL,
    NOT_APPLICABLE,
    NOT_CHECKED,
    PASS,
    RULES,
    V27,
    Evidence,
    rule,
)

REGS = "BAR0 offset 0: Controller Capabilities (CAP)"


@rule(V27, "NVMe-CFG-1", 264)
def cfg_1(f):
    ams = f["nvme_registers"]["ams"]
    ev = (Evidence(REGS, "CAP.AMS (bits 18:17) bit 17 (Weighted Round Robin with Urgent "
                   "Priority Class)", ams),)
    if not ams & 1:
        return FAIL, "Weighted Round Robin with Urgent Priority Class not supported", ev
    return PASS, ("Weighted Round Robin with Urgent Priority Class supported; the default "
                  "arbitration (CC.AMS after reset) is not read"), ev


@rule(V27, "NVMe-CFG-11", 292)
def cfg_11(f):
    cmbs = f["nvme_registers"]["cmbs"]
    ev = (Evidence(REGS, "CAP.CMBS (bit 57)", cmbs),)
    if not cmbs:
        return NOT_APPLICABLE, "no Controller Memory Buffer (CAP.CMBS 0)", ev
    return NOT_CHECKED, "a Controller Memory Buffer: CMBMSC and TP4054's rules not read", ev


def _lockdown(what: str):
    def check(f):
        oacs = f["id_ctrl"]["oacs"]
        evs = [Evidence(ID_CTRL, "OACS (byte 256) bit 10 (Command and Feature Lockdown)",
                        f"0x{oacs:x}")]
        if "14h" in f.get("logs", {}):
            got = f["logs"]["14h"]
            evs.append(Evidence("nvme get-log --log-id=0x14 --log-len=512 --raw-binary",
                                "log 14h", f"{got['bytes']} bytes" if "bytes" in got
                                else got["refused"][-160:]))
        if not oacs >> 10 & 1:
            return FAIL, f"no Lockdown command (OACS bit 10 cleared; NVMe-AD-14): {what} " \
                "not possible", tuple(evs)
        return NOT_CHECKED, f"Lockdown supported; {what}: the run sends no Lockdown", \
            tuple(evs)
    return check


rule(V27, "NVMe-AD-15", 391)(_lockdown("locking down every supported Admin command"))
rule(V27, "NVMe-AD-16", 394)(_lockdown("locking down every supported Feature"))


def _sanicap(f: dict, where: str) -> tuple[int, tuple[Evidence, ...]]:
    v = f["id_ctrl"]["sanicap"]
    return v, (Evidence(ID_CTRL, f"SANICAP (byte 328) {where}", f"0x{v:x}"),)


@rule(V27, "NVMe-AD-26", 433)
def ad_26(f):
    v, ev = _sanicap(f, "bits 2:0 (Crypto Erase, Block Erase, Overwrite)")
    if not v & 7:
        return FAIL, "no sanitize operation supported (NVMe-AD-7): no Media Verification", ev
    return NOT_CHECKED, "sanitize supported; its Media Verification support is not decoded", ev


@rule(V27, "NVMe-AD-29", 443)
def ad_29(f):
    v, ev = _sanicap(f, "bits 2:0 (operations), bit 29 (NDI)")
    if not v & 7:
        return FAIL, "no sanitize operation supported (NVMe-AD-7)", ev
    if v >> 29 & 1:
        return FAIL, "No-Deallocate Inhibited (NDI 1): the 1b value is not supported", ev
    return PASS, ("No-Deallocate After Sanitize 0b and 1b accepted (NDI 0); the deallocation "
                  "after a sanitize is not observed (the run sanitizes nothing)"), ev


@rule(V27, "NVMe-AD-33", 458)
def ad_33(f):
    v = f["id_ctrl"]["fna"]
    ev = (Evidence(ID_CTRL, "FNA (byte 524) bit 2 (Cryptographic Erase supported)",
                   f"0x{v:x}"),)
    if not v >> 2 & 1:
        return NOT_APPLICABLE, "no cryptographic erase by Format NVM (FNA bit 2 cleared)", ev
    return NOT_CHECKED, ("cryptographic erase supported; whether a User Data Erase is one "
                         "needs a Format NVM, which the run does not send"), ev


def _write_uncorrectable(what: str):
    def check(f):
        v = f["id_ctrl"]["oncs"]
        ev = (Evidence(ID_CTRL, "ONCS (byte 520) bit 1 (Write Uncorrectable)", f"0x{v:x}"),)
        if not v >> 1 & 1:
            return NOT_APPLICABLE, ("no Write Uncorrectable command (ONCS bit 1 cleared); "
                                    "whether this model must have it: NVMe-IO-10 (Device "
                                    "Profiles)"), ev
        return NOT_CHECKED, f"Write Uncorrectable supported; {what}: the run sends none", ev
    return check


for _rid, _line, _what in (
        ("NVMe-IO-11", 644, "marking a single LBA"), ("NVMe-IO-12", 648, "the LBA counts"),
        ("NVMe-IO-13", 652, "the capacity marked"),
        ("NVMe-IO-14", 655, "Media and Data Integrity Errors not counting them")):
    rule(V27, _rid, _line)(_write_uncorrectable(_what))

# FDP configuration 1's requirements that configuration 2 takes (all but FDPSRG-4)
FDPSRG_1 = ("FDPSRG-1", "FDPSRG-2", "FDPSRG-3", "FDPSRG-6", "FDPSRG-7")


@rule(V27, "FDPSRG2-1", 9262)
def fdpsrg2_1(f):
    got = {}
    for rid in FDPSRG_1:
        try:
            got[rid] = RULES[(V27, rid)][1](f)
        except KeyError as missing:
            got[rid] = (NOT_CHECKED, f"not read in this run: {missing.args[0]}", ())
    evs = tuple(ev for _, _, e in got.values() for ev in e)
    failed = [f"{rid} ({why})" for rid, (v, why, _) in got.items() if v == FAIL]
    if failed:
        return FAIL, "configuration 1's requirements failed: " + "; ".join(failed), evs
    if all(v == NOT_APPLICABLE for v, _, _ in got.values()):
        return NOT_APPLICABLE, "configuration 1's requirements: " + got["FDPSRG-1"][1], evs
    open_ = [rid for rid, (v, _, _) in got.items() if v not in (PASS, NOT_APPLICABLE)]
    if open_:
        return NOT_CHECKED, "configuration 1's " + ", ".join(open_) + " not decided", evs
    return PASS, "configuration 1's " + ", ".join(FDPSRG_1) + " met", evs


# --- Write Zeroes (NVMe-IO-5/6/7) and Write Uncorrectable (NVMe-IO-10) ---------------------

ID_NS = "nvme id-ns -b: Identify Namespace"


def _write_zeroes(f: dict) -> tuple[list[str], tuple[Evidence, ...]]:
    """What stops Write Zeroes with DEAC 1b, FUA 0b from deallocating to zeroes: ONCS bit 3
    (Write Zeroes), DLFEAT bit 3 (its Deallocate bit supported), DLFEAT bits 2:0 (001b:
    deallocated blocks read as zeroes)."""
    oncs, dlfeat = f["id_ctrl"]["oncs"], f["id_ns"]["dlfeat"]
    evs = (Evidence(ID_CTRL, "ONCS (byte 520) bit 3 (Write Zeroes)", f"0x{oncs:x}"),
           Evidence(ID_NS, "DLFEAT (byte 33) bit 3 (Write Zeroes Deallocate), bits 2:0 (read "
                    "after deallocation)", f"0x{dlfeat:x}"))
    gaps = [why for bad, why in (
        (not oncs >> 3 & 1, "no Write Zeroes command (ONCS bit 3 cleared)"),
        (not dlfeat >> 3 & 1, "its Deallocate bit not supported (DLFEAT bit 3 cleared)"),
        (dlfeat & 7 != 1, f"deallocated blocks do not read as zeroes (DLFEAT bits 2:0 "
                          f"{dlfeat & 7:03b}b, 001b asked)")) if bad]
    return gaps, evs


@rule(V27, "NVMe-IO-5", 611)
def io_5(f):
    gaps, evs = _write_zeroes(f)
    if gaps and gaps[0].startswith("no Write Zeroes"):
        return FAIL, gaps[0] + " (NVMe-IO-4)", evs[:1]
    return NOT_CHECKED, "Write Zeroes supported; its DEAC/FUA behaviours need the command " \
        "sent and the blocks read back, which the run does not do", evs[:1]


@rule(V27, "NVMe-IO-6", 620)
def io_6(f):
    gaps, evs = _write_zeroes(f)
    if gaps:
        return FAIL, "; ".join(gaps), evs
    return PASS, ("Write Zeroes with its Deallocate bit supported, deallocated blocks read as "
                  "zeroes (DLFEAT 001b); the reads after one are not made by the run"), evs


@rule(V27, "NVMe-IO-7", 627)
def io_7(f):
    gaps, evs = _write_zeroes(f)
    if gaps:
        return FAIL, "Write Zeroes cannot deallocate the device to zeroes: " + "; ".join(gaps), \
            evs
    return NOT_CHECKED, ("deallocating the whole device by Write Zeroes within a minute "
                         "needs it done and timed (it erases the drive): not run"), evs


@rule(V27, "NVMe-IO-10", 641)
def io_10(f):
    v = f["id_ctrl"]["oncs"]
    ev = (Evidence(ID_CTRL, "ONCS (byte 520) bit 1 (Write Uncorrectable)", f"0x{v:x}"),)
    if v >> 1 & 1:
        return PASS, "Write Uncorrectable supported (whatever the model's Device Profile)", ev
    return NOT_CHECKED, ("no Write Uncorrectable (ONCS bit 1 cleared); whether this model's "
                         "Device Profile (section 13) asks for it is not known to the run"), ev
