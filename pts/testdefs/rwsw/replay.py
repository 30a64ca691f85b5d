"""RWSW Replay-Native (`rwsw-replay`, rwsw-digest §5): the capture's steps replayed in order,
each at its own stream mix and outstanding I/Os, beside the capture's in-situ figures.

  1. "rwsw-replay-preconditioning": purge, no WIPC, then the cumulative ATW at its OIO, rounds
     of one point until its IOPS is steady ([rwsw_replay] precondition "atw-steady-state":
     the replay starts from steady state), pts.testdefs.rwsw.common;
  2. "rwsw-replay": ONE pass of the ATW's [[step]] tables in order, one point per step: the
     step's shares (its streams, in the ATW's order) at exactly the step's OIO: TC 1 x QD
     OIO spread over the streams by the "share" split (pts.workload.applied.share_depths:
     each stream one thread, the depths summing to the OIO; max(OIO, streams) when a step
     has more streams than outstanding I/Os), whatever [rwsw_fio] oio_split says:
     "every-stream" would run streams x OIO, and the digest's TC = min(OIO, 4),
     QD = ceil(OIO / TC) (§4) ran OIO 6 at 8. [rwsw_replay] hold "iolog" (default, digest
     §8): instead ONE job replaying a generated iolog of the step's shares at iodepth OIO
     (replay_log.py), which holds both, the shares counted from the log's completed
     prefix; each step's log made as fio reads it and streamed through a Unix socket
     (replay_feed.py: nothing on disk, so a native-length replay of a long capture
     keeps the hold); a remote device gets "oio" (declared). "oio": no fio
     flow, every stream's depth kept full, so the step's outstanding I/Os are held (flow
     makes each stream wait for its turn: a step asking 32 held 3-9, benchmarks/
     replay_oio.py) and the shares follow from the depths and the streams' latencies,
     checked and declared as every ATW point's; "shares": flow as rwsw-wsat. Closed loop
     ([rwsw_replay] loop), for the step's length x [rwsw_replay] time_scale x --time-scale,
     in whole seconds and at least min_step_seconds: a step that comes out shorter runs
     min_step_seconds (declared, naming the steps). No steady state: the test is
     "complete" when every step ran.

Steps differ in length, so the replay's round runs stonewalled whatever --round-mode says
(pipelined rounds give every point the same slot): each step starts when the one before
has ended, with fio's ~0.3 s between them. Every step's point records IOPS, MB/s, mean and
max response time, the OIO target (the step's), nominal (asked of fio) and achieved
(Little's law; benchmarks/replay_oio.py), each stream's target and achieved share,
and the capture's in-situ IOPS and mean response time beside them (the report's overlay).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pts.config.settings import Settings
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.plan import point_lines
from pts.procedure.rounds import Outcome
from pts.procedure.runner import (
    RoundMeasure,
    RoundTest,
    TestDefinitionError,
    run_phase,
)
from pts.results import records
from pts.run import Run
from pts.testdefs.rwsw import common
from pts.testdefs.rwsw import replay_feed as feeding
from pts.testdefs.rwsw import replay_log as iolog
from pts.testdefs.rwsw.sections import AtwSection, ReplaySection
from pts.tools import atomic
from pts.workload import applied
from pts.workload.atw import Step, Stream, Workload

TEST = "rwsw-replay"
PRE = common.precondition_test(TEST)
TITLE, CLAUSE = "RWSW Replay-Native", "RWSW 1.0.7 Replay-Native (rwsw-digest §5)"
SPLIT = "share"          # a step's OIO is held exactly (module docstring)


def section(settings: Settings) -> ReplaySection:
    return ReplaySection.of(settings)


def steps(settings: Settings) -> tuple[Step, ...]:
    """The ATW's capture steps; an ATW without any is refused, naming the fix."""
    w = common.workload(settings)
    if not w.steps:
        raise TestDefinitionError(
            f"{TEST}: the ATW {w.name!r} ({settings.workload_path}) has no [[step]] tables: "
            "Replay-Native replays the capture's steps. Write the ATW from its capture with "
            "`python -m pts workload CAPTURE -o FILE` (it writes the steps) or add [[step]] "
            "tables by hand (docs/workload.md). Nothing was written.")
    return w.steps


def time_scale(settings: Settings) -> float:
    """[rwsw_replay] time_scale x --time-scale."""
    return section(settings).time_scale * settings.time_scale


def step_seconds(settings: Settings, step: Step) -> int:
    """A step's replay length: native x time scale, whole seconds, at least the minimum."""
    return max(section(settings).min_step_seconds, round(step.seconds * time_scale(settings)))


