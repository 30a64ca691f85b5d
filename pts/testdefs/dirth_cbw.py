"""Running DIRTH and CBW (pts-digest §7.7, §7.8) on the one runner:

  1. "<kind>-precondition": purge (no WIPC), then preconditioning rounds to steady state
     (`run_round_test` of `dirth_cbw_jobs.declare_precondition`; each round's writes before its
     measured point come from the before-round hook);
  2. "<kind>": demand-variation rounds to steady state (`run_phase` of
     `dirth_cbw_jobs.declare_demand`; the inter-round pre-write is the before-round hook), then
     the operating points (pts.testdefs.dirth_cbw_select) and for each a pre-write at its TC/QD
     and a histogram capture at the test mix.

Histograms: fio json+ total-latency bins ("lat_ns" bins with lat_percentiles=1), reads and
writes merged (pts.tools.histogram) — not fio's histogram log, which holds completion
latency only. Every I/O of the capture is counted in its bin; a bin is at most 1/64 of its
value wide.
"""

from __future__ import annotations

import dataclasses

from pts.conditioning import prepare
from pts.procedure import preconditioning, resume
from pts.procedure.rounds import Outcome
from pts.procedure.runner import (
    RoundMeasure,
    point_timeout,
    recorded_test,
    resumed_history,
    run_phase,
    run_round_test,
)
from pts.results import records
from pts.results.ledger import read_records
from pts.results.resume import ResumeState
from pts.run import Run
from pts.testdefs import dirth_cbw_jobs, dirth_cbw_select, qos_levels
from pts.testdefs.dirth_cbw_jobs import KINDS, WRITES, Workload
from pts.tools import histogram

HISTOGRAM_SOURCE = ("fio json+ total-latency bins (lat_percentiles=1: lat_ns bins), reads "
                    "and writes merged")


def run_dirth_cbw(run: Run, kind: str) -> Outcome:
    """Both ledger tests of DIRTH or CBW; the pytest item passes only if both are steady."""
    settings, dev = run.settings, run.device
    table = dirth_cbw_jobs.section(settings, kind)
    w = dirth_cbw_jobs.workload(table, dev.logical_sector)
    pre_test = dirth_cbw_jobs.precondition_test(kind)
    rest = settings.scaled(table.precondition_round_seconds) - settings.point_seconds
    pre = run_round_test(run, dirth_cbw_jobs.declare_precondition(
        settings, dev, kind, **preconditioning.hooks(table.precondition_sample, (lambda r: prewrite(
            run, pre_test, w, f"precondition round {r}", table.tracking_thread_count,
            table.tracking_queue_depth, rest)) if rest >= 1 else None)))
    decl = dirth_cbw_jobs.declare_demand(settings, dev, kind, before_round=lambda r: prewrite(
        run, kind, w, f"before round {r}", table.tracking_thread_count,
        table.tracking_queue_depth, settings.scaled(table.prewrite_seconds)))
    outcome = recorded_test(run, kind, decl.title, decl.clause, decl.parameters,
                            lambda: _demand_body(run, kind, decl, w), gate=None)
    if pre.steady:
        return outcome
    return dataclasses.replace(outcome, status=records.NOT_STEADY, message=(
        f"{KINDS[kind]} preconditioning: {pre.message}; demand variation: {outcome.message}"))


def _demand_body(run: Run, kind: str, decl, w: Workload) -> Outcome:
    # --resume: on after the last completed demand round (its preconditioning test is
    # finished, so nothing purged or rewrote the drive since); the round in flight is redone.
    # Stopped during the captures: the operating points stand as chosen (not chosen again),
    # the captures recorded stand, the one in flight is redone with its pre-write.
    recorded = recorded_choices(run, kind)
    if recorded:
        history = _resume_captures(run, kind, list(recorded.values()))
    else:
        history = resumed_history(run, kind, gate=None)
        if w.deviation(kind) and not history:
            run.deviation(kind, w.deviation(kind))
    outcome = run_phase(run, decl, RoundMeasure(run, decl), history)
    chosen = operating_points(run, kind, outcome, recorded)
    captured = captured_names(run, kind)
    done = [c for c in chosen if c.point is not None]
    for c in done:
        if c.name not in captured:
            capture(run, kind, w, c)
    summary = "; ".join(f"{c.name} {c.point.label} {c.point.iops:,.0f} IOPS" if c.point
                        else f"{c.name} not selected" for c in chosen)
    run.write(f"[pts {kind}] operating points: {summary}")
    return dataclasses.replace(outcome, message=f"{outcome.message}; operating points: "
                                                f"{summary}")


def recorded_choices(run: Run, kind: str) -> dict[str, dirth_cbw_select.Choice]:
    """On --resume, the operating points the stopped run had chosen and recorded, by name
    ({}: none were chosen before the stop)."""
    if run.resume is None:
        return {}
    return {r.name: dirth_cbw_select.Choice(r.name, dirth_cbw_select.GridPoint(
        r.thread_count, r.queue_depth, r.iops, r.lat_mean_us) if r.selected else None, r.rule)
        for r in run.resume.records if isinstance(r, records.OperatingPoint) and r.test == kind}


def captured_names(run: Run, kind: str) -> set[str]:
    """The operating points whose histogram a resumed run already holds."""
    if run.resume is None:
        return set()
    return {r.name for r in run.resume.records
            if isinstance(r, records.ResponseHistogram) and r.test == kind}


