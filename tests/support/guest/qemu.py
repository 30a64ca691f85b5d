"""One boot of the QEMU test guest: run a shell script against an emulated NVMe drive.

QEMU 10 (Debian's bookworm-backports build; README command 2 installs it) under TCG (KVM does
not work on the CI machines), a named CPU model (CPU_MODEL, below) and `-smp 2` (with one vCPU,
QD32 I/O gets NVMe timeouts). The NVMe drive is a controller with the OCP extensions (`ocp=on`:
log C0h) in an NVMe subsystem with Flexible Data Placement (SUBSYSTEM), its namespace a
separate nvme-ns device: in a subsystem QEMU puts every namespace in Endurance Group 1
(Identify Namespace ENDGID 1) and answers log 09h and the FDP logs 20h-23h. QEMU
before 10.0 has no `ocp` property: run_guest refuses it (QEMU_MIN) naming the fix. The
host's / is shared read-only (tag hostroot, multidevs=remap since it spans several file
systems); `share_dir` is shared read-write (tag share) and seen in the guest as /tmp/share.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pts.tools.commands import on_parent_death
from tests.support.guest.image import GuestSetupError, Image, require_tools
from tests.support.helpers import scratch_file

QEMU = "qemu-system-x86_64"
# -device nvme,ocp=on (the OCP SMART / Health Information Extended log, C0h) came with QEMU
# 10.0 (qemu-devel pull request of 27 Feb 2025); Debian 12 has it in bookworm-backports.
QEMU_MIN = (10, 0)
QEMU_FIX = ("install qemu-system-x86 from bookworm-backports as README command 2 does: "
            ".ci/backports.sh && apt-get update && apt-get install --no-install-recommends "
            "qemu-system-x86/bookworm-backports seabios/bookworm-backports")
# Nehalem: x86-64-v2 (SSE4.2, POPCNT, CX16, LAHF), what numpy's wheels require as their
# baseline, and no AVX. Not `-cpu max`: it advertises AVX2, so numpy dispatches its AVX2
# sort (x86-simd-sort's argsort, used by matplotlib's 3D depth sort), whose masked
# `vgatherqpd` QEMU 7.2's TCG executes as loads of EVERY lane, mask or not; with a zero
# mask and stale indices that is a guest SIGSEGV, now and then (seen: the IOPS report's 3D
# chart, on Intel and AMD hosts; the core dump's faulting instruction was that gather with
# ymm mask 0). Kept on QEMU 10: a named model makes the guest's CPU the same on every host,
# and TCG emulates no AVX at less cost (test_qemu_e2e checks numpy's view of it).
CPU_MODEL = "Nehalem-v1"
# The guest kernel's speculative-execution mitigations off: under TCG they are pure cost (page
# table isolation switches CR3 at every system call and interrupt, a flush of TCG's soft TLB
# on this CPU model without PCID; retpolines), and the guest runs nothing but the test's own
# script. Measured on the guest's 12-run script and on short probes (docs/development.md).
# iomem=relaxed: a Debian kernel (CONFIG_IO_STRICT_DEVMEM) refuses to map a BAR its driver
# holds; the suite reads the NVMe controller's CAP and VS from BAR0 (pts.tools.pci_facts).
KERNEL_ARGS = "mitigations=off iomem=relaxed"
# The subsystem with Flexible Data Placement (issue 49 §3; `-device nvme-subsys,help`): one
# reclaim group, 4 reclaim unit handles, the namespace placing through handles 0, 1 and 2 (as
# the recorded probe, tests/data/qemu-10/fdp). Reclaim units of 1 TiB, more than the guest
# ever writes: QEMU counts a filled (or swapped) reclaim unit's unwritten rest as media bytes
# (8 MiB units gave an FDP WAF of 1.03125), so with none filled media bytes = host bytes in
# every window and the FDP WAF of every round is exactly 1.000 (test_qemu_e2e).
SUBSYSTEM = "nvme-subsys,id=nvmsubsys0,fdp=on,fdp.runs=1T,fdp.nrg=1,fdp.nruh=4"
NAMESPACE = "nvme-ns,drive=nvm,nsid=1,bus=nvmectrl0,fdp.ruhs=0;1;2"
OUTPUTS = ("guest.sh", "binds", "guest.log", "rc", "dmesg.txt", "ready", "init-error",
           "console.log")


class GuestError(RuntimeError):
    """The guest did not run the script to its end."""


class GuestBootError(GuestError):
    """QEMU ended without the guest writing rc (boot failure, panic, QEMU error)."""


class GuestTimeout(GuestError):
    """The guest was still running at the timeout (QEMU was killed)."""


@dataclass
class GuestResult:
    returncode: int             # the script's exit code
    log_text: str               # its stdout + stderr (guest.log)
    dmesg_text: str | None      # the guest kernel log after the script; None: no dmesg.txt
    seconds: float              # QEMU start to exit, wall time
    console_text: str           # serial console + QEMU's own messages
    ready_seconds: float | None = None   # QEMU start to the script starting, wall time

    def kernel_log(self) -> str:
        """The guest kernel's log, or GuestError when the guest wrote none: init.sh writes
        rc before dmesg.txt, so a guest that died in between looks like a clean run; a check
        of the log ("no NVMe timeout") must not pass on a log that is not there."""
        if self.dmesg_text is None:
            raise GuestError("the guest wrote no dmesg.txt (init.sh writes it after rc, just "
                             "before poweroff): its kernel log cannot be checked; see "
                             "console.log in the share folder")
        return self.dmesg_text


@dataclass(frozen=True)
class Disk:
    """A disk beside the NVMe drive: "sata" (an ide-hd on QEMU's ICH9 AHCI controller: the
    guest's libata, /dev/sdX) or "scsi" (a scsi-hd on virtio-scsi: the guest's SCSI disk
    driver, /dev/sdX). Its backing is a raw file; discards reach it (discard=unmap)."""

    kind: str
    backing: Path
    serial: str
    model: str


def run_guest(image: Image, script: str, share_dir: Path, nvme_backing: Path, serial: str,
              timeout: float, memory: str = "2G", drive_options: str = "",
              keep_visible: tuple[Path, ...] = (), disks: tuple[Disk, ...] = (),
              namespaces: tuple[Path, ...] = ()) -> GuestResult:
    """Boot the guest, run `script` with /bin/sh (chrooted in the host's /, read-only, as
    root) and return once it powered off. /dev/nvme0n1 is `nvme_backing` (a raw file) behind
    QEMU's NVMe controller with serial number `serial`. Outputs land in `share_dir` (the
    guest's /tmp/share). The guest's /tmp is its own tmpfs: host directories under /tmp that
    the script needs (`keep_visible`, e.g. a checkout in /tmp) are bind-mounted into it,
    read-only. `disks`: SATA and SCSI disks beside it (Disk; the script waits for their
    /dev/sdX). `namespaces`: raw files of more namespaces on the same controller, nsid 2, 3,
    ... in this order (in the guest /dev/nvme0n2, ...; the script checks which is which by
    /sys/block/*/nsid). QEMU is killed on timeout, on any exception and if this process dies."""
    require_tools(QEMU)
    require_qemu_version()
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,20}", serial):
        raise ValueError(f"NVMe serial {serial!r}: 1-20 characters of [A-Za-z0-9_.-]")
    share_dir = Path(share_dir).resolve()
    share_dir.mkdir(parents=True, exist_ok=True)
    for name in OUTPUTS:
        (share_dir / name).unlink(missing_ok=True)
    (share_dir / "guest.sh").write_text(script)
    tmp = [Path(p).resolve() for p in keep_visible]
    (share_dir / "binds").write_text("".join(f"{p}\n" for p in tmp
                                             if p.is_relative_to("/tmp")))
    console = share_dir / "console.log"
    argv = qemu_argv(image, share_dir, Path(nvme_backing).resolve(), serial, memory,
                     drive_options) + namespace_argv(namespaces) + disk_argv(disks)
    start = time.monotonic()
    ready_at = None
    with open(console, "wb") as out:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                # SIGKILL when pytest dies (kill -9 too): no QEMU left behind
                                stderr=subprocess.STDOUT,
                                preexec_fn=on_parent_death(signal.SIGKILL))
    try:
        while proc.poll() is None:
            if ready_at is None and (share_dir / "ready").exists():
                ready_at = time.monotonic() - start
            if time.monotonic() - start > timeout:
                _kill(proc)
                raise GuestTimeout(f"guest still running after {timeout:.0f} s, QEMU killed"
                                   + _tail(share_dir))
            time.sleep(0.05)
    finally:
        _kill(proc)
    seconds = time.monotonic() - start
    rc_file = share_dir / "rc"
    if not rc_file.exists():
        why = _read(share_dir / "init-error").strip() or (
            "kernel panic" if "Kernel panic" in _read(console) else
            f"boot failed (QEMU exit status {proc.returncode})")
        raise GuestBootError(f"the guest did not run the script to its end: {why}"
                             + _tail(share_dir))
    return collect(share_dir, seconds, ready_at)


def collect(share_dir: Path, seconds: float, ready_at: float | None = None) -> GuestResult:
    """The outputs of a guest that wrote rc, read from `share_dir` (a missing dmesg.txt is
    None, not an empty log: GuestResult.kernel_log)."""
    dmesg = share_dir / "dmesg.txt"
    return GuestResult(returncode=int((share_dir / "rc").read_text().strip()),
                       log_text=_read(share_dir / "guest.log"),
                       dmesg_text=_read(dmesg) if dmesg.exists() else None,
                       seconds=seconds, console_text=_read(share_dir / "console.log"),
                       ready_seconds=ready_at)


def qemu_argv(image: Image, share_dir: Path, nvme_backing: Path, serial: str,
              memory: str = "2G", drive_options: str = "") -> list[str]:
    """`drive_options`: extra -drive options, e.g. "cache=none,aio=threads" for a backing
    file on the emulated SSD's FUSE mount (so every write reaches the FTL model at once)."""
    extra = f",{drive_options}" if drive_options else ""
    return [QEMU, "-accel", "tcg", "-cpu", CPU_MODEL, "-m", memory, "-smp", "2",
            "-nographic", "-no-reboot", "-net", "none",
            "-kernel", str(image.kernel), "-initrd", str(image.initramfs),
            "-append", f"console=ttyS0 quiet panic=-1 {KERNEL_ARGS}",
            "-drive", f"file={_opt(nvme_backing)},if=none,id=nvm,format=raw,discard=unmap{extra}",
            # a subsystem (Endurance Group 1, log 09h; FDP), a controller with the OCP logs in
            # it, the namespace on that controller (in a subsystem it must be its own device)
            "-device", SUBSYSTEM,
            "-device", f"nvme,serial={serial},ocp=on,subsys=nvmsubsys0,id=nvmectrl0",
            "-device", NAMESPACE,
            "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                       "multidevs=remap,id=hostroot",
            "-virtfs", f"local,path={_opt(share_dir)},mount_tag=share,security_model=none,"
                       "id=share"]


def qemu_version(binary: str = QEMU) -> tuple[int, int, str]:
    """(major, minor, the first line of `binary --version`)."""
    out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                         timeout=30).stdout
    m = re.search(r"version (\d+)\.(\d+)", out)
    if not m:
        raise GuestSetupError(f"{binary} --version printed no version: {out[:200]!r}")
    return int(m[1]), int(m[2]), out.splitlines()[0]


def require_qemu_version(binary: str = QEMU) -> None:
    """GuestSetupError naming the fix when `binary` is older than QEMU_MIN: the guest's NVMe
    drive needs `ocp=on` (and the guest tests read its logs), so an older QEMU is a failure
    of the set-up, not a reason to skip."""
    major, minor, line = qemu_version(binary)
    if (major, minor) < QEMU_MIN:
        raise GuestSetupError(
            f"the QEMU test guest needs QEMU >= {QEMU_MIN[0]}.{QEMU_MIN[1]} (the NVMe "
            f"controller's ocp=on, log C0h); {shutil.which(binary) or binary} is {line!r}: "
            + QEMU_FIX)


def namespace_argv(namespaces: tuple[Path, ...]) -> list[str]:
    """More namespaces on the NVMe controller (nsid 2, 3, ...), each a raw file: in the same
    subsystem, so in Endurance Group 1 with namespace 1 (QEMU sums log 09h over the
    subsystem's namespaces and C0h over the controller's)."""
    out: list[str] = []
    for nsid, path in enumerate(namespaces, start=2):
        out += ["-drive", f"file={_opt(Path(path).resolve())},if=none,id=nvm{nsid},format=raw",
                "-device", f"nvme-ns,drive=nvm{nsid},nsid={nsid},bus=nvmectrl0"]
    return out


def disk_argv(disks: tuple[Disk, ...]) -> list[str]:
    """The controllers (one AHCI, one virtio-scsi, when used) and a drive per disk."""
    out: list[str] = []
    kinds = {d.kind for d in disks}
    if unknown := kinds - {"sata", "scsi"}:
        raise ValueError(f"disk kinds {sorted(unknown)}: 'sata' or 'scsi'")
    if "sata" in kinds:
        out += ["-device", "ich9-ahci,id=ahci"]
    if "scsi" in kinds:
        out += ["-device", "virtio-scsi-pci,id=vscsi"]
    for n, d in enumerate(disks):
        out += ["-drive", f"file={_opt(Path(d.backing).resolve())},if=none,id=disk{n},"
                          "format=raw,discard=unmap"]
        if d.kind == "sata":
            out += ["-device", f"ide-hd,drive=disk{n},bus=ahci.{n},serial={_opt(d.serial)},"
                               f"model={_opt(d.model)}"]
        else:
            out += ["-device", f"scsi-hd,drive=disk{n},bus=vscsi.0,serial={_opt(d.serial)},"
                               f"product={_opt(d.model)}"]
    return out


def make_backing(size: int, directory: Path = Path("/dev/shm")) -> Path:
    """A sparse raw file of `size` bytes for the guest's NVMe namespace (in RAM by default:
    /dev/shm is the fastest backing). The caller removes it (or use backing_file)."""
    return scratch_file("pts-guest-nvme", size, directory)    # named after this process


@contextlib.contextmanager
def backing_file(size: int, directory: Path = Path("/dev/shm")) -> Iterator[Path]:
    path = make_backing(size, directory)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


# -- helpers -----------------------------------------------------------------------------

def _opt(path: Path) -> str:
    """A path inside a QEMU option list (a comma is written twice)."""
    return str(path).replace(",", ",,")


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def _tail(share_dir: Path, lines: int = 40) -> str:
    text = _read(share_dir / "console.log").replace("\r", "")
    tail = "\n".join(text.splitlines()[-lines:])
    return f"\n--- console tail ({share_dir / 'console.log'}) ---\n{tail}"


__all__ = ["GuestBootError", "GuestError", "GuestResult", "GuestTimeout", "backing_file",
           "collect", "make_backing", "namespace_argv", "qemu_argv", "qemu_version",
           "require_qemu_version", "run_guest"]
