"""Several test points in ONE fio process (a round), each point still its own fio job with
its own result: one reporting group per point (`new_group`), its own JSON document
(pNN.json, split from the round's), and its real I/O start and end read from its own
timing log (fio `write_lat_log` with `log_unix_epoch`, 10 ms windows).

Modes (design.md "Speed": every fio process costs ~0.3 s of idle device time):
  pipelined   one process; point k's I/O starts at t0 + the lengths of the points before it
              + the gaps before it and before point k (one slot per point, `slot_ms`, or
              one gap per point, `gaps_ms`: pts.procedure.runner learns them from each
              point's drain), t0 = fio's launch + LEAD_MS: fio creates the job LEAD_MS
              early (`startdelay`) and the job waits for its exact start in `exec_prerun`,
              before fio starts its runtime clock.
              fio creates jobs from a loop that polls every 100 ms and waits >= 100 ms for a
              new job's set-up, so `startdelay` alone starts points 100-300 ms late, by a
              different amount each: measured here, overlaps of 80-140 ms between points
              under load; with the exact start, 5-15 ms (the 10 ms log windows' grain).
  stonewalled one process; each point starts when the one before it has finished
              (`stonewall`): never overlapping, but ~0.3 s idle between points
  per-point   one fio process per point (the reference: what TKperf and plain fio scripts do)

`overlap_ms` of a point is how long its I/O ran while the previous point's was still
running (negative: the idle gap between them); a pipelined point's I/O runs from its start
time at the latest, even when its first completion comes later (its I/O queued behind the
previous point's). `drain_ms` of a point is how long its last completion came after the end
of its runtime (its I/O in flight when fio stopped submitting): the gap the next point needs.

A point may be several job sections that run together (`JobSet`: an Applied Test Workload,
one section per IO stream): they share the point's start (pipelined) or its stonewall (on
the first section), each is its own reporting group, so fio's JSON has every stream's
result (`PointResult.sections`); the point's JSON document holds all of them, its summary is
their sum, its I/O window spans theirs.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from pts.config.settings import ROUND_MODES as MODES
from pts.tools import fio_logs
from pts.tools.fio import (
    START_AT_SCRIPT,
    START_AT_TEXT,
    DeviceGone,
    Fio,
    FioFailed,
    FioOutputError,
    Job,
    JobSet,
    Summary,
    job_file,
    summarize,
    timing_window_ms,
)
from pts.tools.fio_result import errors_text

__all__ = ["MODES", "PointResult", "run_round", "sections_of"]

# How long before its start a pipelined point's fio job is created: fio's job-creation loop
# (<= 100 ms late), the job's set-up (>= 100 ms: fio polls for it every 100 ms) and a
# loaded host. A point whose set-up takes longer starts late, which its overlap shows.
LEAD_MS = 500


# A pipelined point waits for its start in a script that fio's exec_prerun runs where the
# I/O runs: on a DUT host behind fio --server that script is not there.
REMOTE_PIPELINED = ("--round-mode pipelined is not supported for a device on another host "
                    "(its exact start times need a script on the DUT host); use "
                    "--round-mode stonewalled (or per-point)")


@dataclass(frozen=True)
class PointResult:
    name: str
    summary: Summary
    json_path: Path          # this point's own JSON document
    start: float             # Unix s: its first I/O (timing log), or fio's start
    end: float               # Unix s: its last I/O completion
    overlap_ms: float | None  # with the previous point of the round (None: the first)
    # (section name, its own result) of each job section of the point, in order
    sections: tuple[tuple[str, Summary], ...] = ()
    due: float | None = None  # Unix s: its start (pipelined: its start time) + its runtime

    @property
    def drain_ms(self) -> float | None:
        """How long after its runtime its last I/O completed (None: not time based)."""
        return None if self.due is None else (self.end - self.due) * 1000


def sections_of(point: Job | JobSet) -> tuple[Job, ...]:
    return point.sections if isinstance(point, JobSet) else (point,)


def starts_ms(points: list[Job | JobSet], slot_ms: int | None = None,
              gaps_ms: list[int] | None = None) -> list[int]:
    """Each pipelined point's start after the first's: k x `slot_ms`, or with `gaps_ms`
    (the gap before each point; the first one's is not waited for) the lengths of the
    points before it and the gaps before it and before point k."""
    if gaps_ms is None:
        if slot_ms is None:
            raise ValueError("a pipelined round needs slot_ms or gaps_ms")
        return [k * slot_ms for k in range(len(points))]
    if len(gaps_ms) != len(points):
        raise ValueError(f"{len(gaps_ms)} gaps for {len(points)} points")
    out, at = [], 0
    for k, point in enumerate(points):
        at += gaps_ms[k] if k else 0
        out.append(at)
        at += 1000 * max(job.runtime or 0 for job in sections_of(point))
    return out


def scheduled(points: list[Job | JobSet], mode: str, slot_ms: int | None, log_dir: Path,
              t0_ms: int = 0, gaps_ms: list[int] | None = None) -> list[JobSet]:
    """The round's points with their sections' scheduling options and timing logs;
    pipelined point k starts at Unix time `t0_ms` + its `starts_ms`, all its sections at
    once; a stonewalled point waits on its first section (fio starts the sections after
    it together with it)."""
    out = []
    offsets = starts_ms(points, slot_ms, gaps_ms) if mode == "pipelined" else []
    for k, point in enumerate(points):
        sections = []
        for n, job in enumerate(sections_of(point)):
            extra = {"new_group": True, "timing_log": str(log_dir / job.name)}
            if mode == "pipelined":
                extra["startdelay_ms"] = max(0, offsets[k] - LEAD_MS)
                extra["start_at_ms"] = t0_ms + offsets[k]
            elif mode == "stonewalled" and k and not n:
                extra["stonewall"] = True
            sections.append(dataclasses.replace(job, **extra))
        out.append(JobSet(point.name, tuple(sections)))
    return out


def _all_sections(points: list[JobSet]) -> list[Job]:
    return [job for point in points for job in point.sections]


def io_window(point: Job | JobSet) -> tuple[float, float] | None:
    """(first I/O, last completion) in Unix seconds from the timing logs of a point's
    sections: the first window's entry is stamped at its end, so the I/O began one window
    earlier."""
    starts, ends = [], []
    for job in sections_of(point):
        stamps = [row[0] for path in fio_logs.thread_files(job.timing_log, "lat")
                  for row in fio_logs.read_rows(path, ddir=None)]
        if stamps:
            starts.append(min(stamps) - timing_window_ms(job.runtime))
            ends.append(max(stamps))
    if not starts:
        return None
    return min(starts) / 1000, max(ends) / 1000


def split(doc: dict, out_dir: Path, points: list[Job | JobSet]) -> dict[str, tuple[dict, Path]]:
    """One JSON document per point: the round's global fields + the job entries of that
    point's sections (one reporting group each), in section order."""
    head = {k: v for k, v in doc.items() if k not in ("jobs", "disk_util", "client_stats")}
    by_name = {j.get("jobname"): j for j in doc["jobs"]}
    out = {}
    for point in points:
        names = [job.name for job in sections_of(point)]
        missing = [name for name in names if name not in by_name]
        if missing:
            raise FioOutputError(f"fio's JSON has no result for job {missing[0]}")
        single = head | {"jobs": [by_name[name] for name in names]}
        path = out_dir / f"{point.name}.json"
        path.write_text(json.dumps(single, indent=1) + "\n", encoding="utf-8")
        out[point.name] = (single, path)
    return out


def run_round(fio: Fio, filename: str, jobs: list[Job | JobSet], out_dir: Path, mode: str,
              slot_ms: int | None, timeout: float, histograms: bool = False,
              gaps_ms: list[int] | None = None, name: str = "round") -> list[PointResult]:
    """Run the points `jobs` (a Job, or a JobSet of sections run together) as one round in
    `mode`; the results in point order. Pipelined: point k starts k x `slot_ms` after the
    first, or, given `gaps_ms` (one per point), `gaps_ms[k]` after point k-1's runtime.
    `name`: of the fio run's files in `out_dir` (NAME.fio, NAME.json; several runs of one
    round, its segments, share the folder)."""
    if mode not in MODES:
        raise ValueError(f"round mode {mode!r}: one of {', '.join(MODES)}")
    if mode == "pipelined" and _remote(fio):
        raise FioFailed(REMOTE_PIPELINED)
    out_dir = out_dir.absolute()
    log_dir = out_dir / "timing"
    log_dir.mkdir(parents=True, exist_ok=True)
    planned = scheduled(jobs, mode, slot_ms, log_dir, gaps_ms=gaps_ms)
    if mode == "per-point":
        found = {}
        for point in planned:
            doc, _, start, end, _ = fio.run_document(
                filename, job_file(filename, list(point.sections)), out_dir,
                f"{point.name}-run", timeout, histograms)
            found |= {point.name: (doc, start, end)}
        docs = {p.name: split(found[p.name][0], out_dir, [p])[p.name] for p in planned}
        bounds = {n: (s, e) for n, (_, s, e) in found.items()}
    else:
        if mode == "pipelined":
            script = out_dir / START_AT_SCRIPT
            script.write_text(START_AT_TEXT, encoding="utf-8")
            script.chmod(0o755)

        def text(launch_ms: int) -> str:      # absolute start times: made at fio's launch
            nonlocal planned
            planned = scheduled(jobs, mode, slot_ms, log_dir, launch_ms + LEAD_MS, gaps_ms)
            return job_file(filename, _all_sections(planned))
        doc, _, start, end, _ = fio.run_document(filename, text, out_dir, name, timeout,
                                                 histograms, cwd=out_dir)
        for empty in out_dir.glob("*.prerun.txt"):    # fio keeps exec_prerun's output
            if not empty.stat().st_size:
                empty.unlink()
        docs = split(doc, out_dir, planned)
        bounds = {p.name: (start, end) for p in planned}
    return _results(fio, filename, planned, docs, bounds)


def _remote(fio: Fio) -> bool:
    """Is the I/O on another host (fio --client)?"""
    return getattr(fio, "remote", None) is not None


def _gone(fio: Fio, filename: str) -> DeviceGone | None:
    return fio.device_gone(filename) if _remote(fio) else DeviceGone.check(filename)


def _results(fio: Fio, filename: str, planned: list[JobSet], docs,
             bounds) -> list[PointResult]:
    out, previous_end = [], None
    for point in planned:
        single, path = docs[point.name]
        summary = summarize(single)          # the sum over the point's sections
        if summary.errors:
            raise _gone(fio, filename) or FioFailed(
                f"fio reported I/O error(s) {errors_text(summary.errors)} for {point.name} "
                f"in {path}")
        start, end = io_window(point) or bounds[point.name]
        job = point.sections[0]
        due = start
        if job.start_at_ms is not None:
            # A pipelined point submits its I/O at its start time; its first completion
            # comes later when that I/O waited behind the previous point's (slow large
            # writes outlasting their slot): the overlap counts from the start time.
            start = due = min(start, job.start_at_ms / 1000)
        runtime = max((j.runtime or 0) for j in point.sections)
        due = due + runtime if runtime and all(j.time_based for j in point.sections) else None
        overlap = None if previous_end is None else (previous_end - start) * 1000
        sections = tuple((j.name, summarize(single | {"jobs": [entry]}))
                         for j, entry in zip(point.sections, single["jobs"], strict=True))
        out.append(PointResult(point.name, summary, path, start, end, overlap, sections, due))
        previous_end = end
    return out