def _resume_captures(run: Run, kind: str,
                     chosen: list[dirth_cbw_select.Choice]) -> dict[str, list[float]]:
    """A run stopped during the captures goes on with them (the one resume path,
    pts.procedure.resume); the demand rounds' tracking history (all rounds were done)."""
    left = ", ".join(c.name for c in chosen if c.point is not None
                     and c.name not in captured_names(run, kind)) or "none"

    def where(state: ResumeState) -> resume.GoOn:
        progress = state.progress(kind, gate=None)
        return resume.GoOn(progress.last_round, progress.last_time,
                           "during the operating-point captures",
                           f"the capture in flight was redone with its pre-write; still to "
                           f"capture: {left}",
                           then=f": operating points as chosen; still to capture: {left}",
                           state=progress.history)
    return resume.go_on(run, kind, where).state


def window_points(run: Run, kind: str, outcome: Outcome) -> list[dirth_cbw_select.GridPoint]:
    """Each grid point's IOPS and ART: the mean over the measurement window rounds."""
    first, last = outcome.window
    found, _ = read_records(run.ledger.path)
    latest: dict[tuple[int, int, int], records.Point] = {}     # a redone round's point wins
    for r in found:
        if isinstance(r, records.Point) and r.test == kind and first <= r.round <= last \
                and not r.na and r.get("iops") is not None:
            latest[(r.round, r.get("thread_count"), r.get("queue_depth"))] = r
    by_toio: dict[tuple[int, int], list[records.Point]] = {}
    for (_, tc, qd), r in latest.items():
        by_toio.setdefault((tc, qd), []).append(r)
    out = []
    for (tc, qd), recs in by_toio.items():
        lats = [r.get("lat_mean_us") for r in recs if r.get("lat_mean_us") is not None]
        out.append(dirth_cbw_select.GridPoint(
            tc, qd, sum(r.get("iops") for r in recs) / len(recs),
            sum(lats) / len(lats) if lats else float("inf")))
    return out


def operating_points(run: Run, kind: str, outcome: Outcome,
                     recorded: dict[str, dirth_cbw_select.Choice]) -> list[dirth_cbw_select.Choice]:
    """MaxIOPS, MidIOPS, MinIOPS from the measurement window, each recorded once: one a
    resumed run had recorded stands as it was (never chosen or recorded again)."""
    table = dirth_cbw_jobs.section(run.settings, kind)
    return record_operating_points(run, kind, outcome, recorded, table.art_ceiling_us,
                                   table.midiops_candidates, "not selected and not captured")


def record_operating_points(run: Run, test: str, outcome: Outcome,
                            recorded: dict[str, dirth_cbw_select.Choice], art_ceiling_us: float,
                            midiops_candidates: str,
                            unselected: str) -> list[dirth_cbw_select.Choice]:
    """The operating points chosen (pts.testdefs.dirth_cbw_select) from `test`'s window means
    with these limits, each not yet `recorded` recorded as an OperatingPoint; one not
    selected is declared "<name> <unselected>: <rule>." (also rwsw-dirth's)."""
    chosen = [recorded.get(c.name, c) for c in dirth_cbw_select.select(
        window_points(run, test, outcome), art_ceiling_us, midiops_candidates)]
    rounds = list(range(outcome.window[0], outcome.window[1] + 1))
    for c in chosen:
        if c.name in recorded:
            continue
        p = c.point
        run.ledger.append(records.OperatingPoint(
            test=test, name=c.name, selected=p is not None,
            thread_count=p and p.thread_count, queue_depth=p and p.queue_depth,
            iops=p and p.iops, lat_mean_us=p and p.lat_mean_us, rule=c.rule, rounds=rounds))
        if p is None:
            run.deviation(test, f"{c.name} {unselected}: {c.rule}.")
    return chosen


def prewrite(run: Run, test: str, w: Workload, when: str, tc: int, qd: int,
             seconds: int) -> records.Prewrite:
    """RND 0/100 with the run's workload at TC/QD for `seconds` (one fio run, recorded)."""
    job = dirth_cbw_jobs.job(w, "prewrite", WRITES, tc, qd, seconds,
                       prepare.active_range_bytes(run))
    run.write(f"[pts {test}] pre-write {when}: RND {w.name} 0/100 at TC{tc}/QD{qd} for "
              f"{seconds} s")
    return preconditioning.timed_writes(run, test, job, when, tc, qd, seconds)


def capture(run: Run, kind: str, w: Workload, choice: dirth_cbw_select.Choice) -> None:
    """The operating point's pre-write, then its histogram capture at the test mix."""
    settings, p = run.settings, choice.point
    table = dirth_cbw_jobs.section(settings, kind)
    prewrite(run, kind, w, choice.name, p.thread_count, p.queue_depth,
             settings.scaled(table.operating_prewrite_seconds))
    seconds = settings.scaled(table.capture_seconds)
    ar = prepare.active_range_bytes(run)
    job = dirth_cbw_jobs.job(w, "capture", table.rw_mix, p.thread_count, p.queue_depth, seconds, ar,
                       table.percentiles)
    run.write(f"[pts {kind}] {choice.name} histogram: RND {w.name} {table.rw_mix} at "
              f"{p.label} for {seconds} s")
    res = run.fio.run(run.device.path, [job], run.raw_dir(kind, "histogram"), choice.name,
                      timeout=point_timeout(seconds), histograms=True)
    s = res.summary
    hist = histogram.merge(s.read.lat_histogram, s.write.lat_histogram)
    run.ledger.append(qos_levels.histogram_record(
        kind, choice.name, p.thread_count, p.queue_depth, seconds, hist, s.iops,
        s.lat_mean_ns, s.lat_max_ns, table.percentiles, HISTOGRAM_SOURCE,
        run.relative(res.json_path), ios=s.read.total_ios + s.write.total_ios))
