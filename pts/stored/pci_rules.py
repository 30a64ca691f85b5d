"""The OCP requirements the PCI configuration space, the NVMe controller registers and the
supported features decide (v2.7 section 5 PCI-*, 4.3 NVMe-CFG-*, 4.6 NVMe-OPT-*), judged from
the facts of pts.tools.pci_facts and nvme_facts.read_features. Rules are added to
pts.stored.host_rules.RULES (keyed by (version, ID)); host_rules.judge applies them. A fact not
read (BAR0 the kernel would not map: `nvme_registers` refused) makes the rule NOT CHECKED.
"""

from __future__ import annotations

from pts.config.pci_layout import LINK_SPEEDS, MPS_BYTES
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS, V27, Evidence, rule
from pts.tools.ocp_log_read import REFUSALS

CONFIG = "sysfs config: PCI configuration space"
REGS = "BAR0 bytes 0-15 (mmap of sysfs resource0): NVMe registers"
FEATURES = "nvme get-feature --sel=3"


def _cap_field(f: dict, name: str, what: str) -> tuple[int, Evidence]:
    pci = f["pci"]
    value = pci[name]
    return value, Evidence(CONFIG, what, f"0x{value:x}")


def _verdict(ok: bool, why: str, *ev: Evidence):
    return (PASS if ok else FAIL), why, ev


@rule(V27, "PCI-1", 9033)
def pci_1(f):
    v, ev = _cap_field(f, "devcap", "PCI Express Device Capabilities bits 2:0 (MPS supported)")
    size = MPS_BYTES.get(v & 7, 0)
    return _verdict(size >= 512, f"Max Payload Size Supported {size} bytes (512 asked; that "
                    "the largest is used and changes apply at once: not checked)", ev)


@rule(V27, "PCI-4", 9042)
def pci_4(f):
    v, ev = _cap_field(f, "devcap2", "Device Capabilities 2 bit 4 (Completion Timeout "
                       "Disable Supported)")
    return _verdict(bool(v >> 4 & 1), f"Completion Timeout Disable {'' if v >> 4 & 1 else 'not '}"
                    "supported", ev)


@rule(V27, "PCI-13", 9057)
def pci_13(f):
    v, ev = _cap_field(f, "devcap2", "Device Capabilities 2 bits 3:0 (Completion Timeout "
                       "Ranges Supported)")
    return _verdict(v & 7 == 7, f"ranges {v & 0xF:04b}b (A, B and C: bits 0-2)", ev)


@rule(V27, "PCI-6", 9048)
def pci_6(f):
    v, ev = _cap_field(f, "devcap", "Device Capabilities bit 28 (Function Level Reset)")
    return _verdict(bool(v >> 28 & 1), f"FLR {'' if v >> 28 & 1 else 'not '}supported", ev)


@rule(V27, "PCI-9", 9051)
def pci_9(f):
    caps = f["pci"]["capabilities"]
    return _verdict("MSI-X" in caps, f"capabilities: {sorted(caps)}",
                    Evidence(CONFIG, "capability list from byte 34h", caps))


@rule(V27, "PCI-10", 9052)
def pci_10(f):
    if "MSI-X" not in f["pci"]["capabilities"]:
        return FAIL, "no MSI-X capability", ()
    v, ev = _cap_field(f, "msix_table", "MSI-X Table Offset/BIR bits 2:0")
    return _verdict(v & 7 == 0, f"MSI-X table in BAR{v & 7}", ev)


@rule(V27, "PCI-11", 9053)
def pci_11(f):
    caps = f["pci"]["capabilities"]
    ev = Evidence(CONFIG, "capability list from byte 34h", caps)
    if "MSI" not in caps:
        return NOT_APPLICABLE, "no MSI capability (it is optional: 'if implemented')", (ev,)
    return _verdict(caps["MSI"] % 4 == 0, f"MSI capability at {caps['MSI']:#x}", ev)


