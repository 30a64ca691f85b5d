"""Nothing of a killed run left behind (issue 38 §1): the gate script of pipelined rounds
(pts.tools.fio_gate) never blocks opening its FIFO and ends within about a second once the
suite that owns the round is gone; the leftovers sweep (pts.device.leftovers) kills a dead
owner's gate scripts with the fio above them and removes its gate folder, and keeps a live
owner's. The scripts run for real (bash, FIFOs, /proc)."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pts.device import leftovers, openers, ramdev
from pts.tools import fio_gate, liveness
from pts.tools.fio_gate import GATE_SCRIPT, gate_text
from tests.support import campaign, procview


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
    """The gate as fio runs it (through sh): its exit status and how long it ran. In a
    session of its own, killed whole if it outlives `timeout` (a gate hung by the bug a test
    guards against must not stay behind it: issue 47 §3)."""
    t0 = time.monotonic()
    p = subprocess.Popen(["sh", "-c", f"./{GATE_SCRIPT} {' '.join(args)}"], cwd=work,
                         start_new_session=True)
    try:
        rc = p.wait(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)       # the whole session: sh and the script
        p.wait()
    return rc, time.monotonic() - t0


def test_no_fifo_open_blocks_when_nobody_holds_the_fifos(tmp_path):
    """run_round, which held the FIFOs, is gone (its suite killed) while its owner check
    still passes (here: this process owns the gate): a `done` that opened the next point's
    FIFO for writing blocked there for good (17 minutes seen), a `wait` opening it for
    reading as well; both open it read-write now."""
    work, gates = gate_dirs(tmp_path)
    # a blocked open blocks for good: gate() raises TimeoutExpired at its limit
    assert gate(work, "done", "0", "1", "2", timeout=30)[0] == 0
    assert (gates / "gate-0.done").exists()
    rc = gate(work, "wait", "1", "0.3", timeout=30)[0]     # nothing written: not released
    assert rc == 1
    assert not (gates / "gate-1.started").exists()


def test_a_waiting_gate_ends_within_seconds_when_its_suite_is_gone(tmp_path):
    """A `wait` of 30 s whose owner (the suite) is killed while it waits, with its FIFO
    still held (by a process other than the suite: its fio job is alive too): it ends on
    the owner's death (it looks once a second), not after its 30 s. The test waits 20 s
    for it: a limit that tells the two apart however loaded the host, not a speed."""
    owner_proc = subprocess.Popen(["sleep", "60"])
    owner = (owner_proc.pid, fio_gate.start_time(owner_proc.pid))
    work, gates = gate_dirs(tmp_path, owner)
    held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
    # its own session, as fio's job is (fio setsid()s it): the script also ends when the
    # leader of its session is gone, and pytest's own session leader may be anywhere
    waiting = subprocess.Popen(["sh", "-c", f"./{GATE_SCRIPT} wait 1 30"], cwd=work,
                               start_new_session=True)
    try:
        # the gate waits at its FIFO (it holds gate-1 open: past its owner check), whatever
        # the machine's load; a gate that misjudged its live owner ends before that
        deadline = time.monotonic() + 60                   # a hang bound only
        while not (in_session(waiting.pid, "fd", gates / "gate-1") or waiting.poll() is not None):
            assert time.monotonic() < deadline, "the gate never reached its FIFO"
            time.sleep(0.02)
        assert waiting.poll() is None, "the gate did not wait while its owner ran"
        owner_proc.kill()
        owner_proc.wait()
        t0 = time.monotonic()
        rc = ended(waiting, 20)
        took = time.monotonic() - t0
    finally:
        os.close(held)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(waiting.pid, signal.SIGKILL)     # sh and the script, whatever happened
        waiting.wait()
        owner_proc.kill()
    print(f"the waiting gate ended {took:.2f} s after its owner")
    assert rc == 1, f"the gate still waited {took:.1f} s after its owner's death (rc {rc})"
    assert not (gates / "gate-1.started").exists()


def test_a_waiting_gate_kills_the_fio_a_dead_suite_left(tmp_path):
    """The suite killed while a point waits at its gate, under a fio whose main process does
    not end on the SIGTERM the suite's death sent it (a loaded fio stuck in a futex: a CI kill
    campaign saw fio 30 s after the kill): the waiting script SIGKILLs fio's main process and
    its job's group. Stand-ins named fio (copies of bash): a main process that ignores
    SIGTERM, its job a session leader (fio setsid()s its jobs) running the gate through sh.
    Each would live 60 s more on its own: the test's 20 s limits tell that apart from the
    kill however loaded the host."""
    owner_proc = subprocess.Popen(["sleep", "60"])
    owner = (owner_proc.pid, fio_gate.start_time(owner_proc.pid))
    work, gates = gate_dirs(tmp_path, owner)
    held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
    fio = tmp_path / "fio"
    shutil.copy("/bin/bash", fio)
    job = f"sh -c './{GATE_SCRIPT} wait 1 30'; sleep 60"
    main = subprocess.Popen(
        [str(fio), "-c", f"trap '' TERM; setsid {fio} -c {shlex.quote(job)}; sleep 60"],
        cwd=work, start_new_session=True)
    leaders: list[int] = []            # the job's pid: its session's and its group's
    try:
        deadline = time.monotonic() + 60      # the job and its gate started (a limit only)
        # waiting: the gate holds its FIFO, which it opens after its first owner check (an
        # owner killed before that check ends the gate there, with no fio to kill: under
        # load the test saw the job's `sh` and killed the owner before the script ran it)
        while not (holding(in_groups(leaders), gates / "gate-1") and main.poll() is None) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
            leaders[:] = [int(p.name) for p in Path("/proc").glob("[0-9]*")
                          if _reads(p / "cmdline", job)]
        assert holding(in_groups(leaders), gates / "gate-1") and main.poll() is None, \
            "the job never waited"
        main.send_signal(signal.SIGTERM)          # what the suite's death sends: ignored
        owner_proc.kill()
        owner_proc.wait()
        t0 = time.monotonic()
        rc = ended(main, 20)
        took = time.monotonic() - t0
        deadline = time.monotonic() + 20               # the job's group: killed with it
        while (jobs := in_groups(leaders)) and time.monotonic() < deadline:
            time.sleep(0.05)        # (by its group: bash 5.2 execs the job's last `sleep 60`)
    finally:
        os.close(held)
        for leader in [main.pid, *leaders]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(leader, signal.SIGKILL)      # the job's session: its own group
        main.wait()
        owner_proc.kill()
    print(f"fio's main process killed {took:.2f} s after its owner")
    assert rc == -signal.SIGKILL, f"fio's main process not killed {took:.1f} s after its owner"
    assert not jobs, f"fio's job outlived its suite: {jobs}"


def holding(pids: list[int], path: Path) -> bool:
    """Does one of `pids` hold `path` open?"""
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd) == str(path):
                        return True
    return False


def in_groups(groups: list[int]) -> list[int]:
    """The live processes (not zombies) of the process `groups`."""
    found = []
    for p in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            fields = (p / "stat").read_text(errors="replace").rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[2]) in groups:
                found.append(int(p.name))
    return found


def in_session(leader: int, what: str, path: Path) -> bool:
    """Has a live process of the session (or group) `leader` leads `path` open (what "fd")
    or as its working directory ("cwd")?"""
    for pid in in_groups([leader]):
        with contextlib.suppress(OSError):
            links = [f"/proc/{pid}/cwd"] if what == "cwd" else \
                [str(f) for f in Path(f"/proc/{pid}/fd").iterdir()]
            if any(os.readlink(link) == str(path.resolve()) for link in links):
                return True
    return False


def ended(proc: subprocess.Popen, limit: float) -> int | None:
    """proc's exit status, None if it still runs after `limit` seconds."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        return proc.wait(timeout=limit)
    return None


