"""--power over the tests without rounds of points (issue 51 §3): their phase_power windows
(pts.procedure.power_windows.phase / span) read into rows of the Power page and into the
figures of the test's own records, as pts.stored.power reads point windows into points.

A phase's figure per watt is the test's own figure of that part over its mean W: a WSAT
sample's IOPS (the whole run's for "run"), a HIR wait state's wait IOPS ("wait") and return
to baseline IOPS ("baseline"), an XSR group's mean MB/s over its intervals. The figures the
catalogue reads (pts.stored.figures): WSAT's `power_w` and `iops_per_w` over the final
steady-state window's samples (their energy over their covered seconds, their I/Os per
joule: IOPS/W), beside its ss_average; each HIR wait state's `wait_power_w` and
`wait_iops_per_w`; each XSR group's `power_w` and `mbps_per_w`. From the first source, the
last window of each phase and number (a redone state or group: its last), as the pages.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

from pts.results import records
from pts.stored.model import TestResult

# the phase that spans a test's part whole (the Power page's source figures)
WHOLE = ("run", "wait state", "group")


def last(recs: Iterable[records.Record], source: str | None = None) -> dict:
    """{(phase, number): the last phase_power of `source` (None: the first source seen)}."""
    found = [r for r in recs if isinstance(r, records.PhasePower)]
    source = source or (found[0].source if found else None)
    return {(r.phase, r.number): r for r in found if r.source == source}


def _per(test: TestResult, phase: str, number: int) -> float | None:
    """The test's own figure of a phase (IOPS, or XSR's MB/s), None where it has none."""
    if phase == "sample":
        return next((s.iops for s in test.samples if s.number == number), None)
    if phase == "run":
        return test.result.get("iops")
    if phase in ("wait", "baseline"):
        state = _last_of(test.recovery, records.HirState, "state").get(number)
        return state and (state.wait_iops if phase == "wait" else state.baseline_iops)
    if phase == "group":
        tps = [r.tp_mbps for r in _last_of(test.recovery, records.XsrInterval,
                                           "interval", number).values()]
        return math.fsum(tps) / len(tps) if tps else None
    return None


def iops_of(test: TestResult, phase: str, number: int) -> float | None:
    """A WSAT sample's IOPS, an XSR group's mean IOPS over its intervals (/metrics)."""
    if phase == "sample":
        return _per(test, phase, number)
    found = [r.iops for r in _last_of(test.recovery, records.XsrInterval, "interval",
                                      number).values()]
    return math.fsum(found) / len(found) if found else None


def _last_of(recs, kind: type, key: str, group: int | None = None) -> dict:
    return {getattr(r, key): r for r in recs if isinstance(r, kind)
            and (group is None or r.group == group)}


def rows(test: TestResult, source: str) -> tuple[tuple, ...]:
    """(phase, number, J, mean W, coverage, the figure per W or None), ledger order."""
    out = []
    for (phase, number), r in last(test.records_of(records.PhasePower), source).items():
        per = _per(test, phase, number)
        out.append((phase, number, r.energy_j, r.mean_w,
                    r.covered_s / (r.end - r.start) if r.end > r.start else 0.0,
                    per / r.mean_w if per is not None and r.mean_w else None))
    return tuple(out)


def result_figures(result: dict, samples, recs) -> dict:
    """WSAT's wsat_result with `power_w` and `iops_per_w` over its final window's samples
    (unchanged without sample windows)."""
    found = last(recs)
    window = result.get("ss_window") or ()
    if not found or len(window) != 2:
        return result
    mine = [(s, found[("sample", s.number)]) for s in samples
            if window[0] <= s.number <= window[1] and ("sample", s.number) in found]
    covered = math.fsum(w.covered_s for _, w in mine)
    joules = math.fsum(w.energy_j for _, w in mine)
    if not mine or covered <= 0 or joules <= 0:
        return result
    ios = math.fsum(s.iops * w.covered_s for s, w in mine if s.iops is not None)
    return result | {"power_w": joules / covered, "iops_per_w": ios / joules}


@dataclasses.dataclass(frozen=True, kw_only=True)
class PoweredHirState(records.HirState):
    """A hir_state as the read model shows it with --power: its wait run's mean W and wait
    IOPS per W (pts.stored.figures reads them as the record's other fields)."""
    wait_power_w: float | None = None
    wait_iops_per_w: float | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class PoweredXsrGroup(records.XsrGroup):
    """An xsr_group as the read model shows it with --power: its fio run's mean W and mean
    MB/s per W."""
    power_w: float | None = None
    mbps_per_w: float | None = None


def with_figures(recs: tuple, every: tuple) -> tuple:
    """`recs` with each hir_state / xsr_group that has a window (in `every`, the test's
    records) shown with its power figures (unchanged without one)."""
    found = last(every)
    if not found:
        return recs
    intervals = [r for r in every if isinstance(r, records.XsrInterval)]
    out = []
    for r in recs:
        if isinstance(r, records.HirState) and (w := found.get(("wait", r.state))):
            fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
            r = PoweredHirState(**fields, wait_power_w=w.mean_w, wait_iops_per_w=(
                r.wait_iops / w.mean_w if w.mean_w else None))
        elif isinstance(r, records.XsrGroup) and (w := found.get(("group", r.group))):
            tps = [x.tp_mbps for x in _last_of(intervals, records.XsrInterval, "interval",
                                               r.group).values()]
            mean = math.fsum(tps) / len(tps) if tps else None
            fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
            r = PoweredXsrGroup(**fields, power_w=w.mean_w, mbps_per_w=(
                mean / w.mean_w if mean is not None and w.mean_w else None))
        out.append(r)
    return tuple(out)
