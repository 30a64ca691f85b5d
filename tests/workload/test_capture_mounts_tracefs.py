"""`python -m pts capture` mounts tracefs itself when it is not mounted (issue 40 §4), as the
RWSW demo does, and says so on stdout with the command. Run for real in a private mount
namespace (unshare) whose tracefs is unmounted first: the machine's own mount is untouched."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from pts.workload.events import Op, open_capture
from tests.support.helpers import REPO, loop_device

pytestmark = [pytest.mark.needs("root", "losetup", "unshare")]

SAID = ("python -m pts capture: tracefs was not mounted: mounted it at /sys/kernel/tracing "
        "(mount -t tracefs nodev /sys/kernel/tracing); left mounted")


def test_capture_mounts_tracefs_and_says_so(tmp_path):
    out = tmp_path / "cap.parquet"
    with loop_device(size=16 << 20) as dev:
        script = f"""
        for m in $(awk '$3 == "tracefs" {{print $2}}' /proc/mounts); do umount "$m"; done
        echo "tracefs mounts before: $(awk '$3 == "tracefs"' /proc/mounts | wc -l)"
        (sleep 1.5; dd if={dev} of=/dev/null bs=4k count=64 iflag=direct status=none) &
        {shlex.quote(sys.executable)} -m pts capture {dev} --seconds 3 --step 1 -o {out}
        rc=$?; wait; echo "exit $rc"
        echo "tracefs mounts after: $(awk '$3 == "tracefs" {{print $2}}' /proc/mounts)"
        """
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               script], cwd=REPO, capture_output=True, text=True, timeout=120)
    text = done.stdout
    assert "tracefs mounts before: 0" in text, (text, done.stderr)
    assert SAID in text and "exit 0" in text, (text, done.stderr)
    assert "tracefs mounts after: /sys/kernel/tracing" in text
    cap = open_capture(out)
    reads = sum(int(((b["op"] == Op.READ) & (b["bytes"] > 0)).sum())
                for b in cap.batches(("op", "bytes")))
    assert reads >= 64 and cap.info.lost_events == 0
