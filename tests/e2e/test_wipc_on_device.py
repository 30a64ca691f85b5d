"""WIPC on a real loop device with PTS-C's 75 % ActiveRange: fio writes exactly the planned
2 x user capacity, each thread wrapping sequentially within its own slice."""

from __future__ import annotations

import pytest

from pts.conditioning.wipc import plan_wipc, run_wipc
from pts.device.identity import BlockDevice, Identity, active_range_bytes
from pts.tools.fio import Fio

MIB = 1 << 20


def device(capacity: int, sector: int = 512) -> BlockDevice:
    return BlockDevice("/dev/loop9", "/dev/loop9", "loop9", (7, 9), capacity, sector, sector,
                       "loop", False, Identity("m", "s", "f", "sysfs"))


@pytest.mark.needs("root", "fio", "losetup")
def test_fio_writes_the_planned_bytes_wrapping_in_each_slice(make_loop, tmp_path):
    cap = 64 * MIB
    dev = make_loop(cap)
    p = plan_wipc(active_range_bytes(device(cap), 75), 128 << 10, 2, 2, 16, cap)
    res = run_wipc(Fio(log_file=tmp_path / "commands.log"), dev, p, tmp_path)
    assert res.summary.write.io_bytes == p.bytes_expected == 2 * cap
    job = (tmp_path / "wipc.fio").read_text()
    assert job.count("io_size=67108864") == 2 and job.count("size=25165824") == 2
