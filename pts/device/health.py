"""Device health around each PTS test: the NVMe SMART / Health log (log page 02h) read at
every step (test start, after purge, after WIPC, after each round, test end) and kept in the
ledger as `device_counters` records with source "smart-log", with the drive's media writes
and latency monitor (pts.device.media_writes) in the same counters. A read that fails is recorded
too (counters null, `error` says why) and declared as a deviation.

A critical warning seen at any step, or thermal throttling during the test (thermal
management transitions, or minutes above the warning / critical composite temperature
going up), makes the test a DEVICE HEALTH FAILURE: distinct from a spec failure, because
the numbers then describe a drive protecting itself, not its steady-state performance.

This module reads the device and judges its counters; finding a test's device_counters
records in the ledger is pts.results.health_records (the ledger layer sits above this one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pts.device import health_smartctl, media_writes
from pts.device.identity import BlockDevice
from pts.tools import commands, nvme, smartctl

SOURCE = "smart-log"
SOURCES = (SOURCE, health_smartctl.SOURCE)     # NVMe smart-log; ATA/SCSI smartctl
HEALTH_FAILURE = "device_health_failure"


class CountersRecord(Protocol):
    """A device_counters record (pts.results.records.DeviceCounters) as judged here."""

    when: object
    source: str
    counters: dict | None


@dataclass(frozen=True)
class Snapshot:
    """One smart-log read: the counters of a device_counters record, or why there are none."""

    counters: dict | None       # None: the read failed
    error: str | None = None    # what failed (the tool's message)
    source: str = SOURCE        # "smart-log" (NVMe) or "smartctl" (ATA, SCSI/SAS)


def snapshot(dev: BlockDevice, log_file: Path | None = None) -> Snapshot | None:
    """The device's SMART / Health counters, or None for a device we read none from (not
    NVMe, ATA or SCSI). A failed read is a Snapshot with an error, never zeros and never
    nothing: the caller records and declares it."""
    if dev.transport == "scsi":          # SAS, and SATA behind libata (SAT)
        counters, error = health_smartctl.read(dev.path, log_file, **_on(dev))
        return Snapshot(counters, error, health_smartctl.SOURCE)
    if dev.transport != "nvme":
        return None
    try:
        smart = nvme.smart_log(dev.path, log_file, **_on(dev))
    except (commands.ToolError, nvme.NvmeError, ValueError) as exc:
        # One line: it goes into a deviation and the report (stderr lines folded into it).
        return Snapshot(None, " ".join(str(exc).split()) or type(exc).__name__)
    # host_writes/page_size in the emulator's terms, so the counters page can show them;
    # media writes and the OCP latency monitor beside them (pts.device.media_writes).
    return Snapshot({"host_writes": smart.data_units_written,
                     "page_size": nvme.DATA_UNIT_BYTES, **smart.as_dict(),
                     **media_writes.nvme_counters(dev.path, log_file, **_on(dev))})


def _on(dev: BlockDevice) -> dict:
    """The runner keyword of a device on another host (ssh://): its tools run there."""
    return {"run": dev.host.run} if dev.remote is not None else {}


def unread_deviation(when: str, error: str, source: str = SOURCE) -> str:
    what = f"SMART data ({smartctl.COMMAND})" if source == health_smartctl.SOURCE \
        else "NVMe SMART log (nvme smart-log)"
    return (f"{what} could not be read at step \"{when}\": {error}. "
            "Steps without a SMART reading are not covered by the device-health check (the "
            "device-counters page lists them).")


def _warning_text(bits: int) -> str:
    names = [name for bit, name in nvme.CRITICAL_WARNING_BITS.items() if bits >> bit & 1]
    return f"{bits:#04x} ({', '.join(names) or 'reserved bits'})"


def problems(found: Sequence[CountersRecord]) -> list[str]:
    """What in these smart-log records makes the test a device-health failure."""
    if not found:
        return []
    if found[0].source == health_smartctl.SOURCE:
        return health_smartctl.problems([r.counters for r in found], [str(r.when) for r in found])
    out = []
    seen: dict[int, list[str]] = {}          # warning bits -> the steps that showed them
    for rec in found:
        bits = int(rec.counters.get("critical_warning") or 0)
        if bits:
            seen.setdefault(bits, []).append(str(rec.when))
    for bits, whens in seen.items():
        out.append(f"critical warning {_warning_text(bits)} at {len(whens)} of "
                   f"{len(found)} steps, first at {whens[0]}")
    first, last = found[0].counters, found[-1].counters
    for key, what in (("thermal_transitions", "thermal management (throttling) transitions"),
                      ("warning_temp_minutes", "minutes above the warning temperature"),
                      ("critical_temp_minutes", "minutes above the critical temperature")):
        delta = int(last.get(key) or 0) - int(first.get(key) or 0)
        if delta > 0:
            out.append(f"{what}: +{delta} during the test")
    return out