def _reads(path: Path, text: str) -> bool:
    with contextlib.suppress(OSError):
        return text in path.read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return False


NAMESPACE_RUN = """
import os, shutil, subprocess, sys, time
from pathlib import Path
from pts.tools import fio_gate
live_work, dead_work, fio = map(Path, sys.argv[1:4])
child = os.fork()
if child == 0:        # a dead owner: opens its gates, leaves a gate hung under a fio, dies
    gates, fds, lock = fio_gate.open_gates(dead_work, 2, {})
    for fd in fds:    # nobody reads its FIFO any more: the old gate's write blocks for good
        os.close(fd)
    (dead_work / fio_gate.GATE_SCRIPT).write_text(sys.argv[4].format(
        pid=os.getpid(), start=fio_gate.me()[1], gates=gates,
        lock=gates / fio_gate.LOCK_FILE))
    subprocess.Popen([str(fio), "-c", f"sh -c './{fio_gate.GATE_SCRIPT} done 0 1 1; :'; :"],
                     cwd=dead_work, start_new_session=True)
    os._exit(0)       # its lock is released by the kernel, its gate hangs on
os.waitpid(child, 0)
gates, fds, lock = fio_gate.open_gates(live_work, 2, {})   # the live owner: pid 1 here
print("waiting", gates, flush=True)
t0 = time.monotonic()
rc = subprocess.run(["sh", "-c", f"./{fio_gate.GATE_SCRIPT} wait 1 60"],
                    cwd=live_work).returncode
sid = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[3]
started = (gates / "gate-1.started").exists()        # the gate's note of its release
print(rc, round(time.monotonic() - t0, 2), sid, started, flush=True)
fio_gate.close_gates(gates, fds, lock)
"""

