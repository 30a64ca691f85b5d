"""The host's ceiling and the host-bound points of a test (issue 33 §1), from stored data.

Before a test the runner runs its heaviest points on a RAM-backed block device of the same
host (null_blk, or a loop device over tmpfs), same engine, same CPUs: the `host_ceiling`
record (docs/results-format.md). A point whose figure reaches a share of that ceiling (or
whose latency is within a margin of the host's floor) carries `host_bound` {by, figure,
ceiling, limit, ceiling_label}: its figure may be the host's, not the drive's. Here: each
test's ceiling, and its host-bound points of the measurement window (the window rounds'
points; WSAT: its result), for the report (page 1's warning, the Host Ceiling page, the
marks on the result tables), the JSON export and compare. A host_ceiling record with `error`
set was not measured: that is said, with why.
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.results import records
from pts.stored import fmt
from pts.stored.ledger_view import float_or_none, int_or_none
from pts.stored.model import PointView, RunView, TestResult

MARK = "\u2020"        # dagger, in the PDF base fonts' WinAnsi set (pts.stored.fmt)
UNITS = {"IOPS": "IOPS", "MB/s": "MB/s", "latency": "\u00b5s"}


@dataclass(frozen=True)
class CeilingJob:
    """One of the test's heaviest points as run on the RAM-backed device."""

    label: str
    rw: str | None
    block_size: int | None
    numjobs: int | None
    iodepth: int | None
    iops: float | None
    mbps: float | None
    lat_mean_us: float | None


