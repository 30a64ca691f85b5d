"""More OCP requirements a command's support decides, from Identify Controller and the
controller's CAP register (v2.7 4.3 NVMe-CFG-1/11, 4.5 NVMe-AD-15/16/26/29/33, 4.6
NVMe-IO-11..14) and FDP configuration 2's reference to configuration 1 (6.1.3 FDPSRG2-1).

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
