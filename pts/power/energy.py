"""Energy and mean power over a window [t0, t1] from timestamped samples (issue 51 §3): pure.

Samples are aligned to a window by their timestamps, never by their count. Two kinds:
- power readings (W at an instant): integrated by the trapezoid rule between consecutive
  readings, a reading linearly interpolated where the window cuts a segment;
- energy counters (J since some origin, e.g. RAPL's energy_uj): the difference between
  consecutive readings, a counter that went down having wrapped once at `range_j`; inside a
  segment the power is taken as constant (a step: difference / duration).

A gap (a failed read, or two readings further apart than `max_gap_s`) is never filled: the
window's energy is what the covered segments hold, `coverage` says which fraction of the
window that is, and the mean W is the energy over the covered seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

POWER, ENERGY = "power", "energy"       # what a sample's value is: W now, or J so far


@dataclass(frozen=True)
class Sample:
    """One reading: `mono` (time.monotonic of this host, for alignment), `wall` (Unix time,
    for the record), `value` (W or J by the source's kind; None: the read failed here)."""

    mono: float
    wall: float
    value: float | None
    error: str = ""
    state_count: int | None = None   # the drive's Power State Change Count then (its C0h)


@dataclass(frozen=True)
class Segment:
    """[t0, t1] between two good readings: power at each end (a counter's step: the same)."""

    t0: float
    t1: float
    w0: float
    w1: float

    def energy(self, a: float, b: float) -> float:
        """Joules over [a, b] (inside the segment), the power linear between the ends."""
        return (b - a) * (self.at(a) + self.at(b)) / 2

    def at(self, t: float) -> float:
        span = self.t1 - self.t0
        return self.w0 if span <= 0 else self.w0 + (self.w1 - self.w0) * (t - self.t0) / span


@dataclass(frozen=True)
class Window:
    t0: float
    t1: float
    energy_j: float
    covered_s: float
    samples: int                          # good readings inside [t0, t1]
    gaps: tuple[tuple[float, float], ...] = field(default=())   # uncovered parts of it
    max_w: float | None = None            # the largest W reading inside (power readings)
    state_counts: tuple[int, int] | None = None   # first and last state_count inside

    @property
    def coverage(self) -> float:
        span = self.t1 - self.t0
        return self.covered_s / span if span > 0 else 0.0

    @property
    def mean_w(self) -> float | None:
        """Mean power over the covered seconds; None when nothing of the window is covered."""
        return self.energy_j / self.covered_s if self.covered_s > 0 else None


def counter_delta(before: float, after: float, range_j: float | None) -> float:
    """Joules between two counter readings; a counter that went down wrapped once at
    `range_j` (None: a counter that never wraps, so going down is an error)."""
    if after >= before:
        return after - before
    if not range_j:
        raise ValueError(f"energy counter went down ({before} -> {after} J) and has no "
                         f"wrap range: give the source's range (RAPL: max_energy_range_uj)")
    return after + range_j - before


def segments(samples: Sequence[Sample], kind: str, *, max_gap_s: float,
             range_j: float | None = None) -> list[Segment]:
    """The covered segments: consecutive good readings no further apart than `max_gap_s`
    (a failed read between two readings breaks the pair: they are not consecutive)."""
    if kind not in (POWER, ENERGY):
        raise ValueError(f"unknown sample kind {kind!r}: {POWER!r} or {ENERGY!r}")
    ordered = sorted(samples, key=lambda s: s.mono)
    out = []
    for a, b in pairwise(ordered):
        if a.value is None or b.value is None or not 0 < b.mono - a.mono <= max_gap_s:
            continue
        if kind == POWER:
            out.append(Segment(a.mono, b.mono, a.value, b.value))
        else:
            w = counter_delta(a.value, b.value, range_j) / (b.mono - a.mono)
            out.append(Segment(a.mono, b.mono, w, w))
    return out


def window(samples: Sequence[Sample], t0: float, t1: float, kind: str, *, max_gap_s: float,
           range_j: float | None = None) -> Window:
    """Energy, covered seconds and gaps of [t0, t1] (monotonic seconds)."""
    if t1 < t0:
        raise ValueError(f"window ends before it starts: [{t0}, {t1}]")
    energy = covered = 0.0
    spans = []
    for seg in segments(samples, kind, max_gap_s=max_gap_s, range_j=range_j):
        a, b = max(seg.t0, t0), min(seg.t1, t1)
        if b > a:
            energy += seg.energy(a, b)
            covered += b - a
            spans.append((a, b))
    good = [s for s in sorted(samples, key=lambda s: s.mono)
            if s.value is not None and t0 <= s.mono <= t1]
    counts = [s.state_count for s in good if s.state_count is not None]
    return Window(t0, t1, energy, covered, len(good), tuple(_holes(spans, t0, t1)),
                  max(s.value for s in good) if good and kind == POWER else None,
                  (counts[0], counts[-1]) if counts else None)


def _holes(spans: Iterable[tuple[float, float]], t0: float, t1: float):
    at = t0
    for a, b in sorted(spans):
        if a > at:
            yield (at, a)
        at = max(at, b)
    if at < t1:
        yield (at, t1)


def per_watt(figure: float | None, win: Window) -> float | None:
    """A window's figure (IOPS, or MB/s) per mean watt of the same window: IOPS/W, MB/s/W.
    None where the window has no power (nothing covered, or 0 W)."""
    mean = win.mean_w
    if figure is None or not mean:
        return None
    return figure / mean
