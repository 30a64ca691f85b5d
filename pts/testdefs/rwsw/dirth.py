"""RWSW DIRTH with the ATW (`rwsw-dirth`, rwsw-digest §5): PTS DIRTH's TC x QD demand sweep
with the Applied Test Workload as the access pattern.

  1. "rwsw-dirth-preconditioning": purge, no WIPC, then the ATW at the grid's highest TC x QD,
     rounds of one point until its IOPS is steady ([rwsw_dirth] precondition), the tracking
     variable being the IOPS at max OIO (pts.testdefs.rwsw.common);
  2. "rwsw-dirth": demand rounds over the TC x QD matrix ([rwsw_dirth] thread_counts x
     queue_depths, or --dirth-thread-counts / --dirth-queue-depths: declared), highest OIO
     first (ties: the higher TC first), until the IOPS at max OIO is steady
     (demand_to_steady_state, PTS DIRTH) or after one sweep round (false);
  3. the operating points MaxIOPS, MidIOPS, MinIOPS chosen as PTS DIRTH chooses them
     (pts.testdefs.dirth_cbw_select, with the run's PTS spec's [dirth] art_ceiling_us and
     midiops_candidates, from the means over the measurement window), each recorded with
     its response-time histogram.

A point at (TC, QD) is the ATW at OIO = TC x QD, spread over the stream sections by
[rwsw_fio] oio_split (pts.workload.applied: "share": each stream one thread at depth
OIO x share; "every-stream": each stream TC threads at QD) — this suite's reading of "the
ATW at TC x QD". Every section reports fio's total-latency percentiles and json+ bins; a
point records IOPS, ART, MRT, the [dirth] percentiles (5 nines) from the bins of all its
sections merged, system CPU % and each stream's achieved share.

Histograms ([rwsw_dirth] histograms = "last-round"): an operating point's histogram is the
json+ bins of its own demand point in the last round measured (no extra I/O), where PTS
DIRTH runs a pre-write and a separate capture per operating point (pts.testdefs.dirth_cbw).
"""

from __future__ import annotations

import dataclasses
import json

from pts.config.settings import Settings
from pts.device.identity import BlockDevice
from pts.procedure.plan import point_lines
from pts.procedure.rounds import Outcome
from pts.procedure.runner import (
    RoundMeasure,
    RoundTest,
    run_phase,
)
from pts.results import records
from pts.results.ledger import read_records
from pts.run import Run
from pts.testdefs import (
    dirth_cbw,
    dirth_cbw_jobs,
    dirth_cbw_select,
    qos_levels,
)
from pts.testdefs.rwsw import common
from pts.testdefs.rwsw.sections import DirthSection
from pts.tools import histogram
from pts.tools.fio import summarize

TEST = "rwsw-dirth"
PRE = common.precondition_test(TEST)
TITLE, CLAUSE = "RWSW DIRTH", "RWSW 1.0.7 DIRTH with the ATW (rwsw-digest §5)"
HISTOGRAM_SOURCE = ("fio json+ total-latency bins of the operating point's demand point in "
                    "round {round} (every stream section, reads and writes merged)")


def section(settings: Settings) -> DirthSection:
    return DirthSection.of(settings)


def grid(settings: Settings) -> tuple[tuple[int, ...], tuple[int, ...]]:
    s = section(settings)
    return (settings.dirth_thread_counts or tuple(s.thread_counts),
            settings.dirth_queue_depths or tuple(s.queue_depths))


def matrix(tcs, qds) -> list[tuple[int, int]]:
    """Every (TC, QD), highest OIO first; equal OIO: the higher TC first."""
    return sorted(((tc, qd) for tc in tcs for qd in qds), key=lambda t: (-t[0] * t[1], -t[0]))


def point_seconds(settings: Settings) -> int:
    return common.round_seconds(settings, DirthSection)


def declare_precondition(settings: Settings, device: BlockDevice) -> RoundTest:
    tc, qd = matrix(*grid(settings))[0]
    return common.declare_precondition(
        settings, device, TEST, TITLE, CLAUSE, point_seconds(settings), tc, qd,
        {"precondition": section(settings).precondition})


def declare(settings: Settings, device: BlockDevice) -> RoundTest:
    """The demand rounds: one point per (TC, QD), the ATW at OIO TC x QD."""
    w = common.workload(settings, device)
    d, s = settings.spec.dirth, section(settings)
    seconds = point_seconds(settings)
    cells = matrix(*grid(settings))
    points = tuple(common.atw_point(k, w.streams, tc, qd, f"{len(w.streams)} streams")
                   for k, (tc, qd) in enumerate(cells))
    job = common.point_job(settings, device, w, lambda p: seconds, lambda p: w.streams,
                                lambda p: cells[p.index], d.percentiles)
    tracking = {f"ATW IOPS {points[0].label.rsplit(' ', 1)[-1]}": points[0]}
    steady = s.demand_to_steady_state
    tcs, qds = grid(settings)
    return RoundTest(
        test=TEST, title=TITLE, clause=CLAUSE,
        parameters=common.parameters(settings, device, w, seconds, settings.max_rounds,
                                        tracking, job) | {
            "thread_counts": list(tcs), "queue_depths": list(qds),
            "matrix": [list(c) for c in cells], "percentiles": list(d.percentiles),
            "art_ceiling_us": d.art_ceiling_us, "midiops_candidates": d.midiops_candidates,
            "demand_to_steady_state": steady, "histograms": s.histograms,
            "preconditioning_test": PRE},
        points=points, tracking=tracking, value_key="iops", job=job,
        fields=lambda r: dirth_cbw_jobs.point_fields(r, d.percentiles) | {
            "read_bytes": r.read.io_bytes, "write_bytes": r.write.io_bytes},
        thread_count=cells[0][0], queue_depth=cells[0][1], wipc_block_size=None,
        histograms=True, point_seconds=seconds,
        point_fields=common.share_fields(settings, lambda p: w.streams,
                                              lambda p: cells[p.index][0] * cells[p.index][1],
                                              job),
        until_steady=steady, max_rounds=None if steady else 1,
        stop=None if steady else (lambda n, _: "one sweep round (demand_to_steady_state "
                                               "= false)"),
        measures="per point IOPS, ART, MRT, " + ", ".join(f"{p:g}" for p in d.percentiles)
                 + " % response times, system CPU % and each stream's achieved share; ",
        tracking_unit="")


