"""A RAM-backed block device on the DUT's host, made by the suite for the host ceiling
(pts.procedure.ceiling) and removed after: the same fio jobs on it show what the host alone
can drive (issue 33 §1).

Which one (`choose`): null_blk through configfs (/sys/kernel/config/nullb, memory_backed=1)
where the kernel has it loaded: a block device with no file system under it; else a loop
device over a file in /dev/shm (tmpfs), attached with `losetup --find --show
--direct-io=on`, the file filled once with written pages (a sparse tmpfs file reads its
holes as the shared zero page, which would make reads nearly free). Both need root.

How large (`fit`): SIZE, or less on a small host (at most 1/SHARE of MemAvailable and, for
the loop device, of /dev/shm's free space), never below FLOOR: a host with less is refused
at once, with the figures, before anything is written (a 1 GiB dd into a small /dev/shm
failed only after the fill). `describe` says the size and why.

Only devices this module made are touched: their names carry PREFIX, this controller's
host name, pid namespace and process id (`tag`), so that a later run on the same controller
can remove the leftovers of one that was killed (`clean_leftovers`: only files and null_blk
devices with its own prefix, host name and pid namespace whose process is gone). A name is
at most DISK_NAME characters (a long mark is replaced by a digest of it), and null_blk's
disk is read back from the kernel (`disk_name`), never derived from the folder's name.

Every command goes through a Host (pts.tools.hosts): the same code on this machine and, for
an ssh:// drive, on the DUT's host.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex
import socket
from dataclasses import dataclass

from pts.tools import liveness
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
# The smallest device made: 2x the data the heaviest ceiling job keeps in flight (1024 KiB
# at TC 4 / QD 32 in the IOPS test: 128 MiB), so that each SEQ thread's slice (64 MiB) is
# still twice its 32 MiB in flight, and still above the last-level cache a core sees on
# most CPUs (tens of MiB). Below it the ceiling is refused, not measured on a toy device.
FLOOR = 256 << 20
# Of what is free, the device takes at most half (MemAvailable; /dev/shm's free space for
# a loop device, whose file's pages are RAM as well): the run itself (Python, fio, the
# report, the DUT's own buffers; in tests other devices' files in /dev/shm) needs the rest.
SHARE = 2
# null_blk names its disk after its configfs folder since Linux 6.0 (drivers/block/null_blk/
# main.c null_add_dev: snprintf into disk_name[DISK_NAME_LEN], DISK_NAME_LEN 32 in
# include/linux/blkdev.h): at most 31 characters, the rest cut off. Our names stay within
# it, so that two controllers' folders never truncate to one disk name.
DISK_NAME = 31


class RamDeviceError(RuntimeError):
    """No RAM-backed device can be made on this host (the message says why)."""


@dataclass(frozen=True)
class RamDevice:
    path: str                  # /dev/loopN, or null_blk's /dev/<folder> (/dev/nullbN)
    kind: str                  # NULL_BLK or TMPFS_LOOP
    size: int                  # bytes
    backing: str | None = None     # the tmpfs file of a loop device
    config: str | None = None      # the configfs folder of a null_blk device
    sized: str = ""                # why this size (`fit`): what was free on the host


def _host_marks() -> tuple[str, str]:
    """This controller's mark, its host name and pid namespace (as a file name may carry
    them: `host.4026531836`), and its short mark: the first 8 hex digits of its SHA-1, for a
    name too long for DISK_NAME. The namespace, because a pid in a name means something only
    in its own pid namespace: a suite in a container on the same host (same host name, its
    own pids) must neither take a host run's device for its own nor the reverse (issue 47
    §1); a name without it (made before) is no longer this controller's."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname()) or "host"
    mark = f"{host}.{liveness.namespace_mark()}"
    return mark, hashlib.sha1(mark.encode()).hexdigest()[:8]


def tag(pid: int | None = None) -> str:
    """This controller's mark on what it makes: host name (its digest when the name would
    pass DISK_NAME characters: PREFIX + 8 + '-' + a 7-digit pid fit) and process id."""
    host, short = _host_marks()
    pid = os.getpid() if pid is None else pid
    name = f"{PREFIX}{host}-{pid}"
    return name if len(name) <= DISK_NAME else f"{PREFIX}{short}-{pid}"


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


