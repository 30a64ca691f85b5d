"""A test's device-health records in the ledger (device_counters from the SMART / Health
log or smartctl, pts.device.health reads and judges them): those the health check reads, the
read errors already declared, and on --resume the counters to compare with the run's last
step. Apart from pts.device.health because the ledger layer sits above the device layer.
"""

from __future__ import annotations

from pathlib import Path

from pts.device import health
from pts.device.identity import BlockDevice, DeviceError
from pts.results import records
from pts.results.ledger import read_records
from pts.results.resume import ResumeState
from pts.tools import nvme


def _smart_records(ledger_path: Path, test: str) -> list[records.DeviceCounters]:
    found, _ = read_records(ledger_path)
    return [r for r in found if isinstance(r, records.DeviceCounters) and r.test == test
            and r.source in health.SOURCES]


def errors_recorded(ledger_path: Path, test: str) -> set[str]:
    """The smart-log read errors already recorded for `test`."""
    return {str(r.error) for r in _smart_records(ledger_path, test) if r.error}


def resume_counters(dev: BlockDevice, state: ResumeState) -> dict | None:
    """--resume: the counters to compare with the run's last smart-log step (None: nothing
    to compare, not NVMe or no data units recorded). A drive whose SMART log cannot be read
    now, while the run recorded data units written, is refused: whether something else
    wrote to it since the stop cannot be checked."""
    snap = health.snapshot(dev)
    if snap is None or snap.error is None:
        return None if snap is None else snap.counters
    recorded = any(isinstance(r, records.DeviceCounters) and r.source == health.SOURCE
                   and (r.counters or {}).get("data_units_written") is not None
                   for r in state.records)
    if not recorded:
        return None
    raise DeviceError(f"--resume {state.folder}: the NVMe SMART log of {dev.given} cannot be "
                      f"read ({snap.error}), so the check that nothing else wrote to the "
                      "drive since the run stopped (data units written) cannot be made. "
                      f"Nothing was written. Make `nvme smart-log "
                      f"{nvme.controller_path(dev.path)}` work, or start a new run.")


def test_records(ledger_path: Path, test: str) -> list[records.DeviceCounters]:
    """This test's smart-log records that hold counters (not the failed reads), in ledger
    order."""
    return [r for r in _smart_records(ledger_path, test) if isinstance(r.counters, dict)]