def lengthened(settings: Settings) -> list[int]:
    """The steps (1-based) that run longer than their scaled length by more than the
    rounding to whole seconds: shorter than min_step_seconds once scaled."""
    least = section(settings).min_step_seconds
    return [k for k, st in enumerate(steps(settings), 1)
            if st.seconds * time_scale(settings) < least - 0.5]


def step_oio(step: Step) -> tuple[int, int]:
    """(TC, QD) of a step: TC 1 x QD OIO, spread over its streams by the "share" split."""
    return 1, step.oio


def step_streams(w: Workload, step: Step) -> tuple[Stream, ...]:
    """The step's streams with the step's shares, in the ATW's stream order."""
    return tuple(Stream(s.key, step.shares[s.key]) for s in w.streams if s.key in step.shares)


# hold "iolog": a step's log is never written whole (a native-length step of 5 min at
# [rwsw_replay] iolog_iops is 120 M lines, ~4.8 GB): replay_feed.Feed makes each step's
# log as fio reads it and streams it through a Unix socket (no disk; fio holds about a second
# of it, `read_iolog_chunked`), so a replay of any length keeps the hold.


def hold(settings: Settings, device: BlockDevice) -> str:
    """[rwsw_replay] hold; "iolog" on a remote device (fio --client) is "oio": the log's
    socket would have to be on the DUT host (declared, `deviations`)."""
    h = section(settings).hold
    if h == "iolog" and getattr(device, "remote", None):
        return "oio"
    return h


def iolog_path(settings: Settings, device: BlockDevice, k: int, mix, n: int) -> Path:
    """Step k's iolog socket (replay_feed.Feed): named by what its log holds (device,
    streams, I/Os, seed, ActiveRange) and the run's reports directory, in a folder of this
    user's under the temporary directory (a socket's path is at most 107 bytes; it takes no
    disk), there only while the replay runs."""
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    key = repr((device.path, device.logical_sector, [(s.key.label, s.share_pct) for s in mix],
                n, iolog_seed(settings, k), ar, str(Path(settings.reports_dir).resolve())))
    # absolute: fio runs in the round's raw folder; not recorded in the parameters (a
    # --resume's temporary directory may be another)
    return Path(tempfile.gettempdir()).resolve() / f"pts-iolog-{os.getuid()}" / (
        f"{TEST}-step{k + 1}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.sock")


def iolog_seed(settings: Settings, k: int) -> int:
    """Step k's generator seed: [rwsw_replay] iolog_seed + k (recorded per step)."""
    return section(settings).iolog_seed + k


@dataclass(frozen=True)
class LogPlan:
    """Hold "iolog": a step's log, as its test_start `steps` row records it."""
    ios: int                 # its I/Os: the step's seconds at [rwsw_replay] iolog_iops
    seed: int                # its generator's seed (iolog_seed)


def log_plans(settings: Settings, found: tuple[Step, ...]) -> list[LogPlan]:
    iops = section(settings).iolog_iops
    return [LogPlan(iolog.length(step_seconds(settings, st), iops), iolog_seed(settings, k))
            for k, st in enumerate(found)]


def precondition_seconds(settings: Settings) -> int:
    if settings.explicit("point_seconds"):
        return settings.point_seconds          # --point-seconds given (round_seconds)
    return section(settings).precondition_round_seconds


def declare_precondition(settings: Settings, device: BlockDevice) -> RoundTest:
    w = common.workload(settings, device)
    steps(settings)                          # refused before anything is purged
    return common.declare_precondition(
        settings, device, TEST, TITLE, CLAUSE, precondition_seconds(settings),
        w.thread_count, w.queue_depth, {"precondition": section(settings).precondition})


