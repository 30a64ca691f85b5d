"""tracefs for the capture tests: mounted at /sys/kernel/tracing when the machine has not
mounted it (a kernel pseudo-filesystem; mounting it changes no device). Left mounted: other
tools (and other tests running at the same time) may use it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pts.workload import tracefs

MOUNT_POINT = Path("/sys/kernel/tracing")


def ensure_tracefs() -> Path:
    try:
        return tracefs.find_tracefs()
    except tracefs.TracefsError:
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(MOUNT_POINT)], check=True,
                       capture_output=True)
        return tracefs.find_tracefs()
