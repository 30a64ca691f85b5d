"""Device health of ATA and SCSI/SAS drives through smartctl (pts.tools.smartctl), read at
the same steps as the NVMe smart-log (pts.device.health) and judged the same way: a
drive that reports a failure at any step, or whose media gets worse during the test, makes
the test a DEVICE HEALTH FAILURE (its numbers then describe a failing drive).

  - SMART overall-health "FAILED" (smart_status.passed false) at any step: the ATA/SCSI
    counterpart of an NVMe critical warning;
  - reallocated sectors (ATA attribute 5, SCSI grown defect list), pending sectors (ATA 197),
    offline uncorrectable (ATA 198) or uncorrected media errors (ATA 187, SCSI error counter
    log) going up during the test: the counterpart of NVMe media errors / spare use.
Temperature and percentage used are recorded, not judged (no throttling counters here)."""

from __future__ import annotations

from pathlib import Path

from pts.device import media_writes
from pts.tools import commands, smartctl

SOURCE = "smartctl"
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
    source = found.media_attribute and f"smartctl: {found.media_attribute}"
    counters |= media_writes.keys(found.media_bytes, source,
                                  unit=media_writes.unit_of({"media_source": source}))
    if found.sectors_written is not None and found.sector_bytes:
        counters |= {"host_writes": found.sectors_written, "page_size": found.sector_bytes}
    return counters, None


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
