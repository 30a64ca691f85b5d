"""Device health of ATA and SCSI/SAS drives through smartctl (pts.tools.smartctl), read at
the same steps as the NVMe smart-log (pts.device.health) and judged the same way: a
drive that reports a failure at any step, or whose media gets worse during the test, makes
the test a DEVICE HEALTH FAILURE (its numbers then describe a failing drive).

  - SMART overall-health "FAILED" (smart_status.passed false) at any step: the ATA/SCSI
    counterpart of an NVMe critical warning;
  - reallocated sectors (ATA attribute 5, SCSI grown defect list), pending sectors (ATA 197),
    offline uncorrectable (ATA 198) or uncorrected media errors (ATA 187, SCSI error counter
    log) going up during the test: the counterpart of NVMe media errors / spare use.
Temperature and percentage used are recorded, not judged (no throttling counters here).

Host writes as the drive counts them (for the WAF, pts.stored.waf): an ATA drive's Device
Statistics "Logical Sectors Written" in logical sectors; an NVMe drive's Data Units Written
(an NVMe drive behind a USB bridge is on transport "scsi" and read here) in its own unit of
512,000 bytes, as the smart-log records keep it, so its resolution is that unit's.
Media writes: an ATA attribute smartctl's drive database names with a unit; where the drive
has only media-write attributes of unknown unit, they are named and not used; an NVMe
drive's media writes are in logs smartctl does not print (09h, OCP C0h)."""

from __future__ import annotations

from pathlib import Path

from pts.device import media_writes
from pts.tools import commands, nvme, smartctl

SOURCE = "smartctl"
NVME_MEDIA = ("smartctl prints an NVMe drive's SMART / Health log (02h), not the logs with its "
              "media writes (Endurance Group log 09h, OCP C0h), which the suite reads with "
              "nvme-cli where the drive is on an NVMe transport")
NO_ATTRIBUTE = {"ATA": "no media-write attribute among its SMART attributes",
                "SCSI": "SCSI has no standard media-write counter smartctl prints"}
GROWTH = (("reallocated_sectors", "reallocated sectors (grown defects)"),
          ("pending_sectors", "pending sectors"),
          ("offline_uncorrectable", "offline uncorrectable sectors"),
          ("media_errors", "uncorrected media errors"))


def read(device: str, log_file: Path | None = None,
         run=None) -> tuple[dict | None, str | None]:
    """(counters of a device_counters record, None) or (None, why they could not be read).
    `run`: the command runner of a DUT host (default: here)."""
    try:
        found = smartctl.health(device, log_file, run=run)
    except (commands.ToolError, ValueError) as exc:
        return None, " ".join(str(exc).split()) or type(exc).__name__
    counters = found.as_dict()
    # The one path of write amplification (pts.device.media_writes): media writes as
    # media_bytes + media_source, the drive's host writes as host_writes x page_size.
    counters |= media(found)
    host = (found.data_units_written, nvme.DATA_UNIT_BYTES) if found.protocol == "NVMe" \
        else (found.sectors_written, found.sector_bytes)
    if host[0] is not None and host[1]:
        counters |= {"host_writes": host[0], "page_size": host[1]}
    return counters, None


def media(found: smartctl.Health) -> dict:
    """The media keys of a smartctl reading, with a note that says what is true where there
    is no value: the drive's media-write attributes of unknown unit (named), not used; an
    NVMe drive's media writes, not read by smartctl; or none the drive reports."""
    source = found.media_attribute and f"smartctl: {found.media_attribute}"
    if source:
        return media_writes.keys(found.media_bytes, source,
                                 unit=media_writes.unit_of({"media_source": source}))
    if found.media_unknown:
        return media_writes.keys(None, None, "media-write attributes the WAF cannot use: "
                                 f"{found.media_unknown}", label=media_writes.NOT_USED)
    if found.protocol == "NVMe":
        return media_writes.keys(None, None, NVME_MEDIA,
                                 label=media_writes.NOT_READ_BY_SMARTCTL)
    return media_writes.keys(None, None, NO_ATTRIBUTE.get(found.protocol, ""))


def problems(counters: list[dict], whens: list[str]) -> list[str]:
    """What in these smartctl readings (in step order) makes the test a health failure."""
    out = []
    failed = [w for c, w in zip(counters, whens, strict=True) if c.get("smart_passed") == 0]
    if failed:
        out.append(f"SMART overall-health self-assessment FAILED at {len(failed)} of "
                   f"{len(counters)} steps, first at {failed[0]}")
    first, last = counters[0], counters[-1]
    for key, what in GROWTH:
        a, b = first.get(key), last.get(key)
        if isinstance(a, int) and isinstance(b, int) and b > a:
            out.append(f"{what}: +{b - a} during the test")
    return out
