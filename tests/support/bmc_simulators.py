"""A real IPMI BMC simulator and a real Redfish service emulator on loopback, for the power
sources' tests (tests/power/test_bmc.py).

- ipmi_sim(): OpenIPMI's ipmi_sim (Debian's openipmi) with tests/data/ipmi_sim (lan.conf,
  bmc.emu: one BMC, a 220 W power sensor); UDP on 127.0.0.1 at a port the kernel chooses.
- redfish_static(): sushy-tools' sushy-static (the `test` extra) serving a copy of
  tests/data/redfish_mockup (what is under /redfish/v1, a folder with its index.json per
  resource), which it reads at each request (a test changes a reading by
  rewriting its file); TCP on 127.0.0.1 at a port the kernel chooses.

Each server gets SIGKILL from the kernel when the thread that started it ends (PR_SET_
PDEATHSIG, as tests/support/postgres.py's servers), so whatever kills the tests, kill -9
too, it does not outlive them; the context managers stop it at the end, on failure too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from pts.tools.commands import on_parent_death

DATA = Path(__file__).resolve().parents[1] / "data"
IPMI_SIM = DATA / "ipmi_sim"
REDFISH_MOCKUP = DATA / "redfish_mockup"
USER, PASSWORD = "admin", "pts-secret"          # tests/data/ipmi_sim/lan.conf
START_S = 10.0


def listening_port(pid: int, proto: str) -> int | None:
    """The port `pid` listens on at 127.0.0.1 (proto 'udp' or 'tcp'), from its socket
    inodes and /proc/net: how a kernel-chosen port (bound to port 0) is found."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    for line in Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]:
        fields = line.split()
        address, inode = fields[1], fields[9]
        if inode in inodes and address.startswith("0100007F:"):
            return int(address.split(":")[1], 16)
    return None


def _wait_for_port(proc: subprocess.Popen, proto: str, log: Path) -> int:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}: "
                               f"{log.read_text(errors='replace')[-1000:]}")
        if port := listening_port(proc.pid, proto):
            return port
        time.sleep(0.05)
    raise RuntimeError(f"{proc.args[0]} did not listen within {START_S} s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def ipmi_sim(folder: Path) -> Iterator[tuple[subprocess.Popen, int, Path]]:
    """(the process, its UDP port, a password file for ipmitool -f)."""
    folder.mkdir(parents=True, exist_ok=True)
    password_file = folder / "bmc.password"
    password_file.write_text(PASSWORD + "\n")
    log = folder / "ipmi_sim.log"
    with open(log, "w") as out:
        # -n: no console on stdin; -p: no persistent state; -s: its state folder, ours
        proc = subprocess.Popen(["ipmi_sim", "-c", str(IPMI_SIM / "lan.conf"), "-f",
                                 str(IPMI_SIM / "bmc.emu"), "-s", str(folder), "-n", "-p"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=on_parent_death(signal.SIGKILL))
    try:
        yield proc, _wait_for_port(proc, "udp", log), password_file
    finally:
        stop(proc)


@contextlib.contextmanager
def redfish_static(folder: Path) -> Iterator[tuple[subprocess.Popen, str, Path]]:
    """(the process, its base URL http://127.0.0.1:PORT, the mockup copy it serves)."""
    mockup = folder / "mockup"
    shutil.copytree(REDFISH_MOCKUP, mockup)
    log = folder / "sushy-static.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "sushy_tools.static.main", "-i",
                                 "127.0.0.1", "-p", "0", "-m", str(mockup)],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=on_parent_death(signal.SIGKILL))
    try:
        yield proc, f"http://127.0.0.1:{_wait_for_port(proc, 'tcp', log)}", mockup
    finally:
        stop(proc)
