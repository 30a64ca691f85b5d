"""Kernel + initramfs of the QEMU test guest, built once and cached.

The kernel is Debian's own (the package linux-image-amd64 depends on), fetched with
`apt-get download` and unpacked with `dpkg -x`; it is never installed on the host. The
initramfs holds a static busybox, the modules the guest needs (NVMe, virtio-pci, 9p, ...) and
init.sh as /init. It is keyed by a hash of everything that goes into it, so editing init.sh
builds a new one on the next run while an unchanged set-up reuses the cached file.

Cache layout (default /var/cache/snia-pts-guest, or $SNIA_PTS_GUEST_CACHE):
    kernel/<version>/            dpkg -x of the kernel package, depmod done (.complete marker)
    initramfs-<version>-<key>.cpio.gz
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import os
import re
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CACHE = Path("/var/cache/snia-pts-guest")
CACHE_ENV = "SNIA_PTS_GUEST_CACHE"
INIT_SCRIPT = Path(__file__).resolve().parent / "init.sh"
BUSYBOX = Path("/bin/busybox")
# What the guest loads, in this order (dependencies are added by modprobe --show-depends).
# NVMe, 9p; SATA (AHCI, libata) and SCSI (virtio-scsi) disks with the SCSI disk and generic
# drivers (tests/e2e/test_qemu_sata_sas.py).
# null_blk (with configfs): the host ceiling's RAM device (pts.device.ramdev), made through
# /sys/kernel/config/nullb, which init.sh mounts.
MODULES = ("virtio_pci", "nvme", "9pnet_virtio", "9p", "ahci", "virtio_scsi", "sd_mod", "sg",
           "dm_mod", "raid1",      # device-mapper (LVM, dm-linear) and MD RAID1: real holders
           "null_blk")
# insmod parameters: null_blk makes /dev/nullb0 (250 GiB, not memory backed) at load unless
# told nr_devices=0; the suite makes its own through configfs.
MODULE_PARAMS = {"null_blk": "nr_devices=0"}
BUILD_VERSION = "1"     # bump when the layout of the initramfs changes

# tool -> Debian package that provides it
TOOLS = {"apt-get": "apt", "apt-cache": "apt", "dpkg": "dpkg", "depmod": "kmod",
         "modprobe": "kmod", "cpio": "cpio", "qemu-system-x86_64": "qemu-system-x86"}


class GuestSetupError(RuntimeError):
    """The guest image cannot be built (a missing tool or package, no kernel)."""


@dataclass(frozen=True)
class Image:
    kernel: Path            # vmlinuz
    initramfs: Path         # gzip'ed newc cpio, /init = init.sh
    kernel_version: str     # e.g. 6.1.0-56-amd64


def default_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


def require_tools(*names: str) -> None:
    missing = [n for n in names if not shutil.which(n)]
    if missing:
        pkgs = sorted({TOOLS.get(n, n) for n in missing})
        raise GuestSetupError(f"QEMU test guest needs {', '.join(missing)}: "
                              f"apt-get install {' '.join(pkgs)}")


def ensure_image(cache_dir: Path | None = None) -> Image:
    """The guest's kernel and initramfs in `cache_dir`, built if missing or out of date.

    Safe to call from several processes at once (an flock on the cache directory)."""
    cache_dir = Path(cache_dir or default_cache_dir())
    require_tools("apt-get", "apt-cache", "dpkg", "depmod", "modprobe", "cpio")
    _check_busybox()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GuestSetupError(f"cannot create the guest cache {cache_dir} ({exc.strerror}); "
                              f"set {CACHE_ENV} to a writable directory") from None
    with _locked(cache_dir / ".lock"):
        kroot, version = _ensure_kernel(cache_dir)
        kernel = kroot / "boot" / f"vmlinuz-{version}"
        key = _initramfs_key(version)
        initramfs = cache_dir / f"initramfs-{version}-{key}.cpio.gz"
        if not initramfs.exists():
            _build_initramfs(kroot, version, initramfs)
            for old in cache_dir.glob("initramfs-*.cpio.gz"):    # stale keys
                if old != initramfs:
                    old.unlink(missing_ok=True)
    return Image(kernel=kernel, initramfs=initramfs, kernel_version=version)


# -- kernel ------------------------------------------------------------------------------

def _ensure_kernel(cache_dir: Path) -> tuple[Path, str]:
    """(root of the unpacked kernel package, kernel version). Without apt (no package lists,
    no network) a kernel cached earlier is used."""
    kdir = cache_dir / "kernel"
    try:
        package = _kernel_package()
    except GuestSetupError:
        cached = _cached_kernels(kdir)
        if cached:
            return cached[-1]
        raise
    version = package.removeprefix("linux-image-")
    root = kdir / version
    if (root / ".complete").exists():
        return root, version
    try:
        _unpack_kernel(package, version, kdir)
    except GuestSetupError:
        cached = _cached_kernels(kdir)
        if cached:                                          # offline: keep the old kernel
            return cached[-1]
        raise
    return root, version


def _kernel_package() -> str:
    """linux-image-6.1.0-NN-amd64: what linux-image-amd64 depends on."""
    proc = subprocess.run(["apt-cache", "depends", "linux-image-amd64"],
                          capture_output=True, text=True)
    found = re.findall(r"Depends:\s+(linux-image-\d\S*)", proc.stdout)
    if proc.returncode or not found:
        raise GuestSetupError("cannot find the kernel package (apt-cache depends "
                              f"linux-image-amd64: {proc.stderr.strip() or proc.stdout.strip()}"
                              "); run apt-get update")
    return found[0]


def _cached_kernels(kdir: Path) -> list[tuple[Path, str]]:
    found = [(p, p.name) for p in kdir.glob("*") if (p / ".complete").exists()]
    return sorted(found, key=lambda pv: [int(x) if x.isdigit() else x
                                         for x in re.split(r"[.-]", pv[1])])


def _unpack_kernel(package: str, version: str, kdir: Path) -> None:
    kdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".tmp-{version}-", dir=kdir) as tmp:
        tmp = Path(tmp)
        os.chmod(tmp, 0o755)   # apt's _apt sandbox user must be able to write here ...
        argv = ["apt-get", "download", "-q", package]
        if os.geteuid() == 0:  # ... or, as root, simply do without the sandbox
            argv[1:1] = ["-o", "APT::Sandbox::User=root"]
        proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True)
        debs = list(tmp.glob(f"{package}_*.deb"))
        if proc.returncode or not debs:
            raise GuestSetupError(f"apt-get download {package} failed: "
                                  f"{(proc.stderr or proc.stdout).strip()[-800:]}")
        unpacked = tmp / "root"
        _run(["dpkg", "-x", str(debs[0]), str(unpacked)])
        _run(["depmod", "-b", str(unpacked), version])
        if not (unpacked / "boot" / f"vmlinuz-{version}").exists():
            raise GuestSetupError(f"{debs[0].name} has no boot/vmlinuz-{version}")
        (unpacked / ".complete").write_text(f"{debs[0].name}\n")
        target = kdir / version
        if target.exists():                     # an incomplete earlier attempt
            shutil.rmtree(target)
        unpacked.rename(target)


# -- initramfs ---------------------------------------------------------------------------

def _initramfs_key(version: str) -> str:
    h = hashlib.sha256()
    params = repr(sorted(MODULE_PARAMS.items()))
    for part in (BUILD_VERSION, version, " ".join(MODULES), params):
        h.update(part.encode() + b"\0")
    h.update(INIT_SCRIPT.read_bytes())
    h.update(_file_digest(BUSYBOX).encode())
    return h.hexdigest()[:16]


def _module_files(kroot: Path, version: str) -> list[Path]:
    """Module files in load order, each once (modprobe --show-depends lists dependencies
    first)."""
    files: list[Path] = []
    for module in MODULES:
        out = _run(["modprobe", "-d", str(kroot), "-S", version, "--show-depends", module])
        for line in out.splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "insmod" and Path(words[1]) not in files:
                files.append(Path(words[1]))
            # "builtin X" lines: nothing to load
    return files


def _build_initramfs(kroot: Path, version: str, target: Path) -> None:
    modules = _module_files(kroot, version)
    with tempfile.TemporaryDirectory(prefix=".initramfs-", dir=target.parent) as tmp:
        root = Path(tmp) / "root"
        for d in ("bin", "sbin", "etc", "proc", "sys", "dev", "tmp", "run", "newroot",
                  f"lib/modules/{version}"):
            (root / d).mkdir(parents=True)
        shutil.copy2(BUSYBOX, root / "bin" / "busybox")
        order = []
        for f in modules:
            rel = f.relative_to(kroot)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, root / rel)
            params = MODULE_PARAMS.get(f.name.split(".")[0].replace("-", "_"), "")
            order.append(f"/{rel} {params}".rstrip())
        (root / "etc" / "modules.load").write_text("\n".join(order) + "\n")
        shutil.copy2(INIT_SCRIPT, root / "init")
        os.chmod(root / "init", 0o755)
        names = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet", "-R", "0:0"], cwd=root,
                              input=("\n".join(names) + "\n").encode(), capture_output=True)
        if cpio.returncode:
            raise GuestSetupError(f"cpio failed: {cpio.stderr.decode(errors='replace')}")
        partial = Path(tmp) / "initramfs.cpio.gz"
        with gzip.open(partial, "wb", compresslevel=1) as fh:
            fh.write(cpio.stdout)
        partial.rename(target)                      # same file system: atomic


def _check_busybox() -> None:
    """A static busybox: the initramfs has no C library."""
    try:
        data = BUSYBOX.read_bytes()
    except OSError:
        raise GuestSetupError(f"QEMU test guest needs a static {BUSYBOX}: "
                              "apt-get install busybox-static") from None
    if _elf_interpreter(data) is not None:
        raise GuestSetupError(f"{BUSYBOX} is dynamically linked (package busybox); the guest "
                              "needs the static one: apt-get install busybox-static")


def _elf_interpreter(data: bytes) -> bytes | None:
    """PT_INTERP of a little-endian 64-bit ELF file, or None (static)."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise GuestSetupError(f"{BUSYBOX} is not a 64-bit ELF executable")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", data,
                                                                 phoff + i * phentsize)
        if p_type == 3:
            return data[p_offset:p_offset + p_filesz]
    return None


# -- helpers -----------------------------------------------------------------------------

def _run(argv: list[str], **kw) -> str:
    proc = subprocess.run(argv, capture_output=True, text=True, **kw)
    if proc.returncode:
        raise GuestSetupError(f"{' '.join(argv)} failed (rc {proc.returncode}): "
                              f"{(proc.stderr or proc.stdout).strip()[-800:]}")
    return proc.stdout


def _file_digest(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
