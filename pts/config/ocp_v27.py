"""The rows of the OCP Datacenter NVMe SSD Specification v2.7 (header "Version 2.7
(01082026)") that pts.config.ocp_requirements tabulates, in the text's order: `line` is the
line where the ID stands in the Markdown of the text in GitHub circulardrives/cdi-grading-tool,
`docs/Datacenter NVMe SSD Specification v2.7 Final.md` at commit
427b743c734af2bfc017837fd964c770badf324b. Subjects are this project's wording, not the spec's.
"""

from __future__ import annotations

from functools import partial

from pts.config.ocp_rows import (
    FORMAT_CRYPTO,
    FORMAT_NONE,
    FORMAT_UDE,
    LOGS_KEPT_OVER_PURGE,
    NEEDS_POWER,
    NO_LM,
    NOT_READ,
    NUSE_AFTER_FORMAT,
    PURGE_TIME,
    RESERVED,
    SANITIZE_BLOCK,
    SANITIZE_CRYPTO,
    PurgeLimit,
    Readings,
    c0_row,
    row,
    shared,
)
from pts.config.spec_readings import READING

V = "2.7"
_row = partial(row, V)

TB_READING = Readings(READING, "TB read as 10^12 bytes: the text gives '10 seconds per TB of "
                               "device capacity' and a 4TB example without defining TB; drive "
                               "capacities are given in decimal TB")
SAME_LBAF_READING = Readings(READING, "the suite formats to the namespace's current LBA "
                                      "format; read as a Format 'between LBAF values' (the "
                                      "text does not say whether the LBAF must change)",
                     "format")
SANITIZE_POLL_READING = Readings(READING, "a sanitize's time is the suite's wall time to the "
                                          "sanitize log's 'completed', polled every 5 s "
                                          "(pts.conditioning.purge_nvme.POLL_S): up to 5 s "
                                          "more than the drive took", "sanitize")

