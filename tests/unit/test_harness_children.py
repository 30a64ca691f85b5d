"""The suite runs a test starts end with the test's process (tests.support.ptsrun): a test
worker killed mid-test (its deadline, CI's limit, a kill -9) left its suite runs going on
their devices, holding the devices' locks and loop devices."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.support.helpers import REPO, alive

STARTER = """
import subprocess, sys
from tests.support.ptsrun import _ends_with_this_process
child = subprocess.Popen(["sleep", "60"], preexec_fn=_ends_with_this_process(),
                         start_new_session=True)
print(child.pid, flush=True)
child.wait()
"""


def test_a_suite_started_by_a_killed_test_process_ends_with_it():
    starter = subprocess.Popen([sys.executable, "-c", STARTER], cwd=REPO, stdout=subprocess.PIPE,
                               text=True)
    pid = int(starter.stdout.readline())
    os.kill(starter.pid, signal.SIGKILL)
    starter.wait()
    deadline = time.monotonic() + 30     # a limit only: unsignalled, the child sleeps 60 s
    while time.monotonic() < deadline and alive(pid):
        time.sleep(0.05)
    assert not alive(pid), f"the child {pid} outlived its killed starter"
