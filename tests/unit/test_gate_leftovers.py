"""Nothing of a killed run left behind (issue 38 §1): the gate script of pipelined rounds
(pts.tools.fio_gate) never blocks opening its FIFO and ends within about a second once the
suite that owns the round is gone; the leftovers sweep (pts.device.leftovers) kills a dead
owner's gate scripts with the fio above them and removes its gate folder, and keeps a live
owner's. The scripts run for real (bash, FIFOs, /proc)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pts.device import leftovers
from pts.tools import fio_gate
from pts.tools.fio_gate import GATE_SCRIPT, gate_text
from tests.support import campaign


def dead_owner() -> fio_gate.Owner:
    """The (pid, start time) of a process that has ended."""
    p = subprocess.Popen(["sleep", "60"])
    owner = (p.pid, fio_gate.start_time(p.pid))
    p.kill()
    p.wait()
    return owner


def gate_dirs(tmp_path: Path, owner=None) -> tuple[Path, Path]:
    """fio's working directory with the gate script, and the gate folder with gate-1."""
    work, gates = tmp_path / "work", tmp_path / "gates"
    work.mkdir()
    gates.mkdir()
    (work / GATE_SCRIPT).write_text(gate_text(gates, owner))
    (work / GATE_SCRIPT).chmod(0o755)
    os.mkfifo(gates / "gate-1")
    return work, gates


def gate(work: Path, *args: str, timeout: float = 10) -> tuple[int, float]:
    """The gate as fio runs it (through sh): its exit status and how long it ran."""
    t0 = time.monotonic()
    rc = subprocess.run(["sh", "-c", f"./{GATE_SCRIPT} {' '.join(args)}"], cwd=work,
                        timeout=timeout).returncode
    return rc, time.monotonic() - t0


def test_no_fifo_open_blocks_when_nobody_holds_the_fifos(tmp_path):
    """run_round, which held the FIFOs, is gone (its suite killed) while its owner check
    still passes (here: this process owns the gate): a `done` that opened the next point's
    FIFO for writing blocked there for good (17 minutes seen), a `wait` opening it for
    reading as well; both open it read-write now."""
    work, gates = gate_dirs(tmp_path)
    rc, took = gate(work, "done", "0", "1", "2")
    assert (rc, took < 5) == (0, True)
    assert (gates / "gate-0.done").exists()
    rc, took = gate(work, "wait", "1", "0.3")       # nothing written: not released
    assert rc == 1 and took < 5
    assert not (gates / "gate-1.started").exists()


def test_a_waiting_gate_ends_within_seconds_when_its_suite_is_gone(tmp_path):
    """A `wait` of 30 s whose owner (the suite) is killed while it waits, with its FIFO
    still held (by a process other than the suite: its fio job is alive too): it ends
    within about a second of the owner's death, not after its 30 s."""
    owner_proc = subprocess.Popen(["sleep", "60"])
    owner = (owner_proc.pid, fio_gate.start_time(owner_proc.pid))
    work, gates = gate_dirs(tmp_path, owner)
    held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
    # its own session, as fio's job is (fio setsid()s it): the script also ends when the
    # leader of its session is gone, and pytest's own session leader may be anywhere
    waiting = subprocess.Popen(["sh", "-c", f"./{GATE_SCRIPT} wait 1 30"], cwd=work,
                               start_new_session=True)
    try:
        time.sleep(1.5)
        assert waiting.poll() is None, "the gate did not wait while its owner ran"
        owner_proc.kill()
        owner_proc.wait()
        t0 = time.monotonic()
        rc = waiting.wait(timeout=10)
        took = time.monotonic() - t0
    finally:
        os.close(held)
        if waiting.poll() is None:
            waiting.kill()
        owner_proc.kill()
    print(f"the waiting gate ended {took:.2f} s after its owner")
    assert rc == 1 and took < 3
    assert not (gates / "gate-1.started").exists()


SESSION_ZERO = """
import os, sys, time, subprocess
from pathlib import Path
from pts.tools import fio_gate
work, gates = Path(sys.argv[1]), Path(sys.argv[2])
(work / fio_gate.GATE_SCRIPT).write_text(fio_gate.gate_text(gates))   # owner: this process
(work / fio_gate.GATE_SCRIPT).chmod(0o755)
held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
t0 = time.monotonic()
rc = subprocess.run(["sh", "-c", f"./{fio_gate.GATE_SCRIPT} wait 1 3"], cwd=work).returncode
sid = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[3]
print(rc, round(time.monotonic() - t0, 2), sid)
"""


@pytest.mark.needs("root", "unshare")
def test_a_gate_waits_its_time_when_its_session_leader_is_out_of_sight(tmp_path):
    """CI's runner starts the suite in a pid namespace whose session leader is outside it:
    /proc/PID/stat says session 0 and there is no /proc/0. A waiting gate took that for its
    fio job gone and gave up after 1 s of its 30 (CI of stop 37: the test above failed).
    Here the owner (a Python process, pid 1 of a new pid namespace) runs a `wait` of 3 s
    not released: it waits all of it."""
    work, gates = gate_dirs(tmp_path)
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c",
                          SESSION_ZERO, str(work), str(gates)], cwd=root, capture_output=True,
                         text=True, timeout=30, check=True).stdout.split()
    rc, took, sid = int(out[0]), float(out[1]), out[2]
    assert sid == "0", f"the namespace's session leader was visible (session {sid})"
    assert rc == 1 and 2.8 < took < 6, f"the gate ended with {rc} after {took} s of 3"


