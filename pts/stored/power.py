"""A stored run's power (issue 51 §3): the point_power windows of --power's sources, read into
each point's figures, and the model of the report's Power page. Renderer-free.

Each point's figures (PointView.values, so every cell reader finds them as it finds IOPS:
pts.stored.cells, the figure catalogue's rows) come from the FIRST source of the run that
has a window of it (--power's order): `power_w` (mean W over the point's fio I/O),
`energy_j`, `iops_per_w` and `mbps_per_w` (the point's IOPS and MB/s over that mean W). A
cell's figure is then the mean of its measurement-window points' figures, as IOPS is. A
point measured again has a later window: the last one stands, as the point's last record
does. The other sources are on the Power page, each named with what it measures.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pts.results import records
from pts.stored import power_phases
from pts.stored.cells import fob_vs_window, window_cells
from pts.stored.model import PointView, RunView, TestResult

FIELDS = ("power_w", "energy_j", "iops_per_w", "mbps_per_w")


def windows(recs: Iterable[records.Record], source: str | None = None) -> dict:
    """{(round, index): the last point_power of `source` (None: the first source seen)}."""
    found = [r for r in recs if isinstance(r, records.PointPower)]
    source = source or (found[0].source if found else None)
    return {(r.round, r.index): r for r in found if r.source == source}


def figures(point: PointView, win: records.PointPower) -> dict[str, float]:
    mean = win.mean_w
    out = {"energy_j": win.energy_j}
    if mean:
        out["power_w"] = mean
        out |= {f"{k}_per_w": point.get(k) / mean for k in ("iops", "mbps")
                if point.get(k) is not None}
    return out


def merged(points: Sequence[PointView], recs: Iterable[records.Record]) -> tuple:
    """`points` with their power figures in `values` (unchanged without --power)."""
    found = windows(recs)
    if not found:
        return tuple(points)
    return tuple(dataclasses.replace(p, values=p.values | figures(p, found[(p.round, p.index)]))
                 if (p.round, p.index) in found else p for p in points)


@dataclass(frozen=True)
class Latest:
    """The newest round with power windows (the first source's) of a test: its points' mean
    W (their energy over their covered seconds) and I/Os per joule (their IOPS x covered
    seconds over their energy: IOPS/W); of WSAT its newest sample, of XSR its newest group.
    /metrics' power gauges (pts.serve.metrics)."""
    round: int
    mean_w: float
    iops_per_w: float | None


def latest(test: TestResult) -> Latest | None:
    """None: no point of the test has a covered window (a run without --power)."""
    found = windows(test.records_of(records.PointPower))
    by_key = {(p.round, p.index): p for p in test.points}
    covered = [(k, w) for k, w in found.items() if w.covered_s > 0 and k in by_key]
    if not covered:
        return _latest_phase(test)
    newest = max(k[0] for k, _ in covered)
    mine = [(by_key[k], w) for k, w in covered if k[0] == newest]
    joules = math.fsum(w.energy_j for _, w in mine)
    ios = [p.get("iops") * w.covered_s for p, w in mine if p.get("iops") is not None]
    return Latest(newest, joules / math.fsum(w.covered_s for _, w in mine),
                  math.fsum(ios) / joules if ios and joules > 0 else None)


def _latest_phase(test: TestResult) -> Latest | None:
    """A test without rounds of points: WSAT's newest sample, XSR's newest group (the parts
    it goes by), its window's mean W and its IOPS over that W; None: no such window."""
    found = power_phases.last(test.records_of(records.PhasePower))
    for phase in ("sample", "group"):
        mine = [(n, w) for (p, n), w in found.items() if p == phase and w.mean_w]
        if mine:
            number, w = max(mine, key=lambda x: x[0])
            iops = power_phases.iops_of(test, phase, number)
            return Latest(number, w.mean_w, iops / w.mean_w if iops is not None else None)
    return None


@dataclass(frozen=True)
class Source:
    name: str
    measures: str
    interval_s: float
    kind: str
    detail: str
    error: str | None
    windows: int          # this test's point windows of it
    with_gaps: int        # of them, those with a gap
    uncovered_s: float    # their uncovered seconds, summed
    mean_w: float | None  # over this test's window rounds' points (None: none covered)


@dataclass(frozen=True)
class Page:
    """The Power page of one test: its sources, per cell the window's W and per-watt figure
    (and FOB's where the test has a --fob-sweep), per round the tracking variables' W."""
    per_watt: str                     # "iops" or "mbps"
    sources: tuple[Source, ...]
    cells: tuple[tuple, ...]          # (mix, bs, W, per W, FOB W or None, FOB per W or None)
    rounds: tuple[tuple, ...]         # (round, in window, label, tracking value, W, per W)
    gaps: tuple[tuple, ...]           # (source, round, point index, [[from, to], ...])
    # the first source's round_power records: (round, in window, J, mean W, coverage)
    round_energy: tuple[tuple, ...] = ()
    # the first source's phase_power records (pts.stored.power_phases.rows): (phase, number,
    # J, mean W, coverage, the figure per W) of WSAT's run and samples, HIR's wait states,
    # XSR's groups
    phases: tuple[tuple, ...] = ()


def page(run: RunView, test: TestResult) -> Page | None:
    """None: the test has no point_power nor phase_power record (run without --power)."""
    mine = test.records_of(records.PointPower)
    phased = test.records_of(records.PhasePower)
    if not mine and not phased:
        return None
    per = "mbps" if test.name.startswith(("throughput", "xsr")) else "iops"
    window = set(test.window_rounds)
    infos = {s.name: s for s in run.records_of(records.PowerSourceInfo)}
    names = list(dict.fromkeys(r.source for r in (*mine, *phased)))
    if not mine:        # a test without rounds of points: its phases alone
        return Page(per, tuple(_phase_source(infos.get(n), n, phased) for n in names), (), (),
                    (), (), power_phases.rows(test, names[0]))
    sources = []
    for name in names:
        last = windows(mine, name)
        pts = [w for w in last.values() if w.round in window]
        covered = math.fsum(w.covered_s for w in pts)
        info = infos.get(name)
        sources.append(Source(
            name, info.measures if info else "?", info.interval_s if info else math.nan,
            info.kind if info else "?", info.detail if info else "(no power_source record)",
            info.error if info else None, len(last), sum(1 for w in last.values() if w.gaps),
            math.fsum(b - a for w in last.values() for a, b in w.gaps),
            math.fsum(w.energy_j for w in pts) / covered if covered else None))
    fob_w = {(m, bs): first for m, bs, first, _, _ in fob_vs_window(test, "power_w")}
    fob_per = {(m, bs): first for m, bs, first, _, _ in fob_vs_window(test, f"{per}_per_w")}
    cells = tuple((w.rw_mix, w.block_size, w.mean, p.mean, fob_w.get((w.rw_mix, w.block_size)),
                   fob_per.get((w.rw_mix, w.block_size)))
                  for w, p in zip(window_cells(test, "power_w"),
                                  window_cells(test, f"{per}_per_w"), strict=True))
    by_key = {(p.round, p.rw_mix, p.block_size): p for p in test.points}
    rounds = tuple((r.number, r.number in window, t.label, r.tracking.get(t.label),
                    (pt := by_key.get((r.number, t.rw_mix, t.block_size))) and pt.get("power_w"),
                    pt and pt.get(f"{per}_per_w"))
                   for r in test.rounds for t in test.tracking)
    gaps = tuple((name, w.round, w.index, w.gaps) for name in names
                 for w in windows(mine, name).values() if w.gaps)
    whole = [r for r in test.records_of(records.RoundPower) if r.source == names[0]]
    energy = tuple((r.round, r.round in window, r.energy_j, r.mean_w,
                    r.covered_s / (r.end - r.start) if r.end > r.start else 0.0)
                   for r in whole)
    return Page(per, tuple(sources), cells, rounds, gaps, energy,
                power_phases.rows(test, names[0]))


def _phase_source(info, name: str, phased) -> Source:
    """A source of a test without rounds of points: its windows are the phases'; its W over
    the phases that span the test's parts whole (WSAT's run, HIR's wait states, XSR's
    groups)."""
    last = power_phases.last(phased, name)
    whole = [w for (p, _), w in last.items() if p in power_phases.WHOLE]
    covered = math.fsum(w.covered_s for w in whole)
    return Source(
        name, info.measures if info else "?", info.interval_s if info else math.nan,
        info.kind if info else "?", info.detail if info else "(no power_source record)",
        info.error if info else None, len(last), sum(1 for w in last.values() if w.gaps),
        math.fsum(b - a for w in last.values() for a, b in w.gaps),
        math.fsum(w.energy_j for w in whole) / covered if covered else None)
