"""`python -m pts capture` mounts tracefs itself when it is not mounted (issue 40 §4), as the
RWSW demo does, and says so on stdout with the command. Run for real in a private mount
namespace (unshare) whose tracefs is unmounted first: the machine's own mount is untouched.
The reads are begun once the capture traces, and SIGINT ends it: no timer."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys

import pytest

from pts.tools import commands
from pts.workload.capture import spool
from pts.workload.capture.events import Op, open_capture
from tests.support.apps import BOUND_S
from tests.support.helpers import REPO, loop_device

pytestmark = [pytest.mark.needs("root", "losetup", "unshare")]   # setpriv: util-linux too

SAID = ("python -m pts capture: tracefs was not mounted: mounted it at /sys/kernel/tracing "
        "(mount -t tracefs nodev /sys/kernel/tracing); left mounted")


def test_capture_mounts_tracefs_and_says_so(tmp_path):
    """In the namespace: tracefs unmounted, the capture started in the background (SIGTERM
    when the shell ends, setpriv --pdeathsig), its reads begun once it traces (its spool's
    descriptor exists: it writes it right after turning tracing on), then SIGINT ends it."""
    out = tmp_path / "cap.parquet"
    meta = spool.spool_of(out) / spool.META
    with loop_device(size=16 << 20) as dev:
        script = f"""
        for m in $(awk '$3 == "tracefs" {{print $2}}' /proc/mounts); do umount "$m"; done
        echo "tracefs mounts before: $(awk '$3 == "tracefs"' /proc/mounts | wc -l)"
        setpriv --pdeathsig TERM {shlex.quote(sys.executable)} -m pts capture {dev} \
            --seconds {BOUND_S} --step 1 -o {out} &
        cap=$!
        n=0
        until [ -f {meta} ] || [ $n -ge 600 ] || ! kill -0 $cap; do sleep 0.05; n=$((n+1)); done
        dd if={dev} of=/dev/null bs=4k count=64 iflag=direct status=none
        kill -INT $cap; wait $cap; echo "exit $?"
        echo "tracefs mounts after: $(awk '$3 == "tracefs" {{print $2}}' /proc/mounts)"
        """
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               script], cwd=REPO, capture_output=True, text=True, timeout=120,
                              preexec_fn=lambda: commands.set_parent_death_signal(
                                  signal.SIGTERM))
    text = done.stdout
    assert "tracefs mounts before: 0" in text, (text, done.stderr)
    assert SAID in text and "exit 0" in text, (text, done.stderr)
    assert "tracefs mounts after: /sys/kernel/tracing" in text
    cap = open_capture(out)
    reads = sum(int(((b["op"] == Op.READ) & (b["bytes"] > 0)).sum())
                for b in cap.batches(("op", "bytes")))
    assert reads >= 64 and cap.info.lost_events == 0
    assert cap.info.notes[0].startswith("stopped by SIGINT after"), cap.info.notes