def test_a_gate_whose_suite_is_gone_ends_at_once(tmp_path):
    """`done` and `wait` of a dead owner end at once: by its pid (gone), and by its start
    time (this process's pid with another start time: a new process on a dead run's pid)."""
    for owner in (dead_owner(), (os.getpid(), fio_gate.me()[1] + 1)):
        shutil.rmtree(tmp_path / "work", ignore_errors=True)
        shutil.rmtree(tmp_path / "gates", ignore_errors=True)
        work, gates = gate_dirs(tmp_path, owner)
        held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
        try:
            assert gate(work, "wait", "1", "30")[0] == 1
            assert gate(work, "done", "0", "1", "1")[0] == 1
        finally:
            os.close(held)
        assert not (gates / "gate-0.done").exists()


def gate_folder(tmp: Path, owner, age: float = 0) -> Path:
    mark = owner[0] if owner else "x"
    folder = tmp / f"{fio_gate.GATES_PREFIX}{mark}-{len(list(tmp.iterdir()))}"
    folder.mkdir()
    if owner:
        (folder / fio_gate.OWNER_FILE).write_text(f"{owner[0]} {owner[1]}\n")
    os.utime(folder, (time.time() - age, time.time() - age))
    return folder


def test_the_sweep_removes_gate_folders_whose_owner_is_gone(tmp_path):
    """A dead owner's folder and one without an owner file older than STALE_S are removed;
    a live owner's (another suite, on another drive), a fresh one without an owner file
    (being made) and other folders are kept; each removal is said."""
    dead, old = gate_folder(tmp_path, dead_owner()), gate_folder(tmp_path, None, 3600)
    kept = [gate_folder(tmp_path, fio_gate.me()), gate_folder(tmp_path, None, 1),
            gate_folder(tmp_path, (os.getpid(), fio_gate.me()[1]), 3600)]
    (tmp_path / "someone-else").mkdir()
    said: list[str] = []
    removed = leftovers.sweep(said.append, tmp=tmp_path)
    gone = [p for p in tmp_path.iterdir() if p in (dead, old)]
    assert gone == [] and all(p.is_dir() for p in kept) and (tmp_path / "someone-else").is_dir()
    assert sorted(r for r in removed if "pts-gates" in r) == sorted(
        [f"removed {dead}", f"removed {old}"])
    assert any(str(dead) in s for s in said) and any(str(old) in s for s in said)


HUNG_GATE = """#!/bin/bash
# owner: {pid} {start}
cd -- {gates} || exit 1
echo go > gate-1      # the gate before issue 38: blocks opening for writing, no reader
"""


def hang_gates(tmp_path: Path, owners: dict) -> dict[str, subprocess.Popen]:
    """A hung gate per owner, each under a process named fio (a copy of bash)."""
    hung = {}
    for name, owner in owners.items():
        work, gates = tmp_path / name / "work", tmp_path / name / "gates"
        work.mkdir(parents=True)
        gates.mkdir()
        (gates / fio_gate.OWNER_FILE).write_text(f"{owner[0]} {owner[1]}\n")
        (work / GATE_SCRIPT).write_text(HUNG_GATE.format(pid=owner[0], start=owner[1],
                                                         gates=gates))
        (work / GATE_SCRIPT).chmod(0o755)
        os.mkfifo(gates / "gate-1")
        fio = tmp_path / name / "fio"
        shutil.copy("/bin/bash", fio)
        # the fio job runs exec_postrun through system(): sh -c; `; :` keeps each a parent
        hung[name] = subprocess.Popen(
            [str(fio), "-c", f"sh -c './{GATE_SCRIPT} done 0 1 1; :'; :"], cwd=work,
            start_new_session=True)
    return hung


def stop(hung: dict[str, subprocess.Popen]) -> None:
    for p in hung.values():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


@pytest.mark.skipif(not shutil.which("bash"), reason="bash")
def test_the_sweep_kills_a_dead_owners_hung_gate_and_the_fio_above_it(tmp_path):
    """A gate of a killed run hung opening its FIFO (as before issue 38: the script of that
    version, with an owner line as the new ones have), under a process named fio (a copy of
    bash): the sweep kills the script, its shell and the fio, not the live owner's gate nor
    this process; each kill is said.

    The sweep is machine-wide, as it must be: a suite started by another test process at the
    same moment (the fast tier runs on every core) may sweep the dead owner's gate first. The
    gates are then made again, up to three times; a live owner's gate must never go."""
    for attempt in range(3):
        hung = hang_gates(tmp_path / f"try{attempt}", {"dead": dead_owner(),
                                                       "live": fio_gate.me()})
        time.sleep(1.0)
        assert hung["live"].poll() is None, "a live owner's gate was killed"
        if hung["dead"].poll() is None:
            break
        stop(hung)         # swept by another process's suite before this test's sweep
    else:
        pytest.fail("the dead owner's gate was swept by another process three times")
    try:
        # the kill campaign counts them as the dead suite's (their command line names
        # neither its run folder nor the drive: `pgrep -f FOLDER` missed them)
        dead_pid = int((tmp_path / f"try{attempt}" / "dead" / "gates" /
                        fio_gate.OWNER_FILE).read_text().split()[0])
        counted = campaign.gates_of(dead_pid)
        assert {"sh", GATE_SCRIPT} <= {o.name for o in counted}, counted
        assert all("/dead/" in os.readlink(f"/proc/{o.pid}/cwd") for o in counted), counted
        said: list[str] = []
        removed = leftovers.gates_left(said.append)
        names = sorted(o.name for o in removed)
        assert names == sorted(["fio", "sh", GATE_SCRIPT]), removed
        assert hung["dead"].wait(timeout=10) == -signal.SIGKILL
        assert hung["live"].poll() is None, "a live owner's gate was killed"
        assert len(said) == 3 and all("stopped run" in s for s in said)
    finally:
        stop(hung)
