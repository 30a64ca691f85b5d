"""The OCP requirements on the Hardware Component log page (C6h) of the v2.7 text: its header
(HWCLOG-1..6), its layout (HWCOMP-1..9), the Component Descriptor's fields (COMPD-1..8) and the
Component Identifier Table (CITYPE-1..15), judged from the page's bytes as
pts.tools.ocp_component_facts read them at a test's start (facts["ocp_pages"]["C6h"]), the
descriptors walked from the header's size (pts.tools.ocp_components).

The text requires the page (HWCOMP-3..6: "This log shall contain ..."): refused, every row
is FAIL with the drive's answer ("Get Log Page C6h: Invalid Field in Command (0x4002), exit
1": QEMU 10's); bytes of another GUID FAIL with the decoder's words; a read that failed
otherwise is NOT CHECKED (pts.stored.ocp_page_checks.Page.unusable). On a decoded page:
the header's version, GUID, reserved bytes and size; descriptors back to back from byte 64
to the log size; each identifier in the table (no 0000h, no 000Dh-7FFFh); the critical
components and the serial number, country of origin, hardware revision and born-on date
listed, those four with every other field 0h, the date MMDDYYYY and the country UTF-8. What
only the vendor knows (HWCOMP-1: whether a zero field's data exists; HWCOMP-2: whether the
manufacturer codes are documented) is NOT CHECKED on a decoded page.
"""

from __future__ import annotations

from datetime import datetime

from pts.config.ocp_log_c6 import (
    CRITICAL,
    DESCRIPTOR,
    HEADER_IDS,
    INFO_ONLY,
    RESERVED_TYPES,
    TYPES,
    VENDOR_TYPES,
)
from pts.stored.host_rules import FAIL, NOT_APPLICABLE, NOT_CHECKED, PASS
from pts.stored.ocp_page_checks import Page, guid, page_rule, then, version, zero

LOG = 0xC6


def _ev(p: Page, d: dict, what: str, value):
    return p.ev(f"bytes {d['end'] - 1}:{d['at']} (descriptor {d['component_identifier']:04X}h"
                f"{', ' + what if what else ''})", value)


def _walked(p: Page):
    """PASS when the descriptors fill the page from byte 64 to its log size, else FAIL."""
    fact, n = p.fact, len(p.fact["components"])
    ev = (p.ev("bytes 47:32 (hardware_component_log_size)", fact["log_size"]),
          p.ev(f"bytes {fact['log_size'] - 1}:64 (descriptors)", f"{n} walked"))
    if fact["walk_problem"]:
        return FAIL, f"the descriptors do not fill the page: {fact['walk_problem']}", ev
    return PASS, f"{n} descriptors back to back from byte 64 to byte {fact['log_size'] - 1}" \
        " (the log size)", ev


def _size(p: Page):
    s = p.fact["log_size"]
    ev = (p.field_ev("hardware_component_log_size"),)
    if s < 64 or s % 4:
        return FAIL, f"Hardware Component Log Size {s}: not a whole number of Dwords of at " \
            "least the 64-byte header", ev
    return PASS, f"Hardware Component Log Size {s} bytes, {p.fact['bytes']} read", ev


def _of(p: Page, code: int) -> list[dict]:
    return [d for d in p.fact["components"] if d["component_identifier"] == code]


def _no_gap(p: Page):
    """HWCOMP-9: a zero identifier (CITYPE-1 reserved) after byte 64 is a gap read as one."""
    zeros = _of(p, 0)
    if zeros:
        return FAIL, f"a descriptor of identifier 0000h at byte {zeros[0]['at']}: zero " \
            "Dwords between descriptors, or a reserved identifier", (_ev(p, zeros[0], "", 0),)
    return PASS, "no zero Dwords between the descriptors", ()


def _first(p: Page):
    d = p.fact["components"]
    if not d:
        return FAIL, "no descriptor at byte 64", ()
    return PASS, f"the first descriptor starts at byte 64 (identifier " \
        f"{d[0]['component_identifier']:04X}h)", (_ev(p, d[0], "", d[0]["at"]),)


def _critical(p: Page):
    missing = [TYPES[c][1] for c in CRITICAL if not _of(p, c)]
    ev = (p.ev("descriptors (identifiers)", sorted({d["component_identifier"]
                                                   for d in p.fact["components"]})),)
    if missing:
        return FAIL, f"no descriptor of: {', '.join(missing)}", ev
    return PASS, "controller ASIC, PMIC, DRAM, NAND and PCB listed (any other critical " \
        "component only the vendor can name)", ev


def _info_only(code: int):
    """CITYPE-10/11/12/15 and HWCOMP-4..6: a descriptor of `code` whose Additional
    Information holds the value, every other field 0h."""
    def check(p: Page):
        found = _of(p, code)
        if not found:
            return FAIL, f"no descriptor of {code:04X}h ({TYPES[code][1]})", ()
        for d in found:
            others = [n for n, _, _, _ in DESCRIPTOR
                      if n not in ("component_identifier", "additional_information_size")
                      and d[n]]
            value = bytes.fromhex(d["additional_information"])
            ev = (_ev(p, d, "additional information", value),)
            if others or d["date_lot_code"]:
                return FAIL, f"{TYPES[code][1]}: fields other than the identifier and the " \
                    f"Additional Information Size not 0h: {', '.join(others) or 'date/lot'}", ev
            if not value.strip(b"\0"):
                return FAIL, f"{TYPES[code][1]}: the Additional Information is empty", ev
            problem = _value_problem(code, value)
            if problem:
                return FAIL, f"{TYPES[code][1]}: {problem}", ev
        return PASS, f"{TYPES[code][1]} given in the Additional Information, the other " \
            "fields 0h", ev
    return check


