"""The rows of the OCP Device Capabilities (C4h: DCLP-*, DSSDPSD-*) and Unsupported Requirements
(C5h: URLP-*) log pages of v2.7 that relate fields to each other or to Identify Controller
(lines 3079-3390), for pts.stored.ocp_page_rules (which registers them; what a refusal or an
undecodable page gives: pts.stored.ocp_page_checks). The list itself beside the suite's
verdicts: pts.stored.ocp_drive_list.

C4h's support bits "report that" a requirement is met: each bit the text ties to a field of
Identify Controller (Write Zeroes ONCS bit 3, Dataset Management ONCS bit 2, Write
Uncorrectable ONCS bit 1, Compare and Write FUSES bit 0, the sanitize methods SANICAP bits
2:0) must say what Identify says. DSSD power state n runs in the highest powered operational
NVMe power state whose Maximum Power is at most n W (4.8.11).
"""

from __future__ import annotations

from pts.config.ocp_log_pages import DSSD_NVME_STATE, DSSD_RESERVED, DSSD_VALID
from pts.stored.host_rules import FAIL, ID_CTRL, PASS, Evidence
from pts.stored.ocp_page_checks import Page, bits, then

C4, C5 = 0xC4, 0xC5
# C4h field -> ((its bit, what, Identify field, that field's bit(s) as a mask), ...)
AGREES = {
    "write_zeroes_support": ((0, "Write Zeroes", "oncs", 1 << 3),),
    "sanitize_support": ((0, "Sanitize", "sanicap", 7), (1, "Crypto Erase", "sanicap", 1),
                         (2, "Block Erase", "sanicap", 2), (3, "Overwrite", "sanicap", 4)),
    "dataset_management_support": ((0, "Dataset Management", "oncs", 1 << 2),),
    "write_uncorrectable_support": ((0, "Write Uncorrectable", "oncs", 1 << 1),),
    "fused_operation_support": ((0, "Compare and Write", "fuses", 1),),
}


def _agrees(name: str):
    def check(p: Page):
        v, ctrl = p.fields[name], p.facts.get("id_ctrl")
        evs = (p.field_ev(name),)
        if ctrl is None:
            return PASS, f"{name} 0x{v:x}: reserved bits clear; Identify Controller not " \
                "read, so the support bits are not compared with it", evs
        off = []
        for bit, what, field, mask in AGREES[name]:
            says = bool(ctrl[field] & mask)
            evs += (Evidence(ID_CTRL, field.upper(), f"0x{ctrl[field]:x}"),)
            if bool(v >> bit & 1) != says:
                off.append(f"bit {bit} ({what}) {v >> bit & 1}, Identify {field.upper()} "
                           f"says {'supported' if says else 'not supported'}")
        if name == "write_uncorrectable_support" and not v & 1 and v:
            off.append("Write Uncorrectable not supported but other bits set (zero asked)")
        if off:
            return FAIL, f"{name} 0x{v:x}: " + "; ".join(off), evs
        return PASS, f"{name} 0x{v:x}: each support bit agrees with Identify Controller", evs
    return check


def _ports(p: Page):
    n = p.fields["pcie_ports"]
    return (PASS if n >= 1 else FAIL), f"{n} PCI Express port(s)", (p.field_ev("pcie_ports"),)


def _minimum(p: Page):
    n = p.fields["minimum_valid_dssd_power_state"]
    ok = 1 <= n <= 127
    return (PASS if ok else FAIL), f"Minimum Valid DSSD Power State {n} (" + \
        ("1-127" if ok else "DSSD power state 0 does not exist; 1-127 asked") + ")", \
        (p.field_ev("minimum_valid_dssd_power_state"),)


def _descriptors(p: Page) -> tuple[list[int], int, tuple]:
    d = p.fields["dssd_power_state_descriptors"]
    return d, p.fields["minimum_valid_dssd_power_state"], (
        p.field_ev("dssd_power_state_descriptors"), p.field_ev("minimum_valid_dssd_power_state"))


def _byte_16(p: Page):
    d, _, evs = _descriptors(p)
    return (PASS if d[0] == 0 else FAIL), f"byte 16 (before DSSD power state 1) 0x{d[0]:x} " \
        "(reserved: zero asked)", evs


