"""--dry-run of DIRTH and CBW: setup, the workload and every fio job section, the phases
and the estimated duration (`estimate`, pure: DIRTH/CBW durations are fixed by time, not
by capacity — there is no WIPC — so a 3.84 TB drive and a 256 MiB one take the same time,
apart from the purge)."""

from __future__ import annotations

from dataclasses import dataclass

from pts.config.settings import Settings
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure import plan
from pts.procedure.plan import FIO_OVERHEAD_S, hms
from pts.procedure.runner import PIPELINE_GAP_MS
from pts.testdefs import dirth_cbw_jobs
from pts.testdefs.dirth_cbw_jobs import KINDS, WRITES

OPERATING_POINTS = 3


@dataclass(frozen=True)
class Estimate:
    precondition_round_s: float
    demand_round_s: float
    operating_points_s: float      # all three pre-writes + captures
    window: int
    max_rounds: int

    @property
    def best_s(self) -> float:
        """Both phases steady after one window of rounds."""
        return self.window * (self.precondition_round_s + self.demand_round_s) \
            + self.operating_points_s

    @property
    def worst_s(self) -> float:
        """Both phases run to max rounds."""
        return self.max_rounds * (self.precondition_round_s + self.demand_round_s) \
            + self.operating_points_s


def estimate(settings: Settings, kind: str) -> Estimate:
    table = dirth_cbw_jobs.section(settings, kind)
    tcs, qds = dirth_cbw_jobs.grid(settings, kind)
    points = len(tcs) * len(qds)
    if settings.round_mode == "pipelined":
        measured = points * (settings.point_seconds + PIPELINE_GAP_MS / 1000) + FIO_OVERHEAD_S
    else:
        measured = points * (settings.point_seconds + FIO_OVERHEAD_S)
    pre_round = max(settings.scaled(table.precondition_round_seconds), settings.point_seconds) \
        + 2 * FIO_OVERHEAD_S
    demand_round = settings.scaled(table.prewrite_seconds) + FIO_OVERHEAD_S + measured
    ops = OPERATING_POINTS * (settings.scaled(table.operating_prewrite_seconds)
                              + settings.scaled(table.capture_seconds) + 2 * FIO_OVERHEAD_S)
    return Estimate(pre_round, demand_round, ops, settings.spec.steady_state.window_rounds,
                    settings.max_rounds)


def plan_lines(settings: Settings, device: BlockDevice, kind: str) -> list[str]:
    table = dirth_cbw_jobs.section(settings, kind)
    w = dirth_cbw_jobs.workload(table, device.logical_sector)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    pre = dirth_cbw_jobs.declare_precondition(settings, device, kind)
    demand = dirth_cbw_jobs.declare_demand(settings, device, kind)
    tcs, qds = dirth_cbw_jobs.grid(settings, kind)
    tc, qd = table.tracking_thread_count, table.tracking_queue_depth
    e = estimate(settings, kind)
    lines = [f"{KINDS[kind]} test ({table.clause}; ledger tests {pre.test}, {demand.test})",
             *plan.setup_lines(settings, device, tc, qd),
             "WIPC: none: preconditioning starts from the purged drive",
             f"workload: {w.name}" + (f", fio bssplit={w.bssplit}" if w.bssplit else "")
             + (f", random_distribution={w.zones}" if w.zones else ", uniform random"),
             *([f"DEVIATION: {w.deviation(kind)}"] if w.dropped else []),
             f"preconditioning ({pre.test}): rounds of RND 0/100 at TC{tc}/QD{qd} for "
             f"{settings.scaled(table.precondition_round_seconds)} s, the "
             f"{table.precondition_sample} {settings.point_seconds} s measured "
             f"(precondition_sample), until steady ({pre.until}) or "
             f"{settings.max_rounds} rounds; the measured point's fio job section:",
             *plan.point_lines(device, pre.points, pre.job),
             f"demand variation ({demand.test}): before each round a pre-write RND 0/100 at "
             f"TC{tc}/QD{qd} for {settings.scaled(table.prewrite_seconds)} s, then "
             f"{len(demand.points)} points (TC {', '.join(map(str, tcs))} x QD "
             f"{', '.join(map(str, qds))}) x {settings.point_seconds} s at {table.rw_mix}, "
             f"until steady ({demand.until}) or {settings.max_rounds} rounds; "
             f"{demand.measures}{plan.mode_text(settings)}; the pre-write and each point's "
             "fio job section:",
             *plan.section_lines(device, dirth_cbw_jobs.job(w, "prewrite", WRITES, tc, qd,
                                                     settings.scaled(table.prewrite_seconds),
                                                     ar)),
             *plan.point_lines(device, demand.points, demand.job),
             f"operating points from the measurement window: MaxIOPS (highest IOPS with ART "
             f"below {table.art_ceiling_us:,.0f} µs), MinIOPS (TC1/QD1), MidIOPS (nearest "
             f"(Max + Min) / 2, among "
             + ("the points under the ceiling" if table.midiops_candidates == "under_ceiling"
                else "all points") + "); each: pre-write RND 0/100 at its TC/QD for "
             f"{settings.scaled(table.operating_prewrite_seconds)} s, then "
             f"{settings.scaled(table.capture_seconds)} s at {table.rw_mix} for the response-time "
             f"histogram (fio json+ total-latency bins) and the "
             + ", ".join(f"{p:g}" for p in table.percentiles) + " % levels",
             *duration_lines(e)]
    return lines


def duration_lines(e: Estimate) -> list[str]:
    return [plan.Estimate(
        f"estimated duration (without purge): preconditioning rounds "
        f"{hms(e.precondition_round_s)} each, demand-variation rounds "
        f"{hms(e.demand_round_s)} each, operating points {hms(e.operating_points_s)}; "
        f"best case {hms(e.best_s)} (both phases steady by round {e.window}), worst case "
        f"{hms(e.worst_s)} ({e.max_rounds} rounds each)", e.best_s, e.worst_s)]