HUNG_GATE_LOCKED = """#!/bin/bash
# owner: {pid} {start}
# lock: {lock}
cd -- {gates} || exit 1
echo go > gate-1      # the gate before issue 38: blocks opening for writing, no reader
"""


@pytest.mark.needs("root", "unshare")
def test_a_sweep_from_outside_keeps_a_live_gate_of_another_pid_namespace(tmp_path):
    """A suite's round in its own pid namespace (a container started without setsid: its
    owner is pid 1 there, its session leader out of sight, session 0) with a dead owner's
    gate hung beside it; a sweep from this host's namespace while the live gate waits (issue
    47 §1: it read "pid 1" in the host's /proc, found another start time and killed the live
    gate: "the gate ended with -9 after 0.06 s of 3"). The owners are judged by their locks:
    the live gate waits untouched and is released by the test after the sweep (its exit 0
    and its gate-1.started: it was still waiting, however long the sweep took), its folder
    stays; the dead owner's gate and the fio above it are killed and its folder removed.
    Each said. The sweep sees only this test's processes (a /proc view) and folders."""
    live, dead, tmp = tmp_path / "live", tmp_path / "dead", tmp_path / "tmp"
    for folder in (live, dead, tmp):
        folder.mkdir()
    fio = tmp_path / "fio"                 # a process named fio (a copy of bash)
    shutil.copy("/bin/bash", fio)
    root = Path(__file__).resolve().parents[2]
    inner = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", NAMESPACE_RUN,
         str(live), str(dead), str(fio), HUNG_GATE_LOCKED], cwd=root, text=True,
        stdout=subprocess.PIPE, env={**os.environ, "TMPDIR": str(tmp)})
    try:
        first = inner.stdout.readline().split()
        assert first[:1] == ["waiting"], first
        live_gates = Path(first[1])
        def gates_running() -> set[str]:          # the hung gate and the live one, started
            return {o.command.split(GATE_SCRIPT, 1)[1].strip()
                    for p in procview.descendants([inner.pid])
                    if (o := openers.opener(p, Path("/proc"))) and o.name == GATE_SCRIPT}
        deadline = time.monotonic() + 60           # a limit only (a loaded host's starts)
        while time.monotonic() < deadline and gates_running() < {"done 0 1 1", "wait 1 60"}:
            time.sleep(0.05)
        assert gates_running() >= {"done 0 1 1", "wait 1 60"}, gates_running()
        view = procview.view(tmp_path / "proc", procview.descendants([inner.pid]))
        said: list[str] = []
        removed = leftovers.sweep(said.append, tmp=tmp, proc=view, shm=str(tmp_path),
                                  nullb=str(tmp_path / "nullb"))
        assert live_gates.is_dir(), "the live owner's gate folder was removed"
        # its point released, by the test (non-blocking: no reader left is an error, not a hang)
        fifo = os.open(live_gates / "gate-1", os.O_WRONLY | os.O_NONBLOCK)
        os.write(fifo, b"go\n")
        os.close(fifo)
        rc, took, sid, started = inner.stdout.readline().split()
        assert inner.wait(timeout=10) == 0
    finally:
        inner.kill()
    assert sid == "0", f"the namespace's session leader was visible (session {sid})"
    # still waiting after the sweep: released by the test's line, its start noted
    assert int(rc) == 0, f"the live gate ended with {rc} after {took} s (not released)"
    assert started == "True", "the released live gate noted no start"
    killed = sorted(r.split()[1].split("(")[0] for r in removed if r.startswith("killed"))
    assert len(killed) == 3 and sum(k == "fio" for k in killed) == 1, removed
    dead_gates = [r for r in removed if r.startswith("removed")]
    assert len(dead_gates) == 1 and fio_gate.GATES_PREFIX in dead_gates[0], removed
    assert not list(tmp.glob(f"{fio_gate.GATES_PREFIX}*"))    # the live one closed its own
    assert len(said) == 4 and all("stopped run" in s for s in said), said


