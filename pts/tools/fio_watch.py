"""The watcher of one fio run: fio's main process and its jobs get SIGKILL as soon as the
suite that started them is gone, whatever killed it (kill -9 too) and whenever: at any
point of a round, the last one too, and in a preconditioning.

Why a watcher per fio run, and not only fio's parent-death signal (fio 3.33, measured on
this project's CI host; `man fio` says nothing on either):
- fio forks each job, and the job calls setsid(): its own session and process group, and
  no parent-death signal (fork clears it). The suite's death reaches fio's main process
  only: PR_SET_PDEATHSIG (pts.tools.commands) sends it SIGTERM, on which fio's handler tells
  the jobs to end (45 ms measured). A main process that does not get there (stuck in a
  futex: 30 s to an hour seen, pts.device.openers; fio's handler, sig_int in its backend.c,
  writes a log line, which is not async-signal-safe: it can wait for good on a lock the
  code it interrupted held) never ends its jobs: they go on writing
  to the drive until their runtime ends (hours in a preconditioning), the main process
  forever. The waiting gate scripts (pts.tools.fio_gate) cover a round's later points
  only: in its last point nothing waits any more.
- SIGKILL as fio's parent-death signal would not do: the main process dead, its jobs run
  on under init (measured: they keep writing), and nobody could prove them fio's any more.
So the suite starts this watcher beside every fio run (`watch`), in a session of its own
(a kill of the suite's process group spares it). It waits on two pidfds: the suite's and
fio's. fio ends first: it ends too. The suite ends first (or was gone before it looked):
it stops fio's main process (SIGSTOP: it can then neither reap a job, whose pid therefore
stays the job's, nor fork), SIGKILLs the process group of every job (the session the job
leads: the gate script it runs through sh, too) and then the main process.
Never by a pid alone (issue 47 §1: a sweep killed a live gate of another pid namespace):
fio's main process by the pidfd the suite opened while fio was its unreaped child; a job
only if it is that stopped process's child, named as it is, and checked after its own pidfd
was opened. pidfds name a process in every pid namespace; /proc may be another one's (a
container given the host's /proc): the children are found by the pids /proc shows (the
pidfd's own, fdinfo), each opened by its pid in our namespace and checked to be the same.

The suite's own stop of a fio (Ctrl-C, SIGTERM, a timeout: pts.tools.commands.stop) ends
it the same way when it does not end on SIGINT (`Watched.kill`).

fio's main process may also die by itself (a crash, the OOM killer, another's SIGKILL): its
jobs, reparented (to init, or a subreaper), are no longer its children, and ran on writing
until their runtime ended. What still proves them this run's: they hold the write end of its
output pipe (fd 1 or 2, inherited from fio; the suite made the pipe and holds only its read
end; every other child of the suite gets close_fds). So when fio ends, and after `end`,
the watcher SIGKILLs every process holding it (`sweep`: ~2 ms for 100 processes), each
opened by its pidfd and checked after; a holder that leads its process group (a job: the
script it runs through sh redirects its output to a file) is stopped first and its group
killed with it. Without a pipe (not started by pts.tools.commands.run) there is no sweep.

Runs as a script (`python -I -S pts/tools/fio_watch.py SUITE_PID FD PIPE`): standard library
only, started in ~20 ms. The one window left: from fio's exec to the watcher's fork (the
Popen calls, ~1 ms), before fio has forked any job, when its SIGTERM still ends it.
"""

from __future__ import annotations

import os
import select
import signal
import stat as stat_mode
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:            # the watcher itself starts faster without it (~10 ms)
    import subprocess


class Watched:
    """fio's run `proc` and its watcher (None: none could be started)."""

    def __init__(self, proc: subprocess.Popen, watcher: subprocess.Popen | None):
        self.proc, self.watcher = proc, watcher

    def kill(self) -> None:
        """SIGKILL fio's jobs and main process, as the watcher does (the suite's Ctrl-C or
        timeout on a fio that does not end on SIGINT: SIGKILL of the main process alone
        leaves its jobs running, in sessions of their own)."""
        try:
            fd = os.pidfd_open(self.proc.pid)      # ours: our child, not reaped yet
        except OSError:
            self.proc.kill()
            return
        try:
            end(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        """fio has ended and was reaped: its watcher has nothing left to watch. Killed and
        reaped here, not waited for: it may still be starting (~20 ms of Python) and fio
        runs are many."""
        if self.watcher is not None:
            self.watcher.kill()
            self.watcher.wait()


def watch(proc: subprocess.Popen) -> Watched:
    """Start the watcher of the fio run `proc` (this process's child, not yet reaped);
    close what it returns once fio has ended."""
    import subprocess
    try:
        fd = os.pidfd_open(proc.pid)          # ours: our child, not reaped yet
    except OSError:                            # a kernel without pidfds (< 5.3)
        return Watched(proc, None)
    try:
        watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, str(os.getpid()), str(fd), _pipe(proc)],
            pass_fds=(fd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd="/", start_new_session=True)
    except OSError:                            # fio runs on, watched as before
        watcher = None
    finally:
        os.close(fd)
    return Watched(proc, watcher)


def _pipe(proc: subprocess.Popen) -> str:
    """The inode of the pipe fio writes its output to (\"0\": none), the suite's end of it."""
    for end_ in (proc.stderr, proc.stdout):
        if end_ is not None:
            st = os.fstat(end_.fileno())
            if stat_mode.S_ISFIFO(st.st_mode):
                return str(st.st_ino)
    return "0"


