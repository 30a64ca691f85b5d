"""The OCP SMART / Health Information Extended log (C0h) decoded here, for the tests, from the
page's bytes and from nvme-cli's print of it, and the requirements' rules applied to it:
facts to hold pts.stored.ocp_verdicts against (test_qemu_e2e.py), none taken from the product.

Source of the byte ranges and the required values: Datacenter NVMe SSD Specification v2.7
(01082026), section 4.8.6, as the Markdown in GitHub circulardrives/cdi-grading-tool, `docs/
Datacenter NVMe SSD Specification v2.7 Final.md` at 427b743c: the line of each requirement ID
is given below. The keys: what the guest's nvme-cli 2.3 (Debian 12) prints for the page with
`nvme ocp smart-add-log -o json` (seen in the QEMU 10 guest, page version 5); a requirement
whose field it does not print has no key.
"""

from __future__ import annotations

SPEC = ("Datacenter NVMe SSD Specification v2.7, 4.8.6 (circulardrives/cdi-grading-tool@427b743c "
        "docs/Datacenter NVMe SSD Specification v2.7 Final.md)")

# Requirement ID -> (line in SPEC, its field's byte ranges (high, low) as the table gives them,
# nvme-cli 2.3's keys for them, in the same order). Each "shall" be reported by the drive.
FIELDS: dict[str, tuple[int, tuple[tuple[int, int], ...], tuple[str, ...]]] = {
    "SMART-1": (1250, ((15, 0),), ("Physical media units written",)),
    "SMART-2": (1254, ((31, 16),), ("Physical media units read",)),
    "SMART-3": (1264, ((37, 32), (39, 38)),
                ("Bad user nand blocks - Raw", "Bad user nand blocks - Normalized")),
    "SMART-4": (1282, ((45, 40), (47, 46)),
                ("Bad system nand blocks - Raw", "Bad system nand blocks - Normalized")),
    "SMART-5": (1299, ((55, 48),), ("XOR recovery count",)),
    "SMART-6": (1305, ((63, 56),), ("Uncorrectable read error count",)),
    "SMART-7": (1312, ((71, 64),), ("Soft ecc error count",)),
    "SMART-8": (1323, ((75, 72), (79, 76)),
                ("End to end detected errors", "End to end corrected errors")),
    "SMART-9": (1338, ((80, 80),), ("System data percent used",)),
    "SMART-10": (1347, ((87, 81),), ("Refresh counts",)),
    "SMART-11": (1364, ((91, 88), (95, 92)),
                 ("Max User data erase counts", "Min User data erase counts")),
    "SMART-12": (1381, ((96, 96), (97, 97)),
                 ("Number of Thermal throttling events", "Current throttling status")),
    "SMART-14": (1412, ((111, 104),), ("PCIe correctable error count",)),
    "SMART-15": (1421, ((115, 112),), ("Incomplete shutdowns",)),
    "SMART-17": (1434, ((120, 120),), ("Percent free blocks",)),
    "SMART-19": (1452, ((129, 128),), ("Capacitor health",)),
    "SMART-20": (1468, ((130, 130),), ("NVMe Errata Version",)),
    "SMART-21": (1513, ((143, 136),), ("Unaligned I/O",)),
    "SMART-22": (1521, ((151, 144),), ("Security Version Number",)),
    "SMART-23": (1529, ((159, 152),), ("NUSE - Namespace utilization",)),
    "SMART-24": (1536, ((175, 160),), ("PLP start count",)),
    "SMART-25": (1544, ((191, 176),), ("Endurance estimate",)),
    "SMART-29": (1551, ((199, 192),), ("PCIe Link Retraining Count",)),
    "SMART-31": (1556, ((207, 200),), ()),          # nvme-cli 2.3 does not print it
}
# Reserved: "Shall be cleared to zero" (SMART-16 line 1425, SMART-18 line 1443, SMART-26 line
# 1791)
RESERVED = {"SMART-16": (119, 116), "SMART-18": (127, 121), "SMART-26": (493, 366)}
# Values the v2.7 text requires
VERSION = (495, 494), 0x0006                 # SMART-27, line 1794-1796: "Shall be set to 0006h"
GUID = (511, 496), 0xAFD514C97C6F4F9CA4F2BFEA2810AFC5   # SMART-28, line 1797-1799
# SMART-13 (line 1396-1400), DSSD Specification Version, bytes 103:98
DSSD = {"Major Version Field": ((103, 103), 0x02), "Minor Version Field": ((102, 101), 0x0007),
        "Point Version Field": ((100, 99), 0x0000), "Errata Version Field": ((98, 98), 0x00)}


def value(page: bytes, span: tuple[int, int]) -> int:
    """The little-endian integer in bytes high:low (both included) of the page."""
    high, low = span
    return int.from_bytes(page[low:high + 1], "little")


def all_ones(page: bytes, span: tuple[int, int]) -> bool:
    high, low = span
    return set(page[low:high + 1]) == {0xFF}


def printed(doc: dict, key: str) -> int:
    """An integer as nvme-cli 2.3 prints it: a number, a decimal string, "0x..." (the GUID)
    or {"hi": ..., "lo": ...} (128-bit counters, 64 bits each)."""
    v = doc[key]
    if isinstance(v, dict):
        return (int(v["hi"]) << 64) | int(v["lo"])
    if isinstance(v, str):
        return int(v, 16) if v.lower().startswith("0x") else int(v)
    return int(v)


def expected_verdicts(page: bytes) -> dict[str, tuple[str, str]]:
    """Requirement ID -> (PASS or FAIL, why), by the v2.7 text's rules on the page's bytes: a
    field the page holds is given (each "shall" be reported); the version, GUID and DSSD
    version must be the text's. A field of all ones is not judged here (the text gives all
    ones meanings of their own: not supported, a saturated counter, SMART-4's "all blocks",
    SMART-19's "no PLP"): an AssertionError names it."""
    out = {}
    for rid, (line, spans, _) in FIELDS.items():
        ones = [s for s in spans if all_ones(page, s)]
        assert not ones, f"{rid}: bytes {ones} all ones, a case not judged here (line {line})"
        out[rid] = ("PASS", f"bytes {spans} given (line {line})")
    span, want = VERSION
    out["SMART-27"] = ("PASS" if value(page, span) == want else "FAIL",
                       f"log page version {value(page, span)}, required {want}")
    span, want = GUID
    out["SMART-28"] = ("PASS" if value(page, span) == want else "FAIL",
                       f"GUID {value(page, span):#x}, required {want:#x}")
    got = {name: value(page, span) for name, (span, _) in DSSD.items()}
    out["SMART-13"] = ("PASS" if all(got[n] == w for n, (_, w) in DSSD.items()) else "FAIL",
                       f"DSSD version fields {got}")
    return out
