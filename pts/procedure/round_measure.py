"""Measuring one round of a round-based test (`RoundMeasure`): its points as one fio run
(pts.tools.fio_round) in the run's round mode; pipelined, each point starts when the one
before it has completed all its I/O, and a point that overlaps anyway is measured again
(never recorded overlapping)."""

from __future__ import annotations

from pts.procedure import ceiling, power_windows
from pts.procedure.declaration import RoundTest
from pts.procedure.rounds import TestPoint
from pts.results import records
from pts.run import Run
from pts.tools.fio_round import run_round

# A round's fio run gets this long before it is called hung: three times its points (fio
# start-up, ramp and a device that drains slowly) plus two minutes of slack for a slow host.
TIMEOUT_FACTOR, TIMEOUT_SLACK_S = 3, 120
# Pipelined rounds: point k's I/O starts when point k-1's has all completed (fio_round's
# gate): measured 2.6-5.5 ms from the last completion to the next point's first I/O (tmpfs
# loop device, docs/performance.md "Pipelined rounds that hold"). PIPELINE_GAP_MS is what
# the time estimates allow between points (pts.procedure.plan). A point overlapping the one
# before by more than MAX_OVERLAP of a point (issue: "measurements never overlap silently";
# the gate makes it a fault: a timing log or a gate gone wrong) is not recorded: it is
# measured again stonewalled after the round; FALLBACK_ROUNDS such rounds in a row and
# WHOLE_TEST.
PIPELINE_GAP_MS, MAX_OVERLAP, FALLBACK_ROUNDS = 10, 0.01, 3
WHOLE_TEST = "the test's later rounds run stonewalled"    # a RoundMode that holds on --resume
# Before the gate, a test's first round ran stonewalled to learn each point's drain: the
# reason its round_mode record carries, which pts.stored.waf reads in runs made then.
LEARNING = "measured stonewalled to learn each point's drain"


def point_timeout(point_seconds: int) -> int:
    return point_seconds * TIMEOUT_FACTOR + TIMEOUT_SLACK_S


class RoundMeasure:
    """Measures the points of one round as one fio run (pts.tools.fio_round) in the run's
    round mode. A point overlapping the previous one by more than `MAX_OVERLAP` of a point
    is never recorded: it is measured again stonewalled (round_mode records, said on the
    console)."""

    def __init__(self, run: Run, decl: RoundTest):
        self.run, self.decl = run, decl
        self.mode = decl.round_mode or run.settings.round_mode
        if run.resume is not None:       # a whole-test fallback before the stop still holds
            if any(isinstance(r, records.RoundMode) and r.test == decl.test
                   and WHOLE_TEST in (r.reason or "") for r in run.resume.records):
                self.mode = "stonewalled"
        self.seconds = decl.point_seconds or run.settings.point_seconds
        self.drains: dict[int, float | None] = {}    # point index -> its last drain (ms)
        self.fallbacks = 0               # rounds in a row with points measured stonewalled

    def __call__(self, points: list[TestPoint], round_no: int) -> dict[int, dict]:
        found = self._round(points, round_no)
        for p in points:
            if found[p.index].get("mix_warning"):
                text = f"round {round_no}, {p.label}: {found[p.index]['mix_warning']}"
                self.run.write(f"[pts {self.decl.test}] WARNING {text}")
                self.run.deviation(self.decl.test, text)
        return found

    def _round(self, points: list[TestPoint], round_no: int) -> dict[int, dict]:
        found = self._measure(points, round_no, self.mode)
        over = self.overlapping(points, found) if self.mode == "pipelined" else []
        if not over:
            self.fallbacks = 0 if self.mode == "pipelined" else self.fallbacks
            return found
        # Only the points that overlapped are measured again, stonewalled (their own fio
        # run after the round); the round's other points stand.
        self.fallbacks += 1
        whole = self.fallbacks >= FALLBACK_ROUNDS
        folder = f"round-{round_no:02d}-stonewalled"
        self._said(round_no, over, found, (
            f"these points are measured again stonewalled after the round (raw: {folder}); "
            + (f"{WHOLE_TEST} ({FALLBACK_ROUNDS} rounds in a row overlapped)" if whole
               else "the next round goes on pipelined")))
        self.mode = "stonewalled" if whole else self.mode
        return found | self._measure(over, round_no, "stonewalled", folder)

    def overlapping(self, points: list[TestPoint], found: dict[int, dict]) -> list[TestPoint]:
        """The points that overlapped their predecessor by more than the limit."""
        limit = MAX_OVERLAP * self.seconds * 1000
        return [p for p in points if (found[p.index]["overlap_ms"] or 0) > limit]

    def _said(self, round_no: int, over: list[TestPoint], found: dict[int, dict],
              how: str) -> None:
        """Say and record (a round_mode record) why and how points are measured again."""
        ranked = sorted(over, key=lambda p: -found[p.index]["overlap_ms"])
        said = ", ".join(f"{p.label} by {found[p.index]['overlap_ms']:.0f} ms"
                         for p in ranked[:3])
        more = f" and {len(over) - 3} more" if len(over) > 3 else ""
        reason = (f"round {round_no}: {len(over)} point(s) overlapped the previous point by "
                  f"more than {MAX_OVERLAP:.0%} of a point ({said}{more}); {how}")
        self.run.write(f"[pts {self.decl.test}] {reason}")
        self.run.ledger.append(records.RoundMode(test=self.decl.test, round=round_no,
                                                 mode="stonewalled", reason=reason))

    def _measure(self, points: list[TestPoint], round_no: int, mode: str,
                 folder: str | None = None) -> dict[int, dict]:
        """`points` in one fio run (`folder`: points measured again after their round)."""
        run, decl = self.run, self.decl
        out = run.raw_dir(decl.test, folder or f"round-{round_no:02d}")
        results = power_windows.measured(
            run, decl.test, round_no, [p.index for p in points],
            lambda: run_round(run.fio, run.device.path, [decl.job(p) for p in points], out, mode,
                              timeout=point_timeout(len(points) * self.seconds),
                              histograms=decl.histograms))
        self.drains |= {p.index: r.drain_ms for p, r in zip(points, results, strict=True)}
        extra = decl.point_fields or (lambda p, r: {})
        return {p.index: decl.fields(r.summary) | _toio(p) | extra(p, r) | {
            "start": r.start, "end": r.end, "overlap_ms": r.overlap_ms,
            "raw": run.relative(r.json_path),
            "host_bound": ceiling.point_mark(run, decl, p, r.summary)}
            for p, r in zip(points, results, strict=True)}


def _toio(point: TestPoint) -> dict:
    """A point at its own TC/QD (DIRTH, CBW) records them."""
    if point.thread_count is None:
        return {}
    return {"thread_count": point.thread_count, "queue_depth": point.queue_depth}