ROWS = (
    # C0h, SMART / Health Information Extended (section 4.8.6)
    *(c0_row(V, n, line) for n, line in (
        (1, 1250), (2, 1254), (3, 1264), (4, 1282), (5, 1299), (6, 1305), (7, 1312), (8, 1323),
        (9, 1338), (10, 1347), (11, 1364), (12, 1381), (13, 1396), (14, 1412), (15, 1421),
        (16, 1425), (17, 1434), (18, 1443), (19, 1452), (20, 1468), (21, 1513), (22, 1521),
        (23, 1529), (24, 1536), (25, 1544))),
    _row("SMART-26", 1791, "reserved bytes 493:366", RESERVED),
    *(c0_row(V, n, line) for n, line in ((27, 1794), (28, 1799), (29, 1551))),
    *(c0_row(V, n, line) for n, line in (
        (30, 1501), (31, 1556), (32, 1476), (33, 1574), (34, 1483), (35, 1492), (36, 1583),
        (37, 1587), (38, 1590), (39, 1594), (40, 1599), (41, 1604), (42, 1609), (43, 1615),
        (44, 1636), (45, 1649), (46, 1658), (47, 1666), (48, 1681), (49, 1701), (50, 1747),
        (51, 1756), (52, 1767))),
    # SMART / Health log behaviour (section 4.8.5)
    *(shared(V, f"SLOG-{n}", line) for n, line in (
        (1, 1197), (2, 1203), (3, 1205), (4, 1208), (5, 1211), (6, 1214), (7, 1218), (8, 1221),
        (9, 1224))),
    _row("SLOG-10", 1226, "obsolete (see STD-LOG-23)", "obsolete in v2.7"),
    _row("SLOG-11", 1227, "obsolete (see STD-LOG-23)", "obsolete in v2.7"),
    _row("SLOG-12", 1229, "no critical warning from Percentage Used alone", "needs a worn "
         "drive"),
    _row("SLOG-13", 1232, "OLEC reported in log 02h", "nvme-cli 2.3 does not print OLEC; "
         + NOT_READ),
    _row("SLOG-14", 1237, "IPM field of log 02h", "nvme-cli 2.3 does not print IPM; "
         + NOT_READ),
    # Standard log pages (section 4.8.1)
    *(shared(V, f"STD-LOG-{n}", line) for n, line in ((1, 782), (2, 783), (3, 785), (4, 789))),
    *(_row(f"STD-LOG-{n}", line, "standard log page support or content", NOT_READ)
      for n, line in ((5, 792), (6, 793), (7, 794), (8, 795), (9, 796), (10, 803), (11, 823),
                      (12, 839), (13, 852), (14, 853), (15, 855), (16, 862), (17, 866),
                      (18, 869), (19, 873), (20, 878), (21, 883), (22, 887))),
    _row("STD-LOG-23", 896, "SMART / Health (02h) and C0h data persist across purge",
         check=LOGS_KEPT_OVER_PURGE),
    *(_row(f"STD-LOG-{n}", line, "standard log page support or content", NOT_READ)
      for n, line in ((24, 912), (25, 915), (26, 921), (27, 927))),
    # Command timeouts (section 4.7)
    _row("CTO-1", 743, "admin commands complete within 10 s", "the suite times its purge "
         "only, not each admin command (CTO-2, CTO-7, CTO-8, CTO-11 judge the purge)"),
    _row("CTO-2", 748, "Format with Cryptographic Erase within CTO-1's 10 s",
         check=PURGE_TIME, limit=PurgeLimit((FORMAT_CRYPTO,), 10)),
    *(shared(V, f"CTO-{n}", line) for n, line in ((3, 752), (4, 754), (5, 756))),
    _row("CTO-6", 759, "MDTS and queue limits keep CTO-3", NOT_READ),
    _row("CTO-7", 762, "Crypto Erase sanitize within 10 s", check=PURGE_TIME,
         limit=PurgeLimit((SANITIZE_CRYPTO,), 10), readings=(SANITIZE_POLL_READING,)),
    _row("CTO-8", 765, "Block Erase sanitize and Format with User Data Erase within 10 s "
         "per TB", check=PURGE_TIME, limit=PurgeLimit((SANITIZE_BLOCK, FORMAT_UDE), 10, True),
         readings=(TB_READING, SANITIZE_POLL_READING)),
    _row("CTO-9", 768, "Estimated Time for Crypto Erase reported", "the suite reads the "
         "sanitize log's status and progress, not its estimated times"),
    _row("CTO-10", 771, "Estimated Time fields not FFFFFFFFh for supported sanitize "
         "operations", "the suite reads the sanitize log's status and progress, not its "
         "estimated times"),
    _row("CTO-11", 777, "Format with SES 000b or 2h within 10 s", check=PURGE_TIME,
         limit=PurgeLimit((FORMAT_NONE, FORMAT_CRYPTO), 10), readings=(SAME_LBAF_READING,)),
    # Deallocation (section 4.13)
    shared(V, "TRIM-1", 7283),
    _row("TRIM-2", 7286, "deallocated blocks read as zeros (DLFEAT 001b)", "the purge's "
         "verification checks that marker blocks are gone, not that deallocated blocks read "
         "zeros; DLFEAT is not recorded"),
    _row("TRIM-3", 7289, "obsolete (see TRIM-2)", "obsolete in v2.7"),
    shared(V, "TRIM-4", 7291),
    shared(V, "TRIM-5", 7293),
    _row("TRIM-6", 7295, "deallocation changes other reads' latency by at most 5 %",
         "not judged: needs a read workload with and without concurrent deallocation"),
    shared(V, "TRIM-7", 7298),
    _row("TRIM-8", 7301, "deallocated-then-written blocks survive unsafe power down",
         NEEDS_POWER),
    _row("TRIM-9", 7304, "deallocate as far as possible", "not judged"),
    # Namespace utilisation (section 4.4.2)
    _row("NUSE-1", 501, "NUSE = allocated blocks; zero after Format SES=001b",
         check=NUSE_AFTER_FORMAT,
         readings=(Readings(READING, "NUSE read from C0h's Total NUSE (SMART-23, line 1529: a "
                                     "copy of Identify Namespace NUSE for a single-namespace "
                                     "device); the suite does not record Identify Namespace "
                                     "NUSE itself"),)),
    # Endurance (section 8.1)
    *(shared(V, f"ENDUD-{n}", line) for n, line in ((1, 9634), (2, 9641), (3, 9648))),
    # Latency monitor (section 4.8.8)
    *(_row(f"LMLOG-{n}", line, "latency monitor log / feature", NO_LM)
      for n, line in ((1, 2165), (2, 2168), (3, 2170), (4, 2172), (5, 2175), (6, 2178),
                      (7, 2184), (8, 2188), (9, 2192), (10, 2196), (11, 2201), (12, 2204),
                      (13, 2205), (14, 2207), (15, 2211), (16, 2215), (17, 2219), (18, 2224))),
)
