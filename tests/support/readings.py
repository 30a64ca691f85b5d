"""What a power window should hold, worked out from the readings a Recorder actually took
(their monotonic timestamps), not from how long the test slept: on a loaded host a sampler's
reads come late and further apart, and a window's coverage moves with them."""

from __future__ import annotations

from itertools import pairwise


def _pairs(samples, max_gap_s: float):
    """Consecutive good readings no further apart than `max_gap_s` (a failed read between
    them, or a longer wait, leaves their span a gap)."""
    ordered = sorted(samples, key=lambda s: s.mono)
    return [(a, b) for a, b in pairwise(ordered) if a.value is not None
            and b.value is not None and 0 < b.mono - a.mono <= max_gap_s]


def covered_s(samples, t0: float, t1: float, max_gap_s: float) -> float:
    """Seconds of [t0, t1] between such readings."""
    return sum(max(0.0, min(b.mono, t1) - max(a.mono, t0))
               for a, b in _pairs(samples, max_gap_s))


def trapezoid_mean_w(samples, max_gap_s: float) -> float:
    """Mean W over the spans between such readings (all inside the window), by the
    trapezoid rule."""
    pairs = _pairs(samples, max_gap_s)
    joules = sum((b.mono - a.mono) * (a.value + b.value) / 2 for a, b in pairs)
    return joules / sum(b.mono - a.mono for a, b in pairs)
