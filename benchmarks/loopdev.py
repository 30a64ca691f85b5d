"""A loop device over a sparse file in /dev/shm for a benchmark, detached and removed at the
end (only while it is still bound to that file: the number may be someone else's by then)."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def loop_device(size: str) -> Iterator[str]:
    """`size` as truncate(1) reads it (256M, 1G); the device's path."""
    backing = Path(tempfile.mkstemp(dir="/dev/shm", prefix="pts-bench-")[1])
    try:
        subprocess.run(["truncate", "-s", size, str(backing)], check=True)
        dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                             check=True, capture_output=True, text=True).stdout.strip()
        try:
            yield dev
        finally:
            bound = Path("/sys/block") / Path(dev).name / "loop" / "backing_file"
            if bound.exists() and bound.read_text().strip() == str(backing):
                subprocess.run(["losetup", "-d", dev], check=False)
    finally:
        backing.unlink(missing_ok=True)
