"""What every purge path (NVMe, ATA, SCSI, TRIM) returns or raises (PTS 2.0.2 §3.2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.tools import commands


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


class Recorder:
    """Runs the commands of one purge and keeps every argv in order, before it runs (so a
    command that hangs or is interrupted is recorded too)."""

    def __init__(self, run: Callable, log_file: Path | None, package: str):
        self.run, self.log_file, self.package = run, log_file, package
        self.steps: list[tuple[str, ...]] = []

    def __call__(self, argv: list[str], *, timeout: float | None = None,
                 check: bool = True) -> commands.CommandResult:
        self.steps.append(tuple(argv))
        try:
            return self.run(argv, log_file=self.log_file, timeout=timeout, check=check)
        except commands.ToolMissing as exc:
            raise self.error(f"{exc}; install it with `apt-get install {self.package}`. "
                             "Nothing was erased.") from None

    def error(self, message: str) -> PurgeError:
        return PurgeError(message, tuple(self.steps))
