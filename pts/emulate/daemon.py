"""The emulator's server process: `python -m pts.emulate.daemon STATE_DIR`.

It reads STATE_DIR/state.json (written by lifecycle.start), forks, and the child serves
the FUSE filesystem until unmounted; the first process exits at once so that the server
is nobody's child and survives its starter. The child writes STATE_DIR/daemon.pid and
watches the owner process: when the owner is gone it tears the instance down itself.

Forking happens before numpy and mfusepy are imported: forking a process that already
runs library threads is unsafe.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

from pts.tools import atomic

WATCH_INTERVAL_S = 0.5


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
    watchdog = OwnerWatchdog(state_dir, state)
    if state.get("owner_pid"):
        threading.Thread(target=watchdog.run, daemon=True).start()
    _serve(state)
    # Unmounting ends _serve; if the watchdog did that, let it finish removing the files
    # (daemon threads die with the interpreter).
    watchdog.wait_if_busy()
    return 0


def _write_pid(state_dir: Path) -> None:
    atomic.write_text(state_dir / "daemon.pid", f"{os.getpid()}\n")


def _serve(state: dict) -> None:
    from pts.emulate.fusefs import EmulatedSSD, serve
    from pts.emulate.lifecycle import identity_of
    from pts.emulate.profiles import get_profile

    info = {"identity": identity_of(state["serial"]), "serial": state["serial"]}
    ops = EmulatedSSD.from_profile(state["size"], get_profile(state["profile"]),
                                   state["backing"], info)
    try:
        serve(ops, state["mount"])
    finally:
        ops.close()
        try:
            os.unlink(state["backing"])
        except FileNotFoundError:
            pass


class OwnerWatchdog:
    """Tears the instance down (loop, mount: serving then ends) once the owner is gone."""

    def __init__(self, state_dir: Path, state: dict) -> None:
        self.state_dir, self.state = state_dir, state
        self.busy = threading.Event()
        self.done = threading.Event()

    def run(self) -> None:
        from pts.emulate import lifecycle, system

        owner, owner_start = self.state["owner_pid"], self.state.get("owner_start")
        while system.process_alive(owner, owner_start):
            time.sleep(WATCH_INTERVAL_S)
        self.busy.set()
        print(f"owner process {owner} is gone: tearing down", file=sys.stderr, flush=True)
        try:
            with lifecycle.locked():
                lifecycle.teardown(self.state_dir, kill_daemon=False)
        finally:
            self.done.set()

    def wait_if_busy(self, timeout: float = 30.0) -> None:
        if self.busy.is_set():
            self.done.wait(timeout)


if __name__ == "__main__":
    sys.exit(main())
