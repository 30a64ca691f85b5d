"""The gate of pipelined rounds (pts.tools.fio_round): the script fio's exec_prerun and
exec_postrun run, the folder of FIFOs it waits on, and who owns them.

`done K N M`: a thread of point K has completed all its I/O; the last of its N threads (two
finishing together may both count N: extra lines are never read) writes one line per
thread of point K+1 (M) into the FIFO gate-(K+1). `wait K S`: a thread of point K reads one
line (at most S seconds: a point that failed never releases the next; fio then reports the
error) and notes when it was released (gate-K.started: the point's start). `wait K S N T`:
the same behind a barrier (the round's first point, whose threads no point before releases:
each job section of an ATW point is set up at its own pace, up to seconds apart on a loaded
host, and its IO streams must start together): the thread first notes that it is set up
(gate-K.arrived), and the last of the N to arrive releases all N, at Unix time T (ms) at
the earliest. A wait that runs out says so on its output (fio keeps it: NAME.prerun.txt).
fio runs them through system() in its working directory (`;` and `#` start comments in a
job file, hence a script). Bash: read -t and $EPOCHREALTIME (µs) without a process per poll.

Nothing left behind at any instant (issue 38 §1): the suite killed with SIGKILL mid-round,
fio gets SIGTERM (PR_SET_PDEATHSIG) but waits for the job in its exec_postrun; a `done`
that opened its FIFO write-only blocked there for good (no reader once run_round, which
held the FIFOs, was dead: 17 minutes seen), and held the drive open. So:
- every FIFO is opened read-write (`<>`), which never blocks on Linux (fifo(7)); run_round
  holds them read-write too, so no line is lost before its reader opens it;
- a waiting script reads at most 1 s at a time and ends when its fio job (the leader of its
  session: fio setsid()s its jobs) or the suite that owns the round is gone; when the suite
  is gone it first SIGKILLs fio's main process (its job's parent) and its job's group, each
  only if it is named fio: a loaded fio may never end on the SIGTERM the suite's death sent
  it (a CI kill campaign saw one 30 s after the kill; openers.py: an hour); the watcher
  beside every fio run (pts.tools.fio_watch) does the same at any point, the last one too,
  and this stays for a watcher that did not live to do it. The owner is
  named by its pid AND its start time (/proc/PID/stat field 22), so another process given
  the same pid cannot keep a dead run's gate waiting; every script checks it first;
- the folder is named after its owner (pts-gates-PID-...) and holds an `owner` file, and
  the script in fio's working directory names the owner too (`# owner: PID START`), so a
  later run can tell a dead run's folder and scripts from a live one's
  (pts.device.leftovers);
- the owner holds a lock in the folder (`owner.lock`, pts.tools.liveness) for as long as
  the gates are open, and the script names it (`# lock: PATH`): the kernel releases it when
  the owner dies, so a run in another pid namespace (a container) can tell a live owner
  from a dead one, which pid and start time cannot (issue 47 §1).
The FIFOs live in a folder of their own on a local file system: the run folder may not take
a FIFO (the QEMU guest's 9p share: mkfifo ENXIO).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from pts.tools import liveness

GATE_SCRIPT = "pts-gate.sh"
GATES_PREFIX = "pts-gates-"
OWNER_FILE = "owner"
LOCK_FILE = "owner.lock"
GATE_TEXT = """#!/bin/bash
# snia-pts: start point K when all the I/O of point K-1 has completed (fio exec_pre/postrun);
# the first point when all its threads are set up (a barrier)
# owner: @PID@ @START@
# lock: @LOCK@
LC_ALL=C
owner() {          # the suite that runs this round is alive: its pid with its start time
  local s f
  { read -r s < /proc/@PID@/stat; } 2>/dev/null || return 1
  f=(${s##*\\)})    # the fields after comm (which may hold spaces and parentheses)
  [ "${f[19]}" = @START@ ]       # field 22: the start time (another process on the pid)
}
is_fio() { local c; { read -r c < "/proc/$1/comm"; } 2>/dev/null && [ "$c" = fio ]; }
end_fio() {        # the suite died: fio had SIGTERM then (its parent-death signal), which a
  local s f        # loaded fio may never end on (stuck in a futex: 30 s to an hour seen), so
  if [ "${stat[5]}" != 0 ] && { read -r s < "/proc/${stat[5]}/stat"; } 2>/dev/null; then
    f=(${s##*\\)})  # fio's main process (the job's parent) and the job's group get SIGKILL
    is_fio "${f[1]}" && kill -KILL "${f[1]}" 2>/dev/null
    is_fio "${stat[5]}" && kill -KILL -- "-${stat[5]}" 2>/dev/null
  fi
  exit 1
}
owner || exit 1
cd -- @GATES@ || exit 1
if [ "$1" = done ]; then
  printf '%s\\n' "$EPOCHREALTIME" >> "gate-$2.done"
  mapfile -t seen < "gate-$2.done"
  if [ "${#seen[@]}" -ge "$3" ]; then
    exec 3<> "gate-$(($2 + 1))" || exit 1     # read-write: never blocks, reader or not
    for ((i = 0; i < $4; i++)); do echo go; done >&3
  fi
  exit 0
fi
read -r -a stat < /proc/$$/stat        # its 6th field: the session, led by fio's job
exec 3<> "gate-$2" || exit 1            # read-write: never blocks, writer or not
if [ -n "$4" ]; then                    # a barrier: the last of $4 threads set up releases
  printf '%s\\n' "$EPOCHREALTIME" >> "gate-$2.arrived"          # all of them, at $5 (ms)
  mapfile -t seen < "gate-$2.arrived"   # at the earliest (two arriving last together may
  if [ "${#seen[@]}" -ge "$4" ]; then   # both release: extra lines are never read)
    d=$(($5 * 1000 - ${EPOCHREALTIME/[.,]/}))                 # µs to go
    ((d > 0)) && sleep "$((d / 1000000)).$(printf %06d $((d % 1000000)))"
    for ((i = 0; i < $4; i++)); do echo go; done >&3
  fi
fi
left=$3                                 # seconds; a fractional one: a single read of it
while :; do
  if [[ $left == *.* ]] || ((left <= 1)); then step=$left; else step=1; fi
  if read -r -t "$step" _ <&3; then
    printf '%s\\n' "$EPOCHREALTIME" >> "gate-$2.started"
    exit 0
  fi
  # fio's job or the suite is gone: nobody waits for this gate (session 0: its leader is
  # outside this pid namespace, as in a container started without setsid: not checkable)
  { [ "${stat[5]}" = 0 ] || [ -e "/proc/${stat[5]}" ]; } || exit 1
  owner || end_fio
  if [ "$step" = "$left" ]; then         # ran out: said where fio keeps the output
    why=
    if [ -n "$4" ]; then
      mapfile -t seen < "gate-$2.arrived"; why=" (${#seen[@]} of its $4 threads set up)"
    fi
    echo "pts-gate: point $2 not released within $3 s$why" >&2
    exit 1
  fi
  left=$((left - 1))
done
"""
OWNER_LINE = re.compile(r"^# owner: (\d+) (\d+)$", re.M)
LOCK_LINE = re.compile(r"^# lock: (.+)$", re.M)

Owner = tuple[int, int]          # (pid, start time in clock ticks after boot)


def start_time(pid: int, proc: Path = Path("/proc")) -> int | None:
    """Field 22 of /proc/PID/stat (None: no such process). Read after the last ')': the
    command name (field 2) may hold spaces and parentheses."""
    try:
        text = (proc / str(pid) / "stat").read_text(errors="replace")
    except OSError:
        return None
    fields = text.rsplit(")", 1)[-1].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def me() -> Owner:
    """This process as the owner of what it makes."""
    return os.getpid(), start_time(os.getpid()) or 0


def alive(owner: Owner, proc: Path = Path("/proc")) -> bool:
    """Does the process `owner` names still run (the same process, not one on its pid)?
    Only in the pid namespace `proc` shows (pts.tools.liveness)."""
    return start_time(owner[0], proc) == owner[1]


def gate_text(gates: Path, owner: Owner | None = None) -> str:
    """The gate script for the FIFOs in folder `gates`, owned by `owner` (this process)."""
    pid, start = owner or me()
    return (GATE_TEXT.replace("@GATES@", shlex.quote(str(gates)))
            .replace("@LOCK@", shlex.quote(str(gates / LOCK_FILE)))
            .replace("@PID@", str(pid)).replace("@START@", str(start)))


def owner_of(folder: Path) -> Owner | None:
    """The owner of a gate folder (its owner file) or of fio's working directory (the gate
    script in it); None: neither says."""
    for path, found in ((folder / OWNER_FILE, r"^(\d+) (\d+)$"), (folder / GATE_SCRIPT, None)):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        m = re.search(found, text, re.M) if found else OWNER_LINE.search(text)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def lock_of(folder: Path) -> Path | None:
    """The owner's lock of a gate folder, or of fio's working directory (the path its gate
    script names); None: neither names one (made before the lock, or not a gate's)."""
    if (folder / OWNER_FILE).exists() or (folder / LOCK_FILE).exists():
        return folder / LOCK_FILE
    try:
        m = LOCK_LINE.search((folder / GATE_SCRIPT).read_text(errors="replace"))
    except OSError:
        return None
    words = shlex.split(m.group(1)) if m else []
    return Path(words[0]) if len(words) == 1 else None


def owner_held(folder: Path) -> bool | None:
    """Is the owner of a gate folder or of fio's working directory alive, by its lock
    (pts.tools.liveness.held)? None: no lock to judge by (an older gate, or removed)."""
    lock = lock_of(folder)
    return None if lock is None else liveness.held(lock)


def open_gates(out_dir: Path, points: int,
               scripts: dict[str, str] | None = None) -> tuple[Path, list[int], int]:
    """The scripts (`scripts`, name -> text, and the gate script, in `out_dir`: fio's working
    directory) and one FIFO per point (gate-K, in a new local folder named after this
    process, with its owner file; gate-0: the first point's barrier), held open here
    read-write for the whole fio run: no line is lost before its reader opens it; and the
    owner's lock, held until `close_gates`."""
    owner = me()
    gates = Path(tempfile.mkdtemp(prefix=f"{GATES_PREFIX}{owner[0]}-"))
    lock = liveness.hold(gates / LOCK_FILE)      # before the owner file: never seen unheld
    (gates / OWNER_FILE).write_text(f"{owner[0]} {owner[1]}\n", encoding="utf-8")
    for script, text in (*(scripts or {}).items(), (GATE_SCRIPT, gate_text(gates, owner))):
        (out_dir / script).write_text(text, encoding="utf-8")
        (out_dir / script).chmod(0o755)
    fds = []
    try:
        for k in range(points):
            os.mkfifo(gates / f"gate-{k}")
            fds.append(os.open(gates / f"gate-{k}", os.O_RDWR | os.O_NONBLOCK))
    except OSError:
        close_gates(gates, fds, lock)
        raise
    return gates, fds, lock


def close_gates(gates: Path, fds: list[int], lock: int | None = None) -> dict[int, float]:
    """Close the FIFOs and remove their folder; each released point's start (Unix s: the
    first of its threads released), from gate-K.started."""
    for fd in fds:
        os.close(fd)
    released = {}
    for k in range(len(fds)):
        started = gates / f"gate-{k}.started"
        if started.exists():
            stamps = [float(x.replace(",", ".")) for x in started.read_text().split()]
            released[k] = min(stamps) if stamps else None
    shutil.rmtree(gates, ignore_errors=True)
    if lock is not None:
        os.close(lock)             # after the folder went: never seen there unheld
    return {k: t for k, t in released.items() if t is not None}
