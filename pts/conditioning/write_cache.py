"""Device volatile write cache (PTS 2.0.2: PTS-E WCD, PTS-C WCE), set and recorded before
WIPC and before the test loop. Host O_DIRECT is not a device-cache control.

NVMe: Set Features 06h (Volatile Write Cache) when Identify Controller VWC bit 0 says the
drive has one, read back with Get Features. A drive without a volatile write cache meets
WCD as it is and cannot meet WCE. SATA: hdparm -W; SAS/SCSI: sdparm WCE. Other transports
(loop, virtio): the kernel's view (sysfs queue/write_cache) is recorded, the cache is not
changed, and the run declares it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.device.identity import BlockDevice, is_ata
from pts.tools import commands, hdparm, nvme, sg3

VWC_FEATURE = 0x06       # NVMe Base 2.0 §5.27.1.4, Volatile Write Cache (bit 0 WCE)
ABSENT = "absent (no volatile write cache)"


@dataclass(frozen=True)
class CacheState:
    required: str        # "WCD" or "WCE"
    actual: str          # as the device or kernel reports it, e.g. "write back", "enabled"
    settable: bool
    how: str = "sysfs queue/write_cache (read only)"

    @property
    def matches(self) -> bool:
        """Only a state the device or kernel names counts; anything else is not assumed."""
        known = {"write back": "WCE", "write through": "WCD", "enabled": "WCE",
                 "disabled": "WCD", ABSENT: "WCD"}
        return known.get(self.actual) == self.required

    def deviation(self) -> str | None:
        want = "disabled (WCD)" if self.required == "WCD" else "enabled (WCE)"
        if self.actual == ABSENT and self.matches:
            return None         # no volatile cache: nothing to disable, WCD holds as such
        if not self.settable and self.matches:
            return (f"Write cache: the spec requires it {want}; the suite cannot set it on "
                    f"this device, which reports '{self.actual}' (the required state).")
        if not self.matches:
            how = "it could not be set on this device" if not self.settable else "it is not"
            return (f"Write cache: the spec requires it {want}; {how}, which reports "
                    f"'{self.actual}'.")
        return None


def set_and_read_back(set_argv: list[str], read_back: Callable[[], bool | None],
                      enabled: bool, how: str, run: Callable, log_file: Path | None,
                      timeout: float) -> CacheState:
    """Run `set_argv`, then `read_back()`: the state is what the drive reports after, never
    what was asked, so a drive that ignores the set gives settable=False. Used by the
    hdparm (pts.tools.hdparm) and sdparm (pts.tools.sg3) paths."""
    try:
        run(set_argv, log_file=log_file, timeout=timeout)
    except commands.ToolError as exc:
        how += f" (setting failed: {(str(exc).splitlines() or [''])[0]})"
    try:
        now = read_back()
    except commands.ToolError as exc:
        now, how = None, how + f" (read-back failed: {(str(exc).splitlines() or [''])[0]})"
    if now is not None and now != enabled:
        how += "; the drive did not take the setting"
    actual = {True: "enabled", False: "disabled", None: "unknown"}[now]
    return CacheState("WCE" if enabled else "WCD", actual, now == enabled, how=how)


def read_state(dev: BlockDevice, required: str) -> CacheState:
    actual = dev.host.read(dev.sysfs / "queue" / "write_cache", "unknown")
    return CacheState(required, actual, settable=False)


def apply(dev: BlockDevice, required: str, log_file: Path | None = None) -> CacheState:
    """Set the cache to the required state where the suite can, and report what the device
    then says (never what was asked for)."""
    if dev.transport == "scsi":
        return _apply_scsi(dev, required, log_file)
    if dev.transport != "nvme":
        return read_state(dev, required)
    on = {"run": dev.host.run} if dev.remote is not None else {}   # ssh://: run there
    try:
        if not nvme.id_ctrl(dev.path, log_file, **on).write_cache_present:
            return CacheState(required, ABSENT, settable=False, how="NVMe id-ctrl VWC bit 0 = 0")
        nvme.set_feature(dev.path, VWC_FEATURE, 1 if required == "WCE" else 0, log_file, **on)
        value = nvme.get_feature(dev.path, VWC_FEATURE, log_file, **on)
    except (commands.ToolError, nvme.NvmeError) as exc:
        state = read_state(dev, required)
        return CacheState(required, state.actual, False, f"NVMe Set Features 06h failed "
                          f"({str(exc).splitlines()[0]}); sysfs shown")
    return CacheState(required, "enabled" if value & 1 else "disabled", settable=True,
                      how="NVMe Set/Get Features 06h")


def set_ata(dev_path: str, enabled: bool, *, run: Callable = commands.run,
            log_file: Path | None = None) -> CacheState:
    """SATA: hdparm -W0/-W1, read back with hdparm -W."""
    argv = hdparm.write_cache_argv(dev_path, enabled)
    return set_and_read_back(
        argv, lambda: hdparm.read_write_cache(dev_path, run=run, log_file=log_file), enabled,
        f"hdparm {argv[1]}, read back with hdparm -W", run, log_file, hdparm.SHORT_S)


def set_scsi(dev_path: str, enabled: bool, *, run: Callable = commands.run,
             log_file: Path | None = None) -> CacheState:
    """SAS/SCSI: WCE of the Caching mode page, in the current values only, then read back.
    No --save: the saved page is the owner's power-on configuration and a benchmark must
    not change it for good; the current value holds for the test (read back before it). A
    device that accepts only saved-page changes reports an error, and the state says so."""
    argv = sg3.write_cache_argv(dev_path, enabled)
    return set_and_read_back(
        argv, lambda: sg3.read_write_cache(dev_path, run=run, log_file=log_file), enabled,
        f"{' '.join(argv[:2])}, read back with sdparm --get=WCE=1", run, log_file, sg3.SHORT_S)


def _apply_scsi(dev: BlockDevice, required: str, log_file: Path | None) -> CacheState:
    """SATA: hdparm -W; SAS/SCSI: sdparm WCE (both read back what they set)."""
    setter = set_ata if is_ata(dev) else set_scsi
    try:   # through the device's host: this one (commands.run) or, for ssh://, there
        return setter(dev.path, required == "WCE", log_file=log_file, run=dev.host.run)
    except commands.ToolError as exc:      # hdparm / sdparm not installed
        state = read_state(dev, required)
        return CacheState(required, state.actual, False,
                          f"{str(exc).splitlines()[0]}; sysfs shown")
