"""A several-device session's child runs end with their parent, whatever kills it (kill -9
too): the kernel sends each child the SIGTERM a Ctrl-C would have sent it
(pts.session.children; issue 47 §3, noticed on the way: the children ran in sessions of
their own with nothing tying them to the parent). The real `children.start`, its child a
Python process that notes the signal it got."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.support.helpers import REPO

CHILD = """
import os, signal, sys, time
def noted(signum, frame):          # whole or not at all: written aside, then renamed
    with open(sys.argv[1] + ".tmp", "w") as fh:
        fh.write(signal.Signals(signum).name)
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    sys.exit(0)
signal.signal(signal.SIGTERM, noted)
open(sys.argv[1] + ".ready", "w").close()
time.sleep(60)
"""

PARENT = """
import queue, sys, time
from pathlib import Path
from pts.session import children
c = children.Child("a", "/dev/null", [sys.executable, "-c", sys.argv[1], sys.argv[2]],
                   Path(sys.argv[2] + ".log"))
children.start(c, Path("."), queue.Queue())
print(c.proc.pid, flush=True)
time.sleep(60)
"""


def test_a_child_run_gets_sigterm_when_its_parent_is_killed_with_sigkill(tmp_path):
    noted = tmp_path / "noted"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, str(noted)], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        # limits that only stop a hang (a Python start on a loaded host can take seconds):
        # killed before its handler was set, the child would die unnoted, a false failure
        deadline = time.monotonic() + 60          # its handler set
        while not noted.with_suffix(".ready").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert noted.with_suffix(".ready").exists(), "the child run never set its handler"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 30          # (unsignalled, the child sleeps 60 s)
        while not noted.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert noted.exists(), "the child run outlived its killed parent"
        assert noted.read_text() == "SIGTERM"
    finally:
        parent.kill()
        parent.wait()
        try:
            os.kill(child, signal.SIGKILL)
        except ProcessLookupError:
            pass
