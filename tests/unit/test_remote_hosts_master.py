"""The shared ssh connection's master (pts.tools.hosts) ends with the process that uses it:
killed -9 while a command runs through the master, and at a clean exit (then its folder and
socket are gone too). Against a real sshd of the test's own on 127.0.0.1
(tests/support/remote_hosts.py). The process is a Python of the test's (the suite's own
SshHost); its first command runs in a thread that ends before the next, as the device
checks of a session run in a pool (the parent-death signal is the forking THREAD's).

The master is followed by the pid that process holds (hosts._shared.held), checked by
`ssh -O check` to be the socket's master and by /proc to be that process's child, then by
a pidfd: nothing is looked up by name."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pts.device import leftovers
from pts.tools import hosts
from tests.support import remote_hosts

pytestmark = [pytest.mark.needs("root", "ssh", "sshd", "ssh-keygen", "fio")]
REPO = Path(__file__).resolve().parents[2]
LIMIT_S = 60      # only stops a hung test: starting Python on a loaded machine takes seconds

USER = """
import sys, threading
from pts.tools import hosts
address, port, config, last = sys.argv[1:5]
h = hosts.SshHost(hosts.Remote(address, "root", int(port), config))
first = threading.Thread(target=h.run, args=(["true"],))
first.start()
first.join()
proc, _ = hosts._shared.held[h.remote.control_path]
print(proc.pid, h.remote.control_path, flush=True)
if last == "stream":      # runs through the master until its connection is gone
    h.run(["sh", "-c", "while echo .; do sleep 0.1; done"], check=False)
else:
    sys.stdin.readline()  # then a clean exit
"""


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """The user's temporary directory, the test's own, under a short path: the socket's path
    must fit a Unix socket's 108 bytes (pytest's tmp_path does not leave room)."""
    folder = Path(tempfile.mkdtemp(prefix="pm-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def dut():
    with remote_hosts.keys() as k, remote_hosts.host(k) as h:
        yield h.address, str(h.ssh_port), str(k.ssh_config)


@contextlib.contextmanager
def user(dut, last: str, tmp: Path) -> Iterator[tuple[subprocess.Popen, int, int, str]]:
    """The process using the shared connection; its master's pid (a pidfd on it) and
    socket, once `ssh -O check` has named that pid as the master of that socket. Whatever
    is left of them is killed after the test, by the Popen and the pidfd it holds."""
    proc = subprocess.Popen([sys.executable, "-c", USER, *dut, last], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True,
                            env=dict(os.environ, TMPDIR=str(tmp)))   # its folder: the test's
    fd, socket = None, None
    try:
        pid, socket = proc.stdout.readline().split()
        pid = int(pid)
        fd = os.pidfd_open(pid)
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(stat[1]) == proc.pid, "the master is the user's child"
        address, port, config = dut
        check = subprocess.run(["ssh", "-F", config, "-p", port, "-o",
                                f"ControlPath={socket}", "-O", "check", f"root@{address}"],
                               capture_output=True, text=True, timeout=LIMIT_S)
        assert f"Master running (pid={pid})" in check.stderr, check
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"ControlPersist=no" in cmdline and b"-N" in cmdline, cmdline
        yield proc, pid, fd, socket
    finally:
        if fd is not None:
            if not ended(fd):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            os.close(fd)
        proc.kill()
        proc.communicate()
        if socket:
            shutil.rmtree(os.path.dirname(socket), ignore_errors=True)  # the user's folder


def streaming(pid: int, socket: str) -> bool:
    """The user's command runs: its ssh client, a child of the user's, names the master's
    socket (ControlMaster=no: it goes through the master or, without one, on its own)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{child}/cmdline").read_bytes().decode().split("\0")
                if f"ControlPath={socket}" in argv and "ControlMaster=no" in argv:
                    return True
    return False


def ended(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])     # a pidfd is readable once it ended


def test_the_master_ends_when_its_user_is_killed_9_mid_command(dut, short_tmp):
    with user(dut, "stream", short_tmp) as (proc, pid, fd, socket):
        folder = Path(socket).parent
        assert folder.parent == short_tmp and folder.name.startswith(hosts.MASTERS_PREFIX)
        assert folder not in leftovers.stale_folders(short_tmp), "a live user's folder"
        deadline = time.monotonic() + LIMIT_S
        while not streaming(proc.pid, socket):
            assert proc.poll() is None and time.monotonic() < deadline, "no command runs"
            time.sleep(0.02)
        assert not ended(fd)
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + LIMIT_S
        while not ended(fd):
            assert time.monotonic() < deadline, f"master {pid} alive {LIMIT_S} s after its user"
            time.sleep(0.02)
        assert not os.path.exists(socket), "ssh removes its socket on SIGTERM"
        # the folder stays (nothing ran to remove it); its lock says its owner is gone, and
        # the next run's sweep of leftovers removes it
        assert leftovers.stale_folders(short_tmp) == [folder]


def test_a_clean_exit_stops_the_master_and_removes_its_folder(dut, short_tmp):
    with user(dut, "exit", short_tmp) as (proc, _, fd, socket):
        assert os.path.exists(socket) and not ended(fd)
        proc.communicate("\n", timeout=LIMIT_S)
        assert proc.returncode == 0
        assert ended(fd), "the master was stopped before the exit"
        assert not os.path.exists(os.path.dirname(socket))
