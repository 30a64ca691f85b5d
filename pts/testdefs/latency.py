"""The PTS Latency test (pts-digest §7.3), at TOIO = 1 (TC 1 / QD 1):

  1. purge;  2. write cache, WIPC: 2x ActiveRange of SEQ 128 KiB writes, also at TC 1 /
     QD 1 (§4 item 4: TC and QD stay the same through WIPC and the test loop);
  3. rounds of R/W mix (outer: 100/0, 65/35, 0/100) x block size (inner: 8, 4, 0.5 KiB)
     RND points, until the average response time of RND 4 KiB 0/100 is steady over 5
     rounds, or max rounds. Lower is better for a latency, the steady-state maths is the
     same.

Per point: average (ART), maximum (MRT) and 99.999 % ("5 9s") response time, and IOPS; for
mixed points also reads and writes separately. Response time is fio's total latency
`lat` (slat + clat: issue to completion as the host sees it). The percentile is of total
latency too: fio's lat_percentiles=1 histogram (json+ "lat_ns" bins); for a mixed point the
read and write histograms are merged (pts.tools.histogram), since fio reports them apart.
"""

from __future__ import annotations

import dataclasses

from pts.config.settings import Settings
from pts.config.spec import Spec, format_size
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.rounds import TestPoint, matrix_points
from pts.procedure.runner import RoundTest, tracking_points
from pts.testdefs import fields
from pts.testdefs import parameters as run_parameters
from pts.tools.fio import Job, random_job

TEST = "latency"
VALUE_KEY = "lat_mean_us"


def tracking_label(spec: Spec) -> str:
    t = spec.latency.tracking
    return f"RND {format_size(t.block_size).replace(' ', '')} {t.rw_mix} ART"


def declare(settings: Settings, device: BlockDevice) -> RoundTest:
    spec, lat = settings.spec, settings.spec.latency
    ar = active_range_bytes(device, spec.common.active_range_pct)
    points = matrix_points(lat.rw_mixes, lat.block_sizes, device.logical_sector)
    return RoundTest(
        test=TEST, title="Latency", clause=lat.clause, parameters=parameters(settings, ar),
        points=tuple(points),
        tracking=tracking_points(TEST, points, {tracking_label(spec): (
            lat.tracking.rw_mix, lat.tracking.block_size)}),
        value_key=VALUE_KEY, job=lambda p: point_job(settings, p, ar),
        fields=lambda s: fields.latency(s, lat.percentile),
        thread_count=lat.thread_count, queue_depth=lat.queue_depth,
        wipc_block_size=spec.wipc.block_size, histograms=True, na_prefix="Latency ",
        wipc_note=f" at TC {lat.thread_count} / QD {lat.queue_depth}",
        measures=f"per point ART, MRT and {lat.percentile:g} % response time; ")


def point_job(settings: Settings, point: TestPoint, ar_bytes: int) -> Job:
    """RND at TC/QD 1, with fio's total-latency percentile (and json+ histogram bins)."""
    lat = settings.spec.latency
    return dataclasses.replace(
        random_job(f"p{point.index:02d}", point.rw_mix.read_pct, point.block_size,
                   lat.queue_depth, lat.thread_count, settings.point_seconds, ar_bytes),
        lat_percentiles=(lat.percentile,))


def parameters(settings: Settings, ar_bytes: int) -> dict:
    spec, s, lat = settings.spec, settings, settings.spec.latency
    return run_parameters.common(s, lat.thread_count, lat.queue_depth, ar_bytes) | {
        "rw_mixes": [str(m) for m in lat.rw_mixes], "block_sizes": list(lat.block_sizes),
        "tracking": [{"label": tracking_label(spec), "rw_mix": str(lat.tracking.rw_mix),
                      "block_size": lat.tracking.block_size, "metric": VALUE_KEY}],
        "percentile": lat.percentile,
        "latency": "total (fio lat = slat + clat); percentile from fio's total-latency "
                   "histogram (lat_percentiles=1, json+ bins), reads and writes merged",
        "wipc_block_size": spec.wipc.block_size,
        "wipc_capacity_multiple": spec.wipc.capacity_multiple,
    }
