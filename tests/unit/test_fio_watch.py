"""fio ends with the suite that started it, at any instant (pts.tools.fio_watch): a kill -9
of the suite during a round's LAST point, where no gate script waits any more, under a fio
whose main process does not end on the SIGTERM of its parent-death signal (stuck or
ignoring it: pts.device.openers saw an hour). Once with stand-ins named fio (copies of
bash), once with fio itself. The suite is a Python process of the test's own; what the
test looks for and cleans up is found by its folder, which every process it made names."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# The stand-in suite: fio (the stand-in) run the product's way, through commands.run with
# the watcher fio.Fio gives it.
STAND_IN_SUITE = """
import sys
from pts.tools import commands, fio_watch
commands.run(sys.argv[1:], timeout=600, watch=fio_watch.watch)
"""

# The real suite: a pipelined round of two points (the second one 30 s), with SIGTERM
# blocked, which fio inherits: its main process never ends on its parent-death SIGTERM,
# as a stuck one does not (without it fio would end on its own and prove nothing).
ROUND_SUITE = """
import signal, sys
from pathlib import Path
from pts.tools.fio import Fio, Job
from pts.tools.fio_round import run_round
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
target, out = sys.argv[1], Path(sys.argv[2])
points = [Job(f"p{k}", "randwrite", 4096, 4, numjobs=2, size=8 << 20, runtime=t)
          for k, t in ((1, 1), (2, 30))]
run_round(Fio(), target, points, out, "pipelined", timeout=60)
"""


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text(errors="replace").rsplit(")", 1)[-1].split()
    except OSError:
        return None


def _leads(pid: int) -> bool:
    """Does `pid` lead its session (as a fio job does)?"""
    return (_stat(pid) or [""] * 4)[3] == str(pid)


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
            errors="replace")
    return ""


def ours(marks: list[str], groups: set[int] = frozenset()) -> list[int]:
    """The live processes (not zombies) whose command line holds one of `marks` or that
    are in one of the process `groups`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        stat = _stat(int(entry))
        if stat is None or stat[0] == "Z":
            continue
        if int(stat[2]) in groups or any(m in _cmdline(int(entry)) for m in marks):
            found.append(int(entry))
    return found


def wait_for(what, seconds: float):
    """what() once it holds, else its last value after `seconds`: a limit that only stops
    a test that would hang (a start on a loaded host can take seconds)."""
    deadline = time.monotonic() + seconds
    while not (found := what()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def start_suite(code: str, *args: str, **kw) -> subprocess.Popen:
    # its own session: killing it is the test's alone (not the test runner's group)
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=REPO,
                            start_new_session=True, **kw)


def kill_and_time(suite: subprocess.Popen, marks: list[str], groups: set[int],
                  grace: float) -> tuple[float, list[str]]:
    """kill -9 the suite; how long until nothing of its is left, and what is left after
    `grace` seconds."""
    suite.kill()
    t0 = time.monotonic()
    suite.wait()
    gone = wait_for(lambda: not ours(marks, groups), grace)
    return time.monotonic() - t0, [] if gone else [_cmdline(p) for p in ours(marks, groups)]


def cleanup(marks: list[str], groups: set[int]) -> None:
    """SIGKILL what the test made and left (found by its marks: its folder)."""
    for pid in ours(marks, groups):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for group in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


def test_a_suite_killed_in_the_last_point_takes_a_stuck_fio_and_its_jobs(tmp_path):
    """Stand-ins named fio: a main process that ignores SIGTERM, and its job a session
    leader (fio setsid()s its jobs) that ignores it too and runs a child in its group (as a
    job runs its exec_prerun script through sh). No gate anywhere: only the watcher can end
    them. Killed after the suite (each would sleep 120 s: nothing of them may be left when
    the 30 s the test waits are over, however loaded the host); the watcher ends too."""
    fio = tmp_path / "fio"
    fio.write_bytes(Path("/bin/bash").read_bytes())
    fio.chmod(0o755)
    job = "trap '' TERM; sleep 120 & wait"
    main = f"trap '' TERM; setsid {fio} -c \"{job}\"; sleep 120"
    suite = start_suite(STAND_IN_SUITE, str(fio), "-c", main)
    marks, groups = [str(fio), f"fio_watch.py {suite.pid} "], set()
    try:
        jobs = wait_for(lambda: [p for p in ours([str(fio)]) if _leads(p) and suite.pid
                                 not in (p, int((_stat(p) or [0, 0])[1]))], 60)
        assert jobs, "the stand-in fio never started its job"
        groups |= set(jobs)                          # the job's group: its sleep too
        assert wait_for(lambda: len(ours([], groups)) >= 2, 60)  # the job and its child
        took, left = kill_and_time(suite, marks, groups, grace=30)
    finally:
        suite.kill()
        suite.wait()
        cleanup(marks, groups)
    print(f"fio's main process, its job and the job's child gone {took:.2f} s after the kill")
    assert not left, f"outlived their suite: {left}"


