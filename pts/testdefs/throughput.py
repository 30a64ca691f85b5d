"""The PTS Throughput test (pts-digest §7.2): for each block size of the spec (PTS-E 1024 and
128 KiB, PTS-C 1024 KiB), a cycle of its own:

  1. purge;  2. write cache, WIPC: 2x ActiveRange of SEQ writes at THAT block size, at the
     test's TC/QD;  3. rounds of two SEQ points, 100/0 (read) then 0/100 (write), until the
     SEQ write MB/s is steady over 5 rounds, or max rounds.

Each block size is its own test in the ledger ("throughput-1024k"), so its steady state,
measurement window and report pages stand alone.
"""

from __future__ import annotations

from pts.config.settings import Settings
from pts.config.spec import format_size
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest, tracking_points
from pts.testdefs import fields
from pts.testdefs import parameters as run_parameters
from pts.tools.fio import sequential_job

TEST_PREFIX = "throughput"
VALUE_KEY = "mbps"


def test_name(block_size: int) -> str:
    """Ledger test name of one block size: 1 MiB -> "throughput-1024k"."""
    return f"{TEST_PREFIX}-{format_size(block_size).removesuffix(' KiB')}k"


def declare(settings: Settings, device: BlockDevice, block_size: int) -> RoundTest:
    spec, tp = settings.spec, settings.spec.throughput
    ar = active_range_bytes(device, spec.common.active_range_pct)
    points = [TestPoint(i, mix, block_size, access="SEQ") for i, mix in enumerate(tp.rw_mixes)]
    label = TestPoint(0, tp.tracking_rw_mix, block_size, access="SEQ").label
    test = test_name(block_size)
    return RoundTest(
        test=test, title=f"Throughput {format_size(block_size)}", clause=tp.clause,
        parameters=parameters(settings, block_size, ar, label), points=tuple(points),
        tracking=tracking_points(test, points, {label: (tp.tracking_rw_mix, block_size)}),
        value_key=VALUE_KEY,
        job=lambda p: sequential_job(f"p{p.index:02d}", p.rw_mix.read_pct, p.block_size,
                                     tp.queue_depth, tp.thread_count, settings.point_seconds,
                                     ar),
        fields=fields.throughput, thread_count=tp.thread_count, queue_depth=tp.queue_depth,
        wipc_block_size=block_size, wipc_note=" (this test's block size)",
        tracking_unit=" MB/s")


def parameters(settings: Settings, block_size: int, ar_bytes: int, label: str) -> dict:
    spec, s, tp = settings.spec, settings, settings.spec.throughput
    return run_parameters.common(s, tp.thread_count, tp.queue_depth, ar_bytes) | {
        "access": "SEQ", "rw_mixes": [str(m) for m in tp.rw_mixes], "block_sizes": [block_size],
        "tracking": [{"label": label, "rw_mix": str(tp.tracking_rw_mix),
                      "block_size": block_size, "metric": VALUE_KEY}],
        "wipc_block_size": block_size,
        "wipc_capacity_multiple": spec.wipc.capacity_multiple,
    }
