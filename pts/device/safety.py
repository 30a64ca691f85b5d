"""The safety gate: `check_writable` is what every writing step goes through. It refuses a
device that is in use whatever the flags (mounted, partition mounted, holders, swap, backing
the root filesystem, read-only, open by another process), and refuses any write without
--destructive."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from pts.device import openers
from pts.device.identity import PROC, BlockDevice, DeviceError, sysfs_for_devno
from pts.tools import commands
from pts.tools.hosts import LOCAL, Host


class UnsafeDeviceError(DeviceError):
    """Writing to this device is refused (in use, or no --destructive)."""


def partitions(dev: BlockDevice) -> list[tuple[str, tuple[int, int]]]:
    host, out = dev.host, []
    for name in host.listdir(dev.sysfs):
        child = dev.sysfs / name
        if not name.startswith(dev.kname):   # partitions are KNAME[p]N: fewer reads
            continue
        if host.exists(child / "partition"):
            major, minor = host.read(child / "dev").split(":")
            out.append((name, (int(major), int(minor))))
    return out


# device-mapper UUID prefixes of the tools that create mappings (LVM2, cryptsetup,
# multipath-tools, kpartx): what a dm holder is, from /sys/block/dm-N/dm/uuid
DM_KINDS = (("LVM-", "LVM logical volume"), ("CRYPT-", "dm-crypt mapping"),
            ("mpath-", "multipath map"), ("part", "kpartx partition mapping"))


def holder_kind(host: Host, node) -> str | None:
    """What a holder is, read from its own sysfs (`node` is the holders/<name> link):
    "MD RAID1 array /dev/md0", "LVM logical volume /dev/mapper/vg0-data"; None if its sysfs
    says nothing."""
    level = host.read(node / "md" / "level")
    if level:
        return f"MD {level.upper()} array /dev/{node.name}"
    mapped = host.read(node / "dm" / "name")
    if mapped:
        uuid = host.read(node / "dm" / "uuid")
        kind = next((k for prefix, k in DM_KINDS if uuid.startswith(prefix)),
                    "device-mapper mapping")
        return f"{kind} /dev/mapper/{mapped}"
    return None


def _mounts(host: Host = LOCAL) -> list[tuple[tuple[int, int], str, str]]:
    """(major:minor, source, mount point) of every mount, from mountinfo."""
    out = []
    for line in host.read(PROC / "self" / "mountinfo").splitlines():
        fields = line.split()
        if len(fields) < 10 or "-" not in fields:
            continue
        major, minor = fields[2].split(":")
        source = fields[fields.index("-") + 2]
        out.append(((int(major), int(minor)), _unescape(source), _unescape(fields[4])))
    return out


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), text)


def _same_node(path: str, nodes: dict[tuple[int, int], str], host: Host = LOCAL) -> str | None:
    if not path.startswith("/"):
        return None                       # "tmpfs", "none", ...: not a device node
    node = host.stat(path)
    return nodes.get(node.rdev) if node is not None and node.kind == "block" else None


def _disks_under(devno: tuple[int, int], host: Host = LOCAL) -> set[tuple[int, int]]:
    """The whole disks a block device lives on: its parent if a partition, and the
    slaves of dm/md devices, recursively."""
    node = sysfs_for_devno(devno, host)
    if not host.exists(node):
        return set()
    if host.exists(node / "partition"):
        node = node.parent
    slaves = host.listdir(node / "slaves")
    if not slaves:
        major, minor = host.read(node / "dev", "0:0").split(":")
        return {(int(major), int(minor))}
    found: set[tuple[int, int]] = set()
    for slave in slaves:
        major, minor = host.read(node / "slaves" / slave / "dev", "0:0").split(":")
        found |= _disks_under((int(major), int(minor)), host)
    return found


def in_use_reasons(dev: BlockDevice) -> list[str]:
    """Why writing to `dev` would destroy something in use (empty list: not in use). A
    device on another host (ssh://) is checked against that host's mounts, holders, swap
    and root filesystem, read there over ssh."""
    host = dev.host
    nodes = {dev.devno: dev.path} | {devno: f"/dev/{name}" for name, devno in partitions(dev)}
    reasons = []
    for devno, source, target in _mounts(host):
        hit = nodes.get(devno) or _same_node(source, nodes, host)
        if hit:
            what = "is mounted" if hit == dev.path else f"has partition {hit} mounted"
            reasons.append(f"{dev.path} {what} on {target}")
    for name in [dev.kname] + [p for p, _ in partitions(dev)]:
        base = dev.sysfs if name == dev.kname else dev.sysfs / name
        kinds = {h: holder_kind(host, base / "holders" / h)
                 for h in host.listdir(base / "holders")}
        if kinds:
            named = ", ".join(f"{h} ({k})" if k else h for h, k in kinds.items())
            hint = "" if all(kinds.values()) else " (LVM, MD RAID, dm-crypt or multipath use it)"
            reasons.append(f"/dev/{name} is held by {named}{hint}")
    for line in host.read(PROC / "swaps").splitlines()[1:]:
        hit = _same_node(_unescape(line.split()[0]), nodes, host)
        if hit:
            reasons.append(f"{hit} is an active swap device")
    root = host.stat("/")
    if root is None:
        reasons.append(f"the root filesystem of {host.name} could not be examined (stat /)")
    elif dev.devno in _disks_under((os.major(root.dev), os.minor(root.dev)), host):
        reasons.append(f"{dev.path} backs the root filesystem")
    if dev.read_only:
        reasons.append(f"{dev.path} is read-only (sysfs ro=1)")
    if dev.remote is None:      # /proc of this host only: a DUT host's is not looked at
        reasons += [f"{dev.path} is open by {o} (stop it first)"
                    for o in openers.holding(set(nodes))]
    if dev.remote is not None:
        reasons = [f"{r} (on {dev.remote.target})" for r in reasons]
    return sorted(set(reasons), key=reasons.index)


@dataclass(frozen=True)
class Signatures:
    """What `wipefs` lists on the device, or why it could not list anything."""

    found: tuple[str, ...]
    error: str | None = None     # None: listed (found may be empty: none on the device)

    def header_lines(self, path: str) -> list[str]:
        """The header's "WILL DESTROY" lines: one per signature, or one that says the
        signatures could not be listed and why (never an empty list that looks like none)."""
        if self.error is not None:
            return [f"snia-pts WILL DESTROY: everything on {path}; its file system and "
                    f"partition table signatures could not be listed ({self.error}); "
                    f"run `wipefs {path}` to see what is on it"]
        return [f"snia-pts WILL DESTROY: {sig} on {path}" for sig in self.found]


def signatures(dev: BlockDevice) -> Signatures:
    """Filesystem / partition-table signatures on the device, as `wipefs` lists them
    (listing only: without -a wipefs writes nothing). A wipefs that is missing, fails or
    prints no JSON gives the error instead."""
    try:
        out = dev.host.run(["wipefs", "--json", dev.path], timeout=60).stdout
    except commands.ToolError as exc:
        return Signatures((), str(exc) or type(exc).__name__)
    try:
        found = json.loads(out or "{}").get("signatures", [])
    except (ValueError, AttributeError):
        return Signatures((), f"wipefs --json printed no JSON: {out.strip()[:200]!r}")
    return Signatures(tuple(f"{s.get('type', '?')} at offset {s.get('offset', '?')}"
                            + (f" (label {s['label']})" if s.get("label") else "")
                            + (f" (uuid {s['uuid']})" if s.get("uuid") else "")
                            for s in found))


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
