"""A test point cell's window statistic: per (R/W mix, block size), the mean of each measured
metric over the measurement-window rounds. The one computation behind the report's tables,
the CSV and JSON exports, compare and qualify (they used to average twice, and could drift).

The cell helpers every reader of a stored run uses (the report, the exports, the index,
compare, qualify) stand here, beside the statistic and the figure catalogue
(pts.stored.figures): `cell_label`, `cells` (every cell as a JSON-ready dict), `fob`.

A cell recorded as N/A (in any round) stays N/A; a metric with no value in the window has no
mean (None), never 0; a metric only some window points hold is averaged over those.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pts.results.parameters import SteadyParameters
from pts.stored.model import Cell, TestResult

# PointView.values keys that describe a point rather than measure it.
NOT_METRICS = frozenset({"round", "index", "read_pct", "block_size", "start", "end", "time",
                         "time_scale"})


@dataclass(frozen=True)
class CellWindow:
    """One cell's statistic over the measurement window."""

    rw_mix: str
    block_size: int
    na: bool
    reason: str | None                # the last N/A record's reason
    rounds: tuple[int, ...]           # the window rounds with a measured (not N/A) point
    means: dict[str, float]           # metric -> mean over the window points that hold it
    counts: dict[str, int]            # metric -> how many window points the mean is over

    def cell(self, metric: str) -> Cell:
        """The cell of one metric, as the report's tables show it."""
        if self.na:
            return Cell(self.rw_mix, self.block_size, None, True, self.reason, 0)
        return Cell(self.rw_mix, self.block_size, self.means.get(metric), False, None,
                    self.counts.get(metric, 0))


def window_statistics(test: TestResult) -> tuple[CellWindow, ...]:
    """Every cell of `test`, in loop order (R/W mix, then block size)."""
    window = set(test.window_rounds)
    out = []
    for mix, bs in cell_keys(test):
        mine = [p for p in test.points if p.rw_mix == mix and p.block_size == bs]
        na = [p for p in mine if p.na]
        used = [p for p in mine if p.round in window and not p.na]
        values: dict[str, list[float]] = {}
        for p in used:
            for key, value in p.values.items():
                if key not in NOT_METRICS and value is not None:
                    values.setdefault(key, []).append(value)
        means = {} if na else {k: math.fsum(v) / len(v) for k, v in sorted(values.items())}
        counts = {} if na else {k: len(v) for k, v in sorted(values.items())}
        out.append(CellWindow(mix, bs, bool(na), na[-1].reason if na else None,
                              tuple(sorted({p.round for p in used})), means, counts))
    return tuple(out)


def cell_keys(test: TestResult) -> list[tuple[str, int]]:
    """The (R/W mix, block size) cells in loop order: the declared matrix; a test that
    declares none (the RWSW tests: one point per stream, or the whole ATW) has the cells its
    points have, not their cross product (a SEQ 128K W stream is no 100/0 128K cell)."""
    steady = test.typed if isinstance(test.typed, SteadyParameters) else None
    if steady is not None and steady.rw_mixes and steady.block_sizes:
        return [(m, bs) for m in test.rw_mixes for bs in test.block_sizes]
    return list(dict.fromkeys((p.rw_mix, p.block_size) for p in test.points))


def window_cells(test: TestResult, metric: str) -> tuple[Cell, ...]:
    """Per cell, in loop order, the window mean of `metric` (a Point field such as "iops",
    "mbps", "lat_mean_us")."""
    return tuple(c.cell(metric) for c in window_statistics(test))


def fob_vs_window(test: TestResult, metric: str = "iops"):
    """Per cell with a --fob-sweep value: (R/W mix, block size, FOB value, window mean,
    FOB / window mean or None), in loop order."""
    fob = {(p.rw_mix, p.block_size): p.get(metric) for p in test.fob_points}
    out = []
    for cell in window_cells(test, metric):
        first = fob.get((cell.rw_mix, cell.block_size))
        if first is None:
            continue
        ratio = first / cell.mean if cell.mean else None
        out.append((cell.rw_mix, cell.block_size, first, cell.mean, ratio))
    return out


def cell_label(test: TestResult, rw_mix: str, block_size: int) -> str:
    """A cell as the report labels it: "RND 4KiB 0/100" (access, block size, R/W mix)."""
    access = test.parameters.get("access") or "RND"
    return f"{access} {block_size / 1024:g}KiB {rw_mix}"


def cells(test: TestResult) -> list[dict]:
    """Every cell's window statistic (the one the report's tables show), as `export --json`
    writes it."""
    return [{"label": cell_label(test, c.rw_mix, c.block_size), "rw_mix": c.rw_mix,
             "block_size": c.block_size, "na": c.na, "reason": c.reason,
             "rounds": list(c.rounds), "metrics": dict(c.means)}
            for c in window_statistics(test)]


def fob(test: TestResult) -> list[dict]:
    """--fob-sweep points beside the window mean of the same cell (IOPS)."""
    window = {(c.rw_mix, c.block_size): c.cell("iops").mean for c in window_statistics(test)}
    out = []
    for f in test.fob_points:
        mean = window.get((f.rw_mix, f.block_size))
        out.append({"label": cell_label(test, f.rw_mix, f.block_size), "rw_mix": f.rw_mix,
                    "block_size": f.block_size, "fob_iops": f.iops, "ss_iops": mean,
                    "fob_ss_ratio": f.iops / mean if f.iops is not None and mean else None})
    return out
