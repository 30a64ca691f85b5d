"""What one row of the OCP Datacenter NVMe SSD requirement tables is (pts.config.ocp_requirements
keys them by (spec version, ID); the rows of each version are in ocp_v20.py and ocp_v27.py),
the checks a row can name (pts.stored.ocp_verdicts.CHECKS) and what the versions share: the
C0h fields (SMART-x IDs whose field is the same in v2.0 and v2.7) and the reasons a
requirement is not checked.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    fields: tuple[str, ...] = ()        # C0_FIELD: pts.tools.nvme_ocp.C0_FIELDS names
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
C0_NOT_PRINTED = "a C0h field nvme-cli 2.3's OCP plugin does not print: not read by the suite"
RESERVED = "reserved bytes (shall be zero): nvme-cli's JSON does not print them"
NEEDS_POWER = "needs a power cycle or an unsafe power down; the suite never removes power"
NEEDS_DOCS = "a vendor disclosure or documentation requirement: nothing a host measures"
NO_LM = ("the suite reads the latency monitor log (C3h) but never configures it (Set "
         "Features C5h) nor judges its contents")

# SMART-n of C0h whose field (byte range) is the same in v2.0 (Version 2.0, 07302021) and
# v2.7: this project's name for it and the pts.tools.nvme_ocp.C0_FIELDS names it is read as.
# SMART-13, -27 and -28 are the same fields with values of their own per version
# (ocp_requirements.DSSD_VERSION, C0_LOG_VERSION, C0_GUID_VALUE).
C0H = {
    1: ("Physical Media Units Written", ("physical_media_units_written",)),
    2: ("Physical Media Units Read", ("physical_media_units_read",)),
    3: ("Bad User NAND Blocks", ("bad_user_nand_blocks_raw", "bad_user_nand_blocks_normalized")),
    4: ("Bad System NAND Blocks", ("bad_system_nand_blocks_raw",
                                   "bad_system_nand_blocks_normalized")),
    5: ("XOR Recovery Count", ("xor_recovery_count",)),
    6: ("Uncorrectable Read Error Count", ("uncorrectable_read_errors",)),
    7: ("Soft ECC Error Count", ("soft_ecc_error_count",)),
    8: ("End to End Correction Counts", ("end_to_end_detected_errors",
                                         "end_to_end_corrected_errors")),
    9: ("System Data % Used", ("system_data_percent_used",)),
    10: ("Refresh Counts", ("refresh_count",)),
    11: ("User Data Erase Counts", ("max_user_data_erase_count", "min_user_data_erase_count")),
    12: ("Thermal Throttling Status and Count", ("thermal_throttling_events",
                                                "current_throttling_status")),
    13: ("DSSD Specification Version", C0_DSSD),
    14: ("PCIe Correctable Error Count", ("pcie_correctable_errors",)),
    15: ("Incomplete Shutdowns", ("incomplete_shutdowns",)),
    16: ("reserved bytes 119:116", ()),
    17: ("% Free Blocks", ("percent_free_blocks",)),
    18: ("reserved bytes 127:121", ()),
    19: ("Capacitor Health", ("capacitor_health",)),
    20: ("NVMe Base Errata Version", ("nvme_base_errata_version",)),
    21: ("Unaligned I/O", ("unaligned_io",)),
    22: ("Security Version Number", ("security_version_number",)),
    23: ("Total NUSE", ("nuse",)),
    24: ("PLP Start Count", ("plp_start_count",)),
    25: ("Endurance Estimate", ("endurance_estimate",)),
    27: ("Log Page Version", C0_VERSION),
    28: ("Log Page GUID", C0_GUID),
    29: ("PCIe Link Retraining Count", ("pcie_link_retraining_count",)),
    31: ("Power State Change Count", ("power_state_change_count",)),
}


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
    """SMART-n of C0H in `version`'s table: a field check, the version, GUID or DSSD version
    check, or reserved bytes (not checked)."""
    subject, what = C0H[n]
    check = what if isinstance(what, str) else C0_FIELD if what else None
    return OcpRequirement(version, f"SMART-{n}", line, subject, check,
                          "" if check else RESERVED, () if isinstance(what, str) else what,
                          all_ones=ALL_ONES.get(n, ""), locator=locator)


# Requirements of SMART / Health log behaviour, standard logs, timeouts, deallocation and
# endurance
# that v2.0 and v2.7 state alike (each version's text read side by side), under the same ID:
# (subject, why not checked, check).
SHARED = {
    "SLOG-1": ("DSSD log values persist across power cycles", NEEDS_POWER, None),
    "SLOG-2": ("counters saturate", "a counter's saturation cannot be reached by a run", None),
    "SLOG-3": ("little-endian fields", "the suite reads nvme-cli's decoded JSON, not the log's "
               "bytes", None),
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
