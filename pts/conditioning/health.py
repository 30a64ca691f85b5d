"""Device health around each PTS test: the NVMe SMART / Health log (log page 02h) read at
every step (test start, after purge, after WIPC, after each round, test end) and kept in the
ledger as `device_counters` records with source "smart-log".

A critical warning seen at any step, or thermal throttling during the test (thermal
management transitions, or minutes above the warning / critical composite temperature
going up), makes the test a DEVICE HEALTH FAILURE: distinct from a spec failure, because
the numbers then describe a drive protecting itself, not its steady-state performance.
"""

from __future__ import annotations

from pathlib import Path

from pts.device.identity import BlockDevice
from pts.results.ledger import read_ledger
from pts.tools import commands, nvme

SOURCE = "smart-log"
HEALTH_FAILURE = "device_health_failure"


def snapshot(dev: BlockDevice, log_file: Path | None = None) -> dict | None:
    """Counters for a device_counters record, or None (not NVMe, or smart-log failed: the
    caller records nothing rather than zeros)."""
    if dev.transport != "nvme":
        return None
    try:
        smart = nvme.smart_log(dev.path, log_file)
    except (commands.ToolError, nvme.NvmeError):
        return None
    # host_writes/page_size in the emulator's terms, so the counters page can show them.
    return {"host_writes": smart.data_units_written, "page_size": nvme.DATA_UNIT_BYTES,
            **smart.as_dict()}


def test_records(ledger_path: Path, test: str) -> list[dict]:
    """This test's smart-log records, in ledger order."""
    records, _ = read_ledger(ledger_path)
    return [r.data for r in records if r.data.get("type") == "device_counters"
            and r.data.get("test") == test and r.data.get("source") == SOURCE]


def _warning_text(bits: int) -> str:
    names = [name for bit, name in nvme.CRITICAL_WARNING_BITS.items() if bits >> bit & 1]
    return f"{bits:#04x} ({', '.join(names) or 'reserved bits'})"


def problems(records: list[dict]) -> list[str]:
    """What in these smart-log records makes the test a device-health failure."""
    if not records:
        return []
    out = []
    seen: dict[int, list[str]] = {}          # warning bits -> the steps that showed them
    for rec in records:
        bits = int(rec["counters"].get("critical_warning") or 0)
        if bits:
            seen.setdefault(bits, []).append(str(rec.get("when")))
    for bits, whens in seen.items():
        out.append(f"critical warning {_warning_text(bits)} at {len(whens)} of "
                   f"{len(records)} steps, first at {whens[0]}")
    first, last = records[0]["counters"], records[-1]["counters"]
    for key, what in (("thermal_transitions", "thermal management (throttling) transitions"),
                      ("warning_temp_minutes", "minutes above the warning temperature"),
                      ("critical_temp_minutes", "minutes above the critical temperature")):
        delta = int(last.get(key) or 0) - int(first.get(key) or 0)
        if delta > 0:
            out.append(f"{what}: +{delta} during the test")
    return out
