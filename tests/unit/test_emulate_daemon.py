"""The emulator daemon's owner watchdog and the emulator's lock, without FUSE or root.

The CI flake of test_killed_owner_makes_the_daemon_clean_up_by_itself: the watchdog
thread imported modules while the main thread did and died (8 of 40 daemons, Python
3.11.7: "partially initialized module 'typing'"); the instance was never cleaned up.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from pts.emulate import daemon, lifecycle
from tests.support.helpers import REPO

# Run in a fresh interpreter (this one has imported everything already): the daemon's main
# with fork, setsid and the FUSE serving stubbed; which modules are loaded when the
# watchdog thread starts, and whether serving still imported anything after that.
_MAIN_PROBE = """
import json, os, sys, threading
from pts.emulate import daemon
at_start, at_serve = [], []
threading.Thread.start = lambda self: at_start.append(sorted(sys.modules))
os.fork, os.setsid = (lambda: 0), (lambda: None)
daemon._serve = lambda state, mods: at_serve.append(sorted(sys.modules))
assert daemon.main([sys.argv[1]]) == 0
print(json.dumps({"at_start": at_start, "at_serve": at_serve}))
"""


def test_every_module_is_imported_before_the_watchdog_thread_starts(tmp_path):
    (tmp_path / "state.json").write_text(json.dumps(
        {"owner_pid": os.getpid(), "owner_start": None, "serial": "EMUTEST0000"}))
    done = subprocess.run([sys.executable, "-c", _MAIN_PROBE, str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    (at_start,) = seen["at_start"]                    # the watchdog's thread, started once
    (at_serve,) = seen["at_serve"]
    needed = {"pts.emulate.fusefs", "pts.emulate.lifecycle", "pts.emulate.system",
              "pts.emulate.profiles", "mfusepy", "numpy", "typing", "dataclasses"}
    assert needed <= set(at_start), sorted(needed - set(at_start))
    assert at_serve == at_start                        # nothing imported once it runs


class FakeLifecycle:
    """locked/teardown as the watchdog calls them; the first `failures` teardowns raise."""

    def __init__(self, state_dir: Path, failures: int) -> None:
        self.state_dir, self.failures, self.calls = state_dir, failures, []

    def locked(self, on_wait=None):
        return contextlib.nullcontext()

    def teardown(self, state_dir: Path, kill_daemon: bool = True, log=None) -> None:
        self.calls.append((state_dir, kill_daemon))
        if len(self.calls) <= self.failures:
            raise OSError("device busy (made up by the test)")
        (state_dir / "state.json").unlink()
        state_dir.rmdir()


def test_watchdog_logs_and_retries_what_fails_until_the_instance_is_gone(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(daemon, "RETRY_S", 0)
    monkeypatch.setattr(daemon, "WATCH_INTERVAL_S", 0)
    state_dir = tmp_path / "EMUTEST0000"
    state_dir.mkdir()
    (state_dir / "state.json").write_text("{}")
    answers = iter([RuntimeError("no /proc (made up by the test)"), True, False])

    def process_alive(pid, start):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    fake = FakeLifecycle(state_dir, failures=2)
    mods = SimpleNamespace(lifecycle=fake, system=SimpleNamespace(process_alive=process_alive))
    watchdog = daemon.OwnerWatchdog(state_dir, {"owner_pid": 12345}, mods)
    watchdog.run()
    err = capsys.readouterr().err
    assert fake.calls == [(state_dir, False)] * 3
    assert not state_dir.exists() and watchdog.done.is_set()
    assert "watching owner 12345 failed" in err and "no /proc (made up" in err
    assert "owner process 12345 is gone: tearing down" in err
    assert err.count("OSError: device busy (made up by the test)") == 2
    assert "teardown attempt 2 failed" in err and "teardown done" in err
    assert "Traceback" in err                          # the traceback, not just a line


def test_lock_waiter_is_told_who_holds_the_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(lifecycle, "STATE_ROOT", tmp_path)
    holder = open(tmp_path / ".lock", "a")             # noqa: SIM115 - released by on_wait
    fcntl.flock(holder, fcntl.LOCK_EX)                 # another open file: a real conflict
    told = []

    def on_wait(message: str) -> None:
        told.append(message)
        fcntl.flock(holder, fcntl.LOCK_UN)             # the holder lets go: we get it

    with holder, lifecycle.locked(on_wait=on_wait):
        pass
    assert len(told) == 2, told
    assert told[0].startswith(f"waiting for {tmp_path / '.lock'}, held by: ")
    assert f"FLOCK  ADVISORY  WRITE {os.getpid()} " in told[0]
    assert f"[pid {os.getpid()}: " in told[0] and "(gone)" not in told[0]
    assert told[1].startswith(f"got {tmp_path / '.lock'} after ")


def test_teardown_reports_each_step(tmp_path, monkeypatch):
    monkeypatch.setattr(lifecycle, "STATE_ROOT", tmp_path)
    monkeypatch.setattr(lifecycle, "BACKING_DIR", tmp_path)
    state_dir = tmp_path / "EMUTEST0000"
    (state_dir / "mnt").mkdir(parents=True)
    backing = tmp_path / "snia-pts-EMUTEST0000.img"
    backing.write_bytes(b"")
    steps = []
    lifecycle.teardown(state_dir, log=steps.append)    # nothing mounted, no loop device
    assert steps == [f"unmount {state_dir / 'mnt'}: done",
                     f"remove {backing} and {state_dir}"]
    assert not state_dir.exists() and not backing.exists()


def test_a_failed_serve_still_lets_the_watchdog_finish(tmp_path, monkeypatch):
    """The owner killed while the daemon starts: the watchdog removes the mount point and
    the mount fails; the daemon must not exit (killing the watchdog) before it is done."""
    (tmp_path / "state.json").write_text(json.dumps({"owner_pid": 12345, "serial": "EMUX"}))
    waited = []

    class Watchdog:
        def __init__(self, state_dir, state, mods) -> None:
            pass

        def run(self) -> None:
            pass

        def wait_if_busy(self) -> None:
            waited.append(True)

    def serve(state, mods):
        raise RuntimeError("bad mount point (made up by the test)")

    monkeypatch.setattr(daemon.os, "fork", lambda: 0)
    monkeypatch.setattr(daemon.os, "setsid", lambda: None)
    monkeypatch.setattr(daemon, "OwnerWatchdog", Watchdog)
    monkeypatch.setattr(daemon, "_serve", serve)
    with pytest.raises(RuntimeError, match="bad mount point"):
        daemon.main([str(tmp_path)])
    assert waited == [True]
