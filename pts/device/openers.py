"""Processes that hold a block device open, and fio processes a killed run left behind.

Why: when the suite dies (kill -9, a crash) the kernel sends its fio SIGTERM
(pts.tools.commands, PR_SET_PDEATHSIG); a fio that does not end on it (seen: stuck in a
futex on a loaded machine, for an hour) kept writing to the drive; its watcher
(pts.tools.fio_watch) now SIGKILLs it and its jobs, and what is left despite it (a watcher
killed too) is found here. Anything that still has the device open would also disturb a
measurement. The safety gate names such processes
(`holding`), and `--resume` of a run kills the fio that run itself left (`reap`): its
command line names the run folder (its job file and JSON output are in it).
"""

from __future__ import annotations

import os
import signal
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pts.device.identity import PROC

SETTLE_S = 0.3      # a second look after this: a passing open (blkid, udev) is not a holder
REAP_WAIT_S = 10.0  # for a killed fio to close its descriptors


@dataclass(frozen=True)
class Opener:
    pid: int
    name: str        # /proc/PID/comm
    command: str     # its command line, spaces between arguments

    def __str__(self) -> str:
        shown = self.command if len(self.command) <= 120 else self.command[:117] + "..."
        return f"{self.name} (pid {self.pid}: {shown})"


def pids(proc: Path) -> list[int]:
    return [int(p) for p in os.listdir(proc) if p.isdigit() and int(p) != os.getpid()]


def opener(pid: int, proc: Path) -> Opener | None:
    try:
        name = (proc / str(pid) / "comm").read_text(errors="replace").strip()
        argv = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:             # gone meanwhile
        return None
    return Opener(pid, name, " ".join(a.decode(errors="replace") for a in argv if a))


def _has_open(pid: int, devnos: set[tuple[int, int]], proc: Path) -> bool:
    fd_dir = proc / str(pid) / "fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:             # gone, or a kernel thread
        return False
    for fd in fds:
        try:
            st = os.stat(fd_dir / fd)
        except OSError:
            continue
        if stat.S_ISBLK(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) in devnos:
            return True
    return False


def _scan(devnos: set[tuple[int, int]], proc: Path) -> dict[int, Opener]:
    found = {}
    for pid in pids(proc):
        if _has_open(pid, devnos, proc) and (o := opener(pid, proc)) is not None:
            found[pid] = o
    return found


def holding(devnos: set[tuple[int, int]], proc: Path = PROC,
            settle: float = SETTLE_S) -> list[Opener]:
    """Processes of this host (not this one) that have one of `devnos` open, in two looks
    `settle` seconds apart (only those seen in both)."""
    first = _scan(devnos, proc)
    if not first:
        return []
    time.sleep(settle)
    second = _scan(devnos, proc)
    return [o for pid, o in sorted(second.items()) if pid in first]


def left_by(folder: Path, proc: Path = PROC) -> list[Opener]:
    """fio processes whose command line names the run folder `folder`."""
    where = str(Path(folder).absolute())
    found = [opener(pid, proc) for pid in pids(proc)]
    return [o for o in found if o is not None and o.name == "fio" and where in o.command]


def reap(folder: Path, say: Callable[[str], None], proc: Path = PROC) -> list[Opener]:
    """Kill -9 the fio processes the run in `folder` left running (its jobs too: forked,
    they have its command line) and wait until they have closed their descriptors."""
    left = left_by(folder, proc)
    for o in left:
        say(f"killing {o}: left running by the stopped run of {folder}")
        try:
            os.kill(o.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + REAP_WAIT_S
    while any(alive(o.pid, proc) for o in left) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def alive(pid: int, proc: Path) -> bool:
    """Running, or dead with descriptors still open (a zombie has none)."""
    try:
        return bool(os.listdir(proc / str(pid) / "fd"))
    except OSError:
        return False
