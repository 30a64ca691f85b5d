"""One pts process per device: an exclusive flock held for the whole session.

Keyed by the device number, so /dev/loop3 and a /dev/disk/by-* link to it are the same
device. The kernel drops the lock when the process dies, so a killed run never blocks the
next one.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from pts.device.identity import BlockDevice
from pts.device.safety import UnsafeDeviceError

LOCK_DIR = Path("/run/lock/snia-pts")


class DeviceLock:
    def __init__(self, dev: BlockDevice, lock_dir: Path = LOCK_DIR):
        self.path = Path(lock_dir) / f"dev-{dev.devno[0]}-{dev.devno[1]}.lock"
        self.dev = dev
        self.fd: int | None = None

    def acquire(self) -> DeviceLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise UnsafeDeviceError(
                f"refusing to use {self.dev.given}: it is already under test by another "
                f"snia-pts process (pid {holder}; lock {self.path}). Wait for it to finish "
                "or stop it first.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)      # closing drops the flock
            self.fd = None
