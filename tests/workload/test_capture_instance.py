"""The capture's tracefs instance (pts/workload/capture/tracefs.py) on its own, for real: a /dev/shm
loop device read (O_DIRECT) while the instance has its events enabled but has not been started,
then after start(). A new instance is made with tracing on: it must record nothing before
start(), and start()'s time (issue_ns 0) must precede every event it records (issue 47 §3:
the reads before start() were recorded, with negative issue times). About 0.2 s."""

from __future__ import annotations

import mmap
import os

import numpy as np
import pytest

from pts.workload.capture import local, ringbuf, tracefs
from pts.workload.capture.pairing import Pairing
from tests.support.helpers import loop_device
from tests.support.tracefs_mount import ensure_tracefs

pytestmark = [pytest.mark.needs("root", "losetup")]
BEFORE, AFTER = 64, 32          # 4 KiB reads before and after start()


def reads(dev: str, n: int) -> None:
    """n direct 4 KiB reads, one at a time (each one request, completed when it returns)."""
    buf = mmap.mmap(-1, 4096)                 # page-aligned, as O_DIRECT needs
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        for i in range(n):
            assert os.preadv(fd, [buf], i * 4096) == 4096
    finally:
        os.close(fd)
        buf.close()


def test_an_instance_records_nothing_before_start_and_no_event_precedes_its_time():
    ensure_tracefs()
    with loop_device(size=16 << 20) as dev:
        rdev = os.stat(dev).st_rdev
        # its name is a capture's (PREFIX + this pid): a later capture removes it if this
        # process is killed before it could
        with tracefs.Instance(tracefs.find_tracefs(),
                              local.kernel_dev_t(os.major(rdev), os.minor(rdev)), 64,
                              writeback=False) as inst:
            assert (inst.path / "tracing_on").read_text() == "0\n"
            reads(dev, BEFORE)               # its events enabled, not started
            start_ns = inst.start()
            reads(dev, AFTER)
            inst.stop()
            pages = inst.read_pages(1024)    # every CPU's pages, partly filled ones too
            formats = {k: v.decode() for k, v in inst.formats().items()}
        assert not inst.path.exists()
    layout = ringbuf.Layout.read(*(formats[n] for n in tracefs.REQUIRED_LAYOUTS))
    parts = [ringbuf.decode(p, layout) for p in pages if p]
    ev = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    early = ev["t"] < start_ns
    assert not early.any(), f"{early.sum()} events before start(), the first " \
        f"{(start_ns - ev['t'].min()) / 1e3:.0f} µs before"
    rows: list[dict] = []
    pairing = Pairing(start_ns, lambda comm: True, rows.append)
    pairing.feed(ev)
    pairing.finish()
    got = {k: np.concatenate([np.asarray(r[k]) for r in rows]) for k in rows[0]}
    # the reads after start() only, each whole: issued after issue_ns 0, completed after
    assert len(got["issue_ns"]) == AFTER and (got["bytes"] == 4096).all(), got["issue_ns"]
    assert (got["issue_ns"] >= 0).all() and (got["complete_ns"] >= got["issue_ns"]).all()
    assert pairing.counts.unmatched_completions == 0 and pairing.counts.incomplete == 0
