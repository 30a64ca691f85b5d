"""What the rwsw-replay pages compute from a stored run (issue 32 §4): per capture step, the
replay's figures beside the capture's in-situ ones, and the totals of both.

Each step's point records (pts.testdefs.rwsw.replay) its IOPS, mean response time, the OIO
target and achieved, the largest share miss of its streams, and the capture's in-situ IOPS
and mean response time (ms) copied from the ATW's [[step]]; the test_start's `steps` list
is the plan, so a step that did not run is still a row (its replay figures None).

Totals: the mean IOPS weighted by time (IOPS x seconds / seconds) and the mean response time
weighted by I/Os (RT x IOPS x seconds / I/Os), the replay over its steps' replay lengths,
the capture over the native lengths of the steps that recorded in-situ figures (a step
without them is named, never read as 0).

A step replayed from its iolog ([rwsw_replay] hold "iolog") records the shares of the
replayed log (the part fio completed: fio's one job cannot tell the streams apart) and that
part's I/Os and bytes per direction beside fio's (`log_vs_fio`): its shares are labelled "of
the replayed log", and a step whose log is not what fio did is not within tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pts.results.parameters import RwswParameters, RwswStep
from pts.stored.model import TestResult
from pts.stored.rwsw import tolerance

MS_US = 1000.0
NOT_PLANNED = RwswStep()      # a step recorded without a test_start plan: its figures None


@dataclass(frozen=True)
class StepRow:
    step: int
    start_s: float | None          # where the step starts in the capture
    seconds: float | None          # its native length in the capture
    replay_seconds: float | None   # its replay length (x time scale, >= min_step_seconds)
    oio_target: float | None
    oio_achieved: float | None
    iops: float | None             # the replay's
    insitu_iops: float | None      # the capture's (None: the ATW's step has none)
    lat_mean_us: float | None
    insitu_rt_us: float | None
    miss_pts: float | None         # the largest |achieved - target| share of its streams
    within: bool | None            # miss within the test's share tolerance (None: unknown)
    ran: bool                      # a point was recorded for the step
    of_log: bool = False           # its shares are those of the replayed iolog
    log_matches_fio: bool | None = None  # that log's I/Os and bytes per direction = fio's


@dataclass(frozen=True)
class Total:
    steps: tuple[int, ...]         # the steps it is over
    seconds: float
    iops: float | None             # time-weighted mean
    rt_us: float | None            # I/O-weighted mean


def steps(test: TestResult) -> list[StepRow]:
    """One row per step of the test_start's plan (or, without one, per recorded point)."""
    planned = test.typed.steps if isinstance(test.typed, RwswParameters) else None
    plan = {s.step: s for s in planned or () if s.step is not None}
    points = {}
    for p in test.points:
        if not p.na:
            number = p.get("step") or (p.index + 1 if p.index is not None else None)
            if number is not None:
                points[int(number)] = p
    limit = tolerance(test)
    rows = []
    for number in sorted(set(plan) | set(points)):
        s, p = plan.get(number, NOT_PLANNED), points.get(number)
        got = p.get if p is not None else _none
        rt_ms = _first(got("insitu_rt_mean_ms"), s.insitu_rt_mean_ms)
        miss = got("share_miss_pts")
        checked = p.log_vs_fio if p is not None else ()
        matches = None if not checked else all(c.get("match") is True for c in checked)
        rows.append(StepRow(
            number, _first(got("step_start_s"), s.start_s),
            _first(got("step_seconds"), s.seconds),
            _first(got("replay_seconds"), s.replay_seconds),
            _first(got("oio_target"), s.oio), got("oio_achieved"),
            p.iops if p is not None else None,
            _first(got("insitu_iops"), s.insitu_iops),
            p.lat_mean_us if p is not None else None,
            None if rt_ms is None else rt_ms * MS_US, miss,
            None if miss is None or limit is None else miss <= limit and matches is not False,
            p is not None, bool(checked), matches))
    return rows


def _none(_key: str) -> None:
    return None


def _first(*values):
    return next((float(v) for v in values if isinstance(v, int | float)
                 and not isinstance(v, bool)), None)


def replay_total(rows: list[StepRow]) -> Total:
    """The replay pass: every step that ran, over its replay length."""
    return _total([(r.step, r.replay_seconds, r.iops, r.lat_mean_us) for r in rows if r.ran])


def insitu_total(rows: list[StepRow]) -> Total:
    """The capture: the steps with in-situ figures, over their native length."""
    return _total([(r.step, r.seconds, r.insitu_iops, r.insitu_rt_us) for r in rows])


def _total(rows) -> Total:
    used = [(n, s, i, rt) for n, s, i, rt in rows if s and i is not None]
    seconds = math.fsum(s for _, s, _, _ in used)
    ios = math.fsum(s * i for _, s, i, _ in used)
    timed = [(s * i, rt) for _, s, i, rt in used if rt is not None]
    weight = math.fsum(w for w, _ in timed)
    return Total(tuple(n for n, _, _, _ in used), seconds, ios / seconds if seconds else None,
                 math.fsum(w * rt for w, rt in timed) / weight if weight else None)


def without_insitu(rows: list[StepRow]) -> list[int]:
    return [r.step for r in rows if r.insitu_iops is None]


def log_steps(rows: list[StepRow]) -> list[int]:
    """The steps whose shares are those of the replayed log (hold "iolog")."""
    return [r.step for r in rows if r.of_log]


def log_mismatches(rows: list[StepRow]) -> list[int]:
    """The steps whose replayed log's I/Os or bytes per direction are not fio's."""
    return [r.step for r in rows if r.log_matches_fio is False]
