"""The one wrapper around nvme-cli. Every command is an argv list with `-o json` where the
command has JSON output; fields are read tolerantly because nvme-cli's JSON changes between
versions (numbers vs strings, "(1) text" vs 1, renamed keys).

Field meanings are from the NVMe Base Specification 2.0 (Identify Controller, Identify
Namespace, SMART / Health Information log page 02h, Sanitize Status log page 81h, Feature
06h Volatile Write Cache).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pts.tools import commands
from pts.tools.nvme_json import NvmeError, uint128
from pts.tools.nvme_json import find as _find
from pts.tools.nvme_json import first_int as _first
from pts.tools.nvme_json import read_doc as _doc
from pts.tools.nvme_json import to_int as _int

PACKAGE = "nvme-cli"
DATA_UNIT_BYTES = 512 * 1000   # SMART data units: thousands of 512-byte units (log 02h)
# Endurance Group Information (log 09h) Data / Media Units Written are "reported in
# billions" of bytes (NVMe Base Specification 2.0, Endurance Group Information log page: a
# value of 1 is 1,000,000,000 bytes), not in the SMART log's 512,000-byte data units.
ENDURANCE_UNIT_BYTES = 1_000_000_000


# ---------------------------------------------------------------- identify

@dataclass(frozen=True)
class Controller:
    model: str       # mn, sn, fr: space-padded in the data structure, stripped here
    serial: str
    firmware: str
    oacs: int        # Optional Admin Command Support: bit 1 Format NVM, bit 2 ... see below
    sanicap: int     # Sanitize Capabilities: bit 0 crypto, 1 block erase, 2 overwrite
    fna: int         # Format NVM Attributes: bit 0 all namespaces, bit 2 crypto erase
    vwc: int         # Volatile Write Cache: bit 0 present

    @property
    def format_supported(self) -> bool:
        return bool(self.oacs & 0x2)          # OACS bit 1: Format NVM

    @property
    def sanitize_actions(self) -> list[str]:
        """Supported sanitize actions, best first (block erase, crypto erase, overwrite)."""
        names = [(0x2, "block"), (0x1, "crypto"), (0x4, "overwrite")]
        return [name for bit, name in names if self.sanicap & bit]

    @property
    def format_crypto_erase(self) -> bool:
        return bool(self.fna & 0x4)           # FNA bit 2: crypto erase with Format

    @property
    def format_all_namespaces(self) -> bool:
        return bool(self.fna & 0x1)           # FNA bit 0: Format applies to all namespaces

    @property
    def write_cache_present(self) -> bool:
        return bool(self.vwc & 0x1)


def parse_id_ctrl(text: str) -> Controller:
    """`nvme id-ctrl -o json`. Model (mn), serial (sn), firmware (fr) are space-padded."""
    doc = _doc(text, "nvme id-ctrl")

    def text_field(key: str) -> str:
        return str(doc.get(key, "")).strip() or "unknown"
    return Controller(text_field("mn"), text_field("sn"), text_field("fr"),
                      _int(doc.get("oacs")), _int(doc.get("sanicap")), _int(doc.get("fna")),
                      _int(doc.get("vwc")))


@dataclass(frozen=True)
class Namespace:
    nsze: int                 # size in logical blocks
    lba_format: int           # index of the LBA format in use (FLBAS)
    lba_bytes: int            # its data size
    dlfeat: int               # deallocate features: bits 2:0 = 001b, reads return zeros
    endgid: int = 0           # Endurance Group Identifier (0: the drive has no groups)

    @property
    def capacity_bytes(self) -> int:
        return self.nsze * self.lba_bytes

    @property
    def deallocated_reads_zero(self) -> bool:
        return (self.dlfeat & 0x7) == 0x1


def parse_id_ns(text: str) -> Namespace:
    """`nvme id-ns -o json`: capacity = NSZE x LBA data size of the format in use (FLBAS
    bits 3:0, plus bits 6:5 as the high bits for more than 16 formats). Capacity never comes
    from id-ctrl tnvmcap: some controllers report 0 there (QEMU; a real Intel Optane P1600X,
    tests/data/recorded)."""
    doc = _doc(text, "nvme id-ns")
    flbas = _int(doc.get("flbas"))
    index = (flbas & 0xF) | ((flbas >> 5) & 0x3) << 4
    formats = doc.get("lbafs") or []
    if index >= len(formats):
        raise NvmeError(f"nvme id-ns: LBA format {index} in use, but only {len(formats)} "
                        "formats listed")
    ds = _int(formats[index].get("ds"))
    if not 9 <= ds <= 16:     # 512 B .. 64 KiB; anything else is not a usable format
        raise NvmeError(f"nvme id-ns: LBA format {index} has data size 2^{ds}")
    return Namespace(_int(doc.get("nsze")), index, 1 << ds, _int(doc.get("dlfeat")),
                     _int(doc.get("endgid")))


# ---------------------------------------------------------------- logs

@dataclass(frozen=True)
class Smart:
    critical_warning: int
    temperature_c: int
    percent_used: int
    data_units_read: int
    data_units_written: int
    media_errors: int
    error_log_entries: int
    warning_temp_minutes: int
    critical_temp_minutes: int
    thermal_transitions: int    # TMT1 + TMT2 transition counts (host-controlled throttling)
    raw: dict = field(repr=False, default_factory=dict)

    @property
    def bytes_written(self) -> int:
        return self.data_units_written * DATA_UNIT_BYTES

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in SMART_FIELDS}


SMART_FIELDS = ("critical_warning", "temperature_c", "percent_used", "data_units_read",
                "data_units_written", "media_errors", "error_log_entries",
                "warning_temp_minutes", "critical_temp_minutes", "thermal_transitions")

# Critical Warning bits (log 02h byte 0).
CRITICAL_WARNING_BITS = {0: "available spare below threshold", 1: "temperature threshold",
                         2: "NVM subsystem reliability degraded", 3: "media read-only",
                         4: "volatile memory backup failed", 5: "persistent memory read-only"}


def _celsius(value) -> int:
    """nvme-cli 2.x prints Kelvin as an integer; others print "50 C" / "323 K" strings."""
    if isinstance(value, str) and "C" in value and "K" not in value:
        return _int(value)
    kelvin = _int(value)
    return kelvin - 273 if kelvin > 150 else kelvin


def parse_smart_log(text: str) -> Smart:
    doc = _doc(text, "nvme smart-log")
    if _find(doc, "data_units_written") is None:
        raise NvmeError(f"nvme smart-log: no data_units_written in {text[:200]!r}")
    return Smart(
        critical_warning=_first(doc, "critical_warning"),
        temperature_c=_celsius(_find(doc, "temperature")),
        percent_used=_first(doc, "percent_used", "percentage_used"),
        data_units_read=_first(doc, "data_units_read"),
        data_units_written=_first(doc, "data_units_written"),
        media_errors=_first(doc, "media_errors"),
        error_log_entries=_first(doc, "num_err_log_entries"),
        warning_temp_minutes=_first(doc, "warning_temp_time"),
        critical_temp_minutes=_first(doc, "critical_comp_time"),
        thermal_transitions=_first(doc, "thm_temp1_trans_count")
        + _first(doc, "thm_temp2_trans_count"),
        raw=doc)


@dataclass(frozen=True)
class SanitizeLog:
    progress: float         # 0.0 .. 1.0 (SPROG / 65536)
    state: int              # SSTAT bits 2:0: 0 never, 1 done, 2 in progress, 3 failed,
    #                         4 done without deallocation

    @property
    def in_progress(self) -> bool:
        return self.state == 2

    @property
    def succeeded(self) -> bool:
        return self.state in (1, 4)

    @property
    def failed(self) -> bool:
        return self.state == 3


def parse_sanitize_log(text: str) -> SanitizeLog:
    doc = _doc(text, "nvme sanitize-log")
    sprog = _find(doc, "sprog")
    sstat = _find(doc, "sstat")
    if sprog is None or sstat is None:
        raise NvmeError(f"nvme sanitize-log: no sprog/sstat in {text[:200]!r}")
    state = _int(sstat.get("status")) if isinstance(sstat, dict) else _int(sstat) & 0x7
    return SanitizeLog(_int(sprog) / 65536, state & 0x7)


def parse_feature_value(text: str) -> int:
    """`nvme get-feature` prints "... Current value:0x00000001" (JSON is not supported for
    every feature in every version); JSON with "value" is accepted too."""
    try:
        doc = json.loads(text)
        if isinstance(doc, dict) and "value" in doc:
            return _int(doc["value"])
    except ValueError:
        pass
    # printf "%#010x": "0x00000001", but zero prints as "00000000" (no 0x): always hex.
    m = re.search(r"[Cc]urrent value:\s*(?:0x)?([0-9a-fA-F]+)", text)
    if not m:
        raise NvmeError(f"nvme get-feature: no current value in {text[:200]!r}")
    return int(m.group(1), 16)


def parse_endurance_log(text: str) -> tuple[int, int]:
    """`nvme endurance-log -o json` (Endurance Group Information, log page 09h): (Data Units
    Written, Media Units Written), both in units of ENDURANCE_UNIT_BYTES (10^9 bytes: NVMe
    Base Specification 2.0, Endurance Group Information log page, "reported in billions";
    unlike the SMART log's thousands of 512-byte units). QEMU's log 09h reads the same way
    (its NVMe maintainer on qemu-devel, February 2023, when the log was added)."""
    doc = _doc(text, "nvme endurance-log")
    host = uint128(_find(doc, "data_units_written"))
    media = uint128(_find(doc, "media_units_written"))
    if host is None or media is None:
        raise NvmeError(f"nvme endurance-log: no data/media_units_written in {text[:200]!r}")
    return host, media


# ---------------------------------------------------------------- commands

def controller_path(block_path: str) -> str:
    """/dev/nvme0n1 -> /dev/nvme0 (the controller's character device, for admin commands
    that address the controller: smart-log, sanitize, features)."""
    m = re.match(r"^(/dev/nvme\d+)n\d+$", block_path)
    if not m:
        raise NvmeError(f"{block_path} is not an NVMe namespace block device (/dev/nvmeXnY)")
    return m.group(1)


def run_admin(argv: list[str], log_file: Path | None, timeout: float = 60,
              run: Callable | None = None):
    """`run`: the command runner (default: this host; pts.tools.hosts for a DUT host)."""
    if run is None:
        commands.require("nvme", PACKAGE)
        run = commands.run
    try:
        return run(["nvme", *argv], log_file=log_file, timeout=timeout)
    except commands.ToolFailed as exc:
        raise NvmeError(str(exc)) from None


def id_ctrl(block_path: str, log_file: Path | None = None,
            run: Callable | None = None) -> Controller:
    return parse_id_ctrl(run_admin(["id-ctrl", block_path, "-o", "json"], log_file,
                                   run=run).stdout)


def id_ns(block_path: str, log_file: Path | None = None,
          run: Callable | None = None) -> Namespace:
    return parse_id_ns(run_admin(["id-ns", block_path, "-o", "json"], log_file,
                                 run=run).stdout)


def smart_log(block_path: str, log_file: Path | None = None,
              run: Callable | None = None) -> Smart:
    ctrl = controller_path(block_path)
    return parse_smart_log(run_admin(["smart-log", ctrl, "-o", "json"], log_file,
                                     run=run).stdout)


def endurance_log(block_path: str, group: int, log_file: Path | None = None,
                  run: Callable | None = None) -> tuple[int, int]:
    return parse_endurance_log(run_admin(
        ["endurance-log", controller_path(block_path), f"--group-id={group}",
         "--output-format=json"], log_file, run=run).stdout)


def ocp_log(block_path: str, command: str, log_file: Path | None = None,
            run: Callable | None = None) -> str:
    """`nvme ocp smart-add-log|latency-monitor-log DEV -o json`: the JSON text."""
    return run_admin(["ocp", command, controller_path(block_path), "-o", "json"], log_file,
                     run=run).stdout


def sanitize_log(block_path: str, log_file: Path | None = None) -> SanitizeLog:
    ctrl = controller_path(block_path)
    return parse_sanitize_log(run_admin(["sanitize-log", ctrl, "-o", "json"], log_file).stdout)


def get_feature(block_path: str, fid: int, log_file: Path | None = None,
                run: Callable | None = None) -> int:
    ctrl = controller_path(block_path)
    return parse_feature_value(run_admin(["get-feature", ctrl, f"--feature-id={fid}"],
                                         log_file, run=run).stdout)


def set_feature_argv(block_path: str, fid: int, value: int) -> list[str]:
    return ["nvme", "set-feature", controller_path(block_path), f"--feature-id={fid}",
            f"--value={value}"]


def set_feature(block_path: str, fid: int, value: int, log_file: Path | None = None,
                run: Callable | None = None) -> None:
    run_admin(set_feature_argv(block_path, fid, value)[1:], log_file, run=run)


def version() -> str:
    try:
        return commands.run(["nvme", "version"], timeout=30).stdout.strip().splitlines()[0]
    except (commands.ToolError, IndexError):
        return "not installed"
