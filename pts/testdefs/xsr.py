"""The PTS Cross Stimulus Recovery test (pts-digest §7.6):

  1. purge (no WIPC);  2. Access Group 1: SEQ 1024 KiB writes, 8 h;  3. Group 2: RND 8 KiB
  writes, 6 h;  4. Group 3: SEQ 1024 KiB writes, 8 h (durations x --time-scale, >= 1 s).

Each group is ONE fio run (time based) with per-interval logs (pts.tools.fio_logs, as the
WSAT): TP and ART (mean total latency) per interval from the IOPS and latency logs, MRT
(maximum completion latency, histogram resolution) from the clat histogram log. The interval
is --point-seconds: the spec's one-minute interval is the suite's 60 s point (the spec files'
point_seconds), and a shorter --point-seconds (a declared deviation) gives a short run
enough intervals to see a transition. Between groups the device is idle only for fio's
start-up (~0.5 s). Recovery time per transition: pts.testdefs.xsr_recovery (rule in the spec
file). --resume continues after the last completed group.

Each group must log the intervals it was planned to (its seconds // the interval): fewer
(a short log), a gap between two intervals, or a group with 0 MB/s in every interval make
the test an ERROR naming the group (`group_problems`), so the pytest item fails on its data.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

from pts.conditioning import prepare
from pts.config.settings import Settings
from pts.config.spec import format_size
from pts.config.spec_recovery import XsrGroup
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure import ceiling, plan, power_windows, resume
from pts.procedure.rounds import Outcome
from pts.procedure.runner import recorded_test
from pts.results import records
from pts.results.resume import ResumeState
from pts.run import Run
from pts.testdefs import fields
from pts.testdefs.xsr_recovery import recovery_time
from pts.tools import fio_logs, histogram
from pts.tools.fio import Job, Logs, random_job, sequential_job

TEST = "xsr"
TITLE = "Cross Stimulus Recovery"


@dataclass(frozen=True)
class GroupPlan:
    number: int
    group: XsrGroup
    seconds: int

    @property
    def label(self) -> str:
        return f"Group {self.number}: {self.group.pattern.upper()} " \
               f"{format_size(self.group.block_size).replace(' ', '')} W"


def groups(settings: Settings) -> list[GroupPlan]:
    return [GroupPlan(k, g, settings.scaled(g.hours * 3600))
            for k, g in enumerate(settings.spec.xsr.groups, 1)]


def job(settings: Settings, gp: GroupPlan, prefix: str, ar: int) -> Job:
    x, ms = settings.spec.xsr, settings.point_seconds * 1000
    make = sequential_job if gp.group.pattern == "seq" else random_job
    base = make(f"xsr-g{gp.number}", 0, gp.group.block_size, x.queue_depth, x.thread_count,
                gp.seconds, ar)
    return Job(**{**base.__dict__, "logs": Logs(prefix, ms, ms)})


def ceiling_shapes(settings: Settings, ar: int) -> list[ceiling.Shape]:
    """The host ceiling's jobs (issue 33 §1): one per access pattern of the groups (SEQ
    1024 KiB, RND 8 KiB), each the group's own job at the test's TC x QD."""
    x, seen = settings.spec.xsr, {}
    for gp in groups(settings):
        seen.setdefault((gp.group.pattern, gp.group.block_size), gp)
    return [ceiling.Shape(gp.label.split(": ", 1)[1], gp.group.block_size,
                          x.thread_count * x.queue_depth, job(settings, gp, "", ar))
            for gp in seen.values()]


def parameters(settings: Settings, ar: int) -> dict:
    x = settings.spec.xsr
    return {
        "thread_count": x.thread_count, "queue_depth": x.queue_depth,
        "active_range_pct": settings.spec.common.active_range_pct, "active_range_bytes": ar,
        "write_cache": settings.spec.common.write_cache,
        # fio's refill_buffers (pts.tools.fio.GLOBAL_OPTIONS): random data, every job
        "data_pattern": settings.spec.common.data_pattern,
        "point_seconds": settings.point_seconds,
        "groups": [{"group": g.number, "pattern": g.group.pattern,
                    "block_size": g.group.block_size, "seconds": g.seconds}
                   for g in groups(settings)],
        "recovery_band_pct": x.recovery_band_pct,
        "recovery_sustain_intervals": x.recovery_sustain,
        "final_level_fraction": x.final_level_fraction,
        "recovery_rule": recovery_rule(settings),
    }


def recovery_rule(settings: Settings) -> str:
    x = settings.spec.xsr
    return (f"recovery time = time from the switch to the first of {x.recovery_sustain} "
            f"consecutive intervals whose TP all lie within {x.recovery_band_pct:g} % of the "
            f"group's final level (mean TP of its last {x.final_level_fraction:.0%}); "
            "'never' if that does not happen within the group")


def run_xsr(run: Run) -> Outcome:
    ar = active_range_bytes(run.device, run.spec.common.active_range_pct)
    return recorded_test(run, TEST, TITLE, run.spec.xsr.clause, parameters(run.settings, ar),
                         lambda: _body(run, ar))


def _resume_point(run: Run) -> int:
    """Completed groups to go on after (the one resume path, pts.procedure.resume; 0: from
    purge)."""
    found = resume.go_on(run, TEST, _where)
    return found.after if found else 0


def _where(state: ResumeState) -> resume.GoOn | resume.Restart | None:
    """After the last completed access group, if nothing purged the drive since."""
    mine = [(n, r) for n, r in enumerate(state.records) if r.test == TEST]
    if not mine:
        return None
    done = [r.group for _, r in mine if isinstance(r, records.XsrGroup)]
    purged = sorted({r.test for r in state.records[mine[-1][0] + 1:]
                     if isinstance(r, records.Purge) and r.test != TEST})
    if purged:
        return resume.Restart(f"the drive was purged and rewritten since by "
                              f"{', '.join(purged)}")
    if not done:
        return resume.Restart("no access group completed before the stop")
    return resume.GoOn(max(done), mine[-1][1].time, f"after access group {max(done)}",
                       "the group in flight was redone")


# Two intervals whose ends lie more than 1.5 intervals apart have a gap between them.
GAP_FACTOR = 1.5


def planned_intervals(gp: GroupPlan, seconds: int) -> tuple[int, int]:
    """(planned, required): the group's whole intervals, and those fio always logs — its
    IOPS log leaves out a last window that ends with the run (seen: a 32 s group of 2 s
    intervals logged 15 windows), so when the group is a whole number of intervals the
    last one may be missing."""
    planned = gp.seconds // seconds
    return planned, planned - (1 if gp.seconds % seconds == 0 else 0)


def group_problems(gp: GroupPlan, found: list[fio_logs.Interval], seconds: int) -> list[str]:
    """What is wrong with the intervals group `gp` logged (interval `seconds`), worded for
    the test's ERROR; [] when it logged every planned interval, back to back, with data."""
    planned, required = planned_intervals(gp, seconds)
    out = []
    if len(found) < required:
        out.append(f"{len(found)} intervals logged of the {planned} planned (a short fio log)")
    for a, b in itertools.pairwise(found):
        if b.end_s - a.end_s > GAP_FACTOR * seconds:
            out.append(f"a gap of {b.end_s - a.end_s - seconds:.1f} s after interval "
                       f"{a.index + 1} (logged at {a.end_s:.1f} s, the next at {b.end_s:.1f} s)")
            break
    if found and not any(iv.iops > 0 for iv in found):
        out.append("0 MB/s in every interval: no write completed")
    return [f"access group {gp.number} ({gp.label.split(': ', 1)[1]}): {p}" for p in out]


