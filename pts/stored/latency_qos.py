"""Response-time QoS levels of the Latency test's cells (pts-digest §7.3, §8.3): 99.99 %,
99.999 % and 99.9999 % of fio's total latency, from the json+ latency bins of each point's
own fio JSON (the `raw` file of its `point` record; reads and writes merged as for the
test's 5 9s, pts.tools.histogram), read from the run folder. Nothing is measured here.

Resolvability: a p % level of N I/Os is more than the slowest I/O only when at least one I/O
lies above it, N x (1 - p/100) >= 1 (pts.testdefs.qos_levels.needed_ios: 99.99 % needs
10,000 I/Os, 99.999 % 100,000, 99.9999 % 1,000,000). A cell's level is the mean over its
measurement-window points (as ART and MRT are); if any of those points is too short for the
level, the cell's level is "not resolvable" — never the slowest I/O passed off as a level.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pts.results import records
from pts.stored.model import RunView, TestResult
from pts.testdefs.qos_levels import QOS_LEVELS, needed_ios
from pts.tools import histogram
from pts.tools.fio import FioOutputError, parse_output
from pts.tools.fio_result import summarize

LEVELS = QOS_LEVELS
OK, NOT_RESOLVABLE, NO_BINS = "ok", "n/r", "n/a"


@dataclass(frozen=True)
class PointBins:
    """One point's merged total-latency histogram {bin midpoint ns: I/Os}."""

    round: int
    rw_mix: str
    block_size: int
    bins: dict[int, int]
    max_ns: float | None       # fio's exact maximum (a level is capped there)

    @property
    def ios(self) -> int:
        return histogram.total(self.bins)


@dataclass(frozen=True)
class Level:
    pct: float
    state: str                 # OK, NOT_RESOLVABLE or NO_BINS
    us: float | None           # the mean over the window points (state OK only)


@dataclass(frozen=True)
class QosCell:
    rw_mix: str
    block_size: int
    levels: tuple[Level, ...]
    fewest_ios: int | None     # fewest I/Os of a window point with bins
    points: int                # window points with bins
    bins: dict[int, int]       # the window points' histograms merged (for the histogram page)

    @property
    def key(self) -> tuple[str, int]:
        return self.rw_mix, self.block_size


def resolvable(ios: int, pct: float) -> bool:
    """True when `ios` I/Os resolve the `pct` level (at least 1 / (1 - pct/100) of them)."""
    return ios >= needed_ios(pct)


def short_cells(test: TestResult, pct: float, ios_field: str = "ios") -> set[tuple[str, int]]:
    """(R/W mix, block size) of the cells with a measurement-window point whose I/O count
    (point field `ios_field`: "ios", "read_ios", "write_ios") cannot resolve `pct`. A point
    without I/O in that direction has no level at all and is not counted."""
    need = needed_ios(pct)
    return {(p.rw_mix, p.block_size) for p in test.points
            if p.round in test.window_rounds and not p.na and p.get(ios_field)
            and p.get(ios_field) < need}


def level_us(bins: dict[int, int], pct: float, max_ns: float | None) -> float | None:
    """fio's `pct` percentile of `bins` in µs, capped at the measured maximum; None when the
    I/O count does not resolve it (or there are no I/Os)."""
    if not bins or not resolvable(histogram.total(bins), pct):
        return None
    value = histogram.percentile(bins, pct)
    if value is not None and max_ns is not None:
        value = min(value, max_ns)
    return None if value is None else value / 1e3


def load_bins(run: RunView, test: TestResult, rounds=None) -> list[PointBins]:
    """The histograms of `test`'s points in `rounds` (default: its measurement window),
    from their fio JSON. Points whose file is gone or has no bins are left out."""
    wanted = set(test.window_rounds if rounds is None else rounds)
    out = []
    for rec in test.records_of(records.Point):
        if isinstance(rec, records.FobPoint) or rec.round not in wanted or rec.na:
            continue
        found = _read(run.folder, rec.get("raw"))
        if found is not None:
            out.append(PointBins(rec.round, rec.rw_mix, rec.block_size, *found))
    return out


def _read(folder: Path, raw) -> tuple[dict[int, int], float | None] | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        summary = summarize(parse_output((folder / raw).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, FioOutputError, KeyError, TypeError, ValueError):
        return None
    busy = [d for d in (summary.read, summary.write) if d.total_ios]
    if not busy or not all(d.lat_histogram for d in busy):
        return None
    return histogram.merge(*(d.lat_histogram for d in busy)), summary.lat_max_ns


def cells(test: TestResult, found: list[PointBins]) -> list[QosCell]:
    """Every non-N/A cell of the test, in loop order, with its QoS levels."""
    out = []
    na = {(c.rw_mix, c.block_size) for c in test.cells if c.na}
    for mix in test.rw_mixes:
        for bs in test.block_sizes:
            if (mix, bs) in na:
                continue
            mine = [p for p in found if (p.rw_mix, p.block_size) == (mix, bs)]
            levels = tuple(_level(mine, pct) for pct in LEVELS)
            out.append(QosCell(mix, bs, levels, min((p.ios for p in mine), default=None),
                               len(mine), histogram.merge(*(p.bins for p in mine))))
    return out


def _level(points: list[PointBins], pct: float) -> Level:
    if not points:
        return Level(pct, NO_BINS, None)
    if not all(resolvable(p.ios, pct) for p in points):
        return Level(pct, NOT_RESOLVABLE, None)
    values = [level_us(p.bins, pct, p.max_ns) for p in points]
    return Level(pct, OK, sum(values) / len(values))
