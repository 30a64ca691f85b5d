"""The rows of the OCP Datacenter NVMe SSD Specification v2.0 (header "Version 2.0
(07302021)", revision r21) that pts.config.ocp_requirements tabulates: `line` is the page of
the PDF where the ID stands (`locator` "page"), the text being
`source_doc/Datacenter NVMe SSD Specification v2.0r21.pdf` in GitHub freews/general_parser
at commit e094013be8cffa0fb60de487b04576f0ff10f9d0 (the specification's own terms: OWFa 1.0;
IDs, pages and values are taken from it, no text). Subjects are this project's wording.

Read side by side with v2.7 (ocp_v27.py), the C0h SMART-x IDs of v2.0 name the same fields
as v2.7's (ocp_rows.C0H; v2.0 ends at SMART-31, with SMART-30 reserved), with their own
values: Log Page Version 0003h, DSSD version 2.0.0.0. What differs under the same ID: CTO-2
exempts Format from CTO-1's 10 s (v2.0 sets a Format no time limit; v2.7's CTO-2, -7, -8,
-11 do), TRIM-2 (0, 1 or unchanged; v2.7: zeros), TRIM-3 (power loss; obsolete in v2.7),
SLOG-10 and -11 (kept across power cycles; v2.7 makes both obsolete, see its STD-LOG-23,
which adds purge). v2.0 has no STD-LOG-11.. nor CTO-6.. nor LMLOG-15...
"""

from __future__ import annotations

from functools import partial

from pts.config.ocp_rows import (
    NEEDS_POWER,
    NO_LM,
    NOT_READ,
    NUSE_AFTER_FORMAT,
    RESERVED,
    OcpRequirement,
    Readings,
    c0_row,
    row,
    shared,
)
from pts.config.spec_readings import READING

V, PAGE = "2.0", "page"
_row = partial(row, V, locator=PAGE)
_shared = partial(shared, V, locator=PAGE)
_c0 = partial(c0_row, V, locator=PAGE)
PURGE_NOT_TIMED = ("the suite times its purge only: a Format is exempt (CTO-2) and a "
                   "sanitize's time is its background operation, which CTO-1 excludes")


def _rows(rid: str, pages: tuple[tuple[int, int], ...], subject: str, why: str
          ) -> tuple[OcpRequirement, ...]:
    return tuple(_row(f"{rid}-{n}", page, subject, why) for n, page in pages)


ROWS = (
    # C0h, SMART / Health Information Extended (section 4.8.5)
    *(_c0(n, page) for n, page in (
        (1, 15), (2, 15), (3, 15), (4, 16), (5, 16), (6, 16), (7, 16), (8, 16), (9, 17),
        (10, 17), (11, 17), (12, 18), (13, 18), (14, 19), (15, 19), (16, 19), (17, 19),
        (18, 19), (19, 19), (20, 20), (21, 20), (22, 20), (23, 20), (24, 20), (25, 21))),
    _row("SMART-26", 21, "reserved bytes 493:208", RESERVED),
    *(_c0(n, page) for n, page in ((27, 21), (28, 21), (29, 21))),
    _row("SMART-30", 20, "reserved bytes 135:131", RESERVED),
    _c0(31, 21),
    # SMART / Health log behaviour (section 4.8.4)
    *(_shared(f"SLOG-{n}", page) for n, page in (
        (1, 14), (2, 14), (3, 14), (4, 14), (5, 14), (6, 14), (7, 14), (8, 14), (9, 15))),
    _row("SLOG-10", 15, "02h / C0h data older than 10 min kept across power cycles and "
         "resets", NEEDS_POWER),
    _row("SLOG-11", 15, "backup energy failure and critical warnings kept across power "
         "cycles and resets", NEEDS_POWER),
    # Standard log pages (section 4.8.1)
    *(_shared(f"STD-LOG-{n}", 12) for n in (1, 2, 3, 4)),
    *_rows("STD-LOG", tuple((n, 12) for n in range(5, 11)), "standard log page support or "
           "content", NOT_READ),
    # Command timeouts (section 4.7)
    _row("CTO-1", 11, "admin and TCG commands within 10 s (not Self-Test / Sanitize "
         "background)", PURGE_NOT_TIMED),
    _row("CTO-2", 11, "Format and TCG Revert, RevertSP, GenKey exempt from CTO-1",
         "an exemption: nothing to judge"),
    *(_shared(f"CTO-{n}", 12) for n in (3, 4, 5)),
    # Deallocation (section 4.10)
    _shared("TRIM-1", 51),
    _row("TRIM-2", 51, "deallocated blocks read as 0, 1 or unchanged, sector by sector",
         "the purge's verification checks that marker blocks are gone, not what "
         "deallocated blocks read; DLFEAT is not recorded"),
    _row("TRIM-3", 51, "deallocated, unwritten blocks read as 0, 1 or unchanged after an "
         "unsafe power down", NEEDS_POWER),
    _shared("TRIM-4", 51),
    _shared("TRIM-5", 51),
    _row("TRIM-6", 51, "read latency changes by at most 5 % while the host deallocates",
         "not judged: needs a read workload with and without concurrent deallocation"),
    _shared("TRIM-7", 52),
    # Namespace utilisation (section 4.4.2)
    _row("NUSE-1", 8, "NUSE = allocated blocks; zero after Format SES=001b",
         check=NUSE_AFTER_FORMAT,
         readings=(Readings(READING, "NUSE read from C0h's Total NUSE (SMART-23, page 20: a "
                                     "copy of Identify Namespace NUSE for a single-namespace "
                                     "device); the suite does not record Identify Namespace "
                                     "NUSE itself"),
                   Readings(READING, "v2.0 gives NUSE zero after a Format SES=001b as the "
                                     "first of NUSE-1's examples (page 9); read as required, "
                                     "as v2.7 states it"))),
    # Endurance (section 7.1)
    *(_shared(f"ENDUD-{n}", page) for n, page in ((1, 81), (2, 81), (3, 82))),
    # Latency monitor (section 4.8.8)
    *_rows("LMLOG", tuple((n, 28) for n in range(1, 15)), "latency monitor log / feature",
           NO_LM),
)
