"""What the suite starts does not outlive it, killed -9 at any instant: fio's jobs when fio's
main process dies by itself (pts.tools.fio_watch's sweep; stand-ins, then fio 3.33), the
remote capture's ssh (pts.workload.capture.remote), the demo's `pts capture` (pts.cli.demo),
the purge tools (pts.conditioning.purge, pts.tools.nvme through pts.tools.commands.run), and
a child whose parent was killed between its fork and its prctl
(pts.tools.commands.on_parent_death).

Each test runs the product's own launcher in a parent process of its own, with stand-ins
for the tool (scripts found first on PATH, or named as the tool) that note their pid and
exec a copy of sleep kept in the test's folder, kills that parent with SIGKILL and waits,
up to a deadline that only stops a hung test, for the child to be gone. Children are
followed by pidfds opened once their command line was seen to name the test's folder: a
test looks at and kills only what it made."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LIMIT_S = 60      # only stops a hung test: starting Python on a loaded machine takes seconds


def wait_for(condition, what: str, limit: float = LIMIT_S):
    deadline = time.monotonic() + limit
    while not (found := condition()):
        assert time.monotonic() < deadline, f"not within {limit} s: {what}"
        time.sleep(0.02)
    return found


class Child:
    """A process the test made (its command line names `folder`), followed by its pidfd."""

    def __init__(self, pid: int, folder: Path):
        self.pid, self.fd = pid, os.pidfd_open(pid)
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        assert str(folder) in cmdline, (pid, cmdline)   # read after the pidfd was opened:
        assert self.alive(), pid                         # it was this process's

    def alive(self) -> bool:
        return not select.select([self.fd], [], [], 0)[0]     # readable once it has ended

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.fd, signal.SIGKILL)
        os.close(self.fd)


def noted(marker: Path, folder: Path) -> Child:
    """The child whose pid `marker` holds (once written)."""
    wait_for(lambda: marker.exists() and marker.read_text().endswith("\n"), f"{marker.name}")
    return Child(int(marker.read_text()), folder)


def stand_in(folder: Path, name: str, marker: Path) -> Path:
    """An executable `name` in folder/bin that notes its pid in `marker`, then runs on as
    folder/bin/held (a copy of sleep: its command line names the folder)."""
    bin_ = folder / "bin"
    bin_.mkdir(exist_ok=True)
    held = bin_ / "held"
    if not held.exists():
        shutil.copy(shutil.which("sleep"), held)
    path = bin_ / name
    path.write_text(f"#!/bin/sh\necho $$ > {marker}.tmp && mv {marker}.tmp {marker}\n"
                    f"exec {held} 600\n")
    path.chmod(0o755)
    return path


def parent(code: str, folder: Path, **kw) -> subprocess.Popen:
    """A Python process running `code` from the checkout, in a session of its own (its kill
    is the test's alone), with folder/bin first on PATH."""
    env = dict(os.environ, PATH=f"{folder / 'bin'}:{os.environ['PATH']}")
    return subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=env,
                            start_new_session=True, stdin=subprocess.DEVNULL, **kw)


def killed_parent_takes(code: str, marker: Path, folder: Path) -> None:
    """Run `code` in a parent; once the child noted in `marker` runs, kill -9 the parent:
    the child is gone (it would hold on for 600 s)."""
    proc = parent(code, folder)
    child = None
    try:
        wait_for(lambda: marker.exists() or proc.poll() is not None, "the child started")
        assert proc.poll() is None, f"the parent ended by itself ({proc.returncode})"
        child = noted(marker, folder)
        proc.kill()
        proc.wait()
        wait_for(lambda: not child.alive(), f"child {child.pid} gone after its parent's kill")
    finally:
        proc.kill()
        proc.wait()
        if child is not None:
            child.kill()


def _job_and_script(folder: Path) -> list[int] | None:
    """The stand-in fio job and its script, by their command lines (both naming `folder`),
    as this test's /proc shows them (the suite may be in a pid namespace of its own)."""
    job, script = [], []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError):
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                continue
            if cmd.startswith(f"{folder}/bin/held "):
                script.append(int(entry))
            elif cmd.startswith(f"{folder}/fio -c ") and "job.pid" in cmd and "go ]" not in cmd:
                job.append(int(entry))
    return job + script if len(job) == 1 and len(script) == 1 else None


@pytest.mark.parametrize("ns", [None, *(pytest.param(ns, marks=pytest.mark.needs(
    "root", "unshare")) for ns in ("host-proc", "own-proc"))])
