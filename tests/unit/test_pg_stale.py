"""The PostgreSQL folders of killed test sessions (tests/support/postgres.py remove_stale):
removed by the next session, judged by the lock each session holds while its server lives,
so that a live session's folder is never taken, whatever pid namespace it runs in (issue 47
§1: a test session in a container shares /tmp with ours but not our pids)."""

from __future__ import annotations

import os
import subprocess
import time

from pts.tools import liveness
from tests.support import postgres

OLD = 2 * postgres.STALE_S


def folder(tmp, name: str, lock: str = "", age: float = 0.0):
    """A session folder; lock: "held" (by this process), "released" (its holder gone) or
    "" (none); its mtime `age` seconds ago."""
    d = tmp / f"{postgres.PREFIX}{name}"
    d.mkdir()
    if lock:
        fd = liveness.hold(d / postgres.LOCK)
        if lock == "released":
            os.close(fd)
        else:
            folder.held.append(fd)
    os.utime(d, (time.time() - age,) * 2)
    return d


folder.held = []


def test_only_dead_sessions_folders_are_removed(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    ns = liveness.namespace_mark()
    try:
        gone = [folder(tmp_path, f"{ns}-{os.getpid()}-a", "released", OLD),
                folder(tmp_path, f"1-{dead.pid}-b", "released", OLD),      # another ns, dead
                folder(tmp_path, f"{ns}-{dead.pid}-c", "", OLD)]           # killed before lock
        kept = [folder(tmp_path, f"1-{dead.pid}-d", "held", OLD),    # a container's, alive
                folder(tmp_path, f"{ns}-{dead.pid}-e", "held", OLD),   # its pid reused: alive
                folder(tmp_path, f"1-{dead.pid}-f", "", OLD),          # another ns: not judged
                folder(tmp_path, f"{ns}-{os.getpid()}-g", "", OLD),    # its pid runs
                folder(tmp_path, f"{ns}-{dead.pid}-h", "", 1),         # being made
                folder(tmp_path, f"{dead.pid}-i", "", OLD)]            # older version's name
        assert sorted(postgres.remove_stale(tmp_path)) == sorted(gone)
        assert not any(d.exists() for d in gone) and all(d.is_dir() for d in kept)
    finally:
        while folder.held:
            os.close(folder.held.pop())
