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
read and write histograms are merged (pts.histogram), since fio reports them apart.
"""

from __future__ import annotations

import dataclasses

from pts import dryrun, point_fields, preconditioning, rounds, steps
from pts.device import BlockDevice, active_range_bytes
from pts.fio import Job, random_job
from pts.progress import Progress
from pts.run import Run
from pts.settings import Settings
from pts.spec import Spec, format_size

TEST = "latency"
VALUE_KEY = "lat_mean_us"


def tracking_label(run: Run) -> str:
    return _tracking_label(run.spec)


def _tracking_label(spec: Spec) -> str:
    t = spec.latency.tracking
    return f"RND {format_size(t.block_size).replace(' ', '')} {t.rw_mix} ART"


def plan_points(run: Run) -> list[rounds.Point]:
    return points_for(run.settings, run.device)


def points_for(settings: Settings, device: BlockDevice) -> list[rounds.Point]:
    lat = settings.spec.latency
    return rounds.matrix_points(lat.rw_mixes, lat.block_sizes, device.logical_sector)


def point_job(settings: Settings, point: rounds.Point, ar_bytes: int) -> Job:
    """RND at TC/QD 1, with fio's total-latency percentile (and json+ histogram bins)."""
    lat = settings.spec.latency
    return dataclasses.replace(
        random_job(f"p{point.index:02d}", point.rw_mix.read_pct, point.block_size,
                   lat.queue_depth, lat.thread_count, settings.point_seconds, ar_bytes),
        lat_percentiles=(lat.percentile,))


def parameters(run: Run, ar_bytes: int) -> dict:
    spec, s, lat = run.spec, run.settings, run.spec.latency
    return {
        "thread_count": lat.thread_count, "queue_depth": lat.queue_depth,
        "active_range_pct": spec.common.active_range_pct, "active_range_bytes": ar_bytes,
        "write_cache": spec.common.write_cache, "data_pattern": spec.common.data_pattern,
        "point_seconds": s.point_seconds, "max_rounds": s.max_rounds,
        "window_rounds": spec.steady_state.window_rounds,
        "max_data_excursion": spec.steady_state.max_data_excursion,
        "max_slope_excursion": spec.steady_state.max_slope_excursion,
        "rw_mixes": [str(m) for m in lat.rw_mixes], "block_sizes": list(lat.block_sizes),
        "tracking": [{"label": tracking_label(run), "rw_mix": str(lat.tracking.rw_mix),
                      "block_size": lat.tracking.block_size, "metric": VALUE_KEY}],
        "percentile": lat.percentile,
        "latency": "total (fio lat = slat + clat); percentile from fio's total-latency "
                   "histogram (lat_percentiles=1, json+ bins), reads and writes merged",
        "wipc_block_size": spec.wipc.block_size,
        "wipc_capacity_multiple": spec.wipc.capacity_multiple,
    }


def _measure(run: Run, ar_bytes: int):
    lat = run.spec.latency
    timeout = run.settings.point_seconds * 3 + 120

    def measure(point: rounds.Point, round_no: int) -> dict:
        job = point_job(run.settings, point, ar_bytes)
        out = run.raw_dir(TEST, f"round-{round_no:02d}")
        res = run.fio.run(run.device.path, [job], out, f"p{point.index:02d}", timeout=timeout,
                          histograms=True)
        return point_fields.latency(res.summary, lat.percentile) | point_fields.timing(run, res)
    return measure


def run_latency(run: Run) -> rounds.Outcome:
    spec, settings, lat = run.spec, run.settings, run.spec.latency
    ar_bytes = steps.active_range_bytes(run)
    points = plan_points(run)

    def body() -> rounds.Outcome:
        history = steps.resumed_history(run, TEST)
        if history is None:
            steps.declare_na(run, TEST, "Latency ", points)
            steps.prepare(run, TEST, ar_bytes, spec.wipc.block_size,
                          (lat.thread_count, lat.queue_depth))
        tracked = next(p for p in points
                       if (p.rw_mix, p.block_size) == (lat.tracking.rw_mix,
                                                       lat.tracking.block_size))
        if tracked.na_reason:
            raise RuntimeError(f"the Latency tracking variable's cell cannot be measured: "
                               f"{tracked.na_reason}")
        progress = Progress(run.write, TEST, len(points), settings.point_seconds,
                            spec.steady_state.window_rounds, settings.max_rounds)
        return rounds.run_rounds(
            test=TEST, points=points, measure=_measure(run, ar_bytes),
            tracking={tracking_label(run): tracked}, rule=spec.steady_state,
            max_rounds=settings.max_rounds, ledger=run.ledger, progress=progress,
            value_key=VALUE_KEY,
            after_round=lambda r: steps.record_counters(run, TEST, f"after round {r}", r),
            history=history)

    return steps.bracket(run, TEST, "Latency", lat.clause, parameters(run, ar_bytes), body)


def pts_plan(settings: Settings, device: BlockDevice) -> list[str]:
    """The Latency test's plan for --dry-run (nothing is run)."""
    spec, lat = settings.spec, settings.spec.latency
    ar = active_range_bytes(device, spec.common.active_range_pct)
    points = points_for(settings, device)
    wipc = preconditioning.plan_wipc(ar, spec.wipc.block_size, spec.wipc.capacity_multiple,
                                     lat.thread_count, lat.queue_depth)
    return dryrun.rounds_plan(
        f"Latency test ({lat.clause})", settings, device, lat.thread_count, lat.queue_depth,
        wipc, points, _tracking_label(spec), lambda p: point_job(settings, p, ar),
        wipc_at=f" at TC {lat.thread_count} / QD {lat.queue_depth}",
        per_point=f"per point ART, MRT and {lat.percentile:g} % response time; ")