def test_a_gate_whose_suite_is_gone_ends_at_once(tmp_path):
    """`done` and `wait` of a dead owner end at once: by its pid (gone), and by its start
    time (this process's pid with another start time: a new process on a dead run's pid)."""
    for owner in (dead_owner(), (os.getpid(), fio_gate.me()[1] + 1)):
        shutil.rmtree(tmp_path / "work", ignore_errors=True)
        shutil.rmtree(tmp_path / "gates", ignore_errors=True)
        work, gates = gate_dirs(tmp_path, owner)
        held = os.open(gates / "gate-1", os.O_RDWR | os.O_NONBLOCK)
        try:
            assert gate(work, "wait", "1", "30", timeout=20)[0] == 1     # not its 30 s
            assert gate(work, "done", "0", "1", "1")[0] == 1
        finally:
            os.close(held)
        assert not (gates / "gate-0.done").exists()


def gate_folder(tmp: Path, owner, age: float = 0, lock: str = "") -> Path:
    """A gate folder: its owner file (`owner`: (pid, start) or None), its owner's lock
    ("held": held by this process until the test ends, "released": its owner gone, "": none,
    as older versions made them), `age` seconds old."""
    mark = owner[0] if owner else "x"
    folder = tmp / f"{fio_gate.GATES_PREFIX}{mark}-{len(list(tmp.iterdir()))}"
    folder.mkdir()
    if lock:
        fd = liveness.hold(folder / fio_gate.LOCK_FILE)
        HELD.append(fd) if lock == "held" else os.close(fd)
    if owner:
        (folder / fio_gate.OWNER_FILE).write_text(f"{owner[0]} {owner[1]}\n")
    os.utime(folder, (time.time() - age, time.time() - age))
    return folder


HELD: list[int] = []


@pytest.fixture
def confined(tmp_path):
    """The sweep's places confined to this test's: a /proc showing only this process, its
    own temporary, RAM-device and null_blk folders; the locks it holds released after."""
    yield {"proc": procview.view(tmp_path / "proc", set()), "tmp": tmp_path / "tmp",
           "shm": str(tmp_path / "shm"), "nullb": str(tmp_path / "nullb")}
    while HELD:
        os.close(HELD.pop())


def test_the_sweep_removes_gate_folders_whose_owner_is_gone(tmp_path, confined):
    """A dead owner's folder (its lock released) and one with neither lock nor owner file
    older than STALE_S are removed; a live owner's (its lock held: another suite, on another
    drive, maybe in another pid namespace), a fresh one without an owner file (being made),
    an older version's (an owner file, no lock: which namespace its owner ran in cannot be
    told) and other folders are kept; each removal is said."""
    tmp = confined["tmp"]
    tmp.mkdir()
    dead = gate_folder(tmp, fio_gate.me(), 0, "released")
    old = gate_folder(tmp, None, 3600)
    kept = [gate_folder(tmp, dead_owner(), 3600, "held"), gate_folder(tmp, None, 1),
            gate_folder(tmp, dead_owner(), 3600)]
    (tmp / "someone-else").mkdir()
    said: list[str] = []
    removed = leftovers.sweep(said.append, **confined)
    assert not dead.exists() and not old.exists()
    assert all(p.is_dir() for p in kept) and (tmp / "someone-else").is_dir()
    assert sorted(removed) == sorted([f"removed {dead}", f"removed {old}"])
    assert any(str(dead) in s for s in said) and any(str(old) in s for s in said)


@pytest.mark.needs("root", "losetup")
def test_the_sweep_removes_a_dead_runs_ram_device(tmp_path, confined):
    """A host-ceiling RAM device of a killed run (its file named after a pid that is gone,
    still bound to a loop device) is detached and its file removed; a live run's, another
    pid namespace's (a suite in a container on this host: its pids are not ours) and
    another program's files stay (issue 47 §3: removing this branch of the sweep passed
    every test)."""
    shm = Path(confined["shm"])
    shm.mkdir()
    gone = dead_owner()[0]
    names = {"dead": ramdev.tag(gone), "live": ramdev.tag(),
             "container": ramdev.tag(gone).replace(f".{liveness.namespace_mark()}-", ".1-"),
             "other": f"pts-ceilingless-{gone}"}
    files = {k: shm / f"{v}.img" for k, v in names.items()}
    for f in files.values():
        f.write_bytes(b"\0" * (1 << 20))
    dev = subprocess.run(["losetup", "--find", "--show", str(files["dead"])], check=True,
                         capture_output=True, text=True).stdout.strip()
    bound = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
    try:
        said: list[str] = []
        removed = leftovers.sweep(said.append, **confined)
        assert removed == [f"removed {files['dead']}"], removed
        assert not files["dead"].exists()
        assert not bound.exists() or not bound.read_text().startswith(str(files["dead"]))
        assert all(files[k].exists() for k in ("live", "container", "other"))
        assert len(said) == 1 and "host-ceiling RAM device" in said[0]
    finally:
        if bound.exists() and bound.read_text().startswith(str(files["dead"])):
            subprocess.run(["losetup", "-d", dev], check=False)