@rule(V27, "PCI-17", 9068)
def pci_17(f):
    vector, ev = _cap_field(f, "lnkcap2", "Link Capabilities 2 bits 7:1 (Supported Link "
                            "Speeds Vector)")
    top, ev2 = _cap_field(f, "lnkcap", "Link Capabilities bits 3:0 (Max Link Speed)")
    speeds = [LINK_SPEEDS[b] for b in LINK_SPEEDS if vector >> b & 1]
    if not vector:                      # a function without the vector: its top speed only
        return PASS, f"no speeds vector; Max Link Speed {LINK_SPEEDS.get(top & 0xF)} GT/s " \
            "(one speed)", (ev, ev2)
    bits = [b for b in LINK_SPEEDS if vector >> b & 1]
    gaps = [LINK_SPEEDS[b] for b in range(1, max(bits)) if b not in bits]
    return _verdict(not gaps, f"speeds {speeds} GT/s" + (f", missing {gaps}" if gaps else ""),
                    ev, ev2)


@rule(V27, "PCI-18", 9073)
def pci_18(f):
    v, ev = _cap_field(f, "pmc", "Power Management Capabilities bit 5 (DSI)")
    return _verdict(not v >> 5 & 1, f"DSI {v >> 5 & 1}", ev)


@rule(V27, "PCI-19", 9075)
def pci_19(f):
    v, ev = _cap_field(f, "pmcsr", "Power Management Control/Status bit 3 (No_Soft_Reset)")
    return _verdict(bool(v >> 3 & 1), f"No_Soft_Reset {v >> 3 & 1}", ev)


def _bars(f) -> Evidence:
    return Evidence("sysfs resource: BAR sizes and flags", "BAR0-BAR5", f["pci_bars"])


@rule(V27, "PCI-20", 9077)
def pci_20(f):
    io = [b["bar"] for b in f["pci_bars"] if b["io"]]
    return _verdict(not io, f"I/O space BARs: {io or 'none'}", _bars(f))


@rule(V27, "PCI-21", 9079)
def pci_21(f):
    bars = f["pci"]["bars"]
    mem = [b["bar"] for b in f["pci_bars"] if b["mem"]]
    narrow = [i for i in mem if bars[i] >> 1 & 3 != 2]
    return _verdict(not narrow, f"memory BARs {mem}, not 64-bit: {narrow or 'none'}",
                    Evidence(CONFIG, "BARs (bytes 10h-27h) bits 2:1", [hex(b) for b in bars]))


def _no_cmb_pmr(f) -> tuple[bool | None, Evidence | None]:
    regs = f.get("nvme_registers")
    if regs is None:
        return None, None
    return not (regs["cmbs"] or regs["pmrs"]), Evidence(REGS, "CAP bits 57 (CMBS), 56 (PMRS)",
                                                        regs["cap"])


@rule(V27, "PCI-8", 9050)
def pci_8(f):
    plain, ev = _no_cmb_pmr(f)
    if plain is None:
        return NOT_CHECKED, "CMB / PMR support is in CAP, not read", ()
    if not plain:
        return NOT_APPLICABLE, "CMB or PMR supported", (ev,)
    exposed = [b["bar"] for b in f["pci_bars"] if b["bar"] in (4, 5) and b["bytes"]]
    return _verdict(not exposed, f"BAR4/BAR5 exposed: {exposed or 'none'}", ev, _bars(f))


@rule(V27, "PCI-22", 9082)
def pci_22(f):
    plain, ev = _no_cmb_pmr(f)
    if plain is None:
        return NOT_CHECKED, "CMB / PMR support is in CAP, not read", ()
    if not plain:
        return NOT_APPLICABLE, "CMB or PMR supported", (ev,)
    total = sum(b["bytes"] for b in f["pci_bars"] if b["mem"])
    return _verdict(total <= 1 << 20, f"memory BARs {total} bytes (1 MiB at most)", ev,
                    _bars(f))


def _reg(name: str, want, what: str, line: int, rid: str):
    def check(f):
        v = f["nvme_registers"][name]
        ok = want(v)
        return _verdict(ok, f"CAP.{name.upper()} = {v}", Evidence(REGS, what, f["nvme_registers"]
                                                                  ["cap"]))
    rule(V27, rid, line)(check)


