"""What one row of the OCP Datacenter NVMe SSD requirement tables is (pts.config.ocp_requirements
keys them by (spec version, ID); the rows of each version are in ocp_v20.py and ocp_v27.py),
the checks a row can name (pts.stored.ocp_verdicts.CHECKS) and what the versions share: the
C0h fields (SMART-x IDs whose field is the same in v2.0 and v2.7) and the reasons a
requirement is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.config import ocp_log_c0
from pts.config.ocp_log_layout import RESERVED as RESERVED_KIND

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

FORMAT_UDE, FORMAT_CRYPTO, FORMAT_NONE = ("format", 1), ("format", 2), ("format", 0)
SANITIZE_BLOCK, SANITIZE_CRYPTO = ("sanitize", 2), ("sanitize", 4)   # SANACT codes
PURGE_NAMES = {FORMAT_UDE: "Format SES=1 (user data erase)", FORMAT_CRYPTO: "Format SES=2 "
               "(crypto erase)", FORMAT_NONE: "Format SES=0", SANITIZE_BLOCK: "Sanitize block "
               "erase", SANITIZE_CRYPTO: "Sanitize crypto erase"}


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
    line: int                           # where the ID stands in the version's text: its
    subject: str                        # line (v2.7 Markdown) or page (v2.0 PDF), `locator`
    check: str | None = None           # None: not checked, `not_checked` says why
    not_checked: str = ""
    fields: tuple[str, ...] = ()        # C0_FIELD: pts.config.ocp_log_c0 field names
    all_ones: str = ""                  # C0_FIELD: what the text says all ones mean, where it
                                        # allows them (ALL_ONES); else all ones = not given
    limit: PurgeLimit | None = None     # PURGE_TIME
    readings: tuple[Readings, ...] = ()
    locator: str = "line"

    @property
    def key(self) -> tuple[str, str]:
        return (self.version, self.id)

    @property
    def where(self) -> str:
        return f"OCP DC NVMe SSD {self.version} {self.id}, {self.locator} {self.line}"


NOT_READ = "not read by the suite"
RESERVED = "reserved bytes (shall be zero): not judged"
NEEDS_POWER = "needs a power cycle or an unsafe power down; the suite never removes power"
NEEDS_DOCS = "a vendor disclosure or documentation requirement: nothing a host measures"
NO_LM = ("the latency monitor: the suite reads its log (C3h) at each test's start and, under "
         "--destructive, configures it (Set Features C5h) and reads the log again at the "
         "test's end; a host rule judges the row from those reads where one decides it, "
         "else it is not judged (no read decides it, or the run recorded no host facts)")

# SMART-n of C0h: this project's name for it. Its fields (what a C0_FIELD check reads) are
# the C0h table's fields under that ID in that version (pts.config.ocp_log_c0: v2.0 and v2.7
# give the same field the same ID; v2.0 ends at SMART-31, its SMART-26 and -30 reserved
# bytes), so a v2.7-only field (SMART-30, -32 .. -52) is checked on v2.7 alone; an ID whose
# table fields are all reserved bytes is not checked (RESERVED). SMART-13, -27 and -28 are
# the same fields with values of their own per version (C0_CHECKS;
# ocp_requirements.DSSD_VERSION, C0_LOG_VERSION, C0_GUID_VALUE).
C0H = {
    1: "Physical Media Units Written", 2: "Physical Media Units Read",
    3: "Bad User NAND Blocks", 4: "Bad System NAND Blocks", 5: "XOR Recovery Count",
    6: "Uncorrectable Read Error Count", 7: "Soft ECC Error Count",
    8: "End to End Correction Counts", 9: "System Data % Used", 10: "Refresh Counts",
    11: "User Data Erase Counts", 12: "Thermal Throttling Status and Count",
    13: "DSSD Specification Version", 14: "PCIe Correctable Error Count",
    15: "Incomplete Shutdowns", 16: "reserved bytes 119:116", 17: "% Free Blocks",
    18: "reserved bytes 127:121", 19: "Capacitor Health", 20: "NVMe Base Errata Version",
    21: "Unaligned I/O", 22: "Security Version Number", 23: "Total NUSE",
    24: "PLP Start Count", 25: "Endurance Estimate", 27: "Log Page Version",
    28: "Log Page GUID", 29: "PCIe Link Retraining Count",
    30: "Proactive Bad Die Retirement", 31: "Power State Change Count",
    32: "NVMe Command Set Errata Version", 33: "Lowest Permitted Firmware Revision",
    34: "NVMe over PCIe Transport Errata Version", 35: "NVMe-MI Errata Version",
    36: "Total Media Dies", 37: "Media Die Failure Tolerance", 38: "Media Dies Offline",
    39: "Max Temperature Recorded", 40: "Form Factor", 41: "NAND Average Erase Count",
    42: "Command Timeouts", 43: "System Area Program Fail", 44: "System Area Uncorrectable",
    45: "System Area Erase Fail", 46: "Max Peak Power Capability",
    47: "Current Average Power", 48: "Lifetime Power Consumed", 49: "DSSD Firmware Revision",
    50: "DSSD Firmware Build UUID", 51: "DSSD Firmware Build Label",
    52: "Dies In Use Bad NAND Blocks",
}
C0_CHECKS = {13: C0_DSSD, 27: C0_VERSION, 28: C0_GUID}


def c0_fields(version: str, n: int) -> tuple[str, ...]:
    """The C0h table's fields (pts.config.ocp_log_c0 names) under SMART-n in `version`,
    reserved bytes left out."""
    return tuple(f.name for f in ocp_log_c0.FIELDS
                 if f.kind != RESERVED_KIND and (version, f"SMART-{n}") in f.ids)


# C0h fields whose all-ones value the text defines, rather than leaving it "not supported",
# alike in v2.0 r21 (its C0h table, the PDF in freews/general_parser at source_doc/) and v2.7
# (cdi-grading-tool's Markdown): SMART-4, lines 1288-1291: all ones in Bad System NAND Blocks
# say that Bad User NAND Blocks (SMART-3) counts every block of the device and this field is
# invalid (the KIOXIA CD8's recorded page); SMART-19, lines 1445-1448: a drive without power
# loss protection reports FFFFh as its Capacitor Health. A drive doing so meets the row.
ALL_ONES = {4: "all ones: Bad User NAND Blocks (SMART-3) counts every block of the drive and "
               "this field is invalid, as the text allows",
            19: "all ones (FFFFh): the drive has no power loss protection, as the text "
                "says such a drive reports"}


def c0_row(version: str, n: int, line: int, locator: str = "line") -> OcpRequirement:
    """SMART-n of C0H in `version`'s table: the version, GUID or DSSD version check, a field
    check of the table's fields under that ID, or reserved bytes (not checked)."""
    fields = c0_fields(version, n)
    check = C0_CHECKS.get(n) or (C0_FIELD if fields else None)
    return OcpRequirement(version, f"SMART-{n}", line, C0H[n], check,
                          "" if check else RESERVED, () if n in C0_CHECKS else fields,
                          all_ones=ALL_ONES.get(n, ""), locator=locator)