def declare(settings: Settings, device: BlockDevice) -> RoundTest:
    """The replay pass: one round, one point per capture step."""
    w = common.workload(settings, device)
    found = steps(settings)
    mixes = [step_streams(w, st) for st in found]
    toio = [step_oio(st) for st in found]
    lengths = [step_seconds(settings, st) for st in found]
    points = tuple(common.atw_point(k, m, tc, qd, f"step {k + 1}")
                   for k, (m, (tc, qd)) in enumerate(zip(mixes, toio, strict=True)))
    held = hold(settings, device)
    plans = log_plans(settings, found)
    logs = [plan.ios for plan in plans]
    paths = [iolog_path(settings, device, k, m, n)
             for k, (m, n) in enumerate(zip(mixes, logs, strict=True))]
    job = common.point_job(settings, device, w, lambda p: lengths[p.index],
                           lambda p: mixes[p.index], lambda p: toio[p.index],
                           split=SPLIT, flow=held == "shares")
    shares = common.share_fields(settings, lambda p: mixes[p.index],
                                 lambda p: found[p.index].oio, job)
    if held == "iolog":
        job = lambda p: applied.iolog_section(  # noqa: E731
            f"p{p.index:02d}", str(paths[p.index]), lengths[p.index], found[p.index].oio,
            mixes[p.index])
        shares = _iolog_shares(settings, found, mixes, logs, job)

    def fields(p, r) -> dict:
        st = found[p.index]
        return shares(p, r) | {
            "step": p.index + 1, "step_start_s": st.start_s, "step_seconds": st.seconds,
            "replay_seconds": lengths[p.index], "insitu_iops": st.iops,
            "insitu_rt_mean_ms": st.rt_mean_ms}
    tracking = {"step 1 IOPS": points[0]}
    r = section(settings)
    return RoundTest(
        test=TEST, title=TITLE, clause=CLAUSE,
        parameters=common.parameters(settings, device, w, max(lengths), 1, tracking,
                                     job) | {
            "time_scale": time_scale(settings), "loop": r.loop,
            "min_step_seconds": r.min_step_seconds, "round_mode": "stonewalled",
            "preconditioning_test": PRE, "oio_split": SPLIT, "hold": held,
            "sections": [_section_row(j) for p in points for j in job(p).sections],
            "steps": [{"step": k + 1, "start_s": st.start_s, "seconds": st.seconds,
                       "replay_seconds": lengths[k], "oio": st.oio,
                       "thread_count": toio[k][0], "queue_depth": toio[k][1],
                       "oio_nominal": applied.nominal_oio(job(points[k])),
                       "shares": {s.key.label: s.share_pct for s in mixes[k]},
                       "iolog": dataclasses.asdict(plans[k]) if held == "iolog" else None,
                       "insitu_iops": st.iops, "insitu_rt_mean_ms": st.rt_mean_ms}
                      for k, st in enumerate(found)]},
        points=points, tracking=tracking, value_key="iops", job=job,
        fields=common.measured, thread_count=w.thread_count, queue_depth=w.queue_depth,
        wipc_block_size=None, point_fields=fields, stop=lambda n, _: _done(found, lengths),
        until_steady=False, point_seconds=max(lengths), max_rounds=1,
        round_mode="stonewalled",
        measures="one replay pass, no steady state: per step IOPS, MB/s, mean and max "
                 "response time, OIO and shares achieved beside the capture's in-situ "
                 "figures; ")


def _iolog_shares(settings: Settings, found, mixes, logs, job):
    """point_fields of an iolog step: the shares of the log's prefix fio completed
    (replay_log: never looped; "shares_of": "replayed log"), that prefix's I/Os and
    bytes per direction beside fio's ("log_vs_fio": a mismatch fails the shares), and
    whether the log ran out before runtime."""
    tolerance = AtwSection.of(settings).share_tolerance_pct

    def fields(p, r) -> dict:
        k, s = p.index, r.summary
        done = s.read.total_ios + s.write.total_ios
        counts = iolog.prefix_counts([m.share_pct for m in mixes[k]], logs[k],
                                     iolog_seed(settings, k), done)
        rows = iolog.compared(mixes[k], counts, s, found[k].oio)
        wrong = [row for row in rows if not row.match]
        exhausted = iolog.exhausted(done, logs[k])
        failing = [
            "fio's I/Os and bytes per direction are not those of the replayed log's "
            "completed part (" + ", ".join(
                f"{row.direction}s {row.fio_ios:,} I/Os {row.fio_bytes:,} B, "
                f"log {row.log_ios:,} I/Os {row.log_bytes:,} B" for row in wrong)
            + "): the shares of the log are not what the drive was given"] if wrong else []
        notes = [f"the step's iolog ({logs[k]:,} I/Os) ran out before its runtime: raise "
                 "[rwsw_replay] iolog_iops"] if exhausted else []
        return applied.achieved_counts(
            mixes[k], counts, r, tolerance, found[k].oio, applied.nominal_oio(job(p)),
            failing=failing, notes=notes) | {
            "iolog_ios": logs[k], "iolog_completed": done, "iolog_exhausted": exhausted,
            "shares_of": "replayed log",
            "log_vs_fio": [dataclasses.asdict(row) for row in rows]}
    return fields


def step_logs(settings: Settings, device: BlockDevice,
              decl: RoundTest) -> list[tuple[Path, iolog.StepLog]]:
    """Every step's (socket, log) to feed (hold "iolog"; none otherwise): for each of the
    declaration's points (one per step) the log it records (`log_plans`: I/Os, seed), each
    checked against the device now (an ActiveRange or SEQ region smaller than a transfer
    size is refused before the replay starts)."""
    if hold(settings, device) != "iolog":
        return []
    w = common.workload(settings, device)
    found = steps(settings)
    plans = log_plans(settings, found)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    out = []
    for p in decl.points:
        k, mix = p.index, step_streams(w, found[p.index])
        out.append((iolog_path(settings, device, k, mix, plans[k].ios),
                    iolog.StepLog(device.path, mix, plans[k].ios, plans[k].seed, ar,
                                  device.logical_sector)))
    return out


