"""More OCP PCIe requirements (v2.7 section 5: PCI-2, -14, -25, -26, -28, -35, -42) that a
register of the PCI configuration space decides (pts.tools.pci_facts.config_space: the PCI
Express and Power Management capabilities, Device Control, the extended capabilities when
the host gives the extended space; field positions and capability IDs as
pts.config.pci_layout names them, after the PCI Express Base Specification). Rules are
added to pts.stored.host_rules.RULES; the rest of PCI-* is in pts.stored.pci_rules.
"""

from __future__ import annotations

from pts.config.pci_layout import LINK_SPEEDS
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS, V27, Evidence, rule

CONFIG = "sysfs config: PCI configuration space"
GEN6 = 6           # Max Link Speed encoding / Supported Link Speeds Vector bit of 64 GT/s


@rule(V27, "PCI-2", 9037)
def pci_2(f):
    v = f["pci"]["devcap2"]
    ev = (Evidence(CONFIG, "Device Capabilities 2 bits 3:0 (Completion Timeout Ranges "
                   "Supported; 0000b: not programmable)", f"0x{v:x}"),)
    if not v & 0xF:
        return FAIL, "Completion Timeout Ranges Supported 0000b: the range cannot be changed", ev
    return PASS, f"Completion Timeout Ranges Supported {v & 0xF:04b}b: programmable", ev


@rule(V27, "PCI-35", 9142)
def pci_35(f):
    v = f["pci"]["pmc"]
    ev = (Evidence(CONFIG, "Power Management Capabilities bit 9 (D1_Support), bit 10 "
                   "(D2_Support)", f"0x{v:x}"),)
    states = [name for bit, name in ((9, "D1"), (10, "D2")) if v >> bit & 1]
    if states:
        return FAIL, f"{' and '.join(states)} supported", ev
    return PASS, "neither D1 nor D2 supported", ev


@rule(V27, "PCI-42", 9183)
def pci_42(f):
    cap, cap2 = f["pci"]["lnkcap"], f["pci"]["lnkcap2"]
    ev = (Evidence(CONFIG, "Link Capabilities bits 3:0 (Max Link Speed), Link Capabilities 2 "
                   "bits 7:1 (Supported Link Speeds Vector)", (f"0x{cap:x}", f"0x{cap2:x}")),)
    gen6 = bool(cap2 >> GEN6 & 1) if cap2 & 0xFE else cap & 0xF == GEN6
    if not gen6:
        top = max((s for s in LINK_SPEEDS if cap2 >> s & 1), default=cap & 0xF)
        return NOT_APPLICABLE, (f"not a PCIe Gen6 device (at most {LINK_SPEEDS.get(top, '?')} "
                                "GT/s)"), ev
    return NOT_CHECKED, "a Gen6 device: L0p support (its extended capability) is not read", ev


@rule(V27, "PCI-14", 9058)
def pci_14(f):
    v = f["pci"]["devctl"]
    ev = (Evidence(CONFIG, "Device Control bit 4 (Enable Relaxed Ordering; its default is 1b, "
                   "hardwired to 0b only by a function that never sets the attribute)",
                   f"0x{v:x}"),)
    if v >> 4 & 1:
        return PASS, "Enable Relaxed Ordering 1b: the function may set Relaxed Ordering", ev
    return NOT_CHECKED, ("Enable Relaxed Ordering 0b: hardwired (no Relaxed Ordering) or "
                         "cleared by the host's OS (Linux does below a root port it knows to "
                         "mishandle it); writing 1b would tell, and the run writes nothing"), ev


# requirement ID -> (line, the extended capability it asks for)
EXTENDED = {"PCI-25": (9092, "Device Serial Number"), "PCI-26": (9095, "Advanced Error "
                                                                  "Reporting"),
            "PCI-28": (9103, "Address Translation Services")}


def _extended(name: str):
    def check(f):
        ext = f["pci"]["extended_capabilities"]
        ev = (Evidence(CONFIG, "extended capability list from byte 100h", ext if ext is None
                       else {**ext, **({"serial": f["pci"]["dsn"]} if "dsn" in f["pci"]
                                       else {})}),)
        if ext is None:
            return NOT_CHECKED, ("the configuration space read holds no extended space (256 "
                                 "bytes: a conventional PCI host bridge, e.g. QEMU's pc "
                                 "machine)"), ev
        if name not in ext:
            return FAIL, f"no {name} extended capability", ev
        return PASS, f"{name} extended capability at {ext[name]:#x}" + (
            " (one function read: the same serial on every function and port, and its "
            "uniqueness, not checked)" if name == "Device Serial Number" else ""), ev
    return check


for _rid, (_line, _name) in EXTENDED.items():
    rule(V27, _rid, _line)(_extended(_name))
