"""What every purge path (NVMe, ATA, SCSI, TRIM) returns or raises (PTS 2.0.2 §3.2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


class PurgeError(RuntimeError):
    """The purge failed or is not possible; nothing after it may run. `steps`: every
    command that ran before the failure, clean-up included (kept in the ledger)."""

    def __init__(self, message: str, steps: tuple[tuple[str, ...], ...] = ()):
        super().__init__(message)
        self.steps = steps


@dataclass(frozen=True)
class PurgeResult:
    method: str              # "trim", "none", "NVMe Format SES=1", "ATA Security Erase", ...
    command: list[str] | None  # the command that erased
    seconds: float
    deviation: bool          # not a purge method of the spec
    steps: tuple[tuple[str, ...], ...] = ()  # every command run, in order (incl. clean-up)
    verification: str = ""   # how the purge was checked afterwards, in words


@dataclass(frozen=True)
class PurgePlan:
    """The purge chosen for a device, before anything is written (--dry-run prints it)."""
    method: str
    command: list[str] | None
    deviation: bool
    reason: str                              # why this method, e.g. "SANICAP = 0"
    execute: Callable[[], PurgeResult]
