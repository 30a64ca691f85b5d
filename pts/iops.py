"""The PTS IOPS test (PTS 2.0.2 IOPS pseudo-code p.26; PTS-E 1.1 p.30):

  1. purge;  2. set write cache, WIPC (2x ActiveRange of SEQ 128 KiB at the test TC/QD);
  3. rounds of R/W mix (outer) x block size (inner) RND points of `point_seconds` each,
     until every tracking variable is steady in the same 5-round window, or max rounds.
"""

from __future__ import annotations

from pts import dryrun, fob, preconditioning, rounds, steps
from pts.device import BlockDevice, active_range_bytes
from pts.fio import random_job
from pts.progress import Progress
from pts.run import Run
from pts.settings import Settings

TEST = "iops"


def plan_points(run: Run) -> list[rounds.Point]:
    return points_for(run.settings, run.device)


def points_for(settings: Settings, device: BlockDevice) -> list[rounds.Point]:
    return rounds.matrix_points(settings.rw_mixes, settings.block_sizes, device.logical_sector)


def parameters(run: Run, ar_bytes: int) -> dict:
    spec, s = run.spec, run.settings
    return {
        "thread_count": spec.common.thread_count, "queue_depth": spec.common.queue_depth,
        "active_range_pct": spec.common.active_range_pct, "active_range_bytes": ar_bytes,
        "write_cache": spec.common.write_cache, "data_pattern": spec.common.data_pattern,
        "point_seconds": s.point_seconds, "max_rounds": s.max_rounds,
        "window_rounds": spec.steady_state.window_rounds,
        "max_data_excursion": spec.steady_state.max_data_excursion,
        "max_slope_excursion": spec.steady_state.max_slope_excursion,
        "rw_mixes": [str(m) for m in s.rw_mixes], "block_sizes": list(s.block_sizes),
        "tracking": [{"label": t.label, "rw_mix": str(t.rw_mix), "block_size": t.block_size}
                     for t in spec.iops.tracking],
        "wipc_block_size": spec.wipc.block_size,
        "wipc_capacity_multiple": spec.wipc.capacity_multiple,
    }


def point_job(settings: Settings, point: rounds.Point, ar_bytes: int):
    common = settings.spec.common
    return random_job(f"p{point.index:02d}", point.rw_mix.read_pct, point.block_size,
                      common.queue_depth, common.thread_count, settings.point_seconds, ar_bytes)


def _measure(run: Run, ar_bytes: int):
    timeout = run.settings.point_seconds * 3 + 120

    def measure(point: rounds.Point, round_no: int) -> dict:
        job = point_job(run.settings, point, ar_bytes)
        out = run.raw_dir(TEST, f"round-{round_no:02d}")
        res = run.fio.run(run.device.path, [job], out, f"p{point.index:02d}", timeout=timeout)
        s = res.summary
        return {"iops": s.iops, "read_iops": s.read.iops, "write_iops": s.write.iops,
                "mbps": s.mbps,
                "lat_mean_us": None if s.lat_mean_ns is None else s.lat_mean_ns / 1e3,
                "lat_max_us": None if s.lat_max_ns is None else s.lat_max_ns / 1e3,
                "start": res.start, "end": res.end, "raw": run.relative(res.json_path)}
    return measure


def run_iops(run: Run) -> rounds.Outcome:
    spec, settings = run.spec, run.settings
    ar_bytes = steps.active_range_bytes(run)
    points = plan_points(run)

    def body() -> rounds.Outcome:
        history = steps.resumed_history(run, TEST)
        if history is None:
            steps.declare_na(run, TEST, "", points)
            steps.prepare(run, TEST, ar_bytes, spec.wipc.block_size, before_wipc=(
                (lambda: fob.sweep(run, TEST, points, _measure(run, ar_bytes)))
                if settings.fob_sweep else None))
        by_cell = {(p.rw_mix, p.block_size): p for p in points}
        tracking = {t.label: by_cell[(t.rw_mix, t.block_size)] for t in spec.iops.tracking}
        progress = Progress(run.write, TEST, len(points), settings.point_seconds,
                            spec.steady_state.window_rounds, settings.max_rounds)
        return rounds.run_rounds(
            test=TEST, points=points, measure=_measure(run, ar_bytes), tracking=tracking,
            rule=spec.steady_state, max_rounds=settings.max_rounds, ledger=run.ledger,
            progress=progress,
            after_round=lambda r: steps.record_counters(run, TEST, f"after round {r}", r),
            history=history)

    return steps.bracket(run, TEST, "IOPS", spec.iops.clause, parameters(run, ar_bytes), body)


def pts_plan(settings: Settings, device: BlockDevice) -> list[str]:
    """The IOPS test's plan for --dry-run (nothing is run)."""
    spec, common = settings.spec, settings.spec.common
    ar = active_range_bytes(device, common.active_range_pct)
    points = points_for(settings, device)
    wipc = preconditioning.plan_wipc(ar, spec.wipc.block_size, spec.wipc.capacity_multiple,
                                     common.thread_count, common.queue_depth)
    return dryrun.rounds_plan(f"IOPS test ({spec.iops.clause})", settings, device,
                              common.thread_count, common.queue_depth, wipc, points,
                              ", ".join(t.label for t in spec.iops.tracking),
                              lambda p: point_job(settings, p, ar))
