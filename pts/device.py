"""The device under test: resolution, identity, capacity, and the in-use safety checks.

Resolution never writes. `check_writable` is the gate every writing step goes through: it
refuses a device that is in use whatever the flags (mounted, partition mounted, holders,
swap, backing the root filesystem, read-only), and refuses any write without --destructive.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

SYS = Path("/sys")
PROC = Path("/proc")


class DeviceError(ValueError):
    """The path is not a usable whole block device; the message says what to give instead."""


class UnsafeDeviceError(DeviceError):
    """Writing to this device is refused (in use, or no --destructive)."""


@dataclass(frozen=True)
class Identity:
    model: str
    serial: str
    firmware: str
    source: str            # where model/serial/firmware came from: "sysfs", "nvme id-ctrl", ...


@dataclass(frozen=True)
class BlockDevice:
    path: str              # resolved /dev path
    given: str             # what the user gave (maybe a symlink)
    kname: str             # kernel name, e.g. "loop3", "nvme0n1"
    devno: tuple[int, int]
    capacity_bytes: int
    logical_sector: int
    physical_sector: int
    transport: str         # "nvme", "loop", "scsi", "virtio", ...
    read_only: bool
    identity: Identity
    emulated: bool = False
    profile: str | None = None   # emulated SSD profile

    @property
    def sysfs(self) -> Path:
        return SYS / "block" / self.kname

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(d.pop("identity"))
        d["identity_source"] = d.pop("source")
        d["devno"] = f"{self.devno[0]}:{self.devno[1]}"
        return d


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return default


def sysfs_for_devno(devno: tuple[int, int]) -> Path:
    return (SYS / "dev" / "block" / f"{devno[0]}:{devno[1]}").resolve()


def resolve(given: str) -> BlockDevice:
    """Resolve symlinks (/dev/disk/by-id/...) to a whole block device, or DeviceError."""
    path = os.path.realpath(given)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise DeviceError(f"{given}: no such device. Give the block device of the drive "
                          "to test, e.g. /dev/nvme0n1 (see `lsblk -d`)") from None
    if stat.S_ISCHR(st.st_mode):
        raise DeviceError(f"{given} is a character device, not a block device; give the "
                          "block device (e.g. /dev/nvme0n1, not /dev/nvme0 or /dev/ng0n1)")
    if not stat.S_ISBLK(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a regular file"
        raise DeviceError(f"{given} is {kind}, not a block device; to test a file, attach it "
                          "as a loop device first: losetup --find --show --direct-io=on FILE")
    devno = (os.major(st.st_rdev), os.minor(st.st_rdev))
    node = sysfs_for_devno(devno)
    if (node / "partition").exists():
        disk = "/dev/" + node.parent.name
        raise DeviceError(f"{given} is partition {_read(node / 'partition')} of {disk}; "
                          f"PTS tests a whole device: give {disk}")
    kname = node.name
    queue = node / "queue"
    transport = _transport(node, kname)
    identity = sysfs_identity(node, kname, transport)
    capacity = int(_read(node / "size", "0")) * 512   # sysfs size is in 512 B units
    logical = int(_read(queue / "logical_block_size", "512"))
    if transport == "nvme":
        identity, capacity, logical = _nvme_view(path, identity, capacity, logical)
    return BlockDevice(
        path=path, given=given, kname=kname, devno=devno, capacity_bytes=capacity,
        logical_sector=logical,
        physical_sector=int(_read(queue / "physical_block_size", "512")),
        transport=transport, read_only=_read(node / "ro") == "1", identity=identity)


def _nvme_view(path: str, identity: Identity, capacity: int, logical: int):
    """The controller's own identify data beats sysfs: identity from id-ctrl, capacity as
    NSZE x LBA data size and the sector size from id-ns (sysfs values if nvme-cli fails)."""
    from pts import commands, nvme

    identity = nvme.identify(path) or identity
    try:
        ns = nvme.id_ns(path)
    except (commands.ToolError, nvme.NvmeError):
        return identity, capacity, logical
    return identity, ns.capacity_bytes, ns.lba_bytes


def is_ata(dev: BlockDevice) -> bool:
    """A SATA drive behind libata shows as SCSI with vendor "ATA" (SAT translation)."""
    return dev.transport == "scsi" and _read(dev.sysfs / "device" / "vendor") == "ATA"


def _transport(node: Path, kname: str) -> str:
    if kname.startswith("nvme"):
        return "nvme"
    if kname.startswith("loop"):
        return "loop"
    subsystem = (node / "device" / "subsystem")
    if subsystem.exists():
        return subsystem.resolve().name   # "scsi", "virtio", ...
    return "unknown"


def sysfs_identity(node: Path, kname: str, transport: str) -> Identity:
    dev = node / "device"
    if transport == "loop":
        backing = _read(node / "loop" / "backing_file")
        # A loop device has no serial; the backing file's inode identifies it for this boot.
        try:
            st = os.stat(backing)
            serial = f"LOOP-{st.st_dev:x}-{st.st_ino}"
        except OSError:
            serial = f"LOOP-{kname}"
        return Identity("Linux loop device", serial, "n/a", f"sysfs (backing file {backing})")
    model = _read(dev / "model") or "unknown model"
    vendor = _read(dev / "vendor")
    if vendor and transport == "scsi" and not model.startswith(vendor):
        model = f"{vendor} {model}"
    serial = _read(dev / "serial") or _read(node / "serial") or _udev_serial(node) or "unknown"
    firmware = _read(dev / "firmware_rev") or _read(dev / "rev") or "unknown"
    return Identity(model, serial, firmware, "sysfs")


def _udev_serial(node: Path) -> str:
    devno = _read(node / "dev")
    for line in _read(Path("/run/udev/data") / f"b{devno}").splitlines():
        if line.startswith("E:ID_SERIAL_SHORT="):
            return line.split("=", 1)[1]
    return ""


# ---------------------------------------------------------------- safety checks

def partitions(dev: BlockDevice) -> list[tuple[str, tuple[int, int]]]:
    out = []
    for child in sorted(dev.sysfs.iterdir()) if dev.sysfs.exists() else []:
        if (child / "partition").exists():
            major, minor = _read(child / "dev").split(":")
            out.append((child.name, (int(major), int(minor))))
    return out


def _mounts() -> list[tuple[tuple[int, int], str, str]]:
    """(major:minor, source, mount point) of every mount, from mountinfo."""
    out = []
    for line in _read(PROC / "self" / "mountinfo").splitlines():
        fields = line.split()
        if len(fields) < 10 or "-" not in fields:
            continue
        major, minor = fields[2].split(":")
        source = fields[fields.index("-") + 2]
        out.append(((int(major), int(minor)), _unescape(source), _unescape(fields[4])))
    return out


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), text)


def _same_node(path: str, nodes: dict[tuple[int, int], str]) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISBLK(st.st_mode):
        return nodes.get((os.major(st.st_rdev), os.minor(st.st_rdev)))
    return None


def _disks_under(devno: tuple[int, int]) -> set[tuple[int, int]]:
    """The whole disks a block device lives on: its parent if a partition, and the
    slaves of dm/md devices, recursively."""
    node = sysfs_for_devno(devno)
    if not node.exists():
        return set()
    if (node / "partition").exists():
        node = node.parent
    slaves = list((node / "slaves").iterdir()) if (node / "slaves").exists() else []
    if not slaves:
        major, minor = _read(node / "dev", "0:0").split(":")
        return {(int(major), int(minor))}
    found: set[tuple[int, int]] = set()
    for slave in slaves:
        major, minor = _read(slave / "dev", "0:0").split(":")
        found |= _disks_under((int(major), int(minor)))
    return found


def in_use_reasons(dev: BlockDevice) -> list[str]:
    """Why writing to `dev` would destroy something in use (empty list: not in use)."""
    nodes = {dev.devno: dev.path} | {devno: f"/dev/{name}" for name, devno in partitions(dev)}
    reasons = []
    for devno, source, target in _mounts():
        hit = nodes.get(devno) or _same_node(source, nodes)
        if hit:
            what = "is mounted" if hit == dev.path else f"has partition {hit} mounted"
            reasons.append(f"{dev.path} {what} on {target}")
    for name in [dev.kname] + [p for p, _ in partitions(dev)]:
        base = dev.sysfs if name == dev.kname else dev.sysfs / name
        holders = sorted(h.name for h in (base / "holders").iterdir()) \
            if (base / "holders").exists() else []
        if holders:
            reasons.append(f"/dev/{name} is held by {', '.join(holders)} "
                           "(LVM, MD RAID, dm-crypt or multipath use it)")
    for line in _read(PROC / "swaps").splitlines()[1:]:
        hit = _same_node(_unescape(line.split()[0]), nodes)
        if hit:
            reasons.append(f"{hit} is an active swap device")
    root = os.stat("/").st_dev
    if dev.devno in _disks_under((os.major(root), os.minor(root))):
        reasons.append(f"{dev.path} backs the root filesystem")
    if dev.read_only:
        reasons.append(f"{dev.path} is read-only (sysfs ro=1)")
    return sorted(set(reasons), key=reasons.index)


def signatures(dev: BlockDevice) -> list[str]:
    """Filesystem / partition-table signatures on the device, as `wipefs` lists them
    (listing only: without -a wipefs writes nothing). Empty if none or wipefs is missing."""
    from pts import commands

    try:
        out = commands.run(["wipefs", "--json", dev.path], timeout=60).stdout
        found = json.loads(out or "{}").get("signatures", [])
    except (commands.ToolError, ValueError):
        return []
    return [f"{s.get('type', '?')} at offset {s.get('offset', '?')}"
            + (f" (label {s['label']})" if s.get("label") else "")
            + (f" (uuid {s['uuid']})" if s.get("uuid") else "") for s in found]


def active_range_bytes(dev: BlockDevice, pct: int) -> int:
    """ActiveRange (0:pct%) in whole logical sectors."""
    return dev.capacity_bytes // dev.logical_sector * pct // 100 * dev.logical_sector


def check_capacity(dev: BlockDevice, active_range_bytes: int, needed: int, why: str) -> None:
    if active_range_bytes < needed:
        raise DeviceError(f"{dev.given} is too small: its ActiveRange is {active_range_bytes} "
                          f"bytes, the spec needs at least {needed} bytes ({why}). Use a "
                          "larger device.")


def check_writable(dev: BlockDevice, destructive: bool) -> None:
    """Gate for every write: refuse in-use devices whatever the flags; then need opt-in."""
    reasons = in_use_reasons(dev)
    if reasons:
        raise UnsafeDeviceError(
            f"refusing to write to {dev.given}: " + "; ".join(reasons)
            + ". Nothing was written. Unmount / release it first, or pick another device.")
    if not destructive:
        raise UnsafeDeviceError(
            f"refusing to write to {dev.given} without --destructive: the PTS purges the "
            f"device and overwrites all {dev.capacity_bytes} bytes on it. Add --destructive "
            "if its data may be destroyed.")