def test_fio_jobs_end_when_fios_main_process_dies_by_itself(tmp_path, ns):
    """A stand-in fio (bash named fio) run the product's way (commands.run with the
    watcher) starts a job as fio does (setsid: its own session; its fd 1 and 2 the run's
    pipes, inherited), which ignores SIGTERM and runs a script in its group with output to a
    file (as exec_prerun does), then fio's main process SIGKILLs itself. The job and its
    script go, and the suite's run returns fio's status (it used to wait for them: 600 s).
    Also with the suite in a pid namespace of its own (a container), given the host's /proc
    (the watcher reads pids of another namespace than its own) or its own."""
    fio = tmp_path / "fio"
    shutil.copy("/bin/bash", fio)
    stand_in(tmp_path, "script", tmp_path / "script.pid")
    job = (f"trap '' TERM; {tmp_path}/bin/script > {tmp_path}/prerun.txt 2>&1 & "
           f"echo $$ > {tmp_path}/job.tmp && mv {tmp_path}/job.tmp {tmp_path}/job.pid; wait")
    main = (f"setsid {fio} -c \"{job}\" & "
            f"while [ ! -e {tmp_path}/go ]; do sleep 0.02; done; kill -9 $$")
    rc = tmp_path / "rc"
    code = ("from pathlib import Path\nfrom pts.tools import commands, fio_watch\n"
            f"r = commands.run([{str(fio)!r}, '-c', {main!r}], timeout=600, check=False, "
            f"watch=fio_watch.watch)\nPath({str(rc)!r}).write_text(f'{{r.returncode}}\\n')\n")
    in_ns = ["unshare", "--pid", "--fork", *(["--mount-proc"] if ns == "own-proc" else []),
             "sh", "-c", '"$@"; sleep 60', "sh"] if ns else []
    suite = subprocess.Popen([*in_ns, sys.executable, "-c", code], cwd=REPO,
                             start_new_session=True, stdin=subprocess.DEVNULL)
    children = []
    try:
        wait_for(lambda: (tmp_path / "job.pid").exists() and (tmp_path / "script.pid").exists()
                 or suite.poll() is not None, "the job and its script started")
        pids = wait_for(lambda: _job_and_script(tmp_path), "the job and its script seen")
        children = [Child(pid, tmp_path) for pid in pids]
        (tmp_path / "go").touch()                   # fio's main SIGKILLs itself
        wait_for(lambda: rc.exists() and rc.read_text().endswith("\n"),
                 "the suite's run of fio returned")
        assert rc.read_text() == "-9\n"                      # fio's main: SIGKILL
        wait_for(lambda: not any(c.alive() for c in children), "the job and its script gone")
    finally:
        with contextlib.suppress(ProcessLookupError):       # the suite, or unshare and the
            os.killpg(suite.pid, signal.SIGKILL)            # namespace's init: all in it
        suite.wait()
        for child in children:
            child.kill()


def test_remote_captures_ssh_ends_with_the_capture(tmp_path):
    """pts.workload.capture.remote.RemoteInstance's ssh (a stand-in on PATH, holding on as a
    client whose connection hangs does, whatever its stdin)."""
    stand_in(tmp_path, "ssh", tmp_path / "ssh.pid")
    code = ("from pts.tools import hosts\nfrom pts.workload.capture import remote\n"
            "remote.RemoteInstance(hosts.Remote('dut.invalid', 'root'), 0, 1024).__enter__()\n")
    killed_parent_takes(code, tmp_path / "ssh.pid", tmp_path)


def test_demos_capture_ends_with_the_demo(tmp_path):
    """pts.cli.demo.start_capture's `pts capture` (the Python that runs pts is a stand-in:
    it would capture until CAPTURE_MAX_S)."""
    python = stand_in(tmp_path, "python", tmp_path / "capture.pid")
    code = ("import sys, time\nfrom pathlib import Path\nfrom pts.cli import demo\n"
            f"sys.executable = {str(python)!r}\n"
            f"demo.start_capture('/dev/loop-none', Path({str(tmp_path / 'c.parquet')!r}))\n"
            "time.sleep(600)\n")
    killed_parent_takes(code, tmp_path / "capture.pid", tmp_path)


def test_demos_suite_run_ends_with_the_demo(tmp_path):
    """pts.cli.demo.run's pytest run of the suite (through run_pts, as its `pts workload`;
    the Python is a stand-in: a real run would go on for minutes)."""
    python = stand_in(tmp_path, "python", tmp_path / "pytest.pid")
    code = ("import argparse, sys\nfrom pts.cli import demo\n"
            "p = argparse.ArgumentParser()\ndemo.add_arguments(p)\n"
            f"args = p.parse_args(['--reports-dir', {str(tmp_path / 'reports')!r}])\n"
            f"sys.executable = {str(python)!r}\ndemo.run(args)\n")
    killed_parent_takes(code, tmp_path / "pytest.pid", tmp_path)


