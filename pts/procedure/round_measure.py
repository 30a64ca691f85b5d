"""Measuring one round of a round-based test (`RoundMeasure`): its points as one fio run (or
a few, pts.tools.fio_round) in the run's round mode; pipelined rounds with the gap each point
needs, learned from its predecessor's drain, and the rules for a round that overlaps anyway
(measured again, never recorded overlapping)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pts.procedure import ceiling
from pts.procedure.declaration import RoundTest
from pts.procedure.rounds import TestPoint
from pts.results import records
from pts.run import Run
from pts.tools.fio_round import PointResult, run_round

# A round's fio run gets this long before it is called hung: three times its points (fio
# start-up, ramp and a device that drains slowly) plus two minutes of slack for a slow host.
TIMEOUT_FACTOR, TIMEOUT_SLACK_S = 3, 120
# Pipelined rounds: point k's I/O starts at an exact time, a gap after point k-1's runtime
# (pts.tools.fio_round). 10 ms between points keeps a point's last completions clear of the
# next one's first I/O on the devices we measured (56-point rounds at 1 s on a tmpfs loop
# device, load 3.4: largest overlap 9 ms with 10 ms gaps, 16 ms with 5 ms) and costs 1 % at
# 1 s points, 0.02 % at the spec's 60 s; a point overlapping the one before by more than
# 1 % of a point (issue: "measurements never overlap silently") is not recorded.
PIPELINE_GAP_MS, MAX_OVERLAP = 10, 0.01
# A point still draining after its runtime (128 x 1 MiB writes) delays the next one: the gap
# before point k is PIPELINE_GAP_MS + DRAIN_MARGIN x the largest of its predecessor's last
# DRAIN_RUNS drains (measured: docs/performance.md, "Pipelined rounds that hold"). A round
# that overlaps is measured again pipelined with the gaps of its drains; the points that
# overlap again, again stonewalled; FALLBACK_ROUNDS such rounds in a row and WHOLE_TEST.
DRAIN_MARGIN, DRAIN_RUNS, FALLBACK_ROUNDS = 1.5, 3, 3
WHOLE_TEST = "the test's later rounds run stonewalled"    # a RoundMode that holds on --resume
# Where nothing is known of the points' drains yet (the first round a RoundMeasure runs: the
# test's first, or the first after --resume) the round runs stonewalled and its drains give
# the gaps: a pipelined first round with 10 ms gaps overlapped on every device seen (a tmpfs
# loop device: 4 points by up to 71 ms) and was measured twice (P1 of that round ~0.45).
LEARNING = "measured stonewalled to learn each point's drain"
# A gap costs its idle part, (DRAIN_MARGIN - 1) x the drain; a new fio run after the point
# has drained costs SEGMENT_COST_MS (a fio start ~0.3 s, design.md "Speed", + LEAD_MS of job
# set-up). A point draining longer than that (an emulated SSD: 128 x 1 MiB writes drained
# 43-49 s after a 1 s point) ends its segment: the points after it run as the next fio run,
# started when this one has finished (no overlap possible), instead of after a long gap.
SEGMENT_COST_MS = 800
# A round in which at most this share of its points overlapped (a drain that grew beyond its
# margin: the emulated SSD's drains changed by up to 136 % from one round to the next) has
# only those points measured again, stonewalled after it (about a point and a fio start
# each); more, and the whole round is measured again pipelined with the gaps of its drains.
FEW_OVERLAPS = 0.25


def point_timeout(point_seconds: int) -> int:
    return point_seconds * TIMEOUT_FACTOR + TIMEOUT_SLACK_S


class RoundMeasure:
    """Measures the points of one round as one fio run (pts.tools.fio_round) in the run's
    round mode; pipelined, with the gaps learned from the points' drains (`gaps`). A point
    overlapping the previous one by more than `MAX_OVERLAP` of a point is never recorded:
    the round is measured again (round_mode records, said on the console)."""

    def __init__(self, run: Run, decl: RoundTest):
        self.run, self.decl = run, decl
        self.mode = decl.round_mode or run.settings.round_mode
        if run.resume is not None:       # a whole-test fallback before the stop still holds
            if any(isinstance(r, records.RoundMode) and r.test == decl.test
                   and WHOLE_TEST in (r.reason or "") for r in run.resume.records):
                self.mode = "stonewalled"
        self.seconds = decl.point_seconds or run.settings.point_seconds
        self.slot_ms = self.seconds * 1000 + PIPELINE_GAP_MS
        self.gaps: dict[int, int] = {}   # point index -> gap before it (ms), learned
        self.drains: dict[int, float | None] = {}    # point index -> its last drain (ms)
        self.seen: dict[int, list[float]] = {}  # point index -> its drains, last DRAIN_RUNS
        self.fallbacks = 0               # rounds in a row with points measured stonewalled
        self.order: list[TestPoint] = []     # the last round's points, in loop order

    def __call__(self, points: list[TestPoint], round_no: int) -> dict[int, dict]:
        found = self._round(points, round_no)
        for p in points:
            if found[p.index].get("mix_warning"):
                text = f"round {round_no}, {p.label}: {found[p.index]['mix_warning']}"
                self.run.write(f"[pts {self.decl.test}] WARNING {text}")
                self.run.deviation(self.decl.test, text)
        return found

    def _round(self, points: list[TestPoint], round_no: int) -> dict[int, dict]:
        if self.mode == "pipelined" and not self.seen and len(points) > 1:
            reason = (f"round {round_no}: {LEARNING} (the gap the point after it needs); "
                      "the next rounds run pipelined with those gaps")
            self.run.write(f"[pts {self.decl.test}] {reason}")
            self.run.ledger.append(records.RoundMode(test=self.decl.test, round=round_no,
                                                     mode="stonewalled", reason=reason))
            return self._measure(points, round_no, "stonewalled")
        found = self._measure(points, round_no, self.mode)
        if self.mode != "pipelined":
            return found
        over = self.overlapping(points, found)
        if over and len(over) <= len(points) * FEW_OVERLAPS:
            # a few points: only they are measured again, stonewalled, after the round
            folder = f"round-{round_no:02d}-stonewalled"
            self._said(round_no, over, found, (
                f"these points are measured again stonewalled after the round (raw: "
                f"{folder}); the next round goes on pipelined with the gaps learned"),
                "stonewalled")
            return found | self._measure(over, round_no, "stonewalled", folder)
        if over:          # the whole round again, pipelined with the gaps of its drains
            self._said(round_no, over, found, self._again_pipelined(over))
            _set_aside(self.run.raw_dir(self.decl.test, f"round-{round_no:02d}"),
                       "overlapped")         # its raw output is kept, never recorded
            found = self._measure(points, round_no, "pipelined")
            over = self.overlapping(points, found)
        if not over:
            self.fallbacks = 0
            return found
        # Only the points that overlapped again are measured again, stonewalled (their own
        # fio run after the round); the round's other points stand.
        self.fallbacks += 1
        whole = self.fallbacks >= FALLBACK_ROUNDS
        folder = f"round-{round_no:02d}-stonewalled"
        self._said(round_no, over, found, (
            f"these points are measured again stonewalled after the round (raw: {folder}); "
            + (f"{WHOLE_TEST} ({FALLBACK_ROUNDS} rounds in a row overlapped twice)" if whole
               else "the next round goes on pipelined with the gaps learned")), "stonewalled")
        self.mode = "stonewalled" if whole else self.mode
        return found | self._measure(over, round_no, "stonewalled", folder)

    def overlapping(self, points: list[TestPoint], found: dict[int, dict]) -> list[TestPoint]:
        """The points that overlapped their predecessor by more than the limit."""
        limit = MAX_OVERLAP * self.seconds * 1000
        return [p for p in points if (found[p.index]["overlap_ms"] or 0) > limit]

    def _again_pipelined(self, over: list[TestPoint]) -> str:
        widest = max(over, key=lambda p: self.gaps.get(p.index, PIPELINE_GAP_MS))
        return (f"this round is measured again pipelined with the gaps of its drains (widest: "
                f"{self.gaps.get(widest.index, PIPELINE_GAP_MS)} ms before {widest.label})")

    def _said(self, round_no: int, over: list[TestPoint], found: dict[int, dict], how: str,
              mode: str = "pipelined") -> None:
        """Say and record (a round_mode record) why and how the round is measured again."""
        ranked = sorted(over, key=lambda p: -found[p.index]["overlap_ms"])
        said = ", ".join(f"{p.label} by {found[p.index]['overlap_ms']:.0f} ms"
                         for p in ranked[:3])
        more = f" and {len(over) - 3} more" if len(over) > 3 else ""
        reason = (f"round {round_no}: {len(over)} point(s) overlapped the previous point by "
                  f"more than {MAX_OVERLAP:.0%} of a point ({said}{more}); {how}")
        self.run.write(f"[pts {self.decl.test}] {reason}")
        self.run.ledger.append(records.RoundMode(test=self.decl.test, round=round_no,
                                                 mode=mode, reason=reason))

    def learn(self, points: list[TestPoint], results: list[PointResult],
              order: list[TestPoint] | None = None) -> None:
        """Each measured point's drain; the gap before each point of the round (`order`:
        its points in loop order) from its predecessor's largest of its last drains."""
        self.drains |= {p.index: r.drain_ms for p, r in zip(points, results, strict=True)}
        for p, r in zip(points, results, strict=True):
            seen = self.seen.setdefault(p.index, [])
            seen[:] = [*seen, max(0.0, r.drain_ms or 0.0)][-DRAIN_RUNS:]
        order = order or points
        for before, point in zip(order, order[1:], strict=False):
            drain = max(self.seen.get(before.index) or [0.0])
            self.gaps[point.index] = PIPELINE_GAP_MS + int(DRAIN_MARGIN * drain + 0.999)

    def gaps_ms(self, points: list[TestPoint]) -> list[int]:
        return [self.gaps.get(p.index, PIPELINE_GAP_MS) for p in points]

    def segments(self, points: list[TestPoint], gaps: list[int],
                 mode: str) -> list[tuple[int, int]]:
        """(first, end) of each fio run of a round: pipelined points run as one until a
        point whose predecessor drains longer than SEGMENT_COST_MS idles in its gap
        (SEGMENT_COST_MS); it starts the next run. One run in the other modes."""
        if mode != "pipelined":
            return [(0, len(points))]
        cuts = [k for k in range(1, len(points))
                if gaps[k] - PIPELINE_GAP_MS - self._drain_before(points, k) > SEGMENT_COST_MS]
        bounds = [0, *cuts, len(points)]
        return list(zip(bounds, bounds[1:], strict=False))

    def _drain_before(self, points: list[TestPoint], k: int) -> float:
        """The largest recent drain of the point before point k (what its gap covers)."""
        return max(self.seen.get(points[k - 1].index) or [0.0])

    def _measure(self, points: list[TestPoint], round_no: int, mode: str,
                 folder: str | None = None) -> dict[int, dict]:
        """`points` in one fio run (`folder`: points measured again after their round)."""
        run, decl = self.run, self.decl
        out = run.raw_dir(decl.test, folder or f"round-{round_no:02d}")
        gaps = self.gaps_ms(points) if mode == "pipelined" else [PIPELINE_GAP_MS] * len(points)
        results: list[PointResult] = []
        for n, (first, last) in enumerate(self.segments(points, gaps, mode)):
            jobs = [decl.job(p) for p in points[first:last]]
            seconds = len(jobs) * self.seconds + sum(gaps[first + 1:last]) / 1000
            found = run_round(run.fio, run.device.path, jobs, out, mode, self.slot_ms,
                              timeout=point_timeout(int(seconds) + 1),
                              histograms=decl.histograms,
                              gaps_ms=gaps[first:last] if mode == "pipelined" else None,
                              name=f"round-{n + 1}" if n else "round")
            if results:           # the first of a segment: its gap to the one before it
                found[0] = dataclasses.replace(
                    found[0], overlap_ms=(results[-1].end - found[0].start) * 1000)
            results += found
        self.order = self.order if folder else points
        self.learn(points, results, self.order)
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


def _set_aside(folder: Path, why: str) -> None:
    """Rename `folder` to `folder-why` (or `folder-why-N` when that is taken)."""
    for n in range(100):
        target = folder.with_name(f"{folder.name}-{why}" + (f"-{n}" if n else ""))
        if not target.exists():
            folder.rename(target)
            return
