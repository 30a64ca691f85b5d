"""smartctl (smartmontools) for ATA and SCSI/SAS drives: argv and parsing of
`smartctl --json -x` into the health values the suite records. JSON output only (smartctl
>= 7.0); tolerant parsing: a value the drive does not report is None. Plain values only; the
health verdict lives in pts.device.health.

Why -x and not -a: an ATA drive's percentage used and its own count of host writes are in its
Device Statistics log (GP log 04h: "Percentage Used Endurance Indicator", "Logical Sectors
Written"), which smartctl prints with `-x` or `-l devstat`, never with `-a` (smartctl(8) of
smartmontools 7.3: for ATA -a is "-H -i -c -A -l error -l selftest -l selective", -x adds
"-l devstat" among other logs). For SCSI -x adds the background scan, SAS phy, defects and
environmental logs to -a's; for NVMe the two are the same ("-H -i -c -A -l error"). Every
one of them only reads.

smartctl's exit status is a bit mask (smartctl(8) "RETURN VALUES"): bits 0-1 mean the
command line or the device open failed (no data); bit 2 a SMART command failed (data may be
partial); bits 3-7 describe the drive's health (failing, attributes past threshold, error
log entries, self-test errors) and come with complete JSON, so they are not failures here.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from pts.tools import commands

TOOL = "smartctl"
PACKAGE = "smartmontools"
TIMEOUT_S = 120
FATAL_BITS = 0b11            # command line did not parse / device could not be opened

# ATA attribute ids (raw values): smartmontools' drivedb names.
ATA_REALLOCATED, ATA_REPORTED_UNCORRECT, ATA_PENDING, ATA_OFFLINE_UNCORRECTABLE = 5, 187, 197, 198
ATA_PERCENT_USED_STAT = "Percentage Used Endurance Indicator"   # device statistics page 7
ATA_SECTORS_WRITTEN_STAT = "Logical Sectors Written"    # device statistics page 1: host writes
# Media (NAND) writes: the vendor attributes whose smartmontools drive database (drivedb.h of
# smartmontools 7.3) name states both that they count all the writes to the NAND and the unit;
# the families that name them so, in that database:
ATA_MEDIA_ATTRIBUTES = {
    "NAND_Writes_1GiB": 1 << 30,        # Intel 330/335/520/525/53x/540/545s (233, 249)
    "NAND_Writes_32MiB": 1 << 25,       # Intel 730, DC S35x0/3610/3700/3710, S3520, S45x0/S46x0
    "NAND_Writes_GiB": 1 << 30,         # SSSTC ER2 (243)
    "Total_NAND_Writes_GiB": 1 << 30,   # Marvell based SanDisk (233)
    "Flash_Writes_GiB": 1 << 30,        # Phison driven (Kingston ...), Seagate IronWolf 125 (233)
    "Flash_Writes_32MiB": 1 << 25,      # Innodisk 3IE2/3ME2/3MG2/3SE2/3TG6 (233, 245)
    "Lifetime_NAND_Prg_GiB": 1 << 30,   # SK hynix SATA (234)
    "Total_NAND_Prog_Ct_GiB": 1 << 30,  # Indilinx Barefoot 3, OCZ Intrepid 3000 (249)
}
# Other attributes named for NAND / flash writes or programs are media-write attributes too,
# but not used: the database states no unit (Samsung 251 NAND_Writes, Micron 247
# Host_Program_Page_Count and 248 Bckgnd_/FTL_Program_Page_Count, counted in NAND pages of a
# size it does not give), or they count one part of the NAND only (Silicon Motion 245
# TLC_Writes_32MiB / 246 SLC_Writes_32MiB, WD 233/234 NAND_GB_Written_TLC / _SLC). They are
# named in the record (Health.media_unknown), so the report says what the drive has and why it
# gives no WAF. Samsung 241 Total_LBAs_Written, Host_Writes_* are host writes, not media.
_MEDIA_WORD = re.compile(r"nand|flash|tlc|slc|media|program_page", re.IGNORECASE)
_WRITE_WORD = re.compile(r"writ|prog|prg", re.IGNORECASE)
_NOT_WRITES = re.compile(r"fail|erase|read", re.IGNORECASE)
_PART_ONLY = re.compile(r"tlc|slc", re.IGNORECASE)


class SmartctlError(commands.ToolError):
    """smartctl gave no usable JSON (not installed, device not opened, no SMART data)."""


@dataclass(frozen=True)
class Health:
    protocol: str                         # "ATA", "SCSI" (smartctl's device.protocol)
    smart_passed: int | None              # 1 passed, 0 FAILED (overall-health), None: unknown
    temperature_c: int | None
    reallocated_sectors: int | None       # ATA attr 5 raw; SCSI grown defect list
    pending_sectors: int | None           # ATA attr 197 raw
    offline_uncorrectable: int | None     # ATA attr 198 raw
    media_errors: int | None              # ATA attr 187 raw; SCSI uncorrected read+write+verify
    percent_used: int | None              # ATA device statistics / SCSI endurance indicator
    power_on_hours: int | None
    exit_status: int | None               # smartctl's bit mask (see the module docstring)
    sectors_written: int | None = None    # ATA device statistics "Logical Sectors Written"
    sector_bytes: int | None = None       # logical_block_size
    media_bytes: int | None = None        # a media-writes attribute (ATA_MEDIA_ATTRIBUTES)
    media_attribute: str | None = None    # which: "ATA attribute 249 NAND_Writes_1GiB"
    critical_warning: int | None = None   # NVMe log 02h byte 0 (bits: nvme.CRITICAL_WARNING_BITS)
    data_units_written: int | None = None   # NVMe log 02h, in units of 1,000 x 512 bytes
    media_unknown: str | None = None      # media-write attributes not used (unit not stated)

    def as_dict(self) -> dict:
        return asdict(self)


FIELDS = tuple(k for k in Health.__dataclass_fields__
               if k not in ("protocol", "media_attribute", "media_unknown"))


def argv(binary: str, device: str) -> list[str]:
    return [binary, "--json", "-x", device]


COMMAND = " ".join(argv(TOOL, "")[:-1])     # "smartctl --json -x", for the report's notes


def _int(value) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    return None


def _attr_raw(doc: dict, attr_id: int) -> int | None:
    for attr in (doc.get("ata_smart_attributes") or {}).get("table") or []:
        if isinstance(attr, dict) and attr.get("id") == attr_id:
            raw = attr.get("raw") or {}
            return _int(raw.get("value") if isinstance(raw, dict) else raw)
    return None


def _ata_stat(doc: dict, name: str) -> int | None:
    for page in (doc.get("ata_device_statistics") or {}).get("pages") or []:
        for entry in (page or {}).get("table") or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                return _int(entry.get("value"))
    return None


def _ata_media(doc: dict) -> tuple[int | None, str | None, str | None]:
    """(media bytes written, "ATA attribute N NAME") from ATA_MEDIA_ATTRIBUTES, and the other
    media-write attributes the drive has, not used ("ATA attribute 247 Host_Program_Page_Count
    (no unit stated), ..."; None: none)."""
    unknown = []
    for attr in (doc.get("ata_smart_attributes") or {}).get("table") or []:
        name = str(attr.get("name") or "") if isinstance(attr, dict) else ""
        unit = ATA_MEDIA_ATTRIBUTES.get(name)
        raw = _int((attr.get("raw") or {}).get("value")) if unit else None
        if raw is not None:
            return raw * unit, f"ATA attribute {attr.get('id')} {name}", None
        if _MEDIA_WORD.search(name) and _WRITE_WORD.search(name) \
                and not _NOT_WRITES.search(name):
            why = "one part of the NAND only" if _PART_ONLY.search(name) else "no unit stated"
            unknown.append(f"ATA attribute {attr.get('id')} {name} ({why})")
    return None, None, ", ".join(unknown) or None


def _scsi_uncorrected(doc: dict) -> int | None:
    log = doc.get("scsi_error_counter_log")
    if not isinstance(log, dict):
        return None
    found = [_int((log.get(kind) or {}).get("total_uncorrected_errors"))
             for kind in ("read", "write", "verify") if isinstance(log.get(kind), dict)]
    found = [v for v in found if v is not None]
    return sum(found) if found else None


def parse(text: str) -> Health:
    """`smartctl --json -x` output -> Health; SmartctlError if it is not smartctl JSON or
    smartctl could not open the device (its messages are in the error)."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise SmartctlError(f"smartctl --json printed no JSON: {text.strip()[:200]!r}") from None
    if not isinstance(doc, dict) or "smartctl" not in doc:
        raise SmartctlError(f"smartctl --json: no \"smartctl\" block in {text.strip()[:200]!r}")
    meta = doc.get("smartctl") or {}
    status = _int(meta.get("exit_status"))
    if status is not None and status & FATAL_BITS:
        messages = "; ".join(str(m.get("string")) for m in meta.get("messages") or []
                             if isinstance(m, dict)) or "no message"
        raise SmartctlError(f"smartctl exit status {status}: {messages}")
    protocol = str((doc.get("device") or {}).get("protocol") or "unknown")
    passed = (doc.get("smart_status") or {}).get("passed")
    scsi = protocol == "SCSI"
    if protocol == "NVMe":
        return _nvme(doc, status, passed)
    return Health(
        protocol=protocol,
        smart_passed=None if not isinstance(passed, bool) else int(passed),
        temperature_c=_int((doc.get("temperature") or {}).get("current")),
        reallocated_sectors=_int(doc.get("scsi_grown_defect_list")) if scsi
        else _attr_raw(doc, ATA_REALLOCATED),
        pending_sectors=None if scsi else _attr_raw(doc, ATA_PENDING),
        offline_uncorrectable=None if scsi else _attr_raw(doc, ATA_OFFLINE_UNCORRECTABLE),
        media_errors=_scsi_uncorrected(doc) if scsi else _attr_raw(doc, ATA_REPORTED_UNCORRECT),
        percent_used=_int(doc.get("scsi_percentage_used_endurance_indicator")) if scsi
        else _ata_stat(doc, ATA_PERCENT_USED_STAT),
        power_on_hours=_int((doc.get("power_on_time") or {}).get("hours")),
        exit_status=status,
        sectors_written=(written := None if scsi else _ata_stat(doc, ATA_SECTORS_WRITTEN_STAT)),
        sector_bytes=None if written is None else _int(doc.get("logical_block_size")),
        **dict(zip(("media_bytes", "media_attribute", "media_unknown"), (None,) * 3 if scsi
                   else _ata_media(doc), strict=True)))


def _nvme(doc: dict, status: int | None, passed) -> Health:
    """An NVMe drive's smartctl JSON: its SMART / Health log (02h) as smartctl prints it. Host
    writes: Data Units Written as the drive counts them, in units of 1,000 x 512 bytes (NVMe
    Base Specification, log 02h), which is also their resolution: the counter moves once per
    512,000 bytes, so they are not turned into 512-byte sectors. NVMe has no reallocated,
    pending or offline-uncorrectable sector counts: not given (None). smartctl's overall health
    of an NVMe drive is FAILED when a Critical Warning bit is set (a Samsung PM1725b with bit 4,
    volatile memory backup failed: passed false, exit status 8); the warning itself is kept in
    the counters, which say which bit where the verdict alone would not."""
    log = doc.get("nvme_smart_health_information_log") or {}
    units = _int(log.get("data_units_written"))
    return Health(
        protocol="NVMe", smart_passed=None if not isinstance(passed, bool) else int(passed),
        temperature_c=_int((doc.get("temperature") or {}).get("current")),
        reallocated_sectors=None, pending_sectors=None, offline_uncorrectable=None,
        media_errors=_int(log.get("media_errors")), percent_used=_int(log.get("percentage_used")),
        power_on_hours=_int((doc.get("power_on_time") or {}).get("hours")), exit_status=status,
        data_units_written=units, critical_warning=_int(log.get("critical_warning")))


def health(device: str, log_file: Path | None = None, run=None) -> Health:
    """Read the drive's health with `smartctl --json -x DEVICE` (read only); `run`: the
    command runner of a DUT host (pts.tools.hosts; default: here)."""
    if run is None:
        binary, run = commands.require(TOOL, PACKAGE), commands.run
    else:
        binary = TOOL
    result = run(argv(binary, device), log_file=log_file, timeout=TIMEOUT_S, check=False)
    return parse(result.stdout or "")
