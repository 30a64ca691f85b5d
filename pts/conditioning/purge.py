"""Purge (PTS 2.0.2 §3.2): return the device to a state as if never written, before every
preconditioning + test cycle. Fail closed: a purge that fails stops the test.

`--purge auto` picks the best spec method the device supports (NVMe: purge_nvme; SATA:
purge_ata; SCSI/SAS: purge_scsi; emulated SSD: a whole-device discard, which resets its model).
`sanitize`, `format` (NVMe, SCSI) and `security-erase` (ATA) ask for one method and fail
closed when the device lacks it. `trim` and `none` are declared
deviations. A spec purge is checked afterwards: marker blocks written at sampled offsets
before the purge must be gone after it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pts.conditioning import purge_ata, purge_nvme, purge_scsi, purge_verify
from pts.conditioning.purge_plan import PurgeError, PurgePlan, PurgeResult
from pts.device.identity import BlockDevice, is_ata
from pts.tools import commands

__all__ = ["PurgeError", "PurgePlan", "PurgeResult", "plan", "purge"]


def _discard_plan(dev: BlockDevice, log_file, label: str, deviation: bool,
                  why: str) -> PurgePlan:
    argv = ["blkdiscard", "-v", dev.path]
    # On another host: the command recorded and shown is the ssh command that runs it.
    shown = argv if dev.remote is None else dev.remote.ssh_argv(argv)

    def execute() -> PurgeResult:
        host = dev.host                     # this machine, or the DUT host over ssh
        host.require("blkdiscard", "util-linux")
        start = time.monotonic()
        try:
            # blkdiscard opens the device O_EXCL, so a device in use fails here too.
            host.run(argv, log_file=log_file, timeout=3600)
        except commands.ToolFailed as exc:
            raise PurgeError(f"purge by {label} of {dev.path} failed, stopping (fail "
                             "closed; nothing ran after it). If the device is in use (mounted, "
                             "swap, RAID, LVM), free it; if it cannot discard, use --purge "
                             f"none (a declared deviation). Then re-run: {exc}") from None
        return PurgeResult(label, shown, time.monotonic() - start, deviation, (tuple(shown),))
    return PurgePlan(label, shown, deviation, why, execute)


def _none() -> PurgeResult:
    return PurgeResult("none", None, 0.0, True)


def plan(method: str, dev: BlockDevice, log_file: Path | None = None,
         say: Callable[[str], None] = print) -> PurgePlan:
    """The purge `method` means for `dev` (reads identify data only; writes nothing)."""
    if method == "none":
        return PurgePlan("none", None, True, "--purge none", _none)
    if method == "trim":
        return _discard_plan(dev, log_file, "trim", True, "--purge trim")
    if method not in ("auto", "sanitize", "format", "security-erase"):
        raise PurgeError(f"unknown purge method {method!r}")
    if dev.remote is not None:
        raise PurgeError(
            f"--purge {method} on {dev.given}: a spec purge (NVMe Sanitize/Format, ATA "
            "Security Erase, SCSI Format Unit/Sanitize) is not supported on a device on "
            "another host yet (its verification writes marker blocks through this host's "
            "block layer). Use --purge trim (blkdiscard over ssh, a declared deviation) or "
            "--purge none, or run the suite on the DUT host itself.")
    if dev.emulated and method == "auto":
        # The emulated SSD's model resets to FOB on a whole-device discard: for this
        # model discard IS the purge. Still a model, so the run is never compliant.
        return _discard_plan(dev, log_file, "discard (emulated SSD: resets the FTL model)",
                             False, "emulated SSD")
    if dev.transport == "nvme" and method != "security-erase":
        return purge_nvme.plan(method, dev, log_file, say)
    if dev.transport == "scsi" and is_ata(dev) and method != "format":
        return purge_ata.plan(method, dev.path, log_file=log_file)
    if dev.transport == "scsi" and not is_ata(dev) and method != "security-erase":
        return purge_scsi.plan(method, dev.path, log_file=log_file)
    if method in ("format", "security-erase") and dev.transport in ("nvme", "scsi"):
        what = "ATA" if method == "security-erase" else "NVMe or SCSI"
        raise PurgeError(f"--purge {method} is for {what} devices; {dev.path} is "
                         f"{'an ATA' if is_ata(dev) else dev.transport.upper()} device. Use "
                         "--purge auto to pick its best method.")
    raise PurgeError(
        f"--purge {method}: no PTS purge method (NVMe Format/Sanitize, ATA Security Erase/"
        f"Sanitize, SCSI Format Unit/Sanitize) is available for {dev.path} (transport "
        f"{dev.transport}). Use --purge trim to purge by TRIM (declared on the report as a "
        "deviation), or --purge none.")


def purge(method: str, dev: BlockDevice, log_file: Path | None = None,
          say: Callable[[str], None] = print) -> PurgeResult:
    """Plan, mark, execute, verify. The markers are written only for a spec purge (a TRIM
    is not expected to erase anything, and `none` writes nothing)."""
    chosen = plan(method, dev, log_file, say)
    if chosen.deviation:
        return chosen.execute()
    markers = purge_verify.write_markers(dev)
    result = chosen.execute()
    found = purge_verify.surviving_markers(dev, markers)
    if found:
        raise PurgeError(f"{result.method} of {dev.path} reported success, but marker blocks "
                         f"written before it are still readable at offsets {found}: the "
                         "device was NOT purged. Stopping (fail closed).")
    check = f"{len(markers)} marker blocks written at sampled offsets before the purge " \
            "were gone after it"
    verification = f"{result.verification}; {check}" if result.verification else check
    return PurgeResult(result.method, result.command, result.seconds, result.deviation,
                       result.steps, verification)