def _section_row(j) -> dict:
    return {"section": j.name, "rw": j.rw, "block_size": j.block_size, "numjobs": j.numjobs,
            "iodepth": j.iodepth, "flow": j.flow, "offset": j.offset, "size": j.size,
            "runtime": j.runtime}


def _done(found, lengths) -> str:
    return (f"replay complete: all {len(found)} capture steps ran "
            f"({sum(st.seconds for st in found):g} s of capture in {sum(lengths)} s)")


def deviations(settings: Settings, device: BlockDevice | None = None) -> list[str]:
    out = []
    scale = time_scale(settings)
    if scale != 1:
        out.append(f"{TEST}: the capture's steps compressed by {scale:g} ([rwsw_replay] "
                   f"time_scale x --time-scale), not replayed for their native length.")
    if section(settings).hold == "iolog" and device is not None \
            and hold(settings, device) != "iolog":
        out.append(f"{TEST}: [rwsw_replay] hold \"iolog\" needs the iolog on the device's "
                   "host; the steps ran with hold \"oio\" (one section per stream, no flow: "
                   "the shares follow from the depths).")
    if lengthened(settings):
        out.append(f"{TEST}: steps {', '.join(map(str, lengthened(settings)))} are shorter "
                   f"than {section(settings).min_step_seconds} s once scaled and ran "
                   f"{section(settings).min_step_seconds} s.")
    return out


def run_replay(run: Run) -> Outcome:
    """Both ledger tests; the pytest item passes when the preconditioning was steady and
    every step ran."""
    return common.run_preconditioned(run, TITLE, "replay", declare_precondition,
                                          declare, _replay)


def _replay(run: Run, decl: RoundTest) -> Outcome:
    history = common.resumed_or_declared(run, TEST, deviations(run.settings, run.device))
    logs = step_logs(run.settings, run.device, decl)
    if not logs:
        outcome = run_phase(run, decl, RoundMeasure(run, decl), history)
    else:
        # each step's log made as fio reads it, through its socket; a resumed run makes
        # the same logs (seed, I/Os and streams from the declaration)
        with feeding.Feed(logs) as feed:
            outcome = run_phase(run, decl, RoundMeasure(run, decl), history)
        if any("lines_made" in s for s in feed.stats):   # a resumed run whose pass had ended
            # feeds no step: the file of the pass that fed them is kept
            _fed(run, feed)
    # one pass, no steady state: complete once its round (every step) is recorded
    return dataclasses.replace(outcome, status=records.COMPLETE, steady_round=None,
                               message=decl.stop(1, {}))


def _fed(run: Run, feed: feeding.Feed) -> None:
    """What the feed made, per step, kept beside the replay's raw results (iolog-feed.json)
    and said in one line."""
    path = run.raw_dir(TEST) / "iolog-feed.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_json(path, {"steps": feed.stats, "disk_bytes": 0,
                             "how": "each step's log made as fio read it, through a Unix "
                                    "socket (read_iolog_chunked); none written to disk"})
    made = sum(s.get("lines_made", 0) for s in feed.stats)
    run.write(f"[pts {TEST}] step logs streamed to fio as the steps ran: {made:,} I/O lines "
              f"made for {len(feed.stats)} steps, none on disk ({run.relative(path)})")


def plan_lines(settings: Settings, device: BlockDevice) -> list[str]:
    """--dry-run: the preconditioning rounds, then every step's fio sections."""
    if settings.workload is None:
        return [f"skipped: {common.NO_WORKLOAD}"]
    lines = common.plan_lines(settings, device, lambda s, d: declare_precondition(s, d))
    decl = declare(settings, device)
    lines.append(
        f"replay ({TEST}): one pass, {len(decl.points)} capture steps in order, "
        f"stonewalled, time scale {time_scale(settings):g}, closed loop at each step's "
        f"OIO; {decl.measures}each step's fio job sections:")
    if hold(settings, device) == "iolog":
        lines.append(
            "  hold iolog: each step's log (its I/Os at [rwsw_replay] iolog_iops x its seconds,"
            " seed iolog_seed + step) is made as the step runs and streamed to fio through "
            "the Unix socket its read_iolog names (read_iolog_chunked): nothing on disk")
    lines += point_lines(device, decl.points, decl.job)
    lines += [f"DEVIATION: {text}" for text in deviations(settings, device)]
    lines.append(f"replay duration: {sum(step_seconds(settings, st) for st in steps(settings))}"
                 f" s of steps plus ~0.3 s of fio between steps")
    return lines


__all__ = ["PRE", "TEST", "declare", "declare_precondition", "plan_lines", "run_replay",
           "step_oio", "step_seconds", "step_streams", "steps", "time_scale"]
