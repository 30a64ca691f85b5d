"""The write gate (pts.device.safety.check_writable) refuses when it cannot tell: a root
filesystem it cannot stat (it would not know whether the device backs it), and a device the
kernel marks read-only. The device is a record of a drive this machine does not have
(nvme9n1, 259:99), so every other look (mounts, holders, swap, openers) finds nothing; only
`stat /` is faked."""

from __future__ import annotations

import dataclasses

import pytest

from pts.device import identity
from pts.device.identity import BlockDevice, Identity
from pts.device.safety import UnsafeDeviceError, check_writable, in_use_reasons
from pts.tools.hosts import Host

NVME = BlockDevice("/dev/nvme9n1", "/dev/nvme9n1", "nvme9n1", (259, 99), 1 << 30, 512, 512,
                   "nvme", False, Identity("QEMU NVMe Ctrl", "deadbeef", "7.2.22",
                                           "nvme id-ctrl"))
FIX = r"\. Nothing was written\. Unmount / release it first, or pick another device\.$"


class RootUnreadable(Host):
    """This host, where `stat /` fails (a broken or hidden root mount)."""

    def stat(self, path):
        return None if str(path) == "/" else super().stat(path)


def test_the_gate_passes_a_free_device():
    assert in_use_reasons(NVME) == []        # the refusals below come from their cause only


def test_a_root_filesystem_that_cannot_be_examined_refuses_the_write(monkeypatch):
    monkeypatch.setattr(identity, "host_for", lambda remote: RootUnreadable())
    with pytest.raises(UnsafeDeviceError, match=r"^refusing to write to /dev/nvme9n1: the root "
                                                r"filesystem of this host could not be "
                                                rf"examined \(stat /\){FIX}"):
        check_writable(NVME, destructive=True)


def test_a_read_only_device_is_refused():
    with pytest.raises(UnsafeDeviceError, match=r"^refusing to write to /dev/nvme9n1: "
                                                rf"/dev/nvme9n1 is read-only \(sysfs ro=1\){FIX}"):
        check_writable(dataclasses.replace(NVME, read_only=True), destructive=True)