@pytest.mark.needs("root", "unshare")
@pytest.mark.parametrize("own_proc", [False, True], ids=["host-proc", "own-proc"])
def test_a_suite_in_a_pid_namespace_of_its_own_takes_fio_along(tmp_path, own_proc):
    """The suite in a pid namespace of its own (a container), given its own /proc or the
    host's: killed -9 from outside, its stuck stand-in fio and the job go as they do on the
    host. With the host's /proc the watcher reads other pids than its namespace's: each
    job is opened by its pid in the watcher's namespace and checked to be the one /proc
    shows."""
    fio = tmp_path / "fio"
    fio.write_bytes(Path("/bin/bash").read_bytes())
    fio.chmod(0o755)
    job = f"trap '' TERM; {fio} -c 'sleep 120; :' & wait"
    main = f"trap '' TERM; setsid {fio} -c \"{job}\"; sleep 120"
    ns = subprocess.Popen(
        ["unshare", "--pid", "--fork", *(["--mount-proc"] if own_proc else []), "sh", "-c",
         '"$@"; sleep 60', "sh", sys.executable, "-c", STAND_IN_SUITE, str(fio), "-c", main],
        cwd=REPO, start_new_session=True)
    marks: list[str] = [str(fio)]
    try:
        def suite_and_job():
            # the suite: the python the namespace's sh started (not a child the suite forked
            # with its command line, before that child's exec: the watcher is one); killed
            # once its watcher runs (before, fio's SIGTERM still ends it: fio_watch's one
            # window; a stand-in that ignores SIGTERM would be left, as a real fio would not)
            procs = ours([str(fio)])
            suites = [p for p in procs if _comm(p).startswith("python")
                      and _comm(int((_stat(p) or [0, 0])[1])) == "sh"]
            watching = len(suites) == 1 and any(
                (_stat(p) or [0, 0])[1] == str(suites[0]) for p in ours(["fio_watch.py"]))
            return suites if watching and len(
                procs) >= 5 else None             # sh, suite, main, job, job's child
        found = wait_for(suite_and_job, 60)
        assert found, f"the suite, its watcher or its fio never started: {ours([str(fio)])}"
        (suite,) = found
        marks += [f"fio_watch.py {w} " for w in ("2", str(suite))]   # its pid, in there
        os.kill(suite, signal.SIGKILL)
        def alive():                                  # not the namespace's init or unshare
            return [p for p in ours(marks) if _comm(p) not in ("sh", "unshare")]
        gone = wait_for(lambda: not alive(), 30)     # (each would sleep 120 s)
        left = [] if gone else [_cmdline(p) for p in alive()]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(ns.pid, signal.SIGKILL)        # unshare, and the namespace's init
        ns.wait()
        cleanup([str(fio)], set())
    assert not left, f"outlived their suite: {left}"


def _comm(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/comm").read_text().strip()
    return ""


def test_a_stop_of_a_fio_deaf_to_sigint_kills_its_jobs_too(tmp_path, monkeypatch):
    """The suite's own stop (a timeout here; Ctrl-C and SIGTERM take the same path) of a fio
    that does not end on SIGINT: SIGKILL of its main process alone left its jobs running in
    their own sessions; with the watcher's kill they go too. Stand-ins named fio, ignoring
    SIGINT and SIGTERM; the grace before SIGKILL shortened to 0.2 s."""
    from pts.tools import commands, fio_watch
    monkeypatch.setattr(commands, "STOP_GRACE_S", 0.2)
    fio = tmp_path / "fio"
    fio.write_bytes(Path("/bin/bash").read_bytes())
    fio.chmod(0o755)
    job = f"trap '' INT TERM; {fio} -c 'sleep 120; :' & wait"     # its child named too
    main = f"trap '' INT TERM; setsid {fio} -c \"{job}\"; sleep 120"
    seen: set[int] = set()

    def watch(proc):                       # the product's watcher, seen to be given
        seen.add(proc.pid)
        return fio_watch.watch(proc)
    try:
        with pytest.raises(commands.ToolFailed, match="did not finish within"):
            commands.run([str(fio), "-c", main], timeout=1.5, watch=watch)
        # SIGKILLed by the stop; gone once the kernel has ended them (a limit that only stops
        # a hang: each would sleep 120 s)
        gone = wait_for(lambda: not ours([str(fio)]), 20)
        left = [] if gone else [_cmdline(p) for p in ours([str(fio)])]
    finally:
        cleanup([str(fio)], set())
    assert seen, "fio was never watched"
    assert not left, f"outlived their stop: {left}"


@pytest.mark.needs("fio")
def test_a_real_fio_killed_with_its_suite_in_the_rounds_last_point(tmp_path):
    """fio 3.33 itself, in the last point of a pipelined round on a file, its SIGTERM
    blocked: nothing of it (main process, jobs, gate scripts) left after the kill, long
    before its 30 s point would end by itself (20 s: a limit a loaded host cannot reach by
    scheduling alone; the time it took is printed)."""
    target = tmp_path / "target"
    with open(target, "wb") as fh:
        fh.truncate(8 << 20)
    out = tmp_path / "round"
    env = dict(os.environ, TMPDIR=str(tmp_path))      # the gate folder, in the test's
    suite = start_suite(ROUND_SUITE, str(target), str(out), env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    marks = [str(out), f"fio_watch.py {suite.pid} "]
    try:
        started = wait_for(lambda: list(tmp_path.glob("pts-gates-*/gate-1.started")), 60)
        assert started, f"the round's last point never started: {_err(suite)}"
        time.sleep(0.3)                               # into its I/O
        fio = [p for p in ours([str(out)]) if _cmdline(p).split()[0].endswith("fio")]
        assert len(fio) >= 3, fio                     # the main process and its 2 jobs
        took, left = kill_and_time(suite, marks, set(), grace=20)
    finally:
        suite.kill()
        suite.wait()
        cleanup(marks, set())
    print(f"fio gone {took:.2f} s after its suite's kill -9")
    assert not left, f"outlived their suite: {left}"


def _err(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        return "(the suite still runs)"
    return proc.stderr.read().decode(errors="replace")[-800:]