def test_purge_tools_end_with_the_suite(tmp_path):
    """blkdiscard as pts.conditioning.purge runs it (--purge trim), and nvme-cli as the
    Format and Sanitize purges run it (pts.tools.nvme.run_admin): stand-ins on PATH, the
    device a file of the test's. (A real tool inside an ioctl ends when the kernel returns
    from it: a signal cannot end a process sooner.)"""
    disk = tmp_path / "disk"
    disk.write_bytes(b"")
    trim = ("from pts.conditioning import purge\n"
            "from pts.device.identity import BlockDevice, Identity\n"
            f"dev = BlockDevice({str(disk)!r}, {str(disk)!r}, 'loop99', (7, 99), 1 << 20, "
            "512, 512, 'loop', False, Identity('m', 's', 'f', 'sysfs'))\n"
            "purge.plan('trim', dev).execute()\n")
    stand_in(tmp_path, "blkdiscard", tmp_path / "blkdiscard.pid")
    killed_parent_takes(trim, tmp_path / "blkdiscard.pid", tmp_path)
    stand_in(tmp_path, "nvme", tmp_path / "nvme.pid")
    fmt = ("from pts.tools import nvme\n"
           f"nvme.run_admin(['format', {str(disk)!r}, '--ses=1', '--force'], None, 600)\n")
    killed_parent_takes(fmt, tmp_path / "nvme.pid", tmp_path)


def test_a_child_whose_parent_is_killed_before_its_prctl_ends(tmp_path):
    """The kernel sends the parent-death signal only for a death after the prctl: a parent
    killed -9 between the fork and it (held open here: the child's preexec waits for its
    parent's death before on_parent_death's function runs) left the tool running forever.
    The child ends instead of running it."""
    marker = tmp_path / "forked.pid"
    stand_in(tmp_path, "unused", tmp_path / "unused.pid")     # makes bin/held
    code = ("import os, signal, subprocess, time\nfrom pts.tools import commands\n"
            "then = commands.on_parent_death(signal.SIGTERM)\n"
            "def child():\n"
            f"    open({str(marker)!r} + '.tmp', 'w').write(f'{{os.getpid()}}\\n')\n"
            f"    os.rename({str(marker)!r} + '.tmp', {str(marker)!r})\n"
            f"    deadline, mine = time.monotonic() + {LIMIT_S}, os.getppid()\n"
            "    while os.getppid() == mine and time.monotonic() < deadline:\n"
            "        time.sleep(0.01)\n"
            "    then()\n"
            f"subprocess.Popen([{str(tmp_path / 'bin' / 'held')!r}, '600'], preexec_fn=child)\n")
    killed_parent_takes(code, marker, tmp_path)


def _fio_of(folder: Path) -> list[int]:
    """The live processes whose command line names `folder` (fio's, given its target)."""
    found = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError, IndexError):
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if cmd.startswith(b"fio\0") and str(folder).encode() in cmd and state != "Z":
                found.append(int(entry))
    return found


@pytest.mark.needs("fio")
def test_real_fios_jobs_end_when_its_main_process_is_killed_by_another(tmp_path):
    """fio 3.33 itself, two jobs writing a file of the test's for 60 s, run the product's
    way; its main process killed -9 by another (the test), not by the suite, which lives:
    the jobs (they hold fio's output pipe) go, and the suite's run returns."""
    target = tmp_path / "target"
    with open(target, "wb") as fh:
        fh.truncate(8 << 20)
    argv = ["fio", "--name=j", f"--filename={target}", "--size=8M", "--rw=randwrite",
            "--bs=4k", "--numjobs=2", "--ioengine=psync", "--time_based", "--runtime=60",
            "--output-format=json"]
    code = ("from pts.tools import commands, fio_watch\n"
            f"r = commands.run({argv!r}, timeout=600, check=False, watch=fio_watch.watch)\n"
            "print(r.returncode)\n")
    suite = parent(code, tmp_path, stdout=subprocess.PIPE, text=True)
    children = []
    try:
        pids = wait_for(lambda: len(found := _fio_of(tmp_path)) >= 3 and found,
                        "fio's main process and its 2 jobs")
        children = [Child(pid, tmp_path) for pid in pids]
        main = [c for c in children if Path(f"/proc/{c.pid}/stat").read_text().rsplit(
            ")", 1)[1].split()[1] == str(suite.pid)]          # the suite's child
        assert len(main) == 1, [c.pid for c in children]
        signal.pidfd_send_signal(main[0].fd, signal.SIGKILL)
        wait_for(lambda: suite.poll() is not None, "the suite's run of fio returned")
        assert suite.stdout.read().strip() == "-9"
        wait_for(lambda: not any(c.alive() for c in children), "fio's jobs gone")
    finally:
        suite.kill()
        suite.wait()
        for child in children:
            child.kill()