HUNG_GATE = HUNG_GATE_LOCKED.replace("# lock: {lock}\n", "")   # an older version's


def hang_gates(tmp_path: Path, owners: dict) -> dict[str, subprocess.Popen]:
    """A hung gate per owner (name -> (owner, lock: "held", "released" or "" as in
    gate_folder)), each under a process named fio (a copy of bash)."""
    hung = {}
    for name, (owner, lock) in owners.items():
        work, gates = tmp_path / name / "work", tmp_path / name / "gates"
        work.mkdir(parents=True)
        gates.rmdir() if gates.exists() else None
        folder = gate_folder(tmp_path / name, owner, 0, lock)
        folder.rename(gates)
        (work / GATE_SCRIPT).write_text((HUNG_GATE_LOCKED if lock else HUNG_GATE).format(
            pid=owner[0], start=owner[1], gates=gates, lock=gates / fio_gate.LOCK_FILE))
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
def test_the_sweep_kills_a_dead_owners_hung_gate_and_the_fio_above_it(tmp_path, confined):
    """Gates of killed runs hung opening their FIFO (as before issue 38: the script of that
    version), each under a process named fio (a copy of bash): one whose owner's lock was
    released (its owner died), one of an older version (no lock: judged by its owner's pid
    and start time, as it runs in this pid namespace); the sweep kills each script, its
    shell and the fio, not the live owner's gate (its lock held) nor this process; each
    kill is said. The sweep sees only this test's processes (a /proc view).

    Another suite's sweep (the fast tier runs on every core, and a lab runs suites side by
    side) may kill the dead owners' gates first: they are then made again, up to three
    times; a live owner's gate must never go."""
    for attempt in range(3):
        hung = hang_gates(tmp_path / f"try{attempt}", {
            "dead": (dead_owner(), "released"), "older": (dead_owner(), ""),
            "live": (fio_gate.me(), "held")})
        # each hangs opening its FIFO (its script is past its `cd`), however slowly it
        # started: until then the sweep below would find part of its processes
        deadline = time.monotonic() + 60                   # a hang bound only
        while not all(in_session(p.pid, "cwd", tmp_path / f"try{attempt}" / name / "gates")
                      or p.poll() is not None for name, p in hung.items()):
            assert time.monotonic() < deadline, "the hung gates never reached their FIFO"
            time.sleep(0.02)
        assert hung["live"].poll() is None, "a live owner's gate was killed"
        if hung["dead"].poll() is None and hung["older"].poll() is None:
            break
        stop(hung)         # swept by another process's suite before this test's sweep
    else:
        pytest.fail("the dead owners' gates were swept by another process three times")
    try:
        # the kill campaign counts them as the dead suite's (their command line names
        # neither its run folder nor the drive: `pgrep -f FOLDER` missed them)
        dead_pid = int((tmp_path / f"try{attempt}" / "dead" / "gates" /
                        fio_gate.OWNER_FILE).read_text().split()[0])
        counted = campaign.gates_of(dead_pid)
        assert {"sh", GATE_SCRIPT} <= {o.name for o in counted}, counted
        assert all("/dead/" in os.readlink(f"/proc/{o.pid}/cwd") for o in counted), counted
        view = procview.view(tmp_path / "proc", procview.descendants(
            [p.pid for p in hung.values()]))
        said: list[str] = []
        removed = leftovers.gates_left(said.append, view)
        names = sorted(o.name for o in removed)
        assert names == sorted(["fio", "sh", GATE_SCRIPT] * 2), removed
        assert hung["dead"].wait(timeout=10) == -signal.SIGKILL
        assert hung["older"].wait(timeout=10) == -signal.SIGKILL
        assert hung["live"].poll() is None, "a live owner's gate was killed"
        assert len(said) == 6 and all("stopped run" in s for s in said)
    finally:
        stop(hung)