def mem_available(host: Host, root: str = "") -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None: not given)."""
    for line in host.read(root + "/proc/meminfo").splitlines():
        name, _, rest = line.partition(":")
        if name == "MemAvailable" and rest.split() and rest.split()[0].isdigit():
            return int(rest.split()[0]) * 1024          # "kB" in /proc/meminfo is KiB
    return None


def shm_free(host: Host, log_file=None) -> int | None:
    """Free bytes of /dev/shm (`df -Pk`: POSIX output, also busybox's; None: not given)."""
    out = host.run(["df", "-Pk", SHM], log_file=log_file, check=False).stdout.splitlines()
    fields = out[-1].split() if len(out) > 1 else []
    return int(fields[3]) * 1024 if len(fields) > 3 and fields[3].isdigit() else None


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB"


def fit(kind: str, mem: int | None, shm: int | None, wanted: int = SIZE) -> tuple[int, str]:
    """(size, why) of a `kind` device from what is free (bytes; None: not known): at most
    `wanted`, at most 1/SHARE of MemAvailable (and of /dev/shm's free space for a loop
    device), in whole FILL_BLOCKs; RamDeviceError when that is below FLOOR."""
    limits = [("MemAvailable", mem)] + ([(f"free in {SHM}", shm)] if kind == TMPFS_LOOP else [])
    known = [(name, free) for name, free in limits if free is not None]
    size = min([wanted] + [free // SHARE for _, free in known]) // FILL_BLOCK * FILL_BLOCK
    free_text = ", ".join(f"{name} {_mib(free)}" for name, free in known) or "free memory unknown"
    if size < FLOOR:
        raise RamDeviceError(
            f"too little memory for a {kind} device: {free_text}; the device takes at most "
            f"1/{SHARE} of it, and at least {_mib(FLOOR)} is needed (free memory"
            + (f" or grow {SHM}: mount -o remount,size=... {SHM}" if kind == TMPFS_LOOP else "")
            + ", or run with --host-ceiling off)")
    if size == wanted:
        return size, f"{_mib(size)} ({free_text})"
    return size, f"{_mib(size)}, 1/{SHARE} of the least free ({free_text}), not {_mib(wanted)}"


def make(host: Host, log_file=None, size: int = SIZE, root: str = "") -> RamDevice:
    """A RAM-backed device of up to `size` bytes, sized to what the host has free (`fit`),
    made now (RamDeviceError: why not, before anything is written)."""
    if not is_root(host):
        raise RamDeviceError(f"not root on {host.name} (losetup and null_blk need root)")
    kind, why = choose(host, root)
    if kind is None:
        raise RamDeviceError(why)
    size, sized = fit(kind, mem_available(host, root),
                      shm_free(host, log_file) if kind == TMPFS_LOOP else None, size)
    try:
        made = _null_blk(host, log_file, size) if kind == NULL_BLK else \
            _tmpfs_loop(host, log_file, size)
    except ToolError as exc:
        raise RamDeviceError(f"making a {kind} device of {sized} failed: {exc}") from None
    return dataclasses.replace(made, sized=sized)


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
        # The disk is registered when power=1 returns; devtmpfs makes its node after: wait
        # for it (200 x 50 ms), and dd never creates a file (conv=nocreat: a missing node
        # once left a regular file /dev/nullb0 and failed).
        path = f"/dev/{disk_name(host, folder)}"
        host.run(["sh", "-c", 'n=0; while [ $n -lt 200 ]; do [ ! -b "$1" ] || exit 0; '
                  'sleep 0.05; n=$((n + 1)); done; exit 1', "sh", path], log_file=log_file)
        host.run(["dd", "if=/dev/zero", f"of={path}", f"bs={FILL_BLOCK}",
                  f"count={size // FILL_BLOCK}", "oflag=direct", "conv=nocreat",
                  "status=none"], log_file=log_file, timeout=300)
    except (ToolError, RamDeviceError):
        _remove_null_blk(host, folder, log_file)
        raise
    return RamDevice(path, NULL_BLK, size, config=folder)


def disk_name(host: Host, folder: str) -> str:
    """The disk of null_blk's configfs `folder`, read back from the kernel: the folder's
    name cut to DISK_NAME since Linux 6.0, nullb<index> before (a guess of either was wrong
    on hosts with long names). null_gendisk_register gives the disk null_blk's major ("nullb"
    in /proc/devices) and its index (configfs `index`) as minor: /sys/dev/block/MAJ:MIN
    links to the disk's sysfs folder, named as the disk."""
    index = host.read(f"{folder}/index", "").strip()
    major = next((f[0] for f in (line.split() for line in host.read(
        "/proc/devices", "").split("Block devices:")[-1].splitlines())
        if f[1:] == ["nullb"]), None)
    link = f"/sys/dev/block/{major or '?'}:{index or '?'}"
    found = host.realpath(link) if major and index.isdigit() else ""
    if not found.startswith("/sys/devices/"):          # not a link: no such disk
        raise RamDeviceError(f"null_blk device {folder}: its disk could not be read back "
                             f"(configfs index {index or '?'}, null_blk's major in "
                             f"/proc/devices {major or '?'}: {link} is no link to a disk)")
    return os.path.basename(found)


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
    host, short = _host_marks()       # named by `tag`: with the host name or its digest
    mine = re.compile(f"{re.escape(PREFIX)}(?:{re.escape(host)}|{short})-" + r"(\d+)(\.img)?$")
    return [n for n in names if (m := mine.match(n)) and not alive(int(m.group(1)))]


def _alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")     # the process ran on this controller


def clean_leftovers(host: Host, log_file=None, shm: str = SHM,
                    nullb: str = NULLB) -> list[str]:
    """Remove what a killed run of this controller left on `host` (its files in `shm`, the
    loop devices bound to them, its null_blk folders in `nullb`); the names removed."""
    found = []
    for name in leftovers(host.listdir(shm), _alive):
        backing = f"{shm}/{name}"
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
        if backing.startswith(f"{shm}/") and leftovers([backing[len(shm) + 1:]], _alive):
            _detach(host, dev, backing, log_file)
            found.append(f"{dev} ({backing}, removed)")
    for name in leftovers(host.listdir(nullb), _alive):
        _remove_null_blk(host, f"{nullb}/{name}", log_file)
        found.append(f"{nullb}/{name}")
    return found


def describe(dev: RamDevice) -> str:
    return f"{dev.kind} {dev.path} ({dev.sized or _mib(dev.size)}" + (
        f"; backing file {shlex.quote(dev.backing)})" if dev.backing else ")")
