"""Several test points in ONE fio process (a round), each point still its own fio job with
its own result: one reporting group per point (`new_group`), its own JSON document
(pNN.json, split from the round's), and its real I/O start and end read from its own
timing log (fio `write_lat_log` with `log_unix_epoch`, 10 ms windows).

Modes (design.md "Speed": every fio process costs ~0.3 s of idle device time):
  pipelined   one process; point k's I/O starts at t0 + k x (point + gap), t0 = fio's launch
              + LEAD_MS: fio creates the job LEAD_MS early (`startdelay`) and the job waits
              for its exact start in `exec_prerun`, before fio starts its runtime clock.
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
previous point's).
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
    Summary,
    job_file,
    summarize,
    timing_window_ms,
)
from pts.tools.fio_result import errors_text

__all__ = ["MODES", "PointResult", "run_round"]

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


def scheduled(jobs: list[Job], mode: str, slot_ms: int, log_dir: Path,
              t0_ms: int = 0) -> list[Job]:
    """The round's jobs with their scheduling options and timing logs; pipelined point k
    starts at Unix time `t0_ms` + k x `slot_ms`."""
    out = []
    for k, job in enumerate(jobs):
        extra = {"new_group": True, "timing_log": str(log_dir / job.name)}
        if mode == "pipelined":
            extra["startdelay_ms"] = max(0, k * slot_ms - LEAD_MS)
            extra["start_at_ms"] = t0_ms + k * slot_ms
        elif mode == "stonewalled" and k:
            extra["stonewall"] = True
        out.append(dataclasses.replace(job, **extra))
    return out


def io_window(job: Job) -> tuple[float, float] | None:
    """(first I/O, last completion) in Unix seconds from a point's timing log: the first
    window's entry is stamped at its end, so the I/O began one window earlier."""
    stamps = [row[0] for path in fio_logs.thread_files(job.timing_log, "lat")
              for row in fio_logs.read_rows(path, ddir=None)]
    if not stamps:
        return None
    return (min(stamps) - timing_window_ms(job.runtime)) / 1000, max(stamps) / 1000


def split(doc: dict, out_dir: Path, names: list[str]) -> dict[str, tuple[dict, Path]]:
    """One JSON document per point (the round's global fields + that point's job entry)."""
    head = {k: v for k, v in doc.items() if k not in ("jobs", "disk_util", "client_stats")}
    by_name = {j.get("jobname"): j for j in doc["jobs"]}
    out = {}
    for name in names:
        if name not in by_name:
            raise FioOutputError(f"fio's JSON has no result for job {name}")
        single = head | {"jobs": [by_name[name]]}
        path = out_dir / f"{name}.json"
        path.write_text(json.dumps(single, indent=1) + "\n", encoding="utf-8")
        out[name] = (single, path)
    return out


def run_round(fio: Fio, filename: str, jobs: list[Job], out_dir: Path, mode: str,
              slot_ms: int, timeout: float, histograms: bool = False) -> list[PointResult]:
    """Run `jobs` as one round in `mode`; the results in job order."""
    if mode not in MODES:
        raise ValueError(f"round mode {mode!r}: one of {', '.join(MODES)}")
    if mode == "pipelined" and _remote(fio):
        raise FioFailed(REMOTE_PIPELINED)
    out_dir = out_dir.absolute()
    log_dir = out_dir / "timing"
    log_dir.mkdir(parents=True, exist_ok=True)
    planned = scheduled(jobs, mode, slot_ms, log_dir)
    if mode == "per-point":
        found = {}
        for job in planned:
            doc, _, start, end, _ = fio.run_document(filename, job_file(filename, [job]),
                                                     out_dir, f"{job.name}-run", timeout,
                                                     histograms)
            found |= {job.name: (doc, start, end)}
        docs = {n: split(d, out_dir, [n])[n] for n, (d, _, _) in found.items()}
        bounds = {n: (s, e) for n, (_, s, e) in found.items()}
    else:
        if mode == "pipelined":
            script = out_dir / START_AT_SCRIPT
            script.write_text(START_AT_TEXT, encoding="utf-8")
            script.chmod(0o755)

        def text(launch_ms: int) -> str:      # absolute start times: made at fio's launch
            nonlocal planned
            planned = scheduled(jobs, mode, slot_ms, log_dir, launch_ms + LEAD_MS)
            return job_file(filename, planned)
        doc, _, start, end, _ = fio.run_document(filename, text, out_dir, "round", timeout,
                                                 histograms, cwd=out_dir)
        for empty in out_dir.glob("*.prerun.txt"):    # fio keeps exec_prerun's output
            if not empty.stat().st_size:
                empty.unlink()
        docs = split(doc, out_dir, [j.name for j in planned])
        bounds = {j.name: (start, end) for j in planned}
    return _results(fio, filename, planned, docs, bounds)


def _remote(fio: Fio) -> bool:
    """Is the I/O on another host (fio --client)?"""
    return getattr(fio, "remote", None) is not None


def _gone(fio: Fio, filename: str) -> DeviceGone | None:
    return fio.device_gone(filename) if _remote(fio) else DeviceGone.check(filename)


def _results(fio: Fio, filename: str, planned: list[Job], docs, bounds) -> list[PointResult]:
    out, previous_end = [], None
    for job in planned:
        single, path = docs[job.name]
        summary = summarize(single)
        if summary.errors:
            raise _gone(fio, filename) or FioFailed(
                f"fio reported I/O error(s) {errors_text(summary.errors)} for {job.name} "
                f"in {path}")
        start, end = io_window(job) or bounds[job.name]
        if job.start_at_ms is not None:
            # A pipelined point submits its I/O at its start time; its first completion
            # comes later when that I/O waited behind the previous point's (slow large
            # writes outlasting their slot): the overlap counts from the start time.
            start = min(start, job.start_at_ms / 1000)
        overlap = None if previous_end is None else (previous_end - start) * 1000
        out.append(PointResult(job.name, summary, path, start, end, overlap))
        previous_end = end
    return out
