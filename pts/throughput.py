"""The PTS Throughput test (pts-digest §7.2): for each block size of the spec (PTS-E 1024 and
128 KiB, PTS-C 1024 KiB), a cycle of its own:

  1. purge;  2. write cache, WIPC: 2x ActiveRange of SEQ writes at THAT block size, at the
     test's TC/QD;  3. rounds of two SEQ points, 100/0 (read) then 0/100 (write), until the
     SEQ write MB/s is steady over 5 rounds, or max rounds.

Each block size is its own test in the ledger ("throughput-1024k"), so its steady state,
measurement window and report pages stand alone.
"""

from __future__ import annotations

from pts import dryrun, point_fields, preconditioning, rounds, steps
from pts.device import BlockDevice, active_range_bytes
from pts.fio import Job, sequential_job
from pts.progress import Progress
from pts.run import Run
from pts.settings import Settings
from pts.spec import format_size

TEST_PREFIX = "throughput"


def test_name(block_size: int) -> str:
    """Ledger test name of one block size: 1 MiB -> "throughput-1024k"."""
    return f"{TEST_PREFIX}-{format_size(block_size).removesuffix(' KiB')}k"


def plan_points(run: Run, block_size: int) -> list[rounds.Point]:
    return points_for(run.settings, block_size)


def points_for(settings: Settings, block_size: int) -> list[rounds.Point]:
    return [rounds.Point(i, mix, block_size, access="SEQ")
            for i, mix in enumerate(settings.spec.throughput.rw_mixes)]


def point_job(settings: Settings, point: rounds.Point, ar_bytes: int) -> Job:
    tp = settings.spec.throughput
    return sequential_job(f"p{point.index:02d}", point.rw_mix.read_pct, point.block_size,
                          tp.queue_depth, tp.thread_count, settings.point_seconds, ar_bytes)


def parameters(run: Run, block_size: int, ar_bytes: int) -> dict:
    spec, s, tp = run.spec, run.settings, run.spec.throughput
    tracked = rounds.Point(0, tp.tracking_rw_mix, block_size, access="SEQ")
    return {
        "thread_count": tp.thread_count, "queue_depth": tp.queue_depth,
        "active_range_pct": spec.common.active_range_pct, "active_range_bytes": ar_bytes,
        "write_cache": spec.common.write_cache, "data_pattern": spec.common.data_pattern,
        "access": "SEQ", "point_seconds": s.point_seconds, "max_rounds": s.max_rounds,
        "window_rounds": spec.steady_state.window_rounds,
        "max_data_excursion": spec.steady_state.max_data_excursion,
        "max_slope_excursion": spec.steady_state.max_slope_excursion,
        "rw_mixes": [str(m) for m in tp.rw_mixes], "block_sizes": [block_size],
        "tracking": [{"label": tracked.label, "rw_mix": str(tp.tracking_rw_mix),
                      "block_size": block_size, "metric": "mbps"}],
        "wipc_block_size": block_size,
        "wipc_capacity_multiple": spec.wipc.capacity_multiple,
    }


def _measure(run: Run, test: str, ar_bytes: int):
    timeout = run.settings.point_seconds * 3 + 120

    def measure(point: rounds.Point, round_no: int) -> dict:
        job = point_job(run.settings, point, ar_bytes)
        out = run.raw_dir(test, f"round-{round_no:02d}")
        res = run.fio.run(run.device.path, [job], out, f"p{point.index:02d}", timeout=timeout)
        return point_fields.throughput(res.summary) | point_fields.timing(run, res)
    return measure


def run_block_size(run: Run, block_size: int) -> rounds.Outcome:
    """One block size's purge + WIPC + rounds, in its own test_start..test_end bracket."""
    spec, settings, tp = run.spec, run.settings, run.spec.throughput
    test = test_name(block_size)
    ar_bytes = steps.active_range_bytes(run)
    points = plan_points(run, block_size)

    def body() -> rounds.Outcome:
        history = steps.resumed_history(run, test)
        if history is None:
            steps.prepare(run, test, ar_bytes, block_size, (tp.thread_count, tp.queue_depth))
        tracked = next(p for p in points if p.rw_mix == tp.tracking_rw_mix)
        progress = Progress(run.write, test, len(points), settings.point_seconds,
                            spec.steady_state.window_rounds, settings.max_rounds)
        return rounds.run_rounds(
            test=test, points=points, measure=_measure(run, test, ar_bytes),
            tracking={tracked.label: tracked}, rule=spec.steady_state,
            max_rounds=settings.max_rounds, ledger=run.ledger, progress=progress,
            value_key="mbps",
            after_round=lambda r: steps.record_counters(run, test, f"after round {r}", r),
            history=history)

    return steps.bracket(run, test, f"Throughput {format_size(block_size)}", tp.clause,
                         parameters(run, block_size, ar_bytes), body)


def pts_plan(settings: Settings, device: BlockDevice,
             block_sizes: tuple[int, ...] | None = None) -> list[str]:
    """The Throughput test's plan for --dry-run (nothing is run): one purge + WIPC + rounds
    cycle per block size (`block_sizes`; default every one of the spec)."""
    lines: list[str] = []
    for bs in settings.spec.throughput.block_sizes if block_sizes is None else block_sizes:
        lines += _block_size_plan(settings, device, bs)
    return lines


def _block_size_plan(settings: Settings, device: BlockDevice, block_size: int) -> list[str]:
    spec, tp = settings.spec, settings.spec.throughput
    ar = active_range_bytes(device, spec.common.active_range_pct)
    points = points_for(settings, block_size)
    tracked = next(p for p in points if p.rw_mix == tp.tracking_rw_mix)
    wipc = preconditioning.plan_wipc(ar, block_size, spec.wipc.capacity_multiple,
                                     tp.thread_count, tp.queue_depth)
    lines = [f"Throughput {format_size(block_size)} test ({tp.clause}; ledger test "
             f"{test_name(block_size)})",
             *dryrun.setup_lines(settings, device, tp.thread_count, tp.queue_depth),
             f"WIPC: {wipc.bytes_expected:,} bytes of SEQ {format_size(block_size)} writes "
             f"(this test's block size); fio job file:",
             *dryrun.job_lines(device, list(wipc.jobs)),
             *dryrun.wipc_tail_lines(wipc, block_size),
             f"rounds: {len(points)} points per round x {settings.point_seconds} s, until "
             f"steady ({tracked.label} MB/s) or {settings.max_rounds} rounds; each point's "
             "fio job file is [global] above plus its section:"]
    for p in points:
        lines += dryrun.section_lines(device, point_job(settings, p, ar))
    return lines + dryrun.duration_lines(len(points), settings.point_seconds,
                                         spec.steady_state.window_rounds,
                                         settings.max_rounds, wipc.bytes_expected)
