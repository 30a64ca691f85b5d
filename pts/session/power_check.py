"""--power's sources asked once when the session starts, --dry-run too (issue 51 §5): each is
built for the device under test and must give a reading, or the session stops naming the
source and the fix, before anything is written. Without --power, the drive's own report is
read where the drive has one (an NVMe drive of this host whose C0h or Power Measurement gives
a reading: pts.power.drive), said either way; else no source."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path

from pts.config.power_option import PowerSpecError, SourceSpec
from pts.config.settings import Settings
from pts.device.identity import DeviceError
from pts.power import drive
from pts.power import spec as power_spec
from pts.power.source import PowerSource, PowerSourceError
from pts.tools.nvme import controller_path


class PowerRefused(DeviceError):
    """A --power source that cannot be built for this device, or does not answer (a
    DeviceError: the session's device checks stop the session with it, cleaning up)."""


def _own_drive(device) -> str:
    """Why `device` has no report of its own that this host reads ('' when it may have)."""
    if getattr(device, "emulated", False):
        return f"{device.given} is the emulated SSD (its power: --power emulated)"
    if getattr(device, "remote", None) is not None:
        return f"{device.given} is on another host (this host's nvme-cli reads the drive)"
    if getattr(device, "transport", "") != "nvme":
        return f"{device.given} is not an NVMe drive (the drive's report: OCP C0h, Power " \
               f"Measurement)"
    return ""


def drive_reader(device, run: Callable | None = None) -> Callable[[SourceSpec], PowerSource]:
    """pts.power.drive's factory for `device`, or one refusing with why it has no report."""
    if why := _own_drive(device):
        def refuse(spec: SourceSpec) -> PowerSource:
            raise PowerSpecError(f"--power drive: {why}")
        return refuse
    return drive.reader(device.path, run=run)


def sources(settings: Settings, device, run: Callable | None = None) -> list[PowerSource]:
    """The run's sources, built for `device` (a pts.device BlockDevice); PowerRefused."""
    out = []
    for spec in settings.power:
        if spec.kind == "emulated" and not device.emulated:
            raise PowerRefused(f"--power emulated: {device.given} is not an emulated SSD (its "
                               f"power model is the emulator's): use --device emulated:SIZE, "
                               f"or a source that measures this drive (ipmi:, redfish:, "
                               f"meter:)")
        try:
            out.append(power_spec.build(spec, device=device.path, drive=drive_reader(device, run)))
        except (PowerSpecError, PowerSourceError) as exc:
            raise PowerRefused(str(exc)) from None
    return out


def default(settings: Settings, device, write: Callable[[str], None],
            run: Callable | None = None) -> Settings:
    """No --power given: the drive's own report where the drive has one (`settings` with
    --power drive), else no source; which, and why, said by `write`. Nothing is said for a
    device that cannot have one (a loop device, the emulated SSD, a drive on another host)."""
    if _own_drive(device):
        return settings
    try:
        ctrl = controller_path(device.path)
        with tempfile.TemporaryDirectory(prefix="pts-drive-power-") as folder:
            report = drive.probe(ctrl, Path(folder), run=run)
    except Exception as exc:      # noqa: BLE001 - the default never stops a session
        write(f"[pts power] no --power given: the drive's own power report was not read "
              f"({exc}); no power source")
        return settings
    if report.reading is None:
        write(f"[pts power] no --power given: {report.why}; no power source (give --power "
              f"to read one)")
        return settings
    write(f"[pts power] no --power given: {report.why}; reading it (--power drive; "
          f"--power none reads nothing)")
    return dataclasses.replace(settings, power=(SourceSpec("drive"),))


def check(settings: Settings, device, write: Callable[[str], None] | None = None,
          given: bool = True, run: Callable | None = None) -> Settings:
    """Every source answers once, or PowerRefused naming each that does not; the settings
    the run uses (`given` False: --power was not given, the default chosen and said)."""
    if not given and not settings.power and write is not None:
        settings = default(settings, device, write, run)
    if not settings.power:
        return settings
    failed = [(name, why) for name, why in power_spec.check(sources(settings, device, run))
              if why]
    if failed:
        raise PowerRefused("; ".join(
            f"--power: source {name} does not answer ({why})" for name, why in failed)
            + ". Fix the source, or leave it out of --power (the run then records no power "
              "from it)")
    return settings
