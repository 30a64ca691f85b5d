"""The device under test: resolution (sysfs, nvme-cli identify data), identity, capacity.
Resolution never writes; the safety gate is pts.device.safety."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path

from pts.tools import commands, nvme
from pts.tools.hosts import LOCAL, Host, Remote, host_for

SYS = Path("/sys")
PROC = Path("/proc")


class DeviceError(ValueError):
    """The path is not a usable whole block device; the message says what to give instead."""


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
    remote: Remote | None = None   # on another host (ssh://...): pts.tools.hosts

    @property
    def sysfs(self) -> Path:
        return SYS / "block" / self.kname

    @property
    def host(self) -> Host:
        """Where this device's tools run and its /sys and /proc files are read."""
        return host_for(self.remote)

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(d.pop("identity"))
        d["identity_source"] = d.pop("source")
        d["devno"] = f"{self.devno[0]}:{self.devno[1]}"
        if self.remote is None:
            d.pop("remote")
        else:
            d["remote"] = {"host": self.remote.host, "user": self.remote.user,
                           "ssh_port": self.remote.ssh_port, "fio_port": self.remote.fio_port,
                           "ssh_config": self.remote.ssh_config}
        return d


def _read(path: Path, default: str = "") -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return default


def sysfs_for_devno(devno: tuple[int, int], host: Host = LOCAL) -> Path:
    return Path(host.realpath(SYS / "dev" / "block" / f"{devno[0]}:{devno[1]}"))


def resolve(given: str, remote: Remote | None = None, path: str | None = None) -> BlockDevice:
    """Resolve symlinks (/dev/disk/by-id/...) to a whole block device, or DeviceError.
    `remote`: the device node `path` is on that host (given is then its ssh:// URL)."""
    host = host_for(remote)
    where = "" if remote is None else f" on {remote.target}"
    path = host.realpath(path or given)
    node_info = host.stat(path)
    if node_info is None:
        raise DeviceError(f"{given}: no such device{where}. Give the block device of the "
                          "drive to test, e.g. /dev/nvme0n1 (see `lsblk -d`)")
    if node_info.kind == "char":
        raise DeviceError(f"{given} is a character device, not a block device; give the "
                          "block device (e.g. /dev/nvme0n1, not /dev/nvme0 or /dev/ng0n1)")
    if node_info.kind != "block":
        kind = "a directory" if node_info.kind == "dir" else "a regular file"
        raise DeviceError(f"{given} is {kind}, not a block device; to test a file, attach it "
                          "as a loop device first: losetup --find --show --direct-io=on FILE")
    devno = node_info.rdev
    node = sysfs_for_devno(devno, host)
    if host.exists(node / "partition"):
        disk = "/dev/" + node.parent.name
        raise DeviceError(f"{given} is partition {host.read(node / 'partition')} of {disk}; "
                          f"PTS tests a whole device: give {disk}")
    kname = node.name
    queue = node / "queue"
    transport = _transport(node, kname, host)
    identity = sysfs_identity(node, kname, transport, host)
    capacity = int(host.read(node / "size", "0")) * 512   # sysfs size is in 512 B units
    logical = int(host.read(queue / "logical_block_size", "512"))
    if transport == "nvme":
        identity, capacity, logical = _nvme_view(path, identity, capacity, logical, host)
    if remote is not None:       # where the identity was read: the DUT host, over ssh
        identity = replace(identity, source=f"{identity.source} on {remote.target} (ssh)")
    return BlockDevice(
        path=path, given=given, kname=kname, devno=devno, capacity_bytes=capacity,
        logical_sector=logical,
        physical_sector=int(host.read(queue / "physical_block_size", "512")),
        transport=transport, read_only=host.read(node / "ro") == "1", identity=identity,
        remote=remote)


def _nvme_view(path: str, identity: Identity, capacity: int, logical: int,
               host: Host = LOCAL):
    """The controller's own identify data beats sysfs: identity from id-ctrl, capacity as
    NSZE x LBA data size and the sector size from id-ns (sysfs values if nvme-cli fails)."""
    try:
        ctrl = nvme.id_ctrl(path, run=host.run)
        identity = Identity(ctrl.model, ctrl.serial, ctrl.firmware, "nvme id-ctrl")
    except (commands.ToolError, nvme.NvmeError):
        pass
    try:
        ns = nvme.id_ns(path, run=host.run)
    except (commands.ToolError, nvme.NvmeError):
        return identity, capacity, logical
    return identity, ns.capacity_bytes, ns.lba_bytes


def is_ata(dev: BlockDevice) -> bool:
    """A SATA drive behind libata shows as SCSI with vendor "ATA" (SAT translation)."""
    return dev.transport == "scsi" and dev.host.read(dev.sysfs / "device" / "vendor") == "ATA"


def _transport(node: Path, kname: str, host: Host = LOCAL) -> str:
    if kname.startswith("nvme"):
        return "nvme"
    if kname.startswith("loop"):
        return "loop"
    subsystem = (node / "device" / "subsystem")
    if host.exists(subsystem):
        return Path(host.realpath(subsystem)).name   # "scsi", "virtio", ...
    return "unknown"


def sysfs_identity(node: Path, kname: str, transport: str, host: Host = LOCAL) -> Identity:
    dev = node / "device"
    if transport == "loop":
        backing = host.read(node / "loop" / "backing_file")
        # A loop device has no serial; the backing file's inode identifies it for this boot.
        st = host.stat(backing)
        serial = f"LOOP-{st.dev:x}-{st.ino}" if st is not None else f"LOOP-{kname}"
        return Identity("Linux loop device", serial, "n/a", f"sysfs (backing file {backing})")
    model = host.read(dev / "model") or "unknown model"
    vendor = host.read(dev / "vendor")
    # "ATA" is libata's SAT vendor field, not the drive's maker: the model stands alone
    if vendor and vendor != "ATA" and transport == "scsi" and not model.startswith(vendor):
        model = f"{vendor} {model}"
    serial = (host.read(dev / "serial") or host.read(node / "serial")
              or _vpd_serial(host.read(dev / "vpd_pg80")) or _udev_serial(node, host)
              or "unknown")
    firmware = host.read(dev / "firmware_rev") or host.read(dev / "rev") or "unknown"
    return Identity(model, serial, firmware, "sysfs")


def _vpd_serial(page: str) -> str:
    """The Unit Serial Number of a SCSI device's VPD page 80h as sysfs keeps it (SPC-4
    §7.8.18: a 4-byte header, then the serial in ASCII; libata's SAT answers it with the
    ATA IDENTIFY serial). Read as text, the header is 4 characters (its 80h byte decodes to
    one replacement character)."""
    return page[4:].strip(" \x00") if len(page) > 4 else ""


def _udev_serial(node: Path, host: Host = LOCAL) -> str:
    devno = host.read(node / "dev")
    for line in host.read(Path("/run/udev/data") / f"b{devno}").splitlines():
        if line.startswith("E:ID_SERIAL_SHORT="):
            return line.split("=", 1)[1]
    return ""


def active_range_bytes(dev: BlockDevice, pct: int) -> int:
    """ActiveRange (0:pct%) in whole logical sectors."""
    return dev.capacity_bytes // dev.logical_sector * pct // 100 * dev.logical_sector
