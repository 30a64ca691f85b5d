"""Purge (PTS 2.0.2 §3.2): return the device to a state as if never written, before every
preconditioning + test cycle. Fail closed: a purge that fails stops the test.

This version offers TRIM (a declared deviation) and none (a declared deviation); `auto`
refuses on devices whose spec purge method (NVMe Format/Sanitize, ATA Security Erase,
SCSI Format Unit/Sanitize) is not implemented yet, rather than silently doing less.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pts import commands
from pts.device import BlockDevice


class PurgeError(RuntimeError):
    """The purge failed or is not possible; nothing after it may run."""


@dataclass(frozen=True)
class PurgeResult:
    method: str              # "trim", "none", "discard (emulated SSD)"
    command: list[str] | None
    seconds: float
    deviation: bool          # not a purge method of the spec


def _discard(dev: BlockDevice, log_file, label: str, deviation: bool) -> PurgeResult:
    argv = [commands.require("blkdiscard", "util-linux"), "-v", dev.path]
    start = time.monotonic()
    try:
        # blkdiscard opens the device O_EXCL, so a device in use fails here too.
        commands.run(argv, log_file=log_file, timeout=3600)
    except commands.ToolFailed as exc:
        raise PurgeError(f"purge by {label} of {dev.path} failed, stopping (fail closed): "
                         f"{exc}") from None
    return PurgeResult(label, argv, time.monotonic() - start, deviation)


def purge(method: str, dev: BlockDevice, log_file=None) -> PurgeResult:
    if method == "none":
        return PurgeResult("none", None, 0.0, True)
    if method == "trim":
        return _discard(dev, log_file, "trim", True)
    if method == "auto":
        if dev.emulated:
            # The emulated SSD's model resets to FOB on a whole-device discard: for this
            # model discard IS the purge. Still a model, so the run is never compliant.
            return _discard(dev, log_file, "discard (emulated SSD: resets the FTL model)",
                            False)
        raise PurgeError(
            f"--purge auto: no PTS purge method (NVMe Format/Sanitize, ATA Security Erase, "
            f"SCSI Format Unit) is available for {dev.path} (transport {dev.transport}) in "
            f"this version. Use --purge trim to purge by TRIM (declared on the report as a "
            f"deviation), or --purge none.")
    raise PurgeError(f"unknown purge method {method!r}")
