"""The PTS IOPS test (PTS 2.0.2 IOPS pseudo-code p.26; PTS-E 1.1 p.30):

  1. purge;  2. set write cache, WIPC (2x ActiveRange of SEQ 128 KiB at the test TC/QD);
  3. rounds of R/W mix (outer) x block size (inner) RND points of `point_seconds` each,
     until every tracking variable is steady in the same 5-round window, or max rounds.
"""

from __future__ import annotations

from pts.config.settings import Settings
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.rounds import matrix_points
from pts.procedure.runner import RoundTest, tracking_points
from pts.testdefs import fields
from pts.testdefs import parameters as run_parameters
from pts.tools.fio import random_job

TEST = "iops"


def declare(settings: Settings, device: BlockDevice) -> RoundTest:
    spec, common = settings.spec, settings.spec.common
    ar = active_range_bytes(device, common.active_range_pct)
    points = matrix_points(settings.iops_rw_mixes, settings.iops_block_sizes,
                           device.logical_sector)
    return RoundTest(
        test=TEST, title="IOPS", clause=spec.iops.clause, parameters=parameters(settings, ar),
        points=tuple(points),
        tracking=tracking_points(TEST, points, {t.label: (t.rw_mix, t.block_size)
                                                for t in spec.iops.tracking}),
        value_key="iops",
        job=lambda p: random_job(f"p{p.index:02d}", p.rw_mix.read_pct, p.block_size,
                                 common.queue_depth, common.thread_count,
                                 settings.point_seconds, ar),
        fields=fields.basic, thread_count=common.thread_count,
        queue_depth=common.queue_depth, wipc_block_size=spec.wipc.block_size,
        fob_sweep=settings.fob_sweep, purge_probe=True)


def parameters(settings: Settings, ar_bytes: int) -> dict:
    spec, s = settings.spec, settings
    return run_parameters.common(settings, spec.common.thread_count, spec.common.queue_depth,
                                 ar_bytes) | {
        "rw_mixes": [str(m) for m in s.iops_rw_mixes], "block_sizes": list(s.iops_block_sizes),
        "tracking": [{"label": t.label, "rw_mix": str(t.rw_mix), "block_size": t.block_size}
                     for t in spec.iops.tracking],
        "wipc_block_size": spec.wipc.block_size,
        "wipc_capacity_multiple": spec.wipc.capacity_multiple,
    }
