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

The common parts of both RWSW tests (round length, fields, parameters, the ATW check) are
here; rwsw_streams applies each stream alone.
"""

from __future__ import annotations

import math

from pts.config.settings import Settings
from pts.config.spec import RwMix
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.plan import round_test_plan
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest, TestDefinitionError
from pts.results import records
from pts.results.resume import ROUND
from pts.testdefs import fields
from pts.testdefs import parameters as run_parameters
from pts.tools.fio import Summary
from pts.workload import applied
from pts.workload.atw import Workload

TEST = "rwsw-wsat"
NO_WORKLOAD = "the RWSW tests apply an Applied Test Workload: give one with --workload FILE"


def workload(settings: Settings, device: BlockDevice | None = None) -> Workload:
    """The ATW of --workload; with `device`, checked to be one this device can apply:
    O_DIRECT I/O is whole logical sectors, so a captured 4.5 KiB read (RocksDB's) cannot
    run on a 4 KiB-sector drive. Refused before anything is written, naming the fix."""
    if settings.workload is None:
        raise TestDefinitionError(NO_WORKLOAD)
    w = settings.workload
    sector = device.logical_sector if device is not None else 1
    odd = [s.key for s in w.streams if s.key.size % sector]
    if odd:
        listed = ", ".join(f"{k.label} ({k.size} bytes)" for k in odd)
        raise TestDefinitionError(
            f"ATW {w.name}: {listed} not a whole number of this device's logical sectors "
            f"({sector} bytes): the device cannot do such I/O. Nothing was written. Use a "
            f"device formatted with smaller sectors, or edit the workload file: round these "
            f"sizes up to a multiple of {sector} bytes, or drop those streams and normalise "
            "the shares again (docs/workload.md)")
    return w


def section(settings: Settings, name: str) -> dict:
    return settings.spec.rwsw[name]


def round_seconds(settings: Settings, name: str) -> int:
    """The spec file's round length, unless --point-seconds set another (a deviation)."""
    if settings.point_seconds != settings.spec.common.point_seconds:
        return settings.point_seconds
    return section(settings, name)["round_seconds"]


def stop_rule(settings: Settings) -> tuple[float, float]:
    """(drive fills, hours) of the RWSW spec file, or --wsat-fills / --wsat-hours."""
    w = section(settings, "rwsw_wsat")
    return (w["stop_drive_fills"] if settings.wsat_fills is None else settings.wsat_fills,
            w["stop_hours"] if settings.wsat_hours is None else settings.wsat_hours)


def read_pct(streams) -> int:
    return round(sum(s.share_pct for s in streams if s.key.direction == "R"))


def measured(s: Summary) -> dict:
    """The IOPS fields plus the bytes each direction moved (the stop rule's drive fills)."""
    return fields.basic(s) | {"read_bytes": s.read.io_bytes, "write_bytes": s.write.io_bytes,
                              "ios": s.read.total_ios + s.write.total_ios}


def apply_job(settings: Settings, device: BlockDevice, w: Workload, seconds: int,
              streams=None):
    """point -> its job sections (pts.workload.applied), with the spec's [rwsw_fio]."""
    f = section(settings, "rwsw_fio")
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    return lambda p: applied.sections(
        w, f"p{p.index:02d}", flow_id=p.index + 1, runtime=seconds, ar_bytes=ar,
        split=f["oio_split"], flow_sleep_us=f["flow_sleep_us"],
        streams=None if streams is None else (streams[p.index],))


def parameters(settings: Settings, device: BlockDevice, w: Workload, seconds: int,
               max_rounds: int, tracking: dict[str, TestPoint], job) -> dict:
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    f = section(settings, "rwsw_fio")
    jobs = [s for p in tracking.values() for s in job(p).sections]
    return run_parameters.common(settings, w.thread_count, w.queue_depth, ar) | {
        "access": "ATW", "point_seconds": seconds, "max_rounds": max_rounds,
        "tracking": [{"label": label, "rw_mix": str(p.rw_mix), "block_size": p.block_size}
                     for label, p in tracking.items()],
        "atw": {"name": w.name, "sha256": w.sha256, "path": settings.workload_path,
                "thread_count": w.thread_count, "queue_depth": w.queue_depth, "oio": w.oio,
                "streams": [{"stream": s.key.label, "share_pct": s.share_pct}
                            for s in w.streams],
                "provenance": w.provenance},
        "sections": [{"section": j.name, "rw": j.rw, "block_size": j.block_size,
                      "numjobs": j.numjobs, "iodepth": j.iodepth, "flow": j.flow,
                      "offset": j.offset, "size": j.size} for j in jobs],
        "oio_split": f["oio_split"], "flow_sleep_us": f["flow_sleep_us"],
        "share_tolerance_pct": section(settings, "rwsw_atw")["share_tolerance_pct"],
        "capacity_bytes": device.capacity_bytes, "rwsw_spec": settings.spec.rwsw.title}


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
    seconds = round_seconds(settings, "rwsw_wsat")
    fills, hours = stop_rule(settings)
    point = TestPoint(0, RwMix(read_pct(w.streams)), 0, access="ATW",
                      workload=f"{len(w.streams)} streams", thread_count=w.thread_count,
                      queue_depth=w.queue_depth)
    tracking = {"ATW IOPS": point}
    job = apply_job(settings, device, w, seconds)
    limit = round_limit(settings, seconds, hours)
    tolerance = section(settings, "rwsw_atw")["share_tolerance_pct"]
    ws = section(settings, "rwsw_wsat")
    return RoundTest(
        test=TEST, title="RWSW Multi-WSAT", clause="RWSW 1.0.7 Multi-WSAT (rwsw-digest §5)",
        parameters=parameters(settings, device, w, seconds, limit, tracking, job) | {
            "stop_drive_fills": fills, "stop_hours": hours,
            "stop_at_steady_state": ws["stop_at_steady_state"]},
        points=(point,), tracking=tracking, value_key="iops", job=job, fields=measured,
        thread_count=w.thread_count, queue_depth=w.queue_depth, wipc_block_size=None,
        point_fields=lambda p, r: applied.achieved(w.streams, r, tolerance, w.oio,
                                                   applied.nominal_oio(job(p))),
        stop=Stop(device.capacity_bytes, fills, hours, seconds, written),
        until_steady=ws["stop_at_steady_state"], point_seconds=seconds, max_rounds=limit,
        measures="per round IOPS and each stream's achieved share of I/Os; ",
        wipc_note="")


def plan_lines(settings: Settings, device: BlockDevice, declare_test) -> list[str]:
    """--dry-run: the round test's plan (its generated fio sections), the ATW and, for
    rwsw-wsat, the stop rule; without --workload, why the test would be skipped."""
    if settings.workload is None:
        return [f"skipped: {NO_WORKLOAD}"]
    decl = declare_test(settings, device)
    w = settings.workload
    lines = round_test_plan(settings, device, decl)
    lines.insert(1, f"ATW {w.name!r} ({settings.workload_path}, sha256 {w.sha256[:12]}): "
                    f"OIO {w.oio} (TC {w.thread_count} x QD {w.queue_depth}); streams "
                    + ", ".join(f"{s.key.label} {s.share_pct:g} %" for s in w.streams))
    if decl.stop is not None:
        lines.insert(2, f"stop rule: {decl.stop.fills:g} drive fills "
                        f"({decl.stop.fills * device.capacity_bytes:,.0f} bytes) or "
                        f"{decl.stop.hours:g} h, whichever first")
    return lines