def _value_problem(code: int, value: bytes) -> str | None:
    text = value.rstrip(b"\0")
    if code == 0x000A:
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            return f"{text!r} is not UTF-8"
    if code == 0x000C:
        try:
            datetime.strptime(text.decode("ascii"), "%m%d%Y")
        except (UnicodeDecodeError, ValueError):
            return f"{text!r} is not an ASCII date MMDDYYYY"
    return None


def _kind(code: int, required: bool):
    """CITYPE-2..9: the descriptors of `code`; a critical type absent FAILs (HWCOMP-3)."""
    def check(p: Page):
        found = _of(p, code)
        if not found:
            if required:
                return FAIL, f"no {TYPES[code][1]} descriptor (HWCOMP-3 asks for it)", ()
            return NOT_APPLICABLE, f"the drive lists no {TYPES[code][1]} component", ()
        return PASS, f"{len(found)} {TYPES[code][1]} descriptor(s), each within the page", \
            tuple(_ev(p, d, "", d["at"]) for d in found[:4])
    return check


def _none_in(lo: int, hi: int, what: str):
    def check(p: Page):
        bad = [d for d in p.fact["components"] if lo <= d["component_identifier"] <= hi]
        if bad:
            return FAIL, f"identifier {bad[0]['component_identifier']:04X}h: {what}", \
                (_ev(p, bad[0], "", bad[0]["component_identifier"]),)
        return PASS, f"no identifier {lo:04X}h-{hi:04X}h ({what})", ()
    return check


def _vendor(p: Page):
    lo, hi = VENDOR_TYPES
    found = [d for d in p.fact["components"] if lo <= d["component_identifier"] <= hi]
    if not found:
        return NOT_APPLICABLE, "no vendor unique component listed", ()
    return PASS, f"{len(found)} vendor unique descriptor(s) within the page", \
        tuple(_ev(p, d, "", d["component_identifier"]) for d in found[:4])


def _field(name: str):
    """COMPD-1..6: the field read from every descriptor (sizes: the walk fits them)."""
    def check(p: Page):
        values = [d[name] for d in p.fact["components"]]
        return PASS, f"{name} read from {len(values)} descriptor(s): " + \
            (f"{values[:8]}" if name not in ("manufacture", "revision", "manufacture_code")
             else f"{sum(1 for v in values if v)} non-zero"), ()
    return check


def _variable(key: str, size: str):
    """COMPD-7, -8: where the Date/Lot Code / Additional Information stands (after the walk,
    which FAILs the row when a descriptor's sizes run it past the page)."""
    def check(p: Page):
        comps = p.fact["components"]
        return PASS, f"{key} of {sum(1 for d in comps if d[size])} descriptor(s) within " \
            f"the page, {size} Dwords each", ()
    return check


def _vendor_knows(what: str):
    def check(p: Page):
        return NOT_CHECKED, f"{what}: the vendor's knowledge, not the page's bytes " \
            f"({len(p.fact['components'])} descriptors read)", ()
    return check


W = _walked
ROWS = {
    "HWCLOG-2": zero(("reserved_2",)),
    "HWCLOG-4": _size,
    "HWCLOG-5": zero(("reserved_48",)),
    "HWCLOG-6": then(_size, W),
    "HWCOMP-1": _vendor_knows("whether a field left 0h has data that is available"),
    "HWCOMP-2": _vendor_knows("whether the manufacturer codes are documented to the customer"),
    "HWCOMP-3": then(W, _critical),
    "HWCOMP-4": then(W, _info_only(0x0009)),
    "HWCOMP-5": then(W, _info_only(0x000A)),
    "HWCOMP-6": then(W, _info_only(0x000B)),
    "HWCOMP-7": then(_size, _first),
    "HWCOMP-8": then(_size, W),
    "HWCOMP-9": then(W, _no_gap),
    **{rid: then(W, _field(n)) for n, _, _, rid in DESCRIPTOR if rid != "COMPD-3"},
    "COMPD-3": then(W, _none_in(0, 0, "reserved"),
                    _none_in(*RESERVED_TYPES, "reserved")),
    "COMPD-7": then(W, _variable("date_lot_code", "date_lot_size")),
    "COMPD-8": then(W, _variable("additional_information", "additional_information_size")),
    "CITYPE-1": then(W, _none_in(0, 0, "reserved")),
    **{TYPES[c][0]: then(W, _kind(c, c in CRITICAL)) for c in range(1, 9)},
    **{TYPES[c][0]: then(W, _info_only(c)) for c in INFO_ONLY},
    "CITYPE-13": then(W, _none_in(*RESERVED_TYPES, "reserved")),
    "CITYPE-14": then(W, _vendor),
}

page_rule(HEADER_IDS[0], LOG, version(HEADER_IDS[1]), header=True)
page_rule(HEADER_IDS[2], LOG, guid, header=True)
for _rid, _check in ROWS.items():
    page_rule(_rid, LOG, _check)

__all__ = ["ROWS"]
