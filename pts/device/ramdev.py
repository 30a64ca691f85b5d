"""A RAM-backed block device on the DUT's host, made by the suite for the host ceiling
(pts.procedure.ceiling) and removed after: the same fio jobs on it show what the host alone
can drive (issue 33 §1).

Which one (`choose`): null_blk through configfs (/sys/kernel/config/nullb, memory_backed=1)
where the kernel has it loaded: a block device with no file system under it; else a loop
device over a file in /dev/shm (tmpfs), attached with `losetup --find --show
--direct-io=on`, the file filled once with written pages (a sparse tmpfs file reads its
holes as the shared zero page, which would make reads nearly free). Both need root.

Only devices this module made are touched: their names carry PREFIX, this controller's
host name and process id (`tag`), so that a later run on the same controller can remove the
leftovers of one that was killed (`clean_leftovers`: only files and null_blk devices with
its own prefix and host name whose process is gone).

Every command goes through a Host (pts.tools.hosts): the same code on this machine and, for
an ssh:// drive, on the DUT's host.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
from dataclasses import dataclass

from pts.tools.commands import ToolError
from pts.tools.hosts import Host

PREFIX = "pts-ceiling-"
SHM = "/dev/shm"
NULLB = "/sys/kernel/config/nullb"
NULL_BLK, TMPFS_LOOP = "null_blk", "tmpfs loop"
# 1 GiB: far larger than any CPU's last-level cache (tens to a few hundred MiB), so random
# reads come from DRAM as they would from a large device's buffers, and small enough to
# fill in about a second (dd of 1 GiB into /dev/shm: 0.4 s measured here) and to leave
# memory for the run on the small hosts CI uses.
SIZE = 1 << 30
FILL_BLOCK = 4 << 20


class RamDeviceError(RuntimeError):
    """No RAM-backed device can be made on this host (the message says why)."""


@dataclass(frozen=True)
class RamDevice:
    path: str                  # /dev/loopN or /dev/nullbN
    kind: str                  # NULL_BLK or TMPFS_LOOP
    size: int                  # bytes
    backing: str | None = None     # the tmpfs file of a loop device
    config: str | None = None      # the configfs folder of a null_blk device


def tag(pid: int | None = None) -> str:
    """This controller's mark on what it makes: host name and process id."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"
    return f"{PREFIX}{host}-{os.getpid() if pid is None else pid}"


def is_root(host: Host) -> bool:
    if host.remote is None:
        return os.geteuid() == 0
    return host.run(["id", "-u"]).stdout.strip() == "0"


def choose(host: Host, root: str = "") -> tuple[str | None, str]:
    """(kind, why): null_blk when the kernel has its configfs folder, else a loop device over
    tmpfs when /dev/shm is a tmpfs mount; (None, why not) otherwise. `root`: where the
    machine's tree is (a constructed one in tests)."""
    if host.exists(root + NULLB):
        return NULL_BLK, f"{NULLB} present (null_blk loaded, configfs mounted)"
    mounts = host.read(root + "/proc/mounts")
    if any(f.split()[1:3] == [SHM, "tmpfs"] for f in mounts.splitlines() if len(f.split()) > 2):
        return TMPFS_LOOP, f"no null_blk ({NULLB} absent); {SHM} is a tmpfs mount"
    return None, (f"no null_blk ({NULLB} absent) and {SHM} is not a tmpfs mount: no "
                  "RAM-backed block device can be made on this host")


def make(host: Host, log_file=None, size: int = SIZE, root: str = "") -> RamDevice:
    """A RAM-backed device of `size` bytes, made now (RamDeviceError: why not)."""
    if not is_root(host):
        raise RamDeviceError(f"not root on {host.name} (losetup and null_blk need root)")
    kind, why = choose(host, root)
    if kind is None:
        raise RamDeviceError(why)
    try:
        return _null_blk(host, log_file, size) if kind == NULL_BLK else \
            _tmpfs_loop(host, log_file, size)
    except ToolError as exc:
        raise RamDeviceError(f"making a {kind} device failed: {exc}") from None


def _write(host: Host, path: str, value: str, log_file) -> None:
    host.run(["sh", "-c", 'printf %s "$1" > "$2"', "sh", value, path], log_file=log_file)


