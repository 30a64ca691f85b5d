"""What the RWSW pages compute from a stored run (issue 32 §4), from the point records only
(pts.workload.applied wrote `streams`, `write_bytes`, `share_miss_pts` per point):

- the ATW reproduced: per stream its target share and its achieved share of I/Os, averaged
  over the measured rounds (every recorded round: Multi-WSAT measures from FOB on), the
  largest miss of any round, within the tolerance of the test (`share_tolerance_pct`);
- Multi-WSAT's IOPS per round against time and against the data written (TGBW);
- Individual Streams: per stream (one point per stream, in the ATW's order) the mean IOPS and
  response times over the measurement window and whether its tracking variable is steady.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pts.results.parameters import Atw, RwswParameters
from pts.stored.model import TestResult

GB = 1e9                      # TGBW: decimal GB, as WSAT's


@dataclass(frozen=True)
class ShareRow:
    stream: str
    target_pct: float
    achieved_pct: float | None     # mean over the rounds that recorded it
    max_miss_pts: float | None     # largest |achieved - target| of any round
    rounds: int
    within: bool | None            # every round within the tolerance (None: no round)


@dataclass(frozen=True)
class RoundPoint:
    round: int
    end_min: float | None          # minutes since the first round started
    tgbw_gb: float | None          # bytes written by the rounds up to this one, GB
    iops: float | None


@dataclass(frozen=True)
class StreamResult:
    stream: str
    iops: float | None             # means over the measurement window
    lat_mean_us: float | None
    lat_percentile_us: float | None   # None: not recorded (rwsw points record none today)
    steady: bool | None            # its tracking variable's window evidence
    rounds: int


def tolerance(test: TestResult) -> float | None:
    value = test.typed.share_tolerance_pct if isinstance(test.typed, RwswParameters) else None
    return float(value) if isinstance(value, int | float) else None


def shares(test: TestResult) -> list[ShareRow]:
    """Target vs achieved per stream of the ATW, over the recorded rounds."""
    limit = tolerance(test)
    atw = (test.typed.atw if isinstance(test.typed, RwswParameters) else None) or Atw()
    targets = {str(s.stream): float(s.share_pct) for s in atw.streams or ()}
    seen: dict[str, list[float]] = {name: [] for name in targets}
    for p in test.points:
        for s in p.streams:
            name = str(s.get("stream"))
            targets.setdefault(name, float(s.get("target_pct") or 0.0))
            if isinstance(s.get("achieved_pct"), int | float):
                seen.setdefault(name, []).append(float(s["achieved_pct"]))
    rows = []
    for name, target in targets.items():
        got = seen.get(name) or []
        miss = max((abs(a - target) for a in got), default=None)
        rows.append(ShareRow(name, target, math.fsum(got) / len(got) if got else None, miss,
                             len(got), None if miss is None or limit is None
                             else miss <= limit))
    return rows


def outside(rows: list[ShareRow]) -> list[ShareRow]:
    return [r for r in rows if r.within is False]


def round_points(test: TestResult) -> list[RoundPoint]:
    """Per round (its points summed): IOPS, when it ended and the bytes written so far."""
    starts = [p.start for p in test.points if p.start is not None]
    t0 = min(starts) if starts else None
    written, out = 0.0, []
    for number in sorted({p.round for p in test.points}):
        mine = [p for p in test.points if p.round == number and not p.na]
        got = [p.get("write_bytes") for p in mine]
        written += math.fsum(b for b in got if b is not None)
        ends = [p.end for p in mine if p.end is not None]
        iops = [p.iops for p in mine if p.iops is not None]
        out.append(RoundPoint(
            number, (max(ends) - t0) / 60 if ends and t0 is not None else None,
            written / GB if any(b is not None for b in got) else None,
            math.fsum(iops) if iops else None))
    return out


def stream_results(test: TestResult) -> list[StreamResult]:
    """rwsw-streams: point k is stream k alone; its tracking variable is the k-th."""
    window = set(test.window_rounds)
    out = []
    for k, t in enumerate(test.tracking):
        used = [p for p in test.points if p.index == k and p.round in window and not p.na]
        ev = test.window_evidence.get(t.label)
        out.append(StreamResult(
            t.label.removesuffix(" IOPS"), _mean(p.iops for p in used),
            _mean(p.lat_mean_us for p in used), _mean(p.get("lat_percentile_us") for p in used),
            None if ev is None else ev.steady, len(used)))
    return out


def _mean(values) -> float | None:
    got = [v for v in values if v is not None]
    return math.fsum(got) / len(got) if got else None