_reg("mqes", lambda v: v + 1 >= 1024, "CAP bits 15:0 (MQES, zero-based)", 269, "NVMe-CFG-5")
_reg("dstrd", lambda v: v == 0, "CAP bits 35:32 (DSTRD)", 285, "NVMe-CFG-9")
_reg("cps", lambda v: v == 3, "CAP bits 47:46 (CPS)", 296, "NVMe-CFG-12")
_reg("css", lambda v: v & 1 and not v >> 6 & 3, "CAP bits 44:37 (CSS: bit 0 set, 6 and 7 "
     "cleared)", 300, "NVMe-CFG-13")
_reg("mpsmin", lambda v: v == 0, "CAP bits 51:48 (MPSMIN)", 310, "NVMe-CFG-16")
_reg("mpsmax", lambda v: v >= 1, "CAP bits 55:52 (MPSMAX)", 313, "NVMe-CFG-17")
_reg("crims", lambda v: v == 0, "CAP bit 60 (CRMS.CRIMS)", 319, "NVMe-CFG-20")


@rule(V27, "NVMe-OPT-12", 708)
def opt_12(f):
    regs, ctratt = f["nvme_registers"], f["id_ctrl"]["ctratt"]
    ok = regs["cps"] == 3 and not ctratt >> 10 & 1
    return _verdict(ok, f"CAP.CPS {regs['cps']:02b}b, CTRATT bit 10 (MDS) {ctratt >> 10 & 1}",
                    Evidence(REGS, "CAP bits 47:46 (CPS)", regs["cap"]),
                    Evidence("nvme id-ctrl -b: Identify Controller", "CTRATT (byte 96) bit 10",
                             f"0x{ctratt:x}"))


def _feature(f: dict, fid: str) -> tuple[bool | None, str, Evidence]:
    """(supported, what was said, evidence); supported None: refused for another reason."""
    got = f["features"][fid]
    ev = Evidence(f"{FEATURES} --feature-id=0x{fid[:2].lower()}", "Dword 0 (capabilities)",
                  got.get("capabilities", got.get("refused")))
    if "capabilities" in got:
        return True, f"Feature {fid} answered", ev
    if any(r in got["refused"] for r in REFUSALS):
        return False, f"Feature {fid} refused as not supported (Invalid Field)", ev
    return None, f"Feature {fid} not read: {got['refused'][-120:]}", ev


def _feature_rule(rid: str, line: int, fid: str, wanted: bool):
    def check(f):
        supported, said, ev = _feature(f, fid)
        if supported is None:
            return NOT_CHECKED, said, (ev,)
        return _verdict(supported == wanted, said, ev)
    rule(V27, rid, line)(check)


_feature_rule("NVMe-OPT-18", 722, "24h", True)      # Power Threshold (TP4199)
_feature_rule("NVMe-OPT-19", 725, "25h", True)      # Power Measurement (TP4199)
_feature_rule("NVMe-CFG-21", 320, "25h", True)
_feature_rule("NVMe-OPT-21", 734, "23h", False)     # Power Limit (TP4190): not supported


@rule(V27, "NVMe-OPT-13", 710)
def opt_13(f):
    supported, said, ev = _feature(f, "0Eh")
    if not supported:
        return (FAIL if supported is False else NOT_CHECKED), said + " (NVMe-OPT-2)", (ev,)
    caps = f["features"]["0Eh"]["capabilities"]
    return _verdict(not caps & 1, f"Timestamp capabilities 0x{caps:x}: "
                    f"{'saveable' if caps & 1 else 'not saveable'}", ev)


@rule(V27, "NVMe-CFG-10", 288)
def cfg_10(f):
    bar0 = f["pci_bars"][0]
    start, size = bar0["start"], bar0["bytes"]
    ev = Evidence("sysfs resource: BAR0 start and size", "BAR0 (the doorbells from offset "
                  "1000h, NVMe Base 3.1.4; CAP.DSTRD their stride)", (hex(start), size))
    if not bar0["mem"] or size <= 0x1000:
        return FAIL, f"BAR0 {size} bytes: no room for doorbells at offset 1000h", (ev,)
    at = start + 0x1000
    return _verdict(at % 4096 == 0, f"doorbells from {at:#x}: "
                    f"{'' if at % 4096 == 0 else 'not '}4096-byte aligned", ev)