# Requirements of SMART / Health log behaviour, standard logs, timeouts, deallocation and
# endurance
# that v2.0 and v2.7 state alike (each version's text read side by side), under the same ID:
# (subject, why not checked, check).
SHARED = {
    "SLOG-1": ("DSSD log values persist across power cycles", NEEDS_POWER, None),
    "SLOG-2": ("counters saturate", "a counter's saturation cannot be reached by a run", None),
    "SLOG-3": ("little-endian fields", "the suite decodes the logs' bytes little-endian, as "
               "the text says; a field written big-endian reads as another plausible value, "
               "which the bytes cannot tell apart", None),
    "SLOG-4": ("normalised counters: 100 % = 64h at factory exit", "needs the drive at "
               "factory exit", None),
    "SLOG-5": ("every SMART / Health field supported", "the suite reads ten fields of log 02h "
               "(pts.tools.nvme.SMART_FIELDS), not all", None),
    "SLOG-6": ("reading log 02h / C0h does not block I/O", "the suite reads the logs between "
               "workloads, never during one", None),
    "SLOG-7": ("02h / C0h refreshed at least every 10 min", "needs readings at a known "
               "interval under a steady workload; not judged", None),
    "SLOG-8": ("temperatures updated on access", NOT_READ, None),
    "SLOG-9": ("assert events carry a reason identifier", NOT_READ, None),
    "STD-LOG-1": ("Error Information log (01h) supported", "the suite names `nvme error-log` "
                  "for a person to run; it does not record it", None),
    "STD-LOG-2": ("SMART / Health Information log (02h) supported", "", SMART_LOG_READ),
    "STD-LOG-3": ("Percentage Used never decreases", "", PERCENT_USED_KEPT),
    "STD-LOG-4": ("Percentage Used from P/E cycles, not power-on hours", "a run moves "
                  "Percentage Used by a point at most; needs the drive's life", None),
    "CTO-3": ("QD1 I/O within 8 s; at most 7 I/Os over 2 s per hour at full load", "not "
              "judged: needs per-I/O completion times over an hour at full load (fio's maximum "
              "latency per point is recorded, not a count of I/Os over 2 s per hour)", None),
    "CTO-4": ("I/O time independent of capacity", "needs drives of several capacities", None),
    "CTO-5": ("vendor discloses timeout scenarios", NEEDS_DOCS, None),
    "TRIM-1": ("Dataset Management Deallocate supported", "the suite's `--purge trim` uses "
               "blkdiscard but does not record whether the drive deallocated", None),
    "TRIM-4": ("deallocated blocks act as overprovisioning", "not judged: needs steady-state "
               "runs with and without deallocated space", None),
    "TRIM-5": ("idle garbage collection", "not judged (HIR shows recovery in idle time but "
               "does not separate garbage collection)", None),
    "TRIM-7": ("idle GC changes read latency by at most 5 %", "not judged", None),
    "ENDUD-1": ("endurance (bytes at WAF 1) documented", NEEDS_DOCS, None),
    "ENDUD-2": ("EOL preconditioning workload", "the suite does not run the EOL "
                "preconditioning (needs 35 degC ambient: a thermal chamber)", None),
    "ENDUD-3": ("Percentage Used tracks bytes written linearly", "a run writes a small share "
                "of the drive's endurance: Percentage Used (whole percent) moves by a point or "
                "none, too coarse to judge linearity; the evidence shows what it did", None),
}


def shared(version: str, rid: str, line: int, locator: str = "line") -> OcpRequirement:
    subject, why, check = SHARED[rid]
    return OcpRequirement(version, rid, line, subject, check, why, locator=locator)


def row(version: str, rid: str, line: int, subject: str, why: str = "",
        check: str | None = None, **kw) -> OcpRequirement:
    return OcpRequirement(version, rid, line, subject, check, "" if check else why, **kw)
