"""Spec sections of the round-based tests of PTS-E 1.0: [iops], [throughput] and [latency]
(pts-digest §7.1-7.3): each a R/W mix x block size matrix run round by round and the
tracking cell(s) whose steady state ends it.

pts.config.spec reads these tables through read_iops / read_throughput / read_latency,
handing them its reader `r` (pts.config.spec._Reader: names file and key in every error).
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.config.spec_units import RwMix, format_size, parse_size


@dataclass(frozen=True)
class TrackingCell:
    rw_mix: RwMix
    block_size: int

    @property
    def label(self) -> str:
        return f"RND {format_size(self.block_size).replace(' ', '')} {self.rw_mix}"


@dataclass(frozen=True)
class IopsTest:
    clause: str
    rw_mixes: tuple[RwMix, ...]     # outer loop, spec order
    block_sizes: tuple[int, ...]    # inner loop, spec order, bytes
    tracking: tuple[TrackingCell, ...]


@dataclass(frozen=True)
class ThroughputTest:
    clause: str
    block_sizes: tuple[int, ...]    # each its own purge + WIPC + rounds cycle, spec order
    rw_mixes: tuple[RwMix, ...]     # SEQ points of a round, in order (read, then write)
    tracking_rw_mix: RwMix          # the point whose MB/s is the tracking variable
    thread_count: int
    queue_depth: int


@dataclass(frozen=True)
class LatencyTest:
    clause: str
    rw_mixes: tuple[RwMix, ...]     # outer loop, spec order
    block_sizes: tuple[int, ...]    # inner loop, spec order, bytes
    tracking: TrackingCell              # its average response time is the tracking variable
    thread_count: int
    queue_depth: int
    percentile: float               # reported response-time percentile ("5 9s")


# ------------------------------------------------------------------ reading the tables

def cell(r, item, where: str, mixes: tuple, sizes: tuple) -> TrackingCell:
    if not isinstance(item, dict) or set(item) != {"rw_mix", "block_size"}:
        raise r.fail(where, "must be { rw_mix = \"0/100\", block_size = \"4KiB\" }")
    tr = TrackingCell(r.convert(where + ".rw_mix", [item["rw_mix"]], RwMix.parse)[0],
                  r.convert(where + ".block_size", [item["block_size"]], parse_size)[0])
    if tr.rw_mix not in mixes or tr.block_size not in sizes:
        raise r.fail(where, f"{tr.label} is not a cell of the "
                               "rw_mixes x block_sizes matrix")
    return tr

def read_iops(r, data: dict) -> IopsTest:
    t = r.table(data, "iops", {"clause", "rw_mixes", "block_sizes", "tracking"})
    mixes = r.items(t, "iops", "rw_mixes", RwMix.parse)
    sizes = r.items(t, "iops", "block_sizes", parse_size)
    if not isinstance(t["tracking"], list) or not t["tracking"]:
        raise r.fail("iops.tracking", "must be a non-empty list")
    tracking = tuple(cell(r, item, f"iops.tracking[{i}]", mixes, sizes)
                     for i, item in enumerate(t["tracking"]))
    return IopsTest(clause=r.value(t, "iops", "clause", str), rw_mixes=mixes,
                    block_sizes=sizes, tracking=tracking)

def read_throughput(r, data: dict) -> ThroughputTest:
    w = "throughput"
    t = r.table(data, w, {"clause", "block_sizes", "rw_mixes", "tracking_rw_mix",
                             "thread_count", "queue_depth"})
    mixes = r.items(t, w, "rw_mixes", RwMix.parse)
    tracked = r.convert(f"{w}.tracking_rw_mix", [r.value(t, w, "tracking_rw_mix", str)],
                           RwMix.parse)[0]
    if tracked not in mixes:
        raise r.fail(f"{w}.tracking_rw_mix", f"{tracked} is not one of rw_mixes")
    return ThroughputTest(r.value(t, w, "clause", str),
                          r.items(t, w, "block_sizes", parse_size), mixes, tracked,
                          *r.tc_qd(t, w))

def read_latency(r, data: dict) -> LatencyTest:
    w = "latency"
    t = r.table(data, w, {"clause", "rw_mixes", "block_sizes", "tracking",
                             "thread_count", "queue_depth", "percentile"})
    mixes = r.items(t, w, "rw_mixes", RwMix.parse)
    sizes = r.items(t, w, "block_sizes", parse_size)
    return LatencyTest(r.value(t, w, "clause", str), mixes, sizes,
                       cell(r, t["tracking"], f"{w}.tracking", mixes, sizes),
                       *r.tc_qd(t, w),
                       r.value(t, w, "percentile", float, lambda v: 0 < v < 100,
                                  " (a percentile between 0 and 100)"))
