"""One pts process per device: an exclusive flock held for the whole session.

Keyed by the device number, so /dev/loop3 and a /dev/disk/by-* link to it are the same
device, and by the disk's sequence number where the kernel gives one (/sys/block/X/diskseq,
Linux 5.15+: a new number each time a disk appears, the same for all its names): a run still
going on a device that vanished (a loop device detached, a drive pulled) keeps its lock, and a
new device that gets the same major:minor is another disk, not "already under test" (seen: a
loop device detached under a run on it, its number given to the next emulated SSD, which was
refused by that lock). The kernel drops the lock when the process dies, so a killed run never
blocks the next one.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from pts.device.identity import BlockDevice
from pts.device.safety import UnsafeDeviceError

LOCK_DIR = Path("/run/lock/snia-pts")
# A several-device session (pts.session) takes every device's lock before it starts the
# device's child run and hands the locked descriptor down: the child adopts it (the same
# open file, so the flock is already ours) instead of racing for the lock again.
INHERITED_FD_ENV = "PTS_INHERITED_LOCK_FD"


def diskseq(dev: BlockDevice) -> str:
    """The disk's sequence number (digits), or "" where the kernel has none (before 5.15)."""
    seq = dev.host.read(dev.sysfs / "diskseq")
    return seq if seq.isdigit() else ""


class DeviceLock:
    def __init__(self, dev: BlockDevice, lock_dir: Path = LOCK_DIR):
        key = f"{dev.devno[0]}-{dev.devno[1]}" + (f"-seq{seq}" if (seq := diskseq(dev)) else "")
        self.path = Path(lock_dir) / f"dev-{key}.lock"
        remote = getattr(dev, "remote", None)
        if remote is not None:        # a device on another host: keyed by host and number
            where = f"{remote.host}-{remote.ssh_port or 22}".replace("/", "_")
            self.path = Path(lock_dir) / f"ssh-{where}-{key}.lock"
        self.dev = dev
        self.fd: int | None = None

    def acquire(self) -> DeviceLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if (fd := self._inherited()) is not None:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self.fd = fd
            return self
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

    def _inherited(self) -> int | None:
        """The descriptor named by $PTS_INHERITED_LOCK_FD if it is this device's lock file
        and its flock is held through it (None otherwise: take the lock as usual)."""
        try:
            fd = int(os.environ.get(INHERITED_FD_ENV, ""))
            st, mine = os.fstat(fd), os.stat(self.path)
        except (ValueError, OSError):
            return None
        if (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)   # ours already: a no-op
        except OSError:
            return None
        return fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)      # closing drops the flock
            self.fd = None
