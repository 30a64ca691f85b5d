"""The OCP Datacenter NVMe SSD Specification's Hardware Component log page (Log Identifier C6h)
as data, from the v2.7 Markdown (circulardrives/cdi-grading-tool @427b743c docs/; [L] its
line): a 64-byte header (HWCLOG-1..5 [L3544-3562]) then Component Descriptors back to back
up to the Hardware Component Log Size (HWCOMP-7..9 [L3407-3411], HWCLOG-6). A descriptor
[L3422-3488] is 44 fixed bytes (COMPD-1..6) then its Date/Lot Code (COMPD-7, COMPD-1 Dwords)
and its Additional Information (COMPD-8, COMPD-2 Dwords): variable-length, so the page has
no fixed table past the header. The descriptors are walked by pts.tools.ocp_components.

The page is in v2.7 only (2.0 has no C6h); log page version 0002h is the one the text asks.
`sizes` gives the header's 64 bytes: the page's real size is in its header.
"""

from __future__ import annotations

from pts.config.ocp_log_layout import RESERVED, UINT, LogField, LogPage

HEADER = 64
_V = (2,)


def _f(name: str, offset: int, size: int, rid: str, kind: str = UINT, unit: str = ""
       ) -> LogField:
    return LogField(name, offset, size, (("2.7", rid),), _V, kind, unit)


C6 = LogPage(0xC6, "Hardware Component", "0xbcb6821f30cd4ed0b76b31b99f0f57dc",
             {2: HEADER}, {2: "2.7"}, version_at=0, guid_at=16, fields=(
    _f("reserved_2", 2, 14, "HWCLOG-2", RESERVED),
    _f("hardware_component_log_size", 32, 16, "HWCLOG-4", unit="bytes"),
    _f("reserved_48", 48, 16, "HWCLOG-5", RESERVED),
))

# (version's ID, the version asked, GUID's ID) [L3544-3555]
HEADER_IDS = ("HWCLOG-1", 2, "HWCLOG-3")

# A Component Descriptor's fixed part: (name, first byte, bytes, requirement ID) [L3422-3471]
DESCRIPTOR = (
    ("date_lot_size", 0, 8, "COMPD-1"),               # Dwords of the Date/Lot Code
    ("additional_information_size", 8, 8, "COMPD-2"),  # Dwords of the Additional Information
    ("component_identifier", 16, 4, "COMPD-3"),        # a CITYPE code
    ("manufacture", 20, 8, "COMPD-4"),
    ("revision", 28, 8, "COMPD-5"),
    ("manufacture_code", 36, 8, "COMPD-6"),
)
FIXED = 44             # the Date/Lot Code starts at byte 44 (COMPD-7: 43 + 1)

# The Component Identifier Table [L3506-3538]: code -> (requirement ID, what it is)
TYPES = {
    0x0000: ("CITYPE-1", "reserved"),
    0x0001: ("CITYPE-2", "controller ASIC"),
    0x0002: ("CITYPE-3", "NAND"),
    0x0003: ("CITYPE-4", "DRAM"),
    0x0004: ("CITYPE-5", "PMIC"),
    0x0005: ("CITYPE-6", "PCB"),
    0x0006: ("CITYPE-7", "capacitor"),
    0x0007: ("CITYPE-8", "resistor"),
    0x0008: ("CITYPE-9", "case"),
    0x0009: ("CITYPE-10", "device serial number"),
    0x000A: ("CITYPE-11", "country of origin"),
    0x000B: ("CITYPE-12", "global device hardware revision"),
    0x000C: ("CITYPE-15", "born on date"),
}
RESERVED_TYPES = (0x000D, 0x7FFF)        # CITYPE-13
VENDOR_TYPES = (0x8000, 0xFFFF)          # CITYPE-14
# HWCOMP-3 [L3401]: the log shall contain these (and "all other critical hardware components",
# which only the vendor knows)
CRITICAL = (0x0001, 0x0004, 0x0003, 0x0002, 0x0005)
# Identifiers whose value is the Additional Information alone, every other field 0h
# (CITYPE-10, -11, -12, -15 [L3515-3532])
INFO_ONLY = (0x0009, 0x000A, 0x000B, 0x000C)
