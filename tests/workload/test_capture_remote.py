"""`python -m pts capture ssh://root@HOST:PORT/dev/NAME`: the tracing instance on the DUT
host through its agent, over a real sshd of the test's own (tests/support/remote_hosts.py;
the "host" is this machine, so its loop devices and tracefs are the DUT's). The capture
records the DUT host's kernel: this side runs under UNAME26, so the two releases differ.
Each capture is ended by SIGINT once its workload is done."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from pts.tools import commands
from pts.workload.capture import local, spool, tracefs
from pts.workload.capture.events import Op, open_capture
from tests.support import remote_hosts
from tests.support.apps import BOUND_S, end_captures, ran_inside, wait_tracing
from tests.support.helpers import REPO, loop_device
from tests.support.tracefs_mount import ensure_tracefs

pytestmark = [pytest.mark.needs("root", "fio", "losetup", "ssh", "sshd", "ssh-keygen")]


@pytest.fixture(autouse=True)
def own_tmpdir(monkeypatch):
    """The captures' temporary directory is the test's own, removed after: a capture killed
    -9 leaves its ssh connections' folder there (the next run's sweep would take it), not in
    the machine's /tmp. A short path: an ssh socket's must fit 108 bytes."""
    folder = tempfile.mkdtemp(prefix="pc-", dir="/tmp")
    monkeypatch.setenv("TMPDIR", folder)
    yield
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def dut():
    ensure_tracefs()
    with loop_device(size=64 << 20) as dev, remote_hosts.keys() as k, \
            remote_hosts.host(k) as h:
        yield dev, h.url(dev), str(k.ssh_config)


def ours(dev: str) -> set[str]:
    """Capture instances tracing `dev` (other tests' captures may run at the same time)."""
    major, minor = map(int, (Path("/sys/block") / Path(dev).name / "dev").read_text().split(":"))
    found = set()
    for p in (tracefs.find_tracefs() / "instances").iterdir():
        try:
            text = (p / "events/block/block_rq_issue/filter").read_text()
        except OSError:
            continue
        if p.name.startswith(tracefs.PREFIX) and \
                f"dev == {local.kernel_dev_t(major, minor)}" in text:
            found.add(p.name)
    return found


UNAME26 = 0x0020000          # personality(2): uname() reports the release as 2.6.x


def as_controller() -> None:
    """In the capture's child before exec: SIGTERM when this test process ends, and the
    personality UNAME26 (what setarch --uname-2.6 sets): this side's kernel release then
    reads 2.6.x, the DUT host's (its sshd's agent) the real one."""
    commands.set_parent_death_signal(signal.SIGTERM)
    ctypes.CDLL(None, use_errno=True).personality(UNAME26)


def start(dev: str, url: str, config: str, out: Path,
          seconds: float) -> tuple[subprocess.Popen, str]:
    """The capture of `url` started here (as_controller), returned once it traces."""
    before = ours(dev)
    proc = subprocess.Popen([sys.executable, "-m", "pts", "capture", url, "--ssh-config",
                             config, "--seconds", str(seconds), "--step", "1", "-o", str(out),
                             "--keep-spool"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_controller)
    wait_tracing(proc, timeout=60)          # the agent made its instance, then started it
    assert int(Path(f"/proc/{proc.pid}/personality").read_text(), 16) == UNAME26
    new = ours(dev) - before
    assert len(new) == 1, new
    return proc, new.pop()


def stat(dev: str) -> np.ndarray:
    return np.array((Path("/sys/block") / Path(dev).name / "stat").read_text().split(),
                    dtype=np.int64)


IOS = 5000                   # fio's random 4 KiB reads and writes, 70/30 (3,500 and 1,500)


def test_capture_over_ssh_agrees_with_the_hosts_counters(dut, tmp_path):
    dev, url, config = dut
    out = tmp_path / "cap.parquet"
    proc, name = start(dev, url, config, out, BOUND_S)
    # the agent (tracefs.py's Instance on the DUT host) traces the writeback attribution's
    # events too, each with its filter (the flusher's bios only: fio's are not recorded)
    events = tracefs.find_tracefs() / "instances" / name / "events"
    for names, _ in tracefs.ATTRIBUTION_EVENTS:
        assert (events / names[0] / "enable").read_text().strip() == "1", names
    assert 'comm ~ "kworker/*"' in (events / "block/block_bio_queue/filter").read_text()
    began = time.time()
    before = stat(dev)
    # a count of I/Os (about 1 s at the rates), not 1 s of them: a loaded host let a 1 s
    # run do fewer than the 1,000 writes that make the 1 % below mean something
    subprocess.run(["fio", "--name=w", f"--filename={dev}", "--rw=randrw", "--rwmixread=70",
                    "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=8",
                    f"--number_ios={IOS}", "--rate_iops=3500,1500", "--output=/dev/null"],
                   check=True)
    delta = stat(dev) - before
    ended = time.time()
    (stdout,) = end_captures(proc)
    ran_inside(out, began, ended, f"fio ({IOS} I/Os)")
    assert name not in ours(dev)
    cap = open_capture(out)
    assert cap.info.device == url and cap.info.lost_events == 0
    # the DUT host's kernel, whose tracepoints recorded (this side's read 2.6.x: UNAME26)
    assert cap.info.kernel == os.uname().release and not cap.info.kernel.startswith("2.6."), \
        (cap.info.kernel, os.uname().release)
    ops = np.concatenate([b["op"] for b in cap.batches()])
    for op, ios in ((Op.READ, delta[0]), (Op.WRITE, delta[4])):
        assert ios > 1000 and abs((ops == op).sum() - ios) <= 0.01 * ios, (op, ios)
    assert f"capture of {url}" in stdout
    # fio's O_DIRECT writes are its own: no writeback; the DUT host's task names at the
    # start (the dirtiers' names) reached the spool: this capture's own process among them
    assert cap.info.extra["writeback"] == {"requests": 0, "attributed": 0, "by_dirtier": {},
                                           "not_attributable": {}}
    comms = json.loads((spool.spool_of(out) / spool.META).read_text())["comms"]
    assert len(comms) > 10 and comms[str(proc.pid)] == Path(sys.executable).name[:15]


def test_the_agent_removes_its_instance_when_the_capture_is_killed(dut, tmp_path):
    dev, url, config = dut
    proc, name = start(dev, url, config, tmp_path / "cap.parquet", BOUND_S)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    end = time.monotonic() + 20
    while name in ours(dev) and time.monotonic() < end:
        time.sleep(0.1)
    assert name not in ours(dev)
