"""tracefs for the capture tests: mounted at /sys/kernel/tracing when the machine has not
mounted it (a kernel pseudo-filesystem; mounting it changes no device). Left mounted: other
tools (and other tests running at the same time) may use it."""

from __future__ import annotations

from pathlib import Path

from pts.workload.capture import local


def ensure_tracefs() -> Path:
    return local.mounted_tracefs()