@dataclass(frozen=True)
class Ceiling:
    """A test's host_ceiling record. `error`: not measured, and why."""

    device: str | None
    engine: str
    cpus: str | None
    seconds: float | None
    jobs: tuple[CeilingJob, ...]
    share: float | None
    margin: float | None
    error: str | None

    @property
    def measured(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class BoundPoint:
    """A point judged host-bound: its figure against the host's ceiling (or floor)."""

    round: int | None          # None: WSAT's whole-run result
    rw_mix: str
    block_size: int | None
    label: str                 # "RND 4KiB 0/100" (with TC/QD where the point has them)
    by: str                    # "IOPS", "MB/s" or "latency"
    figure: float | None
    ceiling: float | None
    limit: float | None
    ceiling_label: str

    @property
    def where(self) -> str:
        return self.label if self.round is None else f"round {self.round}, {self.label}"

    def text(self) -> str:
        """"round 5, RND 4KiB 0/100: 612,000 IOPS; host ceiling 700,000 IOPS (limit 560,000
        IOPS; ceiling job RND 4KiB 0/100 TC4/QD32)"."""
        unit = UNITS.get(self.by, "")
        what = "floor" if self.by == "latency" else "ceiling"
        figure = f"{'mean latency ' if self.by == 'latency' else ''}{fmt.num(self.figure)}"
        return (f"{self.where}: {figure} {unit}; host {what} {fmt.num(self.ceiling)} {unit} "
                f"(limit {fmt.num(self.limit)} {unit}; ceiling job {self.ceiling_label})")


@dataclass(frozen=True)
class HostBound:
    """One test: its ceiling (None: no host_ceiling record) and its host-bound points."""

    test: str
    title: str
    ceiling: Ceiling | None
    window: tuple[BoundPoint, ...]     # host-bound points of the measurement window
    window_points: int                 # points of the measurement window (M of "N of M")
    outside: int                       # host-bound points outside the window
    rounds: tuple[int, int] | None = None   # the measurement window (None: WSAT, XSR, none)
    unit: str = "points"               # what window_points counts (XSR: "access groups")

    def by(self) -> dict[str, int]:
        """How many window points are host-bound by each measure, in a fixed order."""
        counts = {k: sum(1 for b in self.window if b.by == k) for k in UNITS}
        others = {b.by: 0 for b in self.window if b.by not in UNITS}
        for b in self.window:
            if b.by in others:
                others[b.by] += 1
        return {k: n for k, n in (counts | others).items() if n}


def ceiling(test: TestResult) -> Ceiling | None:
    rec = test.host_ceiling
    if rec is None:
        return None
    jobs = tuple(CeilingJob(str(j.get("label") or "?"), j.get("rw"),
                            int_or_none(j.get("block_size")), int_or_none(j.get("numjobs")),
                            int_or_none(j.get("iodepth")), float_or_none(j.get("iops")),
                            float_or_none(j.get("mbps")), float_or_none(j.get("lat_mean_us")))
                 for j in rec.points or () if isinstance(j, dict))
    return Ceiling(rec.device, str(rec.engine or "not recorded"), rec.cpus,
                   float_or_none(rec.seconds), jobs, float_or_none(rec.share),
                   float_or_none(rec.margin), str(rec.error) if rec.error else None)


def point_label(test: TestResult, p: PointView) -> str:
    steady = test.steady_parameters
    access = str(steady and steady.access or "RND")
    label = f"{access} {p.rw_mix}" if not p.block_size else \
        f"{access} {fmt.block_size(p.block_size).replace(' ', '')} {p.rw_mix}"  # RWSW ATW: 0
    tc, qd = p.get("thread_count"), p.get("queue_depth")
    return label if tc is None or qd is None else f"{label} TC{tc:g}/QD{qd:g}"


def bound(found, rnd: int | None, mix: str, bs: int | None, label: str) -> BoundPoint | None:
    """The BoundPoint of a stored `host_bound` value (None: not host-bound, or not a
    judgement this reader can use)."""
    if not isinstance(found, dict) or not found.get("by"):
        return None
    return BoundPoint(rnd, mix, bs, label, str(found["by"]), float_or_none(found.get("figure")),
                      float_or_none(found.get("ceiling")), float_or_none(found.get("limit")),
                      str(found.get("ceiling_label") or "not recorded"))


def of_test(test: TestResult) -> HostBound:
    window = set(test.window_rounds)
    inside, outside, count = [], 0, 0
    for p in test.points:
        if p.na:
            continue
        b = bound(p.host_bound, p.round, p.rw_mix, p.block_size, point_label(test, p))
        if p.round in window:
            count += 1
            if b is not None:
                inside.append(b)
        elif b is not None:
            outside += 1
    if test.samples and test.result:      # WSAT: its whole-run result is its figure
        count += 1
        b = bound(test.result.get("host_bound"), None, "0/100", None, "WSAT result")
        if b is not None:
            inside.append(b)
    groups = {g.group: g for g in test.recovery if isinstance(g, records.XsrGroup)}
    for g in groups.values():             # XSR: each access group's whole-run figure (the
        count += 1                        # last record of a group run again wins)
        label = f"Group {g.group}: {str(g.pattern).upper()} " \
            f"{fmt.block_size(g.block_size).replace(' ', '')} W"
        b = bound(g.host_bound, None, "0/100", g.block_size, label)
        if b is not None:
            inside.append(b)
    if groups:
        return HostBound(test.name, test.title, ceiling(test), tuple(inside), count, outside,
                         None, "access groups")
    return HostBound(test.name, test.title, ceiling(test), tuple(inside), count, outside,
                     test.window)


def of_run(run: RunView) -> tuple[HostBound, ...]:
    return tuple(of_test(t) for t in run.tests)


def cell_marks(test: TestResult) -> dict[tuple[str, int | None], tuple[BoundPoint, ...]]:
    """Per (R/W mix, block size) cell of the result tables: its host-bound window points."""
    out: dict[tuple[str, int | None], list[BoundPoint]] = {}
    for b in of_test(test).window:
        out.setdefault((b.rw_mix, b.block_size), []).append(b)
    return {k: tuple(v) for k, v in out.items()}


def warning_text(hb: HostBound) -> str | None:
    """Page 1's declared warning of a test with host-bound window points, else None."""
    if not hb.window:
        return None
    by = ", ".join(f"by {k}: {n}" for k, n in hb.by().items())
    if hb.unit != "points":               # XSR: no result table carries the marks
        return (f"Host-bound: {len(hb.window)} of {hb.window_points} {hb.unit} of {hb.title} "
                f"are host-bound ({by}): their figures may be the host's, not the drive's "
                "(its Host Ceiling page lists them with both figures)")
    if hb.rounds is None and all(b.round is None for b in hb.window):     # WSAT's result
        return (f"Host-bound: the result of {hb.title} is host-bound ({by}): its figures may "
                "be the host's, not the drive's (its Host Ceiling page gives both figures)")
    where = "" if hb.rounds is None else \
        f" (measurement window, rounds {hb.rounds[0]}..{hb.rounds[1]})"
    return (f"Host-bound: {len(hb.window)} of {hb.window_points} points of {hb.title}{where} "
            f"are host-bound ({by}): their figures may be the host's, not the drive's (marked "
            f"{MARK} on its tables; its Host Ceiling page lists them with both figures)")


def warnings(tests) -> list[str]:
    """Run warnings (RunView.warnings): one per test with host-bound window points."""
    return [w for w in (warning_text(of_test(t)) for t in tests) if w]


def not_measured(run: RunView) -> list[str]:
    """One note per test whose ceiling was not measured (its record's `error`)."""
    return [f"{hb.title}: host ceiling not measured ({hb.ceiling.error})"
            for hb in of_run(run) if hb.ceiling is not None and not hb.ceiling.measured]


def summary(run: RunView) -> str:
    """One line for compare: whether the run has host-bound window points, per test."""
    found = [hb for hb in of_run(run) if hb.window]
    if found:
        return "; ".join(f"{hb.test}: {len(hb.window)} of {hb.window_points}" for hb in found)
    if any(hb.ceiling is not None and hb.ceiling.measured for hb in of_run(run)):
        return "none (host ceiling measured)"
    return "not measured (no host ceiling recorded)"
