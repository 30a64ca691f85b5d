"""What a dead run of the suite left on this host, removed before a run uses the drive.

Why (issue 38 §1): a suite killed with kill -9 mid-round left fio waiting for a gate script
(pts.tools.fio_gate) that held the drive open, its gate folder, and its host-ceiling RAM
device (pts.device.ramdev: 1 GiB of shared memory each); `--resume` was then refused because
the drive was held by `sh (... pts-gate.sh done 6 4 4)`, whose command line names neither
the run folder nor the drive. One sweep (`sweep`), at session start of every run that will
write to a drive of this host (a new one, or `--resume`), removes:
- gate scripts whose owner (the suite that ran the round: pid and start time) is gone,
  with the fio processes above them (their fio job and its main process): found by the
  owner their working directory names (the gate folder's owner file, or the script in
  fio's working directory);
- the fio processes of the resumed run (`openers.reap`: their command line names its
  folder);
- gate folders (pts-gates-* in the temporary directory) whose owner is gone, and the shared
  ssh connections' folders (pts-ssh-*, pts.tools.hosts) whose owner's lock is no longer held
  (a process killed -9: its masters ended with it, their sockets with them, the folder not);
- host-ceiling RAM devices whose owner is gone (`ramdev.clean_leftovers`).
It names each thing it removed. What a live owner holds (another suite, on another drive)
is never touched: the owner holds a lock beside its gates while it lives (the kernel releases
it at its death, in whatever pid namespace it ran: pts.tools.liveness); a gate without such a
lock (made by an older version) is judged by its owner's pid and start time only when it
runs in this pid namespace; what cannot be judged is never killed (issue 47 §1: a host's
sweep took a container's pid 1 for the host's and killed a live run's gate).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pts.device import openers, ramdev
from pts.device.identity import PROC
from pts.tools import fio_gate, liveness
from pts.tools.commands import ToolError
from pts.tools.hosts import MASTERS_LOCK, MASTERS_PREFIX, Host, host_for

# A gate folder gets its owner file as soon as it is made: one without it after this long
# is a dead run's (killed in between, or made before the folders had owners).
STALE_S = 60.0

# The command line of a gate script as fio runs it (`sh -c './pts-gate.sh done 3 4 4 > ...'`,
# then `/bin/bash ./pts-gate.sh done 3 4 4`): not an editor or a grep of a file of that name.
RUNS_GATE = re.compile(rf"\./{re.escape(fio_gate.GATE_SCRIPT)} (done|wait) \d")

Say = Callable[[str], None]


def sweep(say: Say, resumed: Path | None = None, log_file: Path | None = None,
          host: Host | None = None, tmp: Path | None = None, proc: Path = PROC,
          shm: str = ramdev.SHM, nullb: str = ramdev.NULLB) -> list[str]:
    """Remove what dead runs left on this host (the module's list); what was removed, each
    also said through `say`. `resumed`: the folder of the run being resumed (its fio);
    `log_file`: where the RAM devices' commands are logged. Where it looks (a test confines
    it to what it made): the processes of `proc`, the gate folders in `tmp`, the RAM
    devices' files in `shm` and null_blk folders in `nullb`."""
    removed = [f"killed {o}" for o in gates_left(say, proc)]
    if resumed is not None:
        removed += [f"killed {o}" for o in openers.reap(resumed, say, proc)]
    for folder in stale_folders(Path(tmp or tempfile.gettempdir())):
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(f"removed {folder}")
        what = "ssh connections'" if folder.name.startswith(MASTERS_PREFIX) else "gate"
        say(f"[pts] removed {folder}: the {what} folder of a stopped run")
    if os.geteuid() == 0:                # losetup and null_blk's configfs need root
        try:
            for name in ramdev.clean_leftovers(host or host_for(None), log_file,
                                               shm, nullb):
                removed.append(f"removed {name}")
                say(f"[pts] removed {name}: the host-ceiling RAM device of a stopped run")
        except ToolError as exc:
            say(f"[pts] the host-ceiling devices of stopped runs were not all removed: {exc}")
    return removed


