"""The OCP Datacenter NVMe SSD Specification's requirements a host can look at, keyed by
(spec version, requirement ID): IDs were renumbered between versions (v2.0's NUSE field is
SMART-24, v2.7's SMART-23), so an ID alone names nothing. pts.stored.ocp_verdicts gives each one a
verdict (PASS, FAIL, NOT CHECKED) from a stored run; a requirement the suite does not check
is in the table with the reason, never left out.

Source of every line number: the v2.7 text (header "Version 2.7 (01082026)") as Markdown in
GitHub circulardrives/cdi-grading-tool, `docs/Datacenter NVMe SSD Specification v2.7
Final.md` at commit 427b743c734af2bfc017837fd964c770badf324b (SPEC_TEXT); `line` is the line
of that file where the ID stands in its table. `subject` is this project's short wording of
what the requirement is about, not the spec's text. The groups tabulated (GROUPS) are those a
host with nvme-cli and fio can reach (SMART / Health and C0h logs, command timeouts,
deallocation, NUSE, endurance, latency monitor); the spec's other groups (PCIe, security,
TCG, telemetry, form factors, ...) are named in OTHER_GROUPS and not tabulated one by one.

Only v2.7 is tabulated: no v2.0, 2.5 or 2.6 text was at hand to read IDs from (v2.0's text
is said to be in freews/general_parser, not read here), so `--ocp 2.0` is refused rather
than answered with v2.7's numbers.

Values used in a verdict that the spec text states are CONFIRMED with their line; a value
this project had to interpret is a READING (pts.config.spec_readings' vocabulary) with why,
and every verdict resting on one says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.config.spec_readings import CONFIRMED, READING

SPEC_TEXT = {"2.7": ("circulardrives/cdi-grading-tool@427b743c734af2bfc017837fd964c770badf324b"
                     ":docs/Datacenter NVMe SSD Specification v2.7 Final.md")}
VERSIONS = tuple(SPEC_TEXT)
GROUPS = ("SMART", "SLOG", "STD-LOG", "CTO", "TRIM", "NUSE", "ENDUD", "LMLOG")
OTHER_GROUPS = ("PCI, SEC, TCG*, TEL*, NVMe-AD, NVMe-IO, NVMe-OPT, NVMe-CFG, NVMe-MI, FWUP, "
                "LMDATA, EREC, PWR, PCM, TTHROTTLE, META-PERF, UUID, PLP, EOL and the "
                "spec's other groups: not tabulated (nothing the suite runs or reads "
                "reaches them)")

# Checks (pts.stored.ocp_verdicts.CHECKS) and what they judge
C0_FIELD = "c0 field"              # the C0h fields named are given by the drive
C0_VERSION = "c0 version"          # Log Page Version
C0_GUID = "c0 guid"                # Log Page GUID
C0_DSSD = "c0 dssd version"        # the DSSD specification version the page declares
NUSE_AFTER_FORMAT = "nuse after format"
PURGE_TIME = "purge time"
SMART_LOG_READ = "smart log read"
PERCENT_USED_KEPT = "percent used never decreases"
LOGS_KEPT_OVER_PURGE = "logs kept over purge"

# Values of v2.7 a check compares with (CONFIRMED: the spec's line states it)
C0_LOG_VERSION = {"2.7": (6, CONFIRMED, "SMART-27, line 1794-1797: shall be 0006h")}
C0_GUID_VALUE = {"2.7": ("0xafd514c97c6f4f9ca4f2bfea2810afc5", CONFIRMED,
                         "SMART-28, line 1797-1799: AFD514C97C6F4F9CA4F2BFEA2810AFC5h, as "
                         "nvme-cli prints it")}
# DSSD specification version, SMART-13 (bytes 103:98), line 1396-1400: major 02h, minor
# 0007h, point 0000h, errata 00h
DSSD_VERSION = {"2.7": {"major_version": 2, "minor_version": 7, "point_version": 0,
                        "errata_version": 0}}


@dataclass(frozen=True)
class Readings:
    status: str        # CONFIRMED or READING
    text: str          # the line, or the reading and why it is one
    applies_to: str = ""   # a purge reading: "format" / "sanitize" (only where one ran)


# A purge's time limit: which purges (("format", SES) or ("sanitize", SANACT)), seconds,
# and whether per TB of capacity.
@dataclass(frozen=True)
class PurgeLimit:
    purges: tuple[tuple[str, int], ...]
    seconds: float
    per_tb: bool = False


@dataclass(frozen=True)
class OcpRequirement:
    version: str
    id: str
    line: int
    subject: str
    check: str | None = None           # None: not checked, `not_checked` says why
    not_checked: str = ""
    fields: tuple[str, ...] = ()        # C0_FIELD: pts.tools.nvme_ocp.C0_FIELDS names
    limit: PurgeLimit | None = None     # PURGE_TIME
    readings: tuple[Readings, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.version, self.id)

    @property
    def where(self) -> str:
        return f"OCP DC NVMe SSD {self.version} {self.id}, line {self.line}"


FORMAT_UDE, FORMAT_CRYPTO, FORMAT_NONE = ("format", 1), ("format", 2), ("format", 0)
SANITIZE_BLOCK, SANITIZE_CRYPTO = ("sanitize", 2), ("sanitize", 4)   # SANACT codes
PURGE_NAMES = {FORMAT_UDE: "Format SES=1 (user data erase)", FORMAT_CRYPTO: "Format SES=2 "
               "(crypto erase)", FORMAT_NONE: "Format SES=0", SANITIZE_BLOCK: "Sanitize block "
               "erase", SANITIZE_CRYPTO: "Sanitize crypto erase"}
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

NOT_READ = "not read by the suite"
C0_NOT_PRINTED = "a C0h field nvme-cli 2.3's OCP plugin does not print: not read by the suite"
NEEDS_POWER = "needs a power cycle or an unsafe power down; the suite never removes power"
NEEDS_DOCS = "a vendor disclosure or documentation requirement: nothing a host measures"
NO_LM = ("the suite reads the latency monitor log (C3h) but never configures it (Set "
         "Features C5h) nor judges its contents")


def _smart(n: int, line: int, subject: str, fields: tuple[str, ...] = (), *,
           why: str = "", check: str | None = None) -> OcpRequirement:
    if fields:
        check = C0_FIELD
    return OcpRequirement("2.7", f"SMART-{n}", line, subject, check,
                          "" if check else (why or C0_NOT_PRINTED), fields)


def _row(rid: str, line: int, subject: str, why: str = "", check: str | None = None,
         **kw) -> OcpRequirement:
    return OcpRequirement("2.7", rid, line, subject, check, "" if check else why, **kw)


_V27 = (
    # C0h, SMART / Health Information Extended (section 4.8.6)
    _smart(1, 1250, "Physical Media Units Written", ("physical_media_units_written",)),
    _smart(2, 1254, "Physical Media Units Read", ("physical_media_units_read",)),
    _smart(3, 1264, "Bad User NAND Blocks", ("bad_user_nand_blocks_raw",
                                             "bad_user_nand_blocks_normalized")),
    _smart(4, 1282, "Bad System NAND Blocks", ("bad_system_nand_blocks_raw",
                                               "bad_system_nand_blocks_normalized")),
    _smart(5, 1299, "XOR Recovery Count", ("xor_recovery_count",)),
    _smart(6, 1305, "Uncorrectable Read Error Count", ("uncorrectable_read_errors",)),
    _smart(7, 1312, "Soft ECC Error Count", ("soft_ecc_error_count",)),
    _smart(8, 1323, "End to End Correction Counts", ("end_to_end_detected_errors",
                                                     "end_to_end_corrected_errors")),
    _smart(9, 1338, "System Data % Used", ("system_data_percent_used",)),
    _smart(10, 1347, "Refresh Counts", ("refresh_count",)),
    _smart(11, 1364, "User Data Erase Counts", ("max_user_data_erase_count",
                                                "min_user_data_erase_count")),
    _smart(12, 1381, "Thermal Throttling Status and Count", ("thermal_throttling_events",
                                                             "current_throttling_status")),
    _smart(13, 1396, "DSSD Specification Version", check=C0_DSSD),
    _smart(14, 1412, "PCIe Correctable Error Count", ("pcie_correctable_errors",)),
    _smart(15, 1421, "Incomplete Shutdowns", ("incomplete_shutdowns",)),
    _smart(16, 1425, "reserved bytes 119:116", why="reserved bytes (shall be zero): nvme-cli's "
           "JSON does not print them"),
    _smart(17, 1434, "% Free Blocks", ("percent_free_blocks",)),
    _smart(18, 1443, "reserved bytes 127:121", why="reserved bytes (shall be zero): nvme-cli's "
           "JSON does not print them"),
    _smart(19, 1452, "Capacitor Health", ("capacitor_health",)),
    _smart(20, 1468, "NVMe Base Errata Version", ("nvme_base_errata_version",)),
    _smart(21, 1513, "Unaligned I/O", ("unaligned_io",)),
    _smart(22, 1521, "Security Version Number", ("security_version_number",)),
    _smart(23, 1529, "Total NUSE", ("nuse",)),
    _smart(24, 1536, "PLP Start Count", ("plp_start_count",)),
    _smart(25, 1544, "Endurance Estimate", ("endurance_estimate",)),
    _smart(26, 1791, "reserved bytes 493:366", why="reserved bytes (shall be zero): nvme-cli's "
           "JSON does not print them"),
    _smart(27, 1794, "Log Page Version", check=C0_VERSION),
    _smart(28, 1799, "Log Page GUID", check=C0_GUID),
    _smart(29, 1551, "PCIe Link Retraining Count", ("pcie_link_retraining_count",)),
    _smart(30, 1501, "Proactive Bad Die Retirement"),
    _smart(31, 1556, "Power State Change Count", ("power_state_change_count",)),
    _smart(32, 1476, "NVMe Command Set Errata Version"),
    _smart(33, 1574, "Lowest Permitted Firmware Revision"),
    _smart(34, 1483, "NVMe over PCIe Transport Errata Version"),
    _smart(35, 1492, "NVMe-MI Errata Version"),
    _smart(36, 1583, "Total Media Dies"),
    _smart(37, 1587, "Media Die Failure Tolerance"),
    _smart(38, 1590, "Media Dies Offline"),
    _smart(39, 1594, "Max Temperature Recorded"),
    _smart(40, 1599, "Form Factor"),
    _smart(41, 1604, "NAND Average Erase Count"),
    _smart(42, 1609, "Command Timeouts"),
    _smart(43, 1615, "System Area Program Fail"),
    _smart(44, 1636, "System Area Uncorrectable"),
    _smart(45, 1649, "System Area Erase Fail"),
    _smart(46, 1658, "Max Peak Power Capability"),
    _smart(47, 1666, "Current Average Power"),
    _smart(48, 1681, "Lifetime Power Consumed"),
    _smart(49, 1701, "DSSD Firmware Revision"),
    _smart(50, 1747, "DSSD Firmware Build UUID"),
    _smart(51, 1756, "DSSD Firmware Build Label"),
    _smart(52, 1767, "Dies In Use Bad NAND Blocks"),
    # SMART / Health log behaviour (section 4.8.5)
    _row("SLOG-1", 1197, "DSSD log values persist across power cycles", NEEDS_POWER),
    _row("SLOG-2", 1203, "counters saturate", "a counter's saturation cannot be reached by a "
         "run"),
    _row("SLOG-3", 1205, "little-endian fields", "the suite reads nvme-cli's decoded JSON, "
         "not the log's bytes"),
    _row("SLOG-4", 1208, "normalised counters: 100 % = 64h at factory exit", "needs the drive "
         "at factory exit"),
    _row("SLOG-5", 1211, "every SMART / Health field supported", "the suite reads ten fields "
         "of log 02h (pts.tools.nvme.SMART_FIELDS), not all"),
    _row("SLOG-6", 1214, "reading log 02h / C0h does not block I/O", "the suite reads the "
         "logs between workloads, never during one"),
    _row("SLOG-7", 1218, "02h / C0h refreshed at least every 10 min", "needs readings at a "
         "known interval under a steady workload; not judged"),
    _row("SLOG-8", 1221, "temperatures updated on access", NOT_READ),
    _row("SLOG-9", 1224, "assert events carry a reason identifier", NOT_READ),
    _row("SLOG-10", 1226, "obsolete (see STD-LOG-23)", "obsolete in v2.7"),
    _row("SLOG-11", 1227, "obsolete (see STD-LOG-23)", "obsolete in v2.7"),
    _row("SLOG-12", 1229, "no critical warning from Percentage Used alone", "needs a worn "
         "drive"),
    _row("SLOG-13", 1232, "OLEC reported in log 02h", "nvme-cli 2.3 does not print OLEC; "
         + NOT_READ),
    _row("SLOG-14", 1237, "IPM field of log 02h", "nvme-cli 2.3 does not print IPM; "
         + NOT_READ),
    # Standard log pages (section 4.8.1)
    _row("STD-LOG-1", 782, "Error Information log (01h) supported", "the suite names `nvme "
         "error-log` for a person to run; it does not record it"),
    _row("STD-LOG-2", 783, "SMART / Health Information log (02h) supported",
         check=SMART_LOG_READ),
    _row("STD-LOG-3", 785, "Percentage Used never decreases", check=PERCENT_USED_KEPT),
    _row("STD-LOG-4", 789, "Percentage Used from P/E cycles, not power-on hours", "a run "
         "moves Percentage Used by a point at most; needs the drive's life"),
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
    _row("CTO-3", 752, "QD1 I/O within 8 s; at most 7 I/Os over 2 s per hour at full load",
         "not judged: needs per-I/O completion times over an hour at full load (fio's "
         "maximum latency per point is recorded, not a count of I/Os over 2 s per hour)"),
    _row("CTO-4", 754, "I/O time independent of capacity", "needs drives of several "
         "capacities"),
    _row("CTO-5", 756, "vendor discloses timeout scenarios", NEEDS_DOCS),
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
    _row("TRIM-1", 7283, "Dataset Management Deallocate supported", "the suite's `--purge "
         "trim` uses blkdiscard but does not record whether the drive deallocated"),
    _row("TRIM-2", 7286, "deallocated blocks read as zeros (DLFEAT 001b)", "the purge's "
         "verification checks that marker blocks are gone, not that deallocated blocks read "
         "zeros; DLFEAT is not recorded"),
    _row("TRIM-3", 7289, "obsolete (see TRIM-2)", "obsolete in v2.7"),
    _row("TRIM-4", 7291, "deallocated blocks act as overprovisioning", "not judged: needs "
         "steady-state runs with and without deallocated space"),
    _row("TRIM-5", 7293, "idle garbage collection", "not judged (HIR shows recovery in idle "
         "time but does not separate garbage collection)"),
    _row("TRIM-6", 7295, "deallocation changes other reads' latency by at most 5 %",
         "not judged: needs a read workload with and without concurrent deallocation"),
    _row("TRIM-7", 7298, "idle GC changes read latency by at most 5 %", "not judged"),
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
    _row("ENDUD-1", 9634, "endurance (bytes at WAF 1) documented", NEEDS_DOCS),
    _row("ENDUD-2", 9641, "EOL preconditioning workload", "the suite does not run the EOL "
         "preconditioning (needs 35 degC ambient: a thermal chamber)"),
    _row("ENDUD-3", 9648, "Percentage Used tracks bytes written linearly", "a run writes a "
         "small share of the drive's endurance: Percentage Used (whole percent) moves by a "
         "point or none, too coarse to judge linearity; the evidence shows what it did"),
    # Latency monitor (section 4.8.8)
    *(_row(f"LMLOG-{n}", line, "latency monitor log / feature", NO_LM)
      for n, line in ((1, 2165), (2, 2168), (3, 2170), (4, 2172), (5, 2175), (6, 2178),
                      (7, 2184), (8, 2188), (9, 2192), (10, 2196), (11, 2201), (12, 2204),
                      (13, 2205), (14, 2207), (15, 2211), (16, 2215), (17, 2219), (18, 2224))),
)

TABLE: dict[tuple[str, str], OcpRequirement] = {r.key: r for r in _V27}


class UnknownVersion(ValueError):
    pass


def requirements(version: str) -> list[OcpRequirement]:
    """The table's rows of one spec version, in the table's order."""
    if version not in VERSIONS:
        raise UnknownVersion(
            f"no OCP Datacenter NVMe SSD requirement table for version {version!r}; "
            f"tabulated: {', '.join(VERSIONS)} (IDs differ between versions, so another "
            "version's numbers are never used in its place)")
    return [r for r in TABLE.values() if r.version == version]
