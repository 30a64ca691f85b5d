"""Small OS helpers for the emulator's lifecycle: loop devices, mounts, processes.

Safety: loop devices are only ever detached after checking, on an open file descriptor of
the device, that its backing file is the image of *our* instance (see `detach_loop`).
Other processes on the machine have loop devices of their own.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

LOOP_CLR_FD = 0x4C01          # linux/loop.h
SYS_BLOCK = Path("/sys/block")


class CommandError(RuntimeError):
    """An external command failed; the message carries its argv and stderr."""


def run(argv: list[str], timeout: float = 30.0) -> str:
    """Run argv (no shell); return stdout; raise CommandError with stderr on failure."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandError(f"{' '.join(argv)}: {exc}") from None
    if done.returncode != 0:
        raise CommandError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


# ----------------------------------------------------------------------- loop devices

def loop_backing_file(device: str) -> str | None:
    """Backing file of a bound loop device (from sysfs), None if unbound or not a loop."""
    name = os.path.basename(os.path.realpath(device))
    try:
        return (SYS_BLOCK / name / "loop" / "backing_file").read_text().strip()
    except OSError:
        return None


def loops_backed_by(path: str) -> list[str]:
    """Every loop device whose backing file is exactly `path`."""
    found = []
    for entry in sorted(SYS_BLOCK.glob("loop*")):
        if loop_backing_file(entry.name) == path:
            found.append(f"/dev/{entry.name}")
    return found


def attach_loop(image: str, sector_size: int = 512) -> str:
    """Bind a free loop device to `image` with direct I/O and `sector_size`-byte logical
    sectors; return its /dev path."""
    return run(["losetup", "--find", "--show", "--direct-io=on", "--sector-size",
                str(sector_size), image]).strip()


def detach_loop(device: str, expected_backing: str) -> bool:
    """Detach `device` if, and only if, it is bound to `expected_backing`.

    The check and the LOOP_CLR_FD ioctl use one open descriptor: while we hold it the
    device cannot be released and re-bound by someone else between check and detach.
    If the device is still open elsewhere (fio running), the kernel detaches it on the
    last close (autoclear). Returns True if a detach was requested.
    """
    try:
        fd = os.open(device, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if loop_backing_file(device) != expected_backing:
            return False
        fcntl.ioctl(fd, LOOP_CLR_FD)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def wait_loop_released(device: str, expected_backing: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while loop_backing_file(device) == expected_backing:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# ----------------------------------------------------------------------------- mounts

def is_mounted(path: str) -> bool:
    with open("/proc/mounts", encoding="utf-8") as fh:
        # /proc/mounts escapes blanks as \040; our mount points never contain any.
        return any(line.split()[1] == path for line in fh if line.strip())


def unmount(path: str) -> None:
    """Unmount a FUSE mount; lazily if it is still busy (a loop still closing its file)."""
    if not is_mounted(path):
        return
    try:
        run(["fusermount3", "-u", "-q", path])
    except CommandError:
        run(["umount", "-l", path])


# -------------------------------------------------------------------------- processes

def process_start_time(pid: int) -> int | None:
    """Start time of pid in clock ticks since boot (field 22 of /proc/PID/stat).

    Together with the pid it names one process: pids are reused, start times are not.
    Returns None for a missing process or a zombie.
    """
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()   # after "pid (comm) "
    if fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def process_alive(pid: int | None, start_time: int | None) -> bool:
    if not pid or pid <= 0:
        return False
    now = process_start_time(pid)
    return now is not None and (start_time is None or now == start_time)


def terminate(pid: int, start_time: int | None, timeout: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `timeout`, the process (pid, start_time) only."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 2.0)):
        if not process_alive(pid, start_time):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while process_alive(pid, start_time) and time.monotonic() < deadline:
            _reap_child(pid)
            time.sleep(0.02)


def _reap_child(pid: int) -> None:
    """Collect the exit status if pid is our child (else it would linger as a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


# ------------------------------------------------------------------------------ locks

@contextlib.contextmanager
def flocked(path: Path, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold an exclusive flock on `path`; if it is taken, tell on_wait who holds it, then
    when we got it. The descriptor is close-on-exec (Python's default), and the explicit
    unlock frees the lock even if a fork kept a copy of the descriptor (flock locks belong
    to the open file description, which a fork shares)."""
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            t0 = time.monotonic()
            if on_wait:
                on_wait(f"waiting for {path}, held by: {'; '.join(lock_holders(path))}")
            fcntl.flock(lock, fcntl.LOCK_EX)
            if on_wait:
                on_wait(f"got {path} after {time.monotonic() - t0:.1f} s")
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def lock_holders(path: Path | str) -> list[str]:
    """The /proc/locks lines on `path`'s inode ('->' lines wait for it), each with its
    process's command line. The pid is the one that took the lock: a fork that inherited
    the descriptor is not named."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError as exc:
        return [f"(cannot tell: {exc})"]
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found = []
    for line in lines:
        fields = line.replace("->", "").split()
        if inode in fields:
            pid = fields[fields.index(inode) - 1]
            found.append(f"{line.strip()} [pid {pid}: {_cmdline(pid)}]")
    return found or ["(nobody in /proc/locks)"]


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()[:200]
    except (OSError, ValueError):
        return "(gone)"