def gates_left(say: Say, proc: Path = PROC) -> list[openers.Opener]:
    """Kill -9 the gate scripts whose owner is gone and the fio processes and shells above
    them; wait until they have closed their descriptors. The killed processes."""
    chosen: dict[int, openers.Opener] = {}
    for pid in openers.pids(proc):
        o = openers.opener(pid, proc)
        if o is None or not RUNS_GATE.search(o.command) or _owner_alive(pid, proc):
            continue
        for p in _chain(pid, proc):
            if p not in chosen and (found := openers.opener(p, proc)) is not None:
                chosen[p] = found
    for o in chosen.values():      # stopped first: a shell whose child dies cannot go on
        try:                        # and exit by itself before its own SIGKILL
            os.kill(o.pid, signal.SIGSTOP)
        except ProcessLookupError:
            pass
    for o in chosen.values():
        say(f"[pts] killing {o}: left running by a stopped run (its gate)")
        try:
            os.kill(o.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + openers.REAP_WAIT_S
    while any(openers.alive(p, proc) for p in chosen) and time.monotonic() < deadline:
        time.sleep(0.05)
    return list(chosen.values())


def _owner_alive(pid: int, proc: Path) -> bool:
    """Is the owner of the gate script `pid` alive? By the lock its working directory names
    (the gate folder's, or the one the script in fio's working directory names); without a
    lock, and only in this pid namespace: the owner its working directory names (owner file
    or script), or for a working directory removed meanwhile the owner pid in the gate
    folder's name. Unknown: alive (not ours to judge: another namespace's gate, an editor of
    a file of that name)."""
    try:
        cwd = os.readlink(proc / str(pid) / "cwd")
    except OSError:
        return True
    where = Path(cwd.removesuffix(" (deleted)"))
    if (held := fio_gate.owner_held(where)) is not None:
        return held
    if not liveness.same_namespace(pid, proc):
        return True
    if (owner := fio_gate.owner_of(where)) is not None:
        return fio_gate.alive(owner, proc)
    named = where.name.removeprefix(fio_gate.GATES_PREFIX).split("-")[0]
    if where.name.startswith(fio_gate.GATES_PREFIX) and named.isdigit():
        return (proc / named).exists()
    return not where.name.startswith(fio_gate.GATES_PREFIX)


def _chain(pid: int, proc: Path) -> list[int]:
    """`pid` and its ancestors while they run the gate (the shell fio's system() started)
    and then while they are fio (its job, its main process): never what fio was handed to
    when its suite died (init, a subreaper)."""
    out, fio_seen = [pid], False
    while True:
        parent = _parent(out[-1], proc)
        if parent is None or parent <= 1 or parent == os.getpid():
            return out
        o = openers.opener(parent, proc)
        if o is None:
            return out
        if o.name == "fio":
            fio_seen = True
        elif fio_seen or not RUNS_GATE.search(o.command):
            return out
        out.append(parent)


def _parent(pid: int, proc: Path) -> int | None:
    try:
        fields = (proc / str(pid) / "stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def stale_folders(tmp: Path, now: float | None = None) -> list[Path]:
    """The gate folders in `tmp` whose owner is gone: its lock not held, or neither lock nor
    owner file older than STALE_S (killed while making it). An owner file without a lock
    (an older version's) cannot say in which pid namespace its owner ran: kept. Then the
    ssh connections' folders whose owner's lock is not held."""
    now = time.time() if now is None else now
    out = []
    for folder in sorted(tmp.glob(f"{fio_gate.GATES_PREFIX}*")):
        try:
            if not folder.is_dir() or folder.is_symlink():
                continue
            held = fio_gate.owner_held(folder)
            if held is False or held is None and fio_gate.owner_of(folder) is None and \
                    now - folder.stat().st_mtime > STALE_S:
                out.append(folder)
        except OSError:          # removed meanwhile
            continue
    # the shared ssh connections' folders: only those whose lock says their owner is gone (a
    # folder without a lock is an older version's, or one being made: kept)
    for folder in sorted(tmp.glob(f"{MASTERS_PREFIX}*")):
        with contextlib.suppress(OSError):
            if folder.is_dir() and not folder.is_symlink() and \
                    liveness.held(folder / MASTERS_LOCK) is False:
                out.append(folder)
    return out