def _valid(p: Page):
    d, low, evs = _descriptors(p)
    off = [n for n in range(1, 128) if bool(d[n] & DSSD_VALID) != (n >= low)]
    if off:
        return FAIL, f"Valid bit wrong for DSSD power state(s) {off[:10]} (valid from {low})", evs
    return PASS, f"Valid set exactly for DSSD power states {low}-127", evs


def _reserved_bits(p: Page):
    d, _, evs = _descriptors(p)
    off = [n for n in range(1, 128) if d[n] & DSSD_RESERVED]
    return (FAIL, f"bits 6:5 set in descriptor(s) {off[:10]}", evs) if off else \
        (PASS, "bits 6:5 clear in every descriptor", evs)


def _nvme_state(p: Page):
    d, low, evs = _descriptors(p)
    psds = p.facts["id_ctrl"]["psds"]
    evs += (Evidence(ID_CTRL, "Power State Descriptors (bytes 2048+32n)",
                     [(s["state"], s["watts"]) for s in psds]),)
    off = []
    for n in range(max(low, 1), 128):
        fits = [s for s in psds if not s["non_operational"] and s["watts"] <= n]
        want = max(fits, key=lambda s: s["watts"])["state"] if fits else None
        if d[n] & DSSD_VALID and (d[n] & DSSD_NVME_STATE) != want:
            off.append(f"{n} W: NVMe state {d[n] & DSSD_NVME_STATE}, {want} asked")
    if off:
        return FAIL, "DSSD power state(s) mapped to the wrong NVMe power state: " + \
            "; ".join(off[:6]), evs
    return PASS, f"each valid DSSD power state ({low}-127) names the highest powered NVMe " \
        "power state within its watts", evs


def _fips(p: Page):
    v = p.fields["fips_140_validation"]
    ok = v & 0xF <= 4
    return (PASS if ok else FAIL), f"FIPS 140 Validation Status {v & 0xF:X}h" + \
        ("" if ok else " (5h-Fh reserved)"), (p.field_ev("fips_140_validation"),)


def _listed(p: Page) -> tuple[int, list[str], tuple]:
    return p.fields["unsupported_count"], p.fields["unsupported_requirements"], (
        p.field_ev("unsupported_count"), p.field_ev("unsupported_requirements"))


def _count(p: Page):
    n, ids, evs = _listed(p)
    used = [i for i in ids if i]
    if n > 253 or used != ids[:n] or len(used) != n:
        return FAIL, f"Unsupported Count {n}, {len(used)} non-empty entries (the first {n} " \
            "asked, at most 253)", evs
    return PASS, f"Unsupported Count {n} = the entries given", evs


def _sorted(p: Page):
    n, ids, evs = _listed(p)
    given = ids[:n]
    if given != sorted(given):
        return FAIL, f"entries not in alphabetical order: {given[:12]}", evs
    if any(ids[n:]):
        return FAIL, "entries after the count are not zero", evs
    return PASS, f"{n} entries in alphabetical order, the rest zero", evs


CAPABILITY_ROWS = {
    "DCLP-1": (C4, _ports, FAIL),
    **{rid: (C4, then(bits(name), _agrees(name)), FAIL) for rid, name in (
        ("DCLP-3", "write_zeroes_support"), ("DCLP-4", "sanitize_support"),
        ("DCLP-5", "dataset_management_support"), ("DCLP-6", "write_uncorrectable_support"),
        ("DCLP-7", "fused_operation_support"))},
    "DCLP-8": (C4, _minimum, FAIL),
    "DCLP-9": (C4, _byte_16, FAIL),
    "DCLP-13": (C4, then(bits("fips_140_validation"), _fips), FAIL),
    "DSSDPSD-1": (C4, _valid, FAIL),
    "DSSDPSD-2": (C4, _reserved_bits, FAIL),
    "DSSDPSD-3": (C4, _nvme_state, FAIL),
    "URLP-1": (C5, _count, FAIL),
    "URLP-3": (C5, _sorted, FAIL),
}