def _body(run: Run, ar: int) -> Outcome:
    done = _resume_point(run)
    ceiling.measure(run, TEST, ceiling_shapes(run.settings, ar), going_on=bool(done))
    if not done:
        prepare.prepare(run, TEST, ar, None)
    plans = groups(run.settings)
    start, left = time.monotonic(), sum(g.seconds for g in plans[done:])
    offset = sum(g.seconds for g in plans[:done])
    problems = _earlier_problems(run, plans[:done])
    for gp in plans[done:]:
        run.write(f"[pts {TEST}] {gp.label} for {plan.hms(gp.seconds)}; elapsed "
                  f"{plan.hms(time.monotonic() - start)}, ETA {plan.hms(left)}")
        problems += _group(run, gp, ar, offset)
        offset += gp.seconds
        left -= gp.seconds
    message = f"{len(plans)} access groups done ({plan.hms(offset)})"
    if problems:
        message = "the logged intervals do not hold the groups' data: " + "; ".join(
            problems) + f" ({message})"
    run.write(f"[pts {TEST}] {'ERROR: ' if problems else ''}{message}")
    return Outcome(records.ERROR if problems else records.COMPLETE, len(plans), None,
                   (1, len(plans)), {}, message)


def logged_intervals(prefix: str | Path, gp: GroupPlan, seconds: int) -> list[fio_logs.Interval]:
    """The group's intervals from fio's logs. Windows that end after the group's runtime
    hold fio's drain (the queued I/Os finishing after it stopped issuing): not a
    measurement interval of the group."""
    return [iv for iv in fio_logs.intervals(prefix, seconds * 1000)
            if (iv.index + 1) * seconds <= gp.seconds]


