"""Several test points in ONE fio process (a round), each point still its own fio job with
its own result: one reporting group per point (`new_group`), its own JSON document
(pNN.json, split from the round's), and its real I/O start and end read from its own
timing log (fio `write_lat_log` with `log_unix_epoch`, 10 ms windows).

Modes (design.md "Speed": every fio process costs ~0.3 s of idle device time):
  pipelined   one process; the first point's I/O starts when ALL its threads are set up,
              at t0 = fio's launch + LEAD_MS at the earliest: each waits in `exec_prerun`
              at a barrier (the gate's `wait 0 S N T0`: the last of its N threads to
              arrive releases them all), so the IO streams of an ATW point (its sections,
              set up at their own pace: 0.13-1.8 s after t0 seen on a loaded host) start
              together, and the release is the point's start; each
              later point's I/O starts when ALL the I/O of the point before it has completed
              (completion-triggered, GATE_SCRIPT: pts.tools.fio_gate): every clone of point
              k-1 runs `exec_postrun` after its last completion (fio reaps what is in
              flight when the runtime ends, then writes its logs, then runs exec_postrun),
              the last one releases point k's clones, which wait in `exec_prerun`, before
              fio starts their runtime clock.
              Point k is created (`wait_for`) when point k-2 has exited, so its set-up
              (>= 100 ms: fio's job-creation loop polls every 100 ms) runs while point k-1
              measures, and at most two points hold their buffers at a time.
              Measured (docs/performance.md, "the gate"): 3.2-8.8 ms from a point's last
              completion to the next one's start (tmpfs loop device, 128 KiB, TC 4 / QD
              32; `stonewall` 296-309 ms, `wait_for` alone 198-210 ms), 9-22 ms a point on
              average on a loaded host; before, a start time predicted from earlier drains
              left an idle margin over each drain (an emulated SSD's drains of 8-10 s after
              a 1 s point change by up to 130 % from one round to the next).
  stonewalled one process; each point starts when the one before it has finished
              (`stonewall`): never overlapping, but ~0.3 s idle between points
  per-point   one fio process per point (the reference: what TKperf and plain fio scripts do)

`overlap_ms` of a point is how long its I/O ran while the previous point's was still
running (negative: the idle gap between them); a pipelined point's I/O runs from its release
by the gate at the latest, even when its first completion
comes later. `drain_ms` of a point is how long its last completion came after the end of its
runtime (its I/O in flight when fio stopped submitting; fio counts it in the point's runtime
and figures, and the gate waits it out before the next point).

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
from pts.tools.fio_gate import GATE_SCRIPT, close_gates, gate_text, open_gates
from pts.tools.fio_result import errors_text

__all__ = ["GATE_SCRIPT", "MODES", "PointResult", "gate_text", "run_round", "sections_of"]

# The earliest start of a pipelined round's first point after fio's launch: fio's
# job-creation loop (<= 100 ms late) and the jobs' set-up (>= 100 ms: fio polls for it
# every 100 ms). Set-ups that take longer (a loaded host) hold the start until the last
# thread of the point is set up (the barrier), never one IO stream apart from the others.
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
    due: float | None = None  # Unix s: its start (pipelined: its release) + its runtime

    @property
    def drain_ms(self) -> float | None:
        """How long after its runtime its last I/O completed (None: not time based)."""
        return None if self.due is None else (self.end - self.due) * 1000


def sections_of(point: Job | JobSet) -> tuple[Job, ...]:
    return point.sections if isinstance(point, JobSet) else (point,)


def clones(point: Job | JobSet) -> int:
    """How many fio threads a point runs (each section's numjobs): each runs exec_postrun."""
    return sum(job.numjobs for job in sections_of(point))


def scheduled(points: list[Job | JobSet], mode: str, log_dir: Path, t0_ms: int = 0,
              wait_s: int = 0) -> list[JobSet]:
    """The round's points with their sections' scheduling options and timing logs.
    Pipelined: point 0's threads wait (at most `wait_s`) in `exec_prerun` until all of them
    are there, then start together, at Unix time `t0_ms` at the earliest (GATE's barrier);
    point k waits (at most `wait_s`) in `exec_prerun` until point k-1's threads have all
    run their `exec_postrun` (GATE), and is created when point k-2 has exited
    (`wait_for`). Stonewalled: a point waits on its
    first section (fio starts the sections after it together with it)."""
    out = []
    for k, point in enumerate(points):
        sections = []
        for n, job in enumerate(sections_of(point)):
            extra: dict = {"new_group": True, "timing_log": str(log_dir / job.name)}
            if mode == "pipelined":
                barrier = "" if k else f" {clones(point)} {t0_ms}"
                gate: tuple[tuple[str, str], ...] = (
                    ("exec_prerun", f"./{GATE_SCRIPT} wait {k} {wait_s}{barrier}"),)
                if k >= 2:
                    gate += (("wait_for", sections_of(points[k - 2])[0].name),)
                if k + 1 < len(points):
                    gate += (("exec_postrun", f"./{GATE_SCRIPT} done {k} {clones(point)} "
                                              f"{clones(points[k + 1])}"),)
                extra["extra"] = job.extra + gate
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
              timeout: float = 0, histograms: bool = False,
              name: str = "round") -> list[PointResult]:
    """Run the points `jobs` (a Job, or a JobSet of sections run together) as one round in
    `mode`; the results in point order. Pipelined: each point after the first starts when
    the one before it has completed all its I/O (`scheduled`). `name`: of the fio run's
    files in `out_dir` (NAME.fio, NAME.json)."""
    if mode not in MODES:
        raise ValueError(f"round mode {mode!r}: one of {', '.join(MODES)}")
    if mode == "pipelined" and _remote(fio):
        raise FioFailed(REMOTE_PIPELINED)
    out_dir = out_dir.absolute()
    log_dir = out_dir / "timing"
    log_dir.mkdir(parents=True, exist_ok=True)
    wait_s = int(timeout) + 1
    planned = scheduled(jobs, mode, log_dir, wait_s=wait_s)
    released: dict[int, float] = {}
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
        gates = open_gates(out_dir, len(planned)) if mode == "pipelined" else None

        def text(launch_ms: int) -> str:      # the first point's start: made at fio's launch
            nonlocal planned
            planned = scheduled(jobs, mode, log_dir, launch_ms + LEAD_MS, wait_s)
            return job_file(filename, _all_sections(planned))
        try:
            doc, _, start, end, _ = fio.run_document(filename, text, out_dir, name, timeout,
                                                     histograms, cwd=out_dir)
        finally:
            released = close_gates(*gates) if gates else {}
        for empty in [*out_dir.glob("*.prerun.txt"), *out_dir.glob("*.postrun.txt")]:
            if not empty.stat().st_size:      # fio keeps exec_prerun's and _postrun's output
                empty.unlink()
        docs = split(doc, out_dir, planned)
        bounds = {p.name: (start, end) for p in planned}
    return _results(fio, filename, planned, docs, bounds, released)


