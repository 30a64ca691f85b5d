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
        """Only a state the kernel names counts; anything else is not assumed to match."""
        known = {"write back": "WCE", "write through": "WCD"}
        return known.get(self.actual) == self.required

    def deviation(self) -> str | None:
        want = "disabled (WCD)" if self.required == "WCD" else "enabled (WCE)"
        if not self.settable and self.matches:
            return (f"Write cache: the spec requires it {want}; the suite cannot set it on "
                    f"this device, which reports '{self.actual}' (the required state).")
        if not self.matches:
            how = "it could not be set on this device" if not self.settable else "it is not"
            return (f"Write cache: the spec requires it {want}; {how}, which reports "
                    f"'{self.actual}'.")
        return None


def read_state(dev: BlockDevice, required: str) -> CacheState:
    actual = _read(dev.sysfs / "queue" / "write_cache", "unknown")
    return CacheState(required, actual, settable=False)
