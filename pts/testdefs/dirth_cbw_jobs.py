"""DIRTH and CBW as declarations (pts-digest §7.7, §7.8): their workload as fio jobs and
their two round phases as `RoundTest`s of the one runner.

  preconditioning  (ledger test "<kind>-precondition"): RND 0/100 at TC32/QD32 from the
                   purged drive (no WIPC); a round = writes for `precondition_round_seconds`
                   (x --time-scale), its first or last `point_seconds` measured (the spec
                   file's precondition_sample; pts.procedure.preconditioning); tracking its IOPS.
  demand variation (ledger test "<kind>"): before each round the inter-round pre-write (RND
                   0/100, TC32/QD32, `prewrite_seconds` x --time-scale), then for TC in
                   thread_counts (outer) and QD in queue_depths (inner) one point at the test
                   mix; tracking the IOPS at TC32/QD32.

CBW's workload is fio `bssplit` (the JESD219 block-size mix) and `random_distribution=zoned`
(its access skew), in the test loop and, with 100 % writes, in every write phase. Block sizes
below the device's logical sector size cannot be transferred: they are left out and the rest
of the mix keeps its proportions (shares re-scaled to whole percents summing to 100) — a
declared deviation naming both mixes, never a silent change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from pts.config.settings import Settings
from pts.config.spec import RwMix, format_size
from pts.config.spec_dirth_cbw import DirthCbwTest, SizeShare
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure.rounds import TestPoint
from pts.procedure.runner import RoundTest, TestDefinitionError
from pts.testdefs import fields
from pts.testdefs import parameters as run_parameters
from pts.tools.fio import Job, Summary, random_job

KINDS = {"dirth": "DIRTH", "cbw": "CBW"}
WRITES = RwMix(0)
VALUE_KEY = "iops"


def section(settings: Settings, kind: str) -> DirthCbwTest:
    table = getattr(settings.spec, kind, None)
    if table is None:
        raise TestDefinitionError(f"{kind}: the spec {settings.spec.name} has no [{kind}] table")
    return table


def precondition_test(kind: str) -> str:
    return f"{kind}-precondition"


@dataclass(frozen=True)
class Workload:
    """The block sizes and access pattern of every job of a DIRTH/CBW run on one device."""
    shares: tuple[SizeShare, ...]       # what runs (sub-sector sizes left out, re-scaled)
    dropped: tuple[SizeShare, ...]      # the spec's sizes this device cannot transfer
    zones: str | None                   # fio random_distribution, None = uniform
    name: str                           # "8KiB" or "JESD219-mix"
    block_align: int | None = None      # fio blockalign (spec block_align), None = fio's default

    @property
    def bssplit(self) -> str | None:
        if len(self.shares) == 1 and not self.dropped:
            return None
        return ":".join(f"{_fio_size(s.block_size)}/{s.pct}" for s in self.shares)

    @property
    def block_size(self) -> int:
        """fio `bs` (ignored by fio under bssplit): the smallest size of the mix."""
        return min(s.block_size for s in self.shares)

    def deviation(self, kind: str) -> str | None:
        if not self.dropped:
            return None
        return (f"{KINDS[kind]}: block sizes {', '.join(str(s) for s in self.dropped)} of the "
                f"spec's mix are smaller than the logical sector size: N/A on this device, "
                f"left out; the rest keeps its proportions: "
                f"{', '.join(str(s) for s in self.shares)}.")


def _fio_size(nbytes: int) -> str:
    return f"{nbytes // 1024}k" if nbytes % 1024 == 0 else str(nbytes)


def workload(table: DirthCbwTest, logical_sector: int) -> Workload:
    keep = [s for s in table.block_size_mix if s.block_size >= logical_sector]
    dropped = tuple(s for s in table.block_size_mix if s.block_size < logical_sector)
    if not keep:
        raise TestDefinitionError(
            f"no block size of the mix ({', '.join(str(s) for s in table.block_size_mix)}) can "
            f"be transferred on this device (logical sector {logical_sector} bytes): N/A. "
            "Nothing was written.")
    zones = ("zoned:" + ":".join(f"{z.io_pct}/{z.lba_pct}" for z in table.access_zones)
             if table.access_zones else None)
    return Workload(rescale(keep) if dropped else tuple(keep), dropped, zones, table.workload,
                    table.block_align)


def rescale(shares: list[SizeShare]) -> tuple[SizeShare, ...]:
    """Whole percents summing to 100 in the same proportions (largest remainder)."""
    total = sum(s.pct for s in shares)
    exact = [s.pct * 100 / total for s in shares]
    pcts = [int(x) for x in exact]
    order = sorted(range(len(shares)), key=lambda i: exact[i] - pcts[i], reverse=True)
    for i in order[:100 - sum(pcts)]:
        pcts[i] += 1
    return tuple(SizeShare(s.block_size, p) for s, p in zip(shares, pcts, strict=True) if p)


def job(w: Workload, name: str, mix: RwMix, tc: int, qd: int, seconds: int, ar: int,
        percentiles: tuple[float, ...] = ()) -> Job:
    """RND at `mix`, TC/QD, for `seconds`, with the run's workload (bssplit, zones, and the
    alignment of its random offsets: CBW's 4 KiB as fio's examples/jesd219.fio, a reading)."""
    align = () if w.block_align is None else (("blockalign", str(w.block_align)),)
    return dataclasses.replace(
        random_job(name, mix.read_pct, w.block_size, qd, tc, seconds, ar),
        bssplit=w.bssplit, random_distribution=w.zones, lat_percentiles=percentiles,
        extra=align)


def grid(settings: Settings, kind: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    table = section(settings, kind)
    return (settings.dirth_thread_counts or table.thread_counts,
            settings.dirth_queue_depths or table.queue_depths)


def pct_key(pct: float) -> str:
    """The ledger field of a response-time percentile: 99.99 -> 'lat_99_99_us'."""
    return "lat_" + f"{pct:g}".replace(".", "_") + "_us"


def point_fields(s: Summary, percentiles: tuple[float, ...]) -> dict:
    """IOPS, ART, MRT, the nines (total latency, reads and writes merged, capped at MRT),
    the I/O count behind them and system CPU %."""
    out = fields.basic(s) | {"ios": s.read.total_ios + s.write.total_ios,
                             "sys_cpu_pct": s.sys_cpu}
    for pct in percentiles:
        out[pct_key(pct)] = fields.us(fields.capped(s.lat_percentile_ns(pct), s.lat_max_ns))
    return out


def declare_precondition(settings: Settings, device: BlockDevice, kind: str,
                         before_round: Callable[[int], None] | None = None,
                         after_points: Callable[[int], None] | None = None) -> RoundTest:
    table, w = section(settings, kind), workload(section(settings, kind), device.logical_sector)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    tc, qd = table.tracking_thread_count, table.tracking_queue_depth
    point = TestPoint(0, WRITES, table.nominal_block_size, None, "RND", tc, qd,
                      w.name if table.mixed_sizes else None)
    test = precondition_test(kind)
    return RoundTest(
        test=test, title=f"{KINDS[kind]} Preconditioning", clause=table.clause,
        parameters=parameters(settings, kind, ar, w, [point], WRITES) | {
            "round_seconds": settings.scaled(table.precondition_round_seconds),
            "precondition_sample": table.precondition_sample},
        points=(point,), tracking={point.label: point}, value_key=VALUE_KEY,
        job=lambda p: job(w, "p00", WRITES, tc, qd, settings.point_seconds, ar),
        fields=lambda s: point_fields(s, ()), thread_count=tc, queue_depth=qd,
        wipc_block_size=None, before_round=before_round, after_points=after_points,
        measures=f"a round = RND 0/100 writes for "
                 f"{settings.scaled(table.precondition_round_seconds)} s, the "
                 f"{table.precondition_sample} {settings.point_seconds} s measured; ",
        tracking_unit=" IOPS")


def declare_demand(settings: Settings, device: BlockDevice, kind: str,
                   before_round: Callable[[int], None] | None = None) -> RoundTest:
    table, w = section(settings, kind), workload(section(settings, kind), device.logical_sector)
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    tcs, qds = grid(settings, kind)
    points = [TestPoint(k, table.rw_mix, table.nominal_block_size, None, "RND", tc, qd,
                        w.name if table.mixed_sizes else None)
              for k, (tc, qd) in enumerate((tc, qd) for tc in tcs for qd in qds)]
    tracked = next(p for p in points if (p.thread_count, p.queue_depth) == (
        table.tracking_thread_count, table.tracking_queue_depth))
    by_index = {p.index: p for p in points}
    return RoundTest(
        test=kind, title=KINDS[kind], clause=table.clause,
        parameters=parameters(settings, kind, ar, w, points, table.rw_mix) | {
            "prewrite_seconds": settings.scaled(table.prewrite_seconds),
            "operating_prewrite_seconds": settings.scaled(table.operating_prewrite_seconds),
            "capture_seconds": settings.scaled(table.capture_seconds),
            "art_ceiling_us": table.art_ceiling_us, "percentiles": list(table.percentiles),
            "midiops_candidates": table.midiops_candidates,
            "continues_from": precondition_test(kind)},
        points=tuple(points), tracking={tracked.label: tracked}, value_key=VALUE_KEY,
        job=lambda p: job(w, f"p{p.index:02d}", table.rw_mix, by_index[p.index].thread_count,
                          by_index[p.index].queue_depth, settings.point_seconds, ar,
                          table.percentiles),
        fields=lambda s: point_fields(s, table.percentiles),
        thread_count=table.tracking_thread_count, queue_depth=table.tracking_queue_depth,
        wipc_block_size=None, histograms=True, before_round=before_round,
        measures="per point IOPS, ART, MRT, " + ", ".join(f"{p:g}" for p in table.percentiles)
                 + " % response times and system CPU %; ",
        tracking_unit=" IOPS")


def parameters(settings: Settings, kind: str, ar: int, w: Workload, points, mix: RwMix) -> dict:
    table = section(settings, kind)
    tcs, qds = grid(settings, kind)
    return run_parameters.common(settings, table.tracking_thread_count,
                                 table.tracking_queue_depth, ar) | {
        "thread_counts": list(tcs), "queue_depths": list(qds),
        "rw_mixes": [str(mix)], "block_sizes": [table.nominal_block_size],
        "workload": w.name, "bssplit": w.bssplit, "random_distribution": w.zones,
        "block_align": w.block_align,    # bytes (fio blockalign), null: fio's default
        "tracking": [{"label": p.label, "rw_mix": str(p.rw_mix), "block_size": p.block_size,
                      "metric": VALUE_KEY} for p in points if
                     (p.thread_count, p.queue_depth) == (table.tracking_thread_count,
                                                        table.tracking_queue_depth)],
        "latency": "total (fio lat = slat + clat); percentiles from fio's total-latency "
                   "histogram (lat_percentiles=1, json+ bins), reads and writes merged",
        "block_size_mix": [str(s) for s in w.shares],
        "dropped_block_sizes": [format_size(s.block_size) for s in w.dropped],
    }
