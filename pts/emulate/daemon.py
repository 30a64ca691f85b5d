"""The emulator's server process: `python -m pts.emulate.daemon STATE_DIR`.

It reads STATE_DIR/state.json (written by lifecycle.start), forks, and the child serves
the FUSE filesystem until unmounted; the first process exits at once so that the server
is nobody's child and survives its starter. The child writes STATE_DIR/daemon.pid and
watches the owner process: when the owner is gone it tears the instance down itself,
logging each step with a timestamp to STATE_DIR/daemon.log (its stderr).

Forking happens before numpy and mfusepy are imported: forking a process that already
runs library threads is unsafe. Every module either thread needs is imported after the
fork and before the watchdog thread starts (`_load`): two threads importing at once can
break an import. Measured (Python 3.11.7): the watchdog importing lifecycle while the main
thread imported fusefs died in 8 of 40 daemons with "partially initialized module 'typing'
has no attribute 'ClassVar'" (dataclasses reads sys.modules['typing'] while the other
thread still runs it), and the instance was then never cleaned up (the CI flake of
test_killed_owner_makes_the_daemon_clean_up_by_itself).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from types import SimpleNamespace

from pts.tools import atomic

WATCH_INTERVAL_S = 0.5
RETRY_S = 2.0                # between teardown attempts that failed (they are logged)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m pts.emulate.daemon STATE_DIR", file=sys.stderr)
        return 2
    state_dir = Path(argv[0])
    state = json.loads((state_dir / "state.json").read_text())
    if os.fork() > 0:
        return 0
    os.setsid()          # no controlling terminal: a Ctrl-C meant for the starter skips us
    _write_pid(state_dir)
    mods = _load()       # before the second thread exists: see the module's docstring
    watchdog = OwnerWatchdog(state_dir, state, mods)
    if state.get("owner_pid"):
        threading.Thread(target=watchdog.run, name="owner-watchdog", daemon=True).start()
    try:
        _serve(state, mods)
    finally:
        # Unmounting ends _serve, and a teardown before the mount makes it fail (the owner
        # killed while starting us); either way let the watchdog finish removing the files:
        # daemon threads die with the interpreter (seen: a state dir left half removed).
        watchdog.wait_if_busy()
    return 0


def _load() -> SimpleNamespace:
    """Import everything the server and the watchdog use, in the main thread."""
    from pts.emulate import fusefs, lifecycle, profiles, system
    return SimpleNamespace(fusefs=fusefs, lifecycle=lifecycle, profiles=profiles,
                           system=system)


def _write_pid(state_dir: Path) -> None:
    atomic.write_text(state_dir / "daemon.pid", f"{os.getpid()}\n")


def log(message: str) -> None:
    """One timestamped line to stderr (STATE_DIR/daemon.log)."""
    now = time.time()
    stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
    print(f"{stamp} daemon {os.getpid()}: {message}", file=sys.stderr, flush=True)


def _serve(state: dict, mods: SimpleNamespace) -> None:
    info = {"identity": mods.lifecycle.identity_of(state["serial"]), "serial": state["serial"]}
    ops = mods.fusefs.EmulatedSSD.from_profile(
        state["size"], mods.profiles.get_profile(state["profile"]), state["backing"], info)
    try:
        mods.fusefs.serve(ops, state["mount"])
    finally:
        ops.close()
        try:
            os.unlink(state["backing"])
        except FileNotFoundError:
            pass


class OwnerWatchdog:
    """Tears the instance down (loop, mount: serving then ends) once the owner is gone.

    It never dies silently: an error while watching or tearing down is logged with its
    traceback and the step is tried again until the state directory is gone.
    """

    def __init__(self, state_dir: Path, state: dict, mods: SimpleNamespace) -> None:
        self.state_dir, self.state, self.mods = state_dir, state, mods
        self.busy = threading.Event()
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self._wait_for_owner_gone()
            self.busy.set()
            self._tear_down()
        finally:
            self.done.set()

    def _wait_for_owner_gone(self) -> None:
        owner, owner_start = self.state["owner_pid"], self.state.get("owner_start")
        while True:
            try:
                if not self.mods.system.process_alive(owner, owner_start):
                    log(f"owner process {owner} is gone: tearing down")
                    return
            except Exception:                              # noqa: BLE001 - logged, retried
                log(f"watching owner {owner} failed:\n{traceback.format_exc()}")
            time.sleep(WATCH_INTERVAL_S)

    def _tear_down(self) -> None:
        lifecycle = self.mods.lifecycle
        attempt = 1
        while True:
            try:
                with lifecycle.locked(on_wait=log):
                    lifecycle.teardown(self.state_dir, kill_daemon=False, log=log)
                log("teardown done")
                return
            except Exception:                              # noqa: BLE001 - logged, retried
                log(f"teardown attempt {attempt} failed:\n{traceback.format_exc()}")
            if not self.state_dir.exists():
                return
            attempt += 1
            time.sleep(RETRY_S)

    def wait_if_busy(self, timeout: float = 30.0) -> None:
        if self.busy.is_set():
            self.done.wait(timeout)


if __name__ == "__main__":
    sys.exit(main())
