"""fio's errors: fio failed, its output is unusable, or the device under test went away
(pts.tools.fio raises them; they are importable from there too)."""

from __future__ import annotations

from pts.tools.commands import ToolError
from pts.tools.hosts import LOCAL, Host


class FioError(ToolError):
    """fio ran but its result cannot be used."""


class FioFailed(FioError):
    """fio exited non-zero or timed out."""


class FioOutputError(FioError):
    """fio's output is not the JSON we asked for."""


class DeviceGone(FioFailed):
    """fio failed because the device under test is gone (unplugged, detached, size 0)."""

    @classmethod
    def check(cls, filename: str, host: Host = LOCAL) -> DeviceGone | None:
        """Name the cause when a failed fio run is explained by the device having gone
        (`host`: where the device is, pts.tools.hosts)."""
        try:
            node = host.stat(filename)
        except ToolError:
            return None              # the host cannot be asked (ssh down): cause unknown
        if node is None:
            return cls(f"the device under test {filename} disappeared during the test (the "
                       "device node no longer exists)")
        if node.kind != "block":
            return None
        sysfs = f"/sys/dev/block/{node.rdev[0]}:{node.rdev[1]}"
        try:
            gone = int(host.read(f"{sysfs}/size", "x")) == 0
            backing = host.read(f"{sysfs}/loop/backing_file", "")
            unreachable = bool(backing) and host.stat(backing) is None
        except (ToolError, ValueError):
            gone, unreachable = True, False
        if gone:
            return cls(f"the device under test {filename} disappeared during the test (it "
                       "now has no capacity: detached or removed)")
        # a loop device over a file whose file system went away (an emulated SSD whose
        # FUSE daemon died): the node and its size stay, every I/O fails
        return cls(f"the device under test {filename} disappeared during the test (its "
                   f"backing file {backing} can no longer be reached: the file system "
                   "serving it is gone; for an emulated SSD, its daemon)") if unreachable \
            else None
