"""Is the process that made a thing (a gate folder, a RAM device, a scratch file) still
alive? Judged only where it can be judged, and never acted on otherwise.

Why (issue 47 §1): a pid and a start time name a process only inside its own pid namespace.
A suite started on a host read the owner of a gate made in a container (pid 1 of its own
namespace) in the host's /proc, found the host's pid 1 with another start time, judged the
owner dead and killed a live run's gate. So, in this order:
1. a lock the owner holds while it lives (`hold`: flock(2) on a file beside what it made):
   the kernel releases it when the owner dies, whatever its namespace, so it holds for
   anyone who can open the file (`held`);
2. without such a lock (what older versions made), the owner's pid and start time, but only
   when the thing's process lives in the reader's pid namespace and the reader's /proc is
   that namespace's (`same_namespace`);
3. otherwise: unknown, and unknown is alive (not ours to judge).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def hold(path: Path) -> int:
    """Make the lock file `path`, already locked by this process, and keep it locked while
    the returned descriptor is open (close it when done; the kernel does at death). The file
    appears under its name only once locked (made under a temporary name, then renamed), so
    a reader never sees it unlocked while its owner lives. The descriptor is not inherited
    by the programs this process starts (O_CLOEXEC): a fio left running must not keep a dead
    suite's lock."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(tmp, path)
    except OSError:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    return fd


def held(path: Path) -> bool | None:
    """Does a live process hold the lock file `path` (made by `hold`)? True: held; False:
    nobody holds it (its owner is dead); None: no such file (cannot say)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)          # closing releases a lock taken just now
    return False


def namespace(pid: int | str, proc: Path) -> str | None:
    """The pid namespace of process `pid` as /proc names it (`pid:[4026531836]`)."""
    try:
        return os.readlink(proc / str(pid) / "ns" / "pid")
    except OSError:
        return None


def same_namespace(pid: int, proc: Path) -> bool:
    """Can a pid that process `pid` recorded be looked up in `proc`? Only when `pid` lives in
    this process's pid namespace and `proc` is mounted for that namespace (its `self` is this
    process's own pid: a /proc of a parent namespace lists other numbers)."""
    try:
        if (proc / "self").resolve(strict=True).name != str(os.getpid()):
            return False
    except OSError:
        return False
    mine = namespace("self", proc)
    return mine is not None and namespace(pid, proc) == mine


def namespace_mark(proc: Path = Path("/proc")) -> str:
    """This process's pid namespace as a short name-safe mark (the namespace's inode number,
    e.g. 4026531836), for names that carry a pid: a pid in a name means something only to
    readers of the same namespace ("0": unreadable)."""
    found = namespace("self", proc) or ""
    digits = "".join(c for c in found if c.isdigit())
    return digits or "0"
