"""This host's side of tracefs, never sent to a DUT host (pts/workload/capture/tracefs.py
travels alone and holds only what the remote agent needs): tracefs mounted where it is not,
and the dev_t the block tracepoints filter on."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pts.workload.capture.tracefs import TracefsError, find_tracefs

MOUNT_POINT = Path("/sys/kernel/tracing")


def kernel_dev_t(major: int, minor: int) -> int:
    """The dev_t the block tracepoints record and filter on: MAJOR << 20 | MINOR (the
    kernel's MKDEV, not userspace makedev(); digest §7: 7,1 is 7340033)."""
    return major << 20 | minor


def mounted_tracefs(mounts: Path | None = None) -> Path:
    """find_tracefs, mounting tracefs at MOUNT_POINT first when it is not mounted (a kernel
    pseudo-filesystem: mounting it changes no device; left mounted for other tools). For
    what makes its own set-up (the RWSW demo, `python -m pts capture`, which says so).
    TracefsError when the mount fails too."""
    try:
        return find_tracefs(mounts)
    except TracefsError:
        done = subprocess.run(["mount", "-t", "tracefs", "nodev", str(MOUNT_POINT)],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode == 0:
            return find_tracefs(mounts)
        raise TracefsError(f"tracefs is not mounted and mounting it at {MOUNT_POINT} failed: "
                           f"{done.stderr.strip()} (needs root and a kernel with tracing; "
                           f"by hand: mount -t tracefs nodev {MOUNT_POINT})") from None
