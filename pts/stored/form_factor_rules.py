"""The OCP form factors' PCIe link minimums (v2.7 10.4 FFM2-5, 10.5 FFE1S-2, 10.6 FFE1L-2: Gen4
x4; 10.9 FFE2-2: Gen5 x4), judged from the PCI Express capability's Link Capabilities (Max
Link Speed bits 3:0, Maximum Link Width bits 9:4) and Link Capabilities 2 (Supported Link
Speeds Vector bits 7:1), with sysfs' current link beside them (what the slot trained to: the
host's slot, not the drive, may give fewer lanes or a lower speed). An ID applies to the
drive of its form factor alone: the run's form factor (facts["run"]["form_factor"],
pts.stored.run_facts) decides; unknown (None, or no run facts), NOT CHECKED. Rules are added
to pts.stored.host_rules.RULES; pts.stored.host_judge applies them.
"""

from __future__ import annotations

from pts.config.pci_layout import LINK_SPEEDS
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS, V27, Evidence, rule

CONFIG = "sysfs config: PCI configuration space"
LINK = "sysfs current_link_speed, current_link_width (the trained link)"

# requirement ID -> (line, form factor, lowest generation (Max Link Speed encoding), lanes)
MINIMUMS = {"FFM2-5": (9940, "M.2", 4, 4), "FFE1S-2": (9973, "E1.S", 4, 4),
            "FFE1L-2": (10014, "E1.L", 4, 4), "FFE2-2": (10101, "E2", 5, 4)}


def top_speed(lnkcap: int, lnkcap2: int) -> int:
    """The highest link speed's encoding (1: 2.5 GT/s ... 6: 64 GT/s): the Supported Link
    Speeds Vector's highest bit, or Max Link Speed when the function has no vector."""
    bits = [b for b in LINK_SPEEDS if lnkcap2 >> b & 1]
    return max(bits) if bits else lnkcap & 0xF


def _minimum(form_factor: str, gen: int, lanes: int):
    asked = f"PCIe Gen{gen} x{lanes} ({LINK_SPEEDS[gen]} GT/s)"

    def check(f):
        ff = f["run"]["form_factor"]
        if ff is None:
            return NOT_CHECKED, f"the drive's form factor is not known: {asked} is asked of " \
                f"{form_factor} drives", ()
        if ff != form_factor:
            return NOT_APPLICABLE, f"applies only to {form_factor} drives; this drive is {ff}", ()
        cap, cap2 = f["pci"]["lnkcap"], f["pci"]["lnkcap2"]
        speed, width = top_speed(cap, cap2), cap >> 4 & 0x3F
        link = f.get("pci_link", {})
        evs = (Evidence(CONFIG, "Link Capabilities bits 3:0 (Max Link Speed), 9:4 (Maximum "
                        "Link Width); Link Capabilities 2 bits 7:1 (Supported Link Speeds)",
                        (f"0x{cap:x}", f"0x{cap2:x}")),
               Evidence(LINK, "", (link.get("current_link_speed"),
                                   link.get("current_link_width"))))
        said = f"{form_factor}: up to {LINK_SPEEDS.get(speed, '?')} GT/s x{width}, {asked} asked"
        return (PASS if speed >= gen and width >= lanes else FAIL), said, evs
    return check


for _rid, (_line, _ff, _gen, _lanes) in MINIMUMS.items():
    rule(V27, _rid, _line)(_minimum(_ff, _gen, _lanes))
