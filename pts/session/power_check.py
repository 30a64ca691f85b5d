"""--power's sources asked once when the session starts, --dry-run too (issue 51 §5): each is
built for the device under test and must give a reading, or the session stops naming the
source and the fix, before anything is written."""

from __future__ import annotations

from pts.config.power_option import PowerSpecError, SourceSpec
from pts.config.settings import Settings
from pts.device.identity import DeviceError
from pts.power import spec as power_spec
from pts.power.source import PowerSource

# Said where --power drive is given: the drive's own report (OCP C0h, the Power Measurement
# log) has no reader yet (issue 51 §1, its next step).
NO_DRIVE_READER = ("--power drive: the drive's own power report (OCP C0h, Power Measurement) "
                   "is not read yet; measure with emulated (an emulated SSD), ipmi:, redfish:, "
                   "rapl or meter: (docs/running.md 'Power sources')")


class PowerRefused(DeviceError):
    """A --power source that cannot be built for this device, or does not answer (a
    DeviceError: the session's device checks stop the session with it, cleaning up)."""


def _no_drive_reader(spec: SourceSpec) -> PowerSource:
    raise PowerSpecError(NO_DRIVE_READER)


def sources(settings: Settings, device) -> list[PowerSource]:
    """The run's sources, built for `device` (a pts.device BlockDevice); PowerRefused."""
    out = []
    for spec in settings.power:
        if spec.kind == "emulated" and not device.emulated:
            raise PowerRefused(f"--power emulated: {device.given} is not an emulated SSD (its "
                               f"power model is the emulator's): use --device emulated:SIZE, "
                               f"or a source that measures this drive (ipmi:, redfish:, "
                               f"meter:)")
        try:
            out.append(power_spec.build(spec, device=device.path, drive=_no_drive_reader))
        except PowerSpecError as exc:
            raise PowerRefused(str(exc)) from None
    return out


def check(settings: Settings, device) -> None:
    """Every source answers once, or PowerRefused naming each that does not."""
    if not settings.power:
        return
    failed = [(name, why) for name, why in power_spec.check(sources(settings, device)) if why]
    if failed:
        raise PowerRefused("; ".join(
            f"--power: source {name} does not answer ({why})" for name, why in failed)
            + ". Fix the source, or leave it out of --power (the run then records no power "
              "from it)")
