"""Device volatile write cache (PTS 2.0.2: PTS-E WCD, PTS-C WCE), set and recorded before
WIPC and before the test loop. Host O_DIRECT is not a device-cache control.

This version reads the kernel's view (sysfs queue/write_cache) and cannot change the
device's cache; the run then declares the deviation. (NVMe Set Features 0x06, hdparm -W
and sdparm WCE: a later version.)
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.device import BlockDevice, _read


@dataclass(frozen=True)
class CacheState:
    required: str        # "WCD" or "WCE"
    actual: str          # as the kernel reports it, e.g. "write back"
    settable: bool

    @property
    def matches(self) -> bool:
        enabled = self.actual == "write back"
        return (self.required == "WCE") == enabled

    def deviation(self) -> str | None:
        if self.matches:
            return None
        want = "disabled (WCD)" if self.required == "WCD" else "enabled (WCE)"
        return (f"Write cache: the spec requires it {want}; it could not be set on this "
                f"device, which reports '{self.actual}'.")


def read_state(dev: BlockDevice, required: str) -> CacheState:
    actual = _read(dev.sysfs / "queue" / "write_cache", "unknown")
    return CacheState(required, actual, settable=False)