def main(argv: list[str]) -> int:
    suite_pid, fio = int(argv[1]), int(argv[2])
    pipe = int(argv[3]) if len(argv) > 3 else 0
    try:
        suite = os.pidfd_open(suite_pid)
    except OSError:
        suite = None
    if suite is None or os.getppid() != suite_pid:    # gone before we looked: handed over
        end(fio)                                       # to a reaper
        sweep(pipe)
        return 0
    while True:
        ready, _, _ = select.select([suite, fio], [], [])
        if suite in ready:
            end(fio)
        if suite in ready or fio in ready:
            sweep(pipe)            # fio's main gone: by itself too, its jobs orphaned
            return 0


def end(fio: int) -> None:
    """SIGKILL fio's jobs (their process groups) and its main process, named by `fio`."""
    try:
        signal.pidfd_send_signal(fio, signal.SIGSTOP)
    except ProcessLookupError:        # ended and reaped: its jobs had ended before it
        return
    main_pid = _pid(fio)              # as /proc shows it: pids below are /proc's too
    if main_pid:
        name = _comm(main_pid)
        for job in _children(main_pid):
            _kill_job(job, main_pid, name)
    try:
        signal.pidfd_send_signal(fio, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill_job(pid: int, parent: int, name: str | None) -> None:
    """SIGKILL the group of job `pid` (as /proc shows it), a child of the stopped `parent`.
    /proc may be another pid namespace's than ours (a container given the host's): the job
    is opened by its pid in its own namespace, ours (NSpid's last), and the pidfd checked
    to name the process /proc shows as `pid`."""
    opened = _pidfd(pid)
    if opened is None:
        return
    fd, ours = opened
    try:
        # checked after the pidfd was opened: the stopped parent cannot have reaped the
        # process the pidfd names, so `pid` is still that process (and its group's id)
        stat = _stat(pid)
        if _pid(fd) != pid or stat is None or stat[1] != parent or _comm(pid) != name:
            return
        if stat[2] == pid:            # it leads its group (fio setsid()s its jobs)
            os.killpg(ours, signal.SIGKILL)
        else:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    finally:
        os.close(fd)


SWEEP_ROUNDS = 20       # a holder may fork between two passes: pass again till none is left


def sweep(pipe: int) -> None:
    """SIGKILL every process holding the write end of the run's output pipe (inode `pipe`)
    as its fd 1 or 2: what fio left behind (its jobs, once its main process has died)."""
    if not pipe:
        return
    for _ in range(SWEEP_ROUNDS):
        found = [pid for pid in _pids() if _holds(pid, pipe)]
        for pid in found:
            _kill_holder(pid, pipe)
        if not found:
            return


def _pids() -> list[int]:
    try:
        return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []


def _holds(pid: int, pipe: int) -> bool:
    """Does /proc's `pid` hold the pipe's write end as fd 1 or 2?"""
    for fd in (1, 2):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != f"pipe:[{pipe}]":
                continue
            with open(f"/proc/{pid}/fdinfo/{fd}") as fh:
                for line in fh:
                    if line.startswith("flags:"):
                        if int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY:
                            return True
                        break
        except (OSError, ValueError, IndexError):
            continue
    return False


def _kill_holder(pid: int, pipe: int) -> None:
    """SIGKILL the holder `pid` (as /proc shows it), opened by its pidfd and checked after
    (the pidfd names `pid` still: not reaped, so what was read was its). A leader of its
    process group (a fio job) is sent SIGSTOP first and seen not to have ended: stopping,
    it no longer ends by itself, so its pid, its group's id, stays its group's while the
    group (the sh of its exec_prerun/postrun script too) is killed."""
    opened = _pidfd(pid)
    if opened is None:
        return
    fd, ours = opened
    try:
        stat = _stat(pid)
        if stat is None or not _holds(pid, pipe) or _pid(fd) != pid:
            return
        if stat[2] == pid:
            signal.pidfd_send_signal(fd, signal.SIGSTOP)
            stopped = _stat(pid)
            if stopped is not None and stopped[0] not in "ZX" and _pid(fd) == pid:
                os.killpg(ours, signal.SIGKILL)
        signal.pidfd_send_signal(fd, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    finally:
        os.close(fd)


def _pidfd(pid: int) -> tuple[int, int] | None:
    """(a pidfd, its pid in our namespace) of /proc's `pid`, or None (gone, or not in a
    namespace we can see into). The caller checks, after the opening, that the pidfd names
    the process /proc shows (`_pid`), and closes it."""
    ours = _ns_pid(pid)
    if not ours:
        return None
    try:
        return os.pidfd_open(ours), ours
    except OSError:
        return None


def _ns_pid(pid: int) -> int | None:
    """The pid of /proc's `pid` in its own (innermost) pid namespace: NSpid's last field."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _pid(fd: int) -> int | None:
    """The pid of the process pidfd `fd` names, as /proc shows it (None: reaped)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}") as fh:
            for line in fh:
                if line.startswith("Pid:"):
                    pid = int(line.split()[1])
                    return pid if pid > 0 else None
    except (OSError, ValueError):
        pass
    return None


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, process group) from /proc/PID/stat, read after the last ')':
    the command name may hold spaces and parentheses."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[-1].split()
        return fields[0], int(fields[1]), int(fields[2])
    except (OSError, ValueError, IndexError):
        return None


def _comm(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None and stat[1] == pid:
            out.append(int(entry))
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv))