def _earlier_problems(run: Run, plans: list[GroupPlan]) -> list[str]:
    """On --resume, the problems of the groups completed before the stop, from their
    xsr_interval records (count and TP; their times follow the interval numbers)."""
    if not plans or run.resume is None:
        return []
    ivs = [r for r in run.resume.records if isinstance(r, records.XsrInterval) and r.test == TEST]
    out = []
    for gp in plans:
        got = {r.interval: r for r in ivs if r.group == gp.number}   # a redone group's win
        found = [fio_logs.Interval(k - 1, r.end_s, 0.0, r.iops, None)
                 for k, r in sorted(got.items())]
        out += group_problems(gp, found, run.settings.point_seconds)
    return out


def _group(run: Run, gp: GroupPlan, ar: int, offset: float) -> list[str]:
    """Run and record one access group; its problems (group_problems)."""
    x, secs = run.spec.xsr, run.settings.point_seconds
    out = run.raw_dir(TEST, f"group-{gp.number}")
    for old in list(out.glob("*.log")) if out.exists() else []:
        old.unlink()
    prefix = str(out / f"g{gp.number}")
    with power_windows.phase(run, TEST, "group", gp.number):        # --power (issue 51)
        res = run.fio.run(run.device.path, [job(run.settings, gp, prefix, ar)], out,
                          f"group-{gp.number}", timeout=gp.seconds * 1.1 + 300)
    found = logged_intervals(prefix, gp, secs)
    tps = []
    peak_art = peak_mrt = None
    for iv in found:
        tp = iv.iops * gp.group.block_size / 1e6
        art = fields.us(iv.lat_mean_ns)
        mrt = fields.us(histogram.maximum(iv.clat_histogram)) if iv.clat_histogram else None
        tps.append(tp)
        peak_art = art if peak_art is None or (art or 0) > peak_art else peak_art
        peak_mrt = mrt if peak_mrt is None or (mrt or 0) > peak_mrt else peak_mrt
        run.ledger.append(records.XsrInterval(
            test=TEST, group=gp.number, interval=iv.index + 1,
            start_s=offset + iv.index * secs, end_s=offset + (iv.index + 1) * secs,
            tp_mbps=tp, iops=iv.iops, lat_mean_us=art, clat_max_us=mrt))
    rec = recovery_time(tps, secs, x.recovery_band_pct, x.recovery_sustain,
                        x.final_level_fraction)
    first = gp.number == 1
    run.ledger.append(records.XsrGroup(
        test=TEST, group=gp.number, pattern=gp.group.pattern, block_size=gp.group.block_size,
        seconds=gp.seconds, intervals=len(found), end_tp_mbps=tps[-1] if tps else 0.0,
        final_level_mbps=rec.final_level, peak_lat_mean_us=peak_art,
        peak_clat_max_us=peak_mrt, recovery_s=None if first else rec.seconds,
        recovered=None if first else rec.recovered, raw=run.relative(res.json_path),
        host_bound=ceiling.mark(run, TEST, fields.basic(res.summary) | {
            "block_size": gp.group.block_size})))
    after = "" if first else f"; recovery {rec.text()}"
    run.write(f"[pts {TEST}] {gp.label}: {len(found)} intervals, end TP "
              f"{tps[-1] if tps else 0:,.1f} MB/s, final level {rec.final_level:,.1f} MB/s"
              f"{after}")
    problems = group_problems(gp, found, secs)
    for p in problems:
        run.write(f"[pts {TEST}] ERROR: {p}")
    return problems


def plan_lines(settings: Settings, device: BlockDevice) -> list[str]:
    x = settings.spec.xsr
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    plans = groups(settings)
    total = sum(g.seconds for g in plans)
    spec_total = sum(g.hours for g in x.groups) * 3600
    lines = [f"{TITLE} test ({x.clause})",
             *plan.setup_lines(settings, device, x.thread_count, x.queue_depth),
             "WIPC: none: the test starts from the purged drive",
             *ceiling.shapes_plan_lines(settings, ceiling_shapes(settings, ar))]
    for gp in plans:
        j = job(settings, gp, str(Path("RUN_DIR", "raw", TEST, f"group-{gp.number}",
                                       f"g{gp.number}")), ar)
        lines += [f"{gp.label} for {plan.hms(gp.seconds)} (spec {gp.group.hours:g} h); "
                  "fio job:", *plan.job_lines(device, [j], settings)]
    lines += [f"intervals: {settings.point_seconds} s (--point-seconds; spec: 1 min): TP, ART, "
              "MRT per interval",
              recovery_rule(settings),
              plan.Estimate(f"estimated duration: {plan.hms(total)} (spec: "
                            f"{plan.hms(spec_total)})", total, total)]
    return lines