def _remote(fio: Fio) -> bool:
    """Is the I/O on another host (fio --client)?"""
    return getattr(fio, "remote", None) is not None


def _gone(fio: Fio, filename: str) -> DeviceGone | None:
    return fio.device_gone(filename) if _remote(fio) else DeviceGone.check(filename)


def _results(fio: Fio, filename: str, planned: list[JobSet], docs, bounds,
             released: dict[int, float]) -> list[PointResult]:
    out, previous_end = [], None
    for k, point in enumerate(planned):
        single, path = docs[point.name]
        summary = summarize(single)          # the sum over the point's sections
        if summary.errors:
            raise _gone(fio, filename) or FioFailed(
                f"fio reported I/O error(s) {errors_text(summary.errors)} for {point.name} "
                f"in {path}")
        start, end = io_window(point) or bounds[point.name]
        due = start
        if (begun := released.get(k)) is not None:
            # A pipelined point submits its I/O when the gate releases it; its first
            # completion comes later (and its first log window earlier): the point and its
            # overlap count from its release.
            start = due = begun
        runtime = max((j.runtime or 0) for j in point.sections)
        due = due + runtime if runtime and all(j.time_based for j in point.sections) else None
        overlap = None if previous_end is None else (previous_end - start) * 1000
        sections = tuple((j.name, summarize(single | {"jobs": [entry]}))
                         for j, entry in zip(point.sections, single["jobs"], strict=True))
        out.append(PointResult(point.name, summary, path, start, end, overlap, sections, due))
        previous_end = end
    return out
