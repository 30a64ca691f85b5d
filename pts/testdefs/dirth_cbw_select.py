"""DIRTH/CBW operating points (pts-digest §7.7 step 4), chosen from the demand-variation
points' means over the measurement window (pure; no I/O):

  MaxIOPS  the highest IOPS whose ART is below the ceiling of the spec file;
  MinIOPS  TC1/QD1;
  MidIOPS  the IOPS nearest (MaxIOPS + MinIOPS) / 2, among the points whose ART is below
           the ceiling (candidates "under_ceiling": S5's reading, digest §13) or among all
           points ("all"); the spec file's midiops_candidates chooses.

Ties (equal IOPS, or equally near the middle) go to the smaller TOIO (TC x QD), then the
smaller TC: the least demand that gives that IOPS. When no point has an ART below the
ceiling there is no MaxIOPS and so no MidIOPS: both are recorded as not selected with the
reason (a declared deviation), and only MinIOPS gets its histogram.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX, MID, MIN = "MaxIOPS", "MidIOPS", "MinIOPS"


@dataclass(frozen=True)
class GridPoint:
    thread_count: int
    queue_depth: int
    iops: float
    lat_mean_us: float

    @property
    def toio(self) -> int:
        return self.thread_count * self.queue_depth

    @property
    def label(self) -> str:
        return f"TC{self.thread_count}/QD{self.queue_depth}"


@dataclass(frozen=True)
class Choice:
    name: str
    point: GridPoint | None      # None: not selected (see rule)
    rule: str


def _least_demand(p: GridPoint) -> tuple[int, int]:
    return p.toio, p.thread_count


def select(points: list[GridPoint], ceiling_us: float,
           mid_candidates: str = "under_ceiling") -> list[Choice]:
    """MaxIOPS, MidIOPS, MinIOPS in that order."""
    if mid_candidates not in ("under_ceiling", "all"):
        raise ValueError(f"MidIOPS candidates {mid_candidates!r}: 'under_ceiling' or 'all'")
    low = next((p for p in points if (p.thread_count, p.queue_depth) == (1, 1)), None)
    if low is None:
        raise ValueError("the demand-variation grid has no TC1/QD1 point (MinIOPS)")
    min_c = Choice(MIN, low, f"TC1/QD1: {low.iops:,.0f} IOPS, ART {low.lat_mean_us:,.1f} µs")
    under = [p for p in points if p.lat_mean_us < ceiling_us]
    if not under:
        fastest = min(points, key=lambda p: p.lat_mean_us)
        why = (f"no point has an ART below the ceiling of {ceiling_us:,.0f} µs (the lowest: "
               f"{fastest.label}, {fastest.lat_mean_us:,.1f} µs)")
        return [Choice(MAX, None, why), Choice(MID, None, f"no MaxIOPS: {why}"), min_c]
    best = max(p.iops for p in under)
    high = min((p for p in under if p.iops == best), key=_least_demand)
    max_c = Choice(MAX, high, f"highest IOPS with ART below {ceiling_us:,.0f} µs: "
                              f"{high.label}, {high.iops:,.0f} IOPS, ART "
                              f"{high.lat_mean_us:,.1f} µs")
    target = (high.iops + low.iops) / 2
    among = under if mid_candidates == "under_ceiling" else points
    mid = min(among, key=lambda p: (abs(p.iops - target), *_least_demand(p)))
    which = (f"among the points with ART below {ceiling_us:,.0f} µs"
             if mid_candidates == "under_ceiling" else "among all points")
    mid_c = Choice(MID, mid, f"IOPS nearest (Max + Min) / 2 = {target:,.0f} {which}: "
                             f"{mid.label}, {mid.iops:,.0f} IOPS, ART "
                             f"{mid.lat_mean_us:,.1f} µs")
    return [max_c, mid_c, min_c]
