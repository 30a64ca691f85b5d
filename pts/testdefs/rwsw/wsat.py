"""RWSW Multi-WSAT (`rwsw-wsat`, rwsw-digest §5): a WSAT whose access pattern is the whole
Applied Test Workload (--workload), all its streams at once.

  1. purge;  2. write cache; no preconditioning: the ATW starts at FOB, as PTS WSAT;
  3. rounds of ONE point: the ATW (one fio section per stream, pts.workload.applied) at its
     OIO for `round_seconds`, IOPS tracked, the 5-round steady-state check judged, recorded
     and shown every round;
  4. until the WSAT stop rule of the RWSW spec file ([rwsw_wsat] stop_drive_fills /
     stop_hours; --wsat-fills / --wsat-hours, declared): the bytes the rounds wrote reach
     `fills` x user capacity, or the rounds' time reaches `hours`, whichever first. The test
     then ends "complete", steady state reported, not required (stop_at_steady_state:
     whether steady state ends it too).

Why a RoundTest and not WSAT's one long fio run with per-interval logs: every round is a
point of the one runner (ledger point records, resume after the last round, pipelined /
stonewalled / per-point rounds, the per-stream results of fio's JSON that the share check
needs; fio's interval logs have no per-stream split of a flow-controlled mix). The stop
rule is a hook of the round loop (pts.procedure.rounds.run_rounds `stop`); the time limit is
also the round limit (ceil(hours / round)), lowered by --max-rounds only when that is below
the spec's (a declared deviation).

What every RWSW test shares (the ATW check, round length, fields, parameters) is
pts.testdefs.rwsw.common; rwsw-streams (streams.py) applies each stream alone.
"""

from __future__ import annotations

import math

from pts.config.settings import Settings
from pts.config.spec import RwMix
from pts.device.identity import BlockDevice
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest
from pts.results import records
from pts.results.resume import ROUND
from pts.testdefs.rwsw.common import (
    apply_job,
    measured,
    parameters,
    read_pct,
    round_seconds,
    workload,
)
from pts.testdefs.rwsw.sections import AtwSection, WsatSection
from pts.workload import applied

TEST = "rwsw-wsat"


def stop_rule(settings: Settings) -> tuple[float, float]:
    """(drive fills, hours) of the RWSW spec file, or --wsat-fills / --wsat-hours."""
    w = WsatSection.of(settings)
    return (w.stop_drive_fills if settings.wsat_fills is None else settings.wsat_fills,
            w.stop_hours if settings.wsat_hours is None else settings.wsat_hours)


def round_limit(settings: Settings, seconds: int, hours: float) -> int:
    """The time limit in rounds; --max-rounds below the spec's (declared) lowers it."""
    limit = max(1, math.ceil(hours * 3600 / seconds))
    if settings.max_rounds < settings.spec.steady_state.max_rounds:
        limit = min(limit, settings.max_rounds)
    return max(limit, settings.spec.steady_state.window_rounds)


class Stop:
    """The WSAT stop rule over rounds: `fills` x capacity written, or `hours` of rounds."""

    def __init__(self, capacity: int, fills: float, hours: float, seconds: int,
                 written: int = 0):
        self.capacity, self.fills, self.hours, self.seconds = capacity, fills, hours, seconds
        self.written = written            # bytes of the rounds already recorded (--resume)

    def __call__(self, round_no: int, found: dict[int, dict]) -> str | None:
        self.written += sum(f.get("write_bytes", 0) for f in found.values())
        done = self.written / self.capacity
        if done >= self.fills:
            return (f"stop rule: {done:.2f} drive fills written ({self.written:,} bytes, "
                    f"rule {self.fills:g}) at round {round_no}")
        if round_no * self.seconds >= self.hours * 3600:
            return (f"stop rule: time limit {self.hours:.3g} h reached at round {round_no} "
                    f"({done:.3f} drive fills written)")
        return None


def written_before(run, test: str) -> int:
    """Bytes written by the rounds a resumed run already recorded and goes on from: those
    since the test's last test_start, none when it starts again from purge."""
    if run.resume is None or run.resume.progress(test, ROUND).restart_reason is not None:
        return 0
    mine = [r for r in run.resume.records if r.test == test]
    starts = [k for k, r in enumerate(mine) if isinstance(r, records.TestStart)]
    return sum(r.get("write_bytes") or 0 for r in mine[starts[-1] if starts else 0:]
               if isinstance(r, records.Point))


def declare(settings: Settings, device: BlockDevice, written: int = 0) -> RoundTest:
    w = workload(settings, device)
    seconds = round_seconds(settings, WsatSection)
    fills, hours = stop_rule(settings)
    point = TestPoint(0, RwMix(read_pct(w.streams)), 0, access="ATW",
                      workload=f"{len(w.streams)} streams", thread_count=w.thread_count,
                      queue_depth=w.queue_depth)
    tracking = {"ATW IOPS": point}
    job = apply_job(settings, device, w, seconds)
    limit = round_limit(settings, seconds, hours)
    tolerance = AtwSection.of(settings).share_tolerance_pct
    ws = WsatSection.of(settings)
    return RoundTest(
        test=TEST, title="RWSW Multi-WSAT", clause="RWSW 1.0.7 Multi-WSAT (rwsw-digest §5)",
        parameters=parameters(settings, device, w, seconds, limit, tracking, job) | {
            "stop_drive_fills": fills, "stop_hours": hours,
            "stop_at_steady_state": ws.stop_at_steady_state},
        points=(point,), tracking=tracking, value_key="iops", job=job, fields=measured,
        thread_count=w.thread_count, queue_depth=w.queue_depth, wipc_block_size=None,
        point_fields=lambda p, r: applied.achieved(w.streams, r, tolerance, w.oio,
                                                   applied.nominal_oio(job(p))),
        stop=Stop(device.capacity_bytes, fills, hours, seconds, written),
        until_steady=ws.stop_at_steady_state, point_seconds=seconds, max_rounds=limit,
        measures="per round IOPS and each stream's achieved share of I/Os; ",
        wipc_note="")