def _null_blk(host: Host, log_file, size: int) -> RamDevice:
    folder = f"{NULLB}/{tag()}"
    host.run(["mkdir", folder], log_file=log_file)
    try:
        # size in MiB; memory_backed: data kept in RAM (reads return what was written);
        # 512-byte sectors take every block size a test runs
        for name, value in (("size", str(size >> 20)), ("memory_backed", "1"),
                            ("blocksize", "512"), ("power", "1")):
            _write(host, f"{folder}/{name}", value, log_file)
        path = f"/dev/nullb{host.read(f'{folder}/index', '?')}"
        host.run(["dd", "if=/dev/zero", f"of={path}", f"bs={FILL_BLOCK}",
                  f"count={size // FILL_BLOCK}", "oflag=direct", "status=none"],
                 log_file=log_file, timeout=300)
    except ToolError:
        _remove_null_blk(host, folder, log_file)
        raise
    return RamDevice(path, NULL_BLK, size, config=folder)


def _tmpfs_loop(host: Host, log_file, size: int) -> RamDevice:
    backing = f"{SHM}/{tag()}.img"
    try:
        host.run(["dd", "if=/dev/zero", f"of={backing}", f"bs={FILL_BLOCK}",
                  f"count={size // FILL_BLOCK}", "status=none"], log_file=log_file, timeout=300)
        path = host.run(["losetup", "--find", "--show", "--direct-io=on", backing],
                        log_file=log_file).stdout.strip()
    except ToolError:
        host.run(["rm", "-f", backing], log_file=log_file, check=False)
        raise
    return RamDevice(path, TMPFS_LOOP, size, backing=backing)


def remove(host: Host, dev: RamDevice, log_file=None) -> None:
    """Remove a device `make` made (a loop device only while still bound to our file)."""
    if dev.kind == NULL_BLK and dev.config:
        _remove_null_blk(host, dev.config, log_file)
    elif dev.backing:
        _detach(host, dev.path, dev.backing, log_file)
        host.run(["rm", "-f", dev.backing], log_file=log_file, check=False)


def _remove_null_blk(host: Host, folder: str, log_file) -> None:
    if host.exists(f"{folder}/power"):
        host.run(["sh", "-c", 'printf 0 > "$1"', "sh", f"{folder}/power"], log_file=log_file,
                 check=False)
    host.run(["rmdir", folder], log_file=log_file, check=False)


def _detach(host: Host, path: str, backing: str, log_file) -> None:
    bound = host.read(f"/sys/block/{os.path.basename(path)}/loop/backing_file")
    if bound in (backing, f"{backing} (deleted)"):      # the kernel marks a removed file
        host.run(["losetup", "-d", path], log_file=log_file, check=False)


def leftovers(names: list[str], alive) -> list[str]:
    """Names (files or null_blk folders) this controller's runs made whose process is gone:
    PREFIX + this host name + '-' + pid (+ '.img'); `alive(pid)` says whether it runs."""
    mine = re.compile(re.escape(tag(0)[:-1]) + r"(\d+)(\.img)?$")
    return [n for n in names if (m := mine.match(n)) and not alive(int(m.group(1)))]


def _alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")     # the process ran on this controller


def clean_leftovers(host: Host, log_file=None) -> list[str]:
    """Remove what a killed run of this controller left on `host`; the names removed."""
    found = []
    for name in leftovers(host.listdir(SHM), _alive):
        backing = f"{SHM}/{name}"
        listed = host.run(["losetup", "-j", backing], log_file=log_file, check=False).stdout
        for line in listed.splitlines():
            _detach(host, line.split(":", 1)[0], backing, log_file)
        host.run(["rm", "-f", backing], log_file=log_file, check=False)
        found.append(backing)
    # a loop device still bound to a file already removed (losetup -a: "(... (deleted))")
    listed = host.run(["losetup", "-a"], log_file=log_file, check=False).stdout
    for line in listed.splitlines():
        dev, _, rest = line.partition(":")
        backing = rest[rest.find("(") + 1:].removesuffix(")").removesuffix(" (deleted)")
        if backing.startswith(f"{SHM}/") and leftovers([backing[len(SHM) + 1:]], _alive):
            _detach(host, dev, backing, log_file)
            found.append(f"{dev} ({backing}, removed)")
    for name in leftovers(host.listdir(NULLB), _alive):
        _remove_null_blk(host, f"{NULLB}/{name}", log_file)
        found.append(f"{NULLB}/{name}")
    return found


def describe(dev: RamDevice) -> str:
    return f"{dev.kind} {dev.path} ({dev.size >> 20} MiB" + (
        f", backing file {shlex.quote(dev.backing)})" if dev.backing else ")")