def deviations(settings: Settings) -> list[str]:
    s = section(settings)
    tcs, qds = grid(settings)
    if (list(tcs), list(qds)) == (s.thread_counts, s.queue_depths):
        return []
    return [f"{TEST}: TC x QD matrix reduced to thread counts {', '.join(map(str, tcs))} x "
            f"queue depths {', '.join(map(str, qds))} ([rwsw_dirth]: "
            f"{', '.join(map(str, s.thread_counts))} x "
            f"{', '.join(map(str, s.queue_depths))})."]


def run_dirth(run: Run) -> Outcome:
    """Both ledger tests; the pytest item passes only if both are steady (or complete)."""
    return common.run_preconditioned(run, TITLE, "demand variation",
                                          declare_precondition, declare, _demand)


def _demand(run: Run, decl: RoundTest) -> Outcome:
    recorded = dirth_cbw.recorded_choices(run, TEST)
    history = common.resumed_or_declared(run, TEST, deviations(run.settings))
    outcome = outcome_of(run, decl, history) if recorded else run_phase(
        run, decl, RoundMeasure(run, decl), history)
    chosen = operating_points(run, outcome, recorded)
    done = dirth_cbw.captured_names(run, TEST)
    for c in chosen:
        if c.point is not None and c.name not in done:
            record_histogram(run, c, outcome.window[1])
    summary = "; ".join(f"{c.name} {c.point.label} {c.point.iops:,.0f} IOPS" if c.point
                        else f"{c.name} not selected" for c in chosen)
    run.write(f"[pts {TEST}] operating points: {summary}")
    return dataclasses.replace(outcome, message=f"{outcome.message}; operating points: "
                                                f"{summary}")


def outcome_of(run: Run, decl: RoundTest, history) -> Outcome:
    """A run stopped after its operating points were chosen: the rounds stand."""
    return run_phase(run, dataclasses.replace(decl, max_rounds=len(
        next(iter(history.values()), []))), RoundMeasure(run, decl), history)


def operating_points(run: Run, outcome: Outcome, recorded) -> list[dirth_cbw_select.Choice]:
    """MaxIOPS, MidIOPS, MinIOPS from the window means (pts.testdefs.dirth_cbw_select),
    each recorded once."""
    d = run.settings.spec.dirth
    return dirth_cbw.record_operating_points(run, TEST, outcome, recorded, d.art_ceiling_us,
                                             d.midiops_candidates, "not selected, no histogram")


def record_histogram(run: Run, choice: dirth_cbw_select.Choice, last_round: int) -> None:
    """The operating point's histogram: its demand point of `last_round` (json+ bins of
    every section, reads and writes merged), with the [dirth] percentile levels."""
    p = choice.point
    found, _ = read_records(run.ledger.path)
    point = [r for r in found if isinstance(r, records.Point) and r.test == TEST
             and r.round == last_round and (r.get("thread_count"), r.get("queue_depth"))
             == (p.thread_count, p.queue_depth)][-1]
    s = summarize(json.loads((run.folder / point.get("raw")).read_text(encoding="utf-8")))
    bins = histogram.merge(s.read.lat_histogram, s.write.lat_histogram)
    run.ledger.append(qos_levels.histogram_record(
        TEST, choice.name, p.thread_count, p.queue_depth, point_seconds(run.settings), bins,
        s.iops, s.lat_mean_ns, s.lat_max_ns, run.settings.spec.dirth.percentiles,
        HISTOGRAM_SOURCE.format(round=last_round), point.get("raw"),
        ios=s.read.total_ios + s.write.total_ios))


def plan_lines(settings: Settings, device: BlockDevice) -> list[str]:
    """--dry-run: the preconditioning rounds, the demand matrix's fio sections, the
    operating points."""
    if settings.workload is None:
        return [f"skipped: {common.NO_WORKLOAD}"]
    lines = common.plan_lines(settings, device, lambda s, d: declare_precondition(s, d))
    decl, d = declare(settings, device), settings.spec.dirth
    until = (f"until steady ({decl.until}) or {settings.max_rounds} rounds"
             if decl.until_steady else "one sweep round")
    lines.append(
        f"demand variation ({TEST}): {len(decl.points)} points (TC x QD, highest OIO first: "
        + ", ".join(f"TC{p.thread_count}/QD{p.queue_depth}" for p in decl.points)
        + f") x {decl.point_seconds} s, {until}; {decl.measures}each point's fio sections:")
    lines += point_lines(device, decl.points, decl.job)
    lines += [f"DEVIATION: {text}" for text in deviations(settings)]
    lines.append(f"operating points from the measurement window as PTS DIRTH: MaxIOPS "
                 f"(highest IOPS with ART below {d.art_ceiling_us:,.0f} µs), MinIOPS "
                 f"(TC1/QD1), MidIOPS ({d.midiops_candidates}); each its histogram from its "
                 "point in the last round")
    return lines
