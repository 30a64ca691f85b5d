"""The PTS Host Idle Recovery test (pts-digest §7.5):

  1. purge (no WIPC), the purge probe;  2. preconditioning: RND 4 KiB writes at the test
     TC/QD until steady state (the ONE round runner, pts.procedure.runner); a round is the
     spec file's `precondition_round_intervals` intervals of point_seconds back to back, the
     LAST one measured and tracked (reading S4/S5: 30 x 1 min; pts.procedure.preconditioning), so a
     few flat minutes of fresh-out-of-box writes cannot pass as the steady-state baseline;
  3. wait states 1..5: repetitions x (5 s write + 5/10/15/25/50 s idle), each followed by
     the return-to-baseline segment (repetitions x 5 s writes, no idle). IOPS per write
     interval (pts.testdefs.hir_schedule says how the idle is kept exact).

--resume continues after the last completed wait state (preconditioning done, nothing purged
since); otherwise the test restarts from purge.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pts.config.settings import Settings
from pts.config.spec import RwMix, format_size
from pts.config.spec_recovery import READING_ROUND_INTERVALS
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure import plan, power_windows, preconditioning, resume
from pts.procedure.rounds import Outcome, TestPoint
from pts.procedure.runner import RoundTest, recorded_test, resume_gate, rounds_in_test
from pts.results import records
from pts.results.resume import ResumeState
from pts.run import Run
from pts.testdefs import fields
from pts.testdefs.hir_schedule import (
    LOG_WINDOW_MS,
    WaitState,
    baseline_job,
    fixed_intervals,
    intervals_by_gaps,
    schedule,
    wait_job,
)
from pts.tools.fio import random_job

TEST = "hir"
TITLE = "Host Idle Recovery"


def lead_in_deviation(ws: WaitState, lead_in) -> str | None:
    """The deviation a wait state's first write interval shows, with its measured length, or
    None: fio 3.33's thinktime_iotime counts the think time into the first interval, so it
    can write for write + idle seconds where the schedule has write, then idle. Declared
    when more than half the idle was written through (the gap rule that splits intervals)."""
    if lead_in is None:
        return None
    seconds = lead_in.end - lead_in.start
    if seconds - ws.write_s <= ws.idle_s / 2:
        return None
    return (f"HIR wait state {ws.state}: its first write interval lasted {seconds:.1f} s "
            f"instead of {ws.write_s} s (fio 3.33 thinktime_iotime counts the think time "
            f"into it: {seconds - ws.write_s:.1f} s of writes where the schedule has idle); "
            "recorded as 'lead_in' and left out of the wait-state mean.")


def tracking_label(settings: Settings) -> str:
    return f"RND {format_size(settings.spec.hir.block_size).replace(' ', '')} 0/100"


def rest_seconds(settings: Settings) -> int:
    """The writes of a preconditioning round before its measured (last) interval."""
    return (settings.spec.hir.precondition_round_intervals - 1) * settings.point_seconds


def round_deviation(settings: Settings) -> str | None:
    n = settings.spec.hir.precondition_round_intervals
    if n == READING_ROUND_INTERVALS:
        return None
    return (f"HIR preconditioning rounds of {n} interval(s) of {settings.point_seconds} s, the "
            f"last tracked, instead of {READING_ROUND_INTERVALS} (the reading of S4/S5: "
            f"{READING_ROUND_INTERVALS} x 1 min, the last minute tracked; spec file "
            "[hir] precondition_round_intervals).")


def precondition(settings: Settings, device: BlockDevice,
                 write_rest: Callable[[int], None] | None = None) -> RoundTest:
    """The preconditioning rounds; `write_rest(round)` writes the round's intervals before
    its measured one (run_hir gives it; None for --dry-run)."""
    h, ar = settings.spec.hir, active_range_bytes(device, settings.spec.common.active_range_pct)
    point = TestPoint(0, RwMix(0), h.block_size)
    rest = rest_seconds(settings)
    return RoundTest(
        test=TEST, title=TITLE, clause=h.clause, parameters=parameters(settings, ar),
        points=(point,), tracking={tracking_label(settings): point}, value_key="iops",
        job=lambda p: random_job("p00", 0, h.block_size, h.queue_depth, h.thread_count,
                                 settings.point_seconds, ar),
        fields=fields.basic, thread_count=h.thread_count, queue_depth=h.queue_depth,
        wipc_block_size=None, purge_probe=True,
        **preconditioning.hooks(preconditioning.LAST, write_rest if rest >= 1 else None),
        measures=f"preconditioning: a round = {h.precondition_round_intervals} x "
                 f"{settings.point_seconds} s of RND writes, the last interval measured; ")


def _write_rest(run: Run, round_no: int) -> None:
    h, seconds = run.spec.hir, rest_seconds(run.settings)
    ar = active_range_bytes(run.device, run.spec.common.active_range_pct)
    when = f"precondition round {round_no}"
    run.write(f"[pts {TEST}] {when}: {seconds} s of RND {format_size(h.block_size)} writes "
              f"at TC{h.thread_count}/QD{h.queue_depth} before its measured interval")
    job = random_job("prewrite", 0, h.block_size, h.queue_depth, h.thread_count, seconds, ar)
    preconditioning.timed_writes(run, TEST, job, when, h.thread_count, h.queue_depth, seconds)


def parameters(settings: Settings, ar_bytes: int) -> dict:
    h, s = settings.spec.hir, settings
    states = schedule(settings)
    return {
        "thread_count": h.thread_count, "queue_depth": h.queue_depth,
        "active_range_pct": s.spec.common.active_range_pct, "active_range_bytes": ar_bytes,
        "write_cache": s.spec.common.write_cache, "point_seconds": s.point_seconds,
        # fio's refill_buffers (pts.tools.fio.GLOBAL_OPTIONS): random data, every job
        "data_pattern": s.spec.common.data_pattern, "access": "RND",
        "max_rounds": s.max_rounds, "window_rounds": s.spec.steady_state.window_rounds,
        # A preconditioning round: intervals of point_seconds, the last one tracked.
        "precondition_round_intervals": h.precondition_round_intervals,
        "round_seconds": h.precondition_round_intervals * s.point_seconds,
        "precondition_sample": preconditioning.LAST,
        # Its preconditioning rounds use the steady-state rule (PTS 2.0.2 §7.5 step 2).
        "max_data_excursion": s.spec.steady_state.max_data_excursion,
        "max_slope_excursion": s.spec.steady_state.max_slope_excursion,
        "block_sizes": [h.block_size], "rw_mixes": ["0/100"],
        "tracking": [{"label": tracking_label(s), "rw_mix": "0/100",
                      "block_size": h.block_size}],
        "write_seconds": states[0].write_s, "idle_seconds": [w.idle_s for w in states],
        "wait_state_names": [w.name for w in states],   # spec file: wait_state_naming
        "repetitions": states[0].repetitions,
        "baseline_repetitions": states[0].baseline_repetitions,
        "idle_method": "fio thinktime + thinktime_iotime in one job per wait state",
    }


def run_hir(run: Run) -> Outcome:
    decl = precondition(run.settings, run.device, lambda r: _write_rest(run, r))
    return recorded_test(run, TEST, TITLE, decl.clause, decl.parameters,
                         lambda: _body(run, decl), gate=resume_gate(decl))


def _resume_point(run: Run) -> tuple[records.HirBaseline | None, int]:
    """(preconditioning baseline, completed states) to go on from (the one resume path,
    pts.procedure.resume), or (None, 0): the preconditioning rounds run, or go on (the round
    runner's own resume)."""
    found = resume.go_on(run, TEST, _where)
    return (found.state, found.after) if found else (None, 0)


def _where(state: ResumeState) -> resume.GoOn | None:
    """After the last completed wait state, once the preconditioning baseline is recorded
    and nothing purged the drive since."""
    mine = [(n, r) for n, r in enumerate(state.records) if r.test == TEST]
    base = [r for _, r in mine if isinstance(r, records.HirBaseline)]
    last = mine[-1][0] if mine else -1
    purged = any(isinstance(r, records.Purge) and r.test != TEST
                 for r in state.records[last + 1:])
    if not base or purged:
        return None
    n = max((r.state for _, r in mine if isinstance(r, records.HirState)), default=0)
    return resume.GoOn(n, mine[-1][1].time, f"after wait state {n}",
                       "the wait state in flight was redone", state=base[-1])


def _body(run: Run, decl: RoundTest) -> Outcome:
    baseline, done = _resume_point(run)
    if baseline is None:
        if round_deviation(run.settings):
            run.deviation(TEST, round_deviation(run.settings))
        outcome = rounds_in_test(run, decl)
        ev = outcome.evidence.get(tracking_label(run.settings))
        baseline = records.HirBaseline(test=TEST, ss_iops=ev.average if ev else 0.0,
                                       window=list(outcome.window),
                                       steady=outcome.status == records.STEADY,
                                       rounds=outcome.rounds)
        run.ledger.append(baseline)
        ss = baseline.ss_iops
        run.write(f"[pts {TEST}] preconditioning: {outcome.message}; baseline {ss:,.0f} IOPS")
    ss = baseline.ss_iops
    states = schedule(run.settings)
    ar = active_range_bytes(run.device, run.spec.common.active_range_pct)
    start, left = time.monotonic(), sum(w.seconds for w in states[done:])
    results = []
    for ws in states[done:]:
        eta = plan.hms(left)
        run.write(f"[pts {TEST}] {ws.label} x {ws.repetitions}, then {ws.baseline_repetitions}"
                  f" x {ws.write_s} s baseline writes ({plan.hms(ws.seconds)}); "
                  f"elapsed {plan.hms(time.monotonic() - start)}, ETA {eta}")
        results.append(_state(run, ws, ss, ar))
        left -= ws.seconds
    steady = "steady" if baseline.steady else "NOT steady"
    message = (f"{len(states)} wait states done; baseline {ss:,.0f} IOPS ({steady}, rounds "
               f"{baseline.window[0]}-{baseline.window[1]}); " + ", ".join(
                   f"{r.idle_s} s idle {r.wait_iops:,.0f} IOPS ({r.ratio:.2f}x)"
                   for r in results))
    run.write(f"[pts {TEST}] {message}")
    window = tuple(baseline.window) if baseline.window else (1, baseline.rounds)
    if not baseline.steady:     # §7.5 step 2: the wait states start from a steady baseline
        message = (f"preconditioning did not reach steady state in {baseline.rounds} rounds, "
                   f"so the wait states ran against a baseline that is not the steady state "
                   f"(PTS 2.0.2 §7.5 step 2); {message}")
    status = records.COMPLETE if baseline.steady else records.NOT_STEADY
    return Outcome(status, baseline.rounds, window[1] if baseline.steady else None,
                   window, {}, message)


def _state(run: Run, ws: WaitState, ss: float, ar: int) -> records.HirState:
    out = run.raw_dir(TEST, f"ws{ws.state}")
    wprefix, bprefix = str(out / f"ws{ws.state}"), str(out / f"ws{ws.state}-baseline")
    for old in list(out.glob("*.log")) if out.exists() else []:
        old.unlink()                       # a redone state (resume) starts with clean logs
    with power_windows.phase(run, TEST, "wait state", ws.state):     # --power (issue 51)
        with power_windows.phase(run, TEST, "wait", ws.state):
            run.fio.run(run.device.path, [wait_job(run.settings, ws, wprefix, ar)], out,
                        "wait", timeout=ws.wait_runtime_s * 1.1 + 300)
        waits = intervals_by_gaps(wprefix, LOG_WINDOW_MS, ws.idle_s / 2)
        time.sleep(ws.idle_s)              # the last repetition's idle (+ fio start-up)
        with power_windows.phase(run, TEST, "baseline", ws.state):
            run.fio.run(run.device.path, [baseline_job(run.settings, ws, bprefix, ar)], out,
                        "baseline", timeout=ws.write_s * ws.baseline_repetitions * 1.1 + 300)
    base = fixed_intervals(bprefix, ws.write_s * 1000)
    if base and waits:
        base[0] = base[0].__class__(base[0].start, base[0].end, base[0].ios,
                                    base[0].start - waits[-1].end)
    for k, iv in enumerate(waits):
        seg, n = ("lead_in", 1) if k == 0 else ("wait", k)
        _write(run, ws, seg, n, iv)
    for k, iv in enumerate(base, 1):
        _write(run, ws, "baseline", k, iv)
    wait_iops = [iv.iops for iv in waits[1:]]
    gaps = [iv.idle_before_s for iv in waits[1:] if iv.idle_before_s is not None]
    mean = sum(wait_iops) / len(wait_iops) if wait_iops else 0.0
    bmean = sum(iv.iops for iv in base) / len(base) if base else 0.0
    rec = records.HirState(
        test=TEST, state=ws.state, idle_s=ws.idle_s, write_s=ws.write_s,
        repetitions=ws.repetitions, wait_iops=mean, baseline_iops=bmean, ss_iops=ss,
        ratio=mean / ss if ss else 0.0,
        idle_measured_s=[min(gaps), sum(gaps) / len(gaps), max(gaps)] if gaps else [],
        raw=run.relative(out))
    lead_in = lead_in_deviation(ws, waits[0] if waits else None)
    if lead_in:
        run.deviation(TEST, lead_in)
    if len(wait_iops) != ws.repetitions:
        run.deviation(TEST, f"HIR wait state {ws.state}: {len(wait_iops)} write intervals "
                            f"found in fio's logs instead of {ws.repetitions}.")
    if len(base) != ws.baseline_repetitions:   # fio leaves out a last window it ends early in
        run.deviation(TEST, f"HIR wait state {ws.state}: {len(base)} return-to-baseline "
                            f"intervals found in fio's logs instead of "
                            f"{ws.baseline_repetitions}.")
    run.ledger.append(rec)
    gap = f"; idle measured {gaps and min(gaps):.3f}-{gaps and max(gaps):.3f} s" if gaps else ""
    run.write(f"[pts {TEST}] {ws.name} ({ws.idle_s} s idle): {mean:,.0f} IOPS "
              f"({rec.ratio:.2f}x baseline {ss:,.0f}); return to baseline {bmean:,.0f}{gap}")
    return rec


def _write(run: Run, ws: WaitState, segment: str, n: int, iv) -> None:
    run.ledger.append(records.HirWrite(
        test=TEST, state=ws.state, idle_s=ws.idle_s, segment=segment, interval=n,
        start=iv.start, end=iv.end, idle_before_s=iv.idle_before_s, ios=iv.ios,
        iops=iv.iops))


def plan_lines(settings: Settings, device: BlockDevice) -> list[str]:
    h = settings.spec.hir
    decl = precondition(settings, device)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    states = schedule(settings)
    total = sum(w.seconds for w in states)
    lines = plan.round_test_plan(settings, device, decl, rest_seconds(settings))
    rest = rest_seconds(settings)
    lines.append(f"each preconditioning round: {rest} s of RND {format_size(h.block_size)} "
                 f"writes at TC {h.thread_count} / QD {h.queue_depth} (one fio job, recorded "
                 f"as a pre-write), then the measured interval" if rest else
                 "each preconditioning round: the measured interval alone")
    if round_deviation(settings):
        lines.append(f"DEVIATION: {round_deviation(settings)}")
    lines.append(f"then {len(states)} wait states of RND {format_size(h.block_size)} writes "
                 f"at TC {h.thread_count} / QD {h.queue_depth}:")
    for ws in states:
        lines.append(f"  {ws.label} x {ws.repetitions} (one fio job: thinktime "
                     f"{ws.idle_s} s, thinktime_iotime {ws.write_s} s, runtime "
                     f"{ws.wait_runtime_s} s incl. a lead-in interval), then "
                     f"{ws.baseline_repetitions} x {ws.write_s} s return-to-baseline writes")
    j = wait_job(settings, states[-1], str(Path("RUN_DIR", "raw", TEST, "wsN")), ar)
    lines += ["fio job of the last wait state:", *plan.job_lines(device, [j], settings),
              plan.Estimate(f"wait states + baselines: {plan.hms(total)} after "
                            f"preconditioning (spec: {plan.hms(h.total_seconds())})",
                            total, total)]
    return lines
