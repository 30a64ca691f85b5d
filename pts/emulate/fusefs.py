"""The FUSE filesystem of the emulated SSD: `/disk.img` (the drive) and `/stats` (JSON).

Data really lives in a sparse backing file (on tmpfs), so reads return what was written;
the FTL model only decides how long each command takes. A loop device opened with
--direct-io=on on top of `/disk.img` makes this a kernel block device; its discards
(blkdiscard, fio trim) arrive here as fallocate(PUNCH_HOLE) and its write-zeroes as
fallocate(ZERO_RANGE); both reach the model and the backing file.

Run it single-threaded (nothreads=True): Python threads only contend for the GIL, and
the throttle models parallelism itself. raw_fi=True gives open() the fuse_file_info, so
that FOPEN_DIRECT_IO can be set: otherwise the kernel page cache answers reads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import itertools
import json
import os
import stat
import time

import mfusepy

from pts.emulate.ftl import FTL
from pts.emulate.idle import IdleGC
from pts.emulate.profiles import Profile
from pts.emulate.throttle import Throttle

IMAGE, STATS = "/disk.img", "/stats"
BLOCK_SIZE = 4096            # statfs f_bsize: becomes the loop device's discard granularity

# linux/falloc.h
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10
_DEALLOCATING = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
_libc.fallocate.restype = ctypes.c_int


def fallocate(fd: int, mode: int, offset: int, length: int) -> None:
    """libc fallocate(2); Python's os module has no wrapper for it."""
    if _libc.fallocate(fd, mode, offset, length) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class EmulatedSSD(mfusepy.Operations):
    """FUSE operations; `info` is static metadata added to the stats JSON (identity etc.)."""

    use_ns = True

    def __init__(self, ftl: FTL, throttle: Throttle, backing: str, info: dict) -> None:
        self.ftl, self.throttle, self.info = ftl, throttle, info
        self.idle = IdleGC(ftl, throttle.clock)
        self.size = ftl.capacity
        self.fd = os.open(backing, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.ftruncate(self.fd, self.size)
        self.started = time.time()
        self._t0 = time.time_ns()
        self._snapshots: dict[int, bytes] = {}   # fh -> stats JSON frozen at open()
        self._next_fh = itertools.count(1)
        self.ops = {"open": 0, "fallocate": 0, "fsync": 0}
        # the profile's write errors: bytes written since FOB, writes since they began, EIOs
        self.faults = {"written_since_fob": 0, "writes_failing": 0, "eio_writes": 0}

    @classmethod
    def from_profile(cls, size: int, profile: Profile, backing: str, info: dict):
        return cls(FTL(size, profile), Throttle(profile.channels), backing, info)

    def close(self) -> None:
        os.close(self.fd)

    # ------------------------------------------------------------------ namespace

    def getattr(self, path, fh=None):
        times = {"st_atime": self._t0, "st_mtime": self._t0, "st_ctime": self._t0,
                 "st_uid": 0, "st_gid": 0}
        if path == "/":
            return dict(times, st_mode=stat.S_IFDIR | 0o755, st_nlink=2)
        if path == IMAGE:
            return dict(times, st_mode=stat.S_IFREG | 0o600, st_nlink=1, st_size=self.size,
                        st_blocks=self.size // 512)
        if path == STATS:
            # Size is nominal: the file is direct-I/O, reads end at the JSON's end.
            return dict(times, st_mode=stat.S_IFREG | 0o444, st_nlink=1, st_size=65536)
        raise mfusepy.FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", IMAGE[1:], STATS[1:]]

    def statfs(self, path):
        blocks = self.size // BLOCK_SIZE
        return {"f_bsize": BLOCK_SIZE, "f_frsize": BLOCK_SIZE, "f_blocks": blocks,
                "f_bfree": 0, "f_bavail": 0, "f_files": 2, "f_ffree": 0, "f_namemax": 255}

    def open(self, path, fi):
        self.ops["open"] += 1
        if path == STATS:
            if fi.flags & os.O_ACCMODE != os.O_RDONLY:
                raise mfusepy.FuseOSError(errno.EACCES)
            fi.fh = next(self._next_fh)
            self._snapshots[fi.fh] = self.stats_json()
        elif path != IMAGE:
            raise mfusepy.FuseOSError(errno.ENOENT)
        fi.direct_io = 1      # FOPEN_DIRECT_IO: every read/write reaches this daemon
        return 0

    def release(self, path, fi):
        self._snapshots.pop(fi.fh, None)
        return 0

    # ------------------------------------------------------------------ data path

    def read(self, path, size, offset, fi):
        if path == STATS:
            return self._snapshots.get(fi.fh, b"")[offset:offset + size]
        size = max(0, min(size, self.size - offset))
        if size == 0:
            return b""
        self.idle.before(self.throttle.busy_until)
        cost = self.ftl.read(offset, size)
        data = os.pread(self.fd, size, offset)
        self.throttle.charge(cost)
        self.idle.after()
        return data

    def write(self, path, data, offset, fi):
        if path != IMAGE:
            raise mfusepy.FuseOSError(errno.EACCES)
        if offset + len(data) > self.size:
            raise mfusepy.FuseOSError(errno.ENOSPC)   # a drive does not grow
        if self._fails(len(data)):
            raise mfusepy.FuseOSError(errno.EIO)
        self.idle.before(self.throttle.busy_until)
        cost = self.ftl.write(offset, len(data))
        written = os.pwrite(self.fd, data, offset)
        self.throttle.charge(cost)
        self.idle.after()
        return written

    def _fails(self, size: int) -> bool:
        """Does this write end in EIO (the profile's eio_every / eio_after_capacity)?"""
        every, f = self.ftl.profile.eio_every, self.faults
        if not every:
            return False
        if f["written_since_fob"] < self.ftl.profile.eio_after_capacity * self.size:
            f["written_since_fob"] += size
            return False
        f["writes_failing"] += 1
        if f["writes_failing"] % every:
            return False
        f["eio_writes"] += 1
        return True

    def fallocate(self, path, mode, offset, length, fi):
        self.ops["fallocate"] += 1
        if path != IMAGE:
            raise mfusepy.FuseOSError(errno.EACCES)
        if not mode & _DEALLOCATING:
            return 0           # preallocation: nothing to do for a drive
        if mode & ~(_DEALLOCATING | FALLOC_FL_KEEP_SIZE):
            raise mfusepy.FuseOSError(errno.EOPNOTSUPP)
        length = max(0, min(length, self.size - offset))
        if length == 0:
            return 0
        self.idle.before(self.throttle.busy_until)
        self.throttle.charge(self.ftl.trim(offset, length))
        self.idle.after()
        if self.ftl.mapped == 0:          # FOB again: the write errors wait anew
            self.faults.update(written_since_fob=0, writes_failing=0)
        # tmpfs cannot ZERO_RANGE; a punched hole reads back as zeros, which is the same.
        fallocate(self.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length)
        return 0

    def truncate(self, path, length, fh=None):
        if path != IMAGE or length != self.size:
            raise mfusepy.FuseOSError(errno.EPERM)   # fixed-size drive
        return 0

    def fsync(self, path, datasync, fi):
        self.ops["fsync"] += 1      # the backing file is on tmpfs: nothing to make durable
        return 0

    def flush(self, path, fi):
        return 0

    # ------------------------------------------------------------------ stats

    def stats(self) -> dict:
        """FTL counters at top level, plus profile name, its parameters and the identity."""
        return dict(self.info, **self.ftl.stats(), profile=self.ftl.profile.name,
                    parameters=self.ftl.profile.as_dict(), throttle=self.throttle.stats(),
                    idle=self.idle.stats(),
                    size=self.size, ops=dict(self.ops), faults=dict(self.faults),
                    uptime_s=round(time.time() - self.started, 3))

    def stats_json(self) -> bytes:
        return (json.dumps(self.stats(), sort_keys=True) + "\n").encode()


def serve(ops: EmulatedSSD, mountpoint: str) -> None:
    """Mount and serve until unmounted (or SIGTERM/SIGINT, which libfuse turns into unmount)."""
    mfusepy.FUSE(ops, mountpoint, foreground=True, nothreads=True, raw_fi=True,
                 fsname="snia-pts-emulated-ssd", subtype="snia-pts")
