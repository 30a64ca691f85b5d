"""HIR wait states (pts-digest §7.5): the schedule, the fio jobs that make it, and the write
intervals read back from fio's Unix-stamped IOPS logs.

How the idle is made exact (measured on this project's VM, fio 3.33, loop device, RND 4 KiB
QD32 x 4 threads, 1 s write + 2 s idle): ONE fio job per wait state with `thinktime` (the
idle) and `thinktime_iotime` (the write) keeps every thread's idle at 2.000-2.006 s, the
threads within ~7 ms of each other, so the device sees no I/O for ~1.99 s; separate fio
processes with a host sleep between them gave 2.45-2.57 s (fio's start-up and tear-down,
0.37-0.55 s + ~0.06 s, varying with the machine's load). fio quiesces the queue before it
thinks, so no I/O is in flight during the idle. One fio 3.33 quirk: the first interval of a
thinktime_iotime job lasts write + idle (the iotime clock starts at job start counting the
think time); it is kept as a "lead_in" interval, recorded, and left out of the means.
The measured idle before every interval is recorded (`hir_write.idle_before_s`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pts.config.settings import Settings
from pts.tools import fio_logs
from pts.tools.fio import Job

LOG_WINDOW_MS = 10         # IOPS log window inside a write interval: idle measured to ~10 ms


@dataclass(frozen=True)
class WaitState:
    state: int               # 1-based
    write_s: int             # Access A
    idle_s: int              # Access B
    repetitions: int         # A+B
    baseline_repetitions: int   # Access C: writes of write_s, no idle
    name: str = ""           # "WS10": the spec file's wait_state_naming (HirTest.state_names)

    @property
    def label(self) -> str:
        return f"{self.name}: {self.write_s} s write + {self.idle_s} s idle"

    @property
    def wait_runtime_s(self) -> int:
        """fio runtime of the wait-state job: the lead-in (write + idle) + repetitions x
        (idle + write); the last idle is the host's, before the baseline job."""
        return (self.write_s + self.idle_s) * (self.repetitions + 1)

    @property
    def seconds(self) -> float:
        """Wall time of the state with its baseline segment (lead-in and final idle in)."""
        return self.wait_runtime_s + self.idle_s + self.baseline_repetitions * self.write_s


def schedule(settings: Settings) -> list[WaitState]:
    """The wait states in the spec's order, with --hir-repetitions and --time-scale."""
    h = settings.spec.hir
    reps = settings.hir_repetitions or h.repetitions
    base = settings.hir_repetitions or h.baseline_repetitions
    w = settings.scaled(h.write_seconds)
    return [WaitState(k, w, settings.scaled(i), reps, base, name)
            for k, (i, name) in enumerate(zip(h.idle_seconds, h.state_names(), strict=True),
                                          1)]


def wait_job(settings: Settings, ws: WaitState, prefix: str, ar_bytes: int) -> Job:
    h = settings.spec.hir
    return Job(f"hir-ws{ws.state}", "randwrite", h.block_size, h.queue_depth, h.thread_count,
               size=ar_bytes, runtime=ws.wait_runtime_s,
               extra=(("thinktime", str(ws.idle_s * 1_000_000)),     # microseconds
                      ("thinktime_iotime", f"{ws.write_s}s"),
                      ("write_iops_log", prefix), ("log_avg_msec", str(LOG_WINDOW_MS)),
                      ("log_unix_epoch", "1")))


def baseline_job(settings: Settings, ws: WaitState, prefix: str, ar_bytes: int) -> Job:
    h = settings.spec.hir
    return Job(f"hir-ws{ws.state}-baseline", "randwrite", h.block_size, h.queue_depth,
               h.thread_count, size=ar_bytes,
               runtime=ws.write_s * ws.baseline_repetitions,
               extra=(("write_iops_log", prefix), ("log_avg_msec", str(ws.write_s * 1000)),
                      ("log_unix_epoch", "1")))


@dataclass(frozen=True)
class WriteInterval:
    start: float             # Unix s (first window's start)
    end: float               # Unix s (last window's end stamp)
    ios: float
    idle_before_s: float | None

    @property
    def iops(self) -> float:
        return self.ios / (self.end - self.start) if self.end > self.start else 0.0


def _entries(prefix: str | Path, window_ms: int) -> list[tuple[int, float]]:
    """(stamp ms, I/Os) of every non-empty window of every thread, in time order."""
    files = fio_logs.thread_files(prefix, "iops")
    if not files:
        raise fio_logs.FioLogError(f"no fio IOPS log {prefix}_iops.N.log")
    out = [(row[0], row[1] * window_ms / 1000) for path in files
           for row in fio_logs.read_rows(path) if row[1] > 0]
    return sorted(out)


def intervals_by_gaps(prefix: str | Path, window_ms: int, min_gap_s: float) -> list[WriteInterval]:
    """Write intervals of a wait-state job: all threads' windows, split wherever no thread
    logged I/O for at least `min_gap_s` (half the planned idle)."""
    found: list[WriteInterval] = []
    first = last = None
    ios = 0.0
    prev_end = None
    for stamp, n in _entries(prefix, window_ms):
        if last is not None and (stamp - last) / 1000 >= min_gap_s:
            found.append(WriteInterval((first - window_ms) / 1000, last / 1000, ios,
                                       _gap(prev_end, first, window_ms)))
            prev_end, first, ios = last, None, 0.0
        if first is None:
            first = stamp
        last, ios = stamp, ios + n
    if first is not None:
        found.append(WriteInterval((first - window_ms) / 1000, last / 1000, ios,
                                   _gap(prev_end, first, window_ms)))
    return found


def _gap(prev_end: int | None, first: int, window_ms: int) -> float | None:
    return None if prev_end is None else (first - window_ms - prev_end) / 1000


def fixed_intervals(prefix: str | Path, window_ms: int) -> list[WriteInterval]:
    """Return-to-baseline intervals: one log window (= one write interval) each, threads
    summed per window index."""
    per_thread = [fio_logs.read_rows(p) for p in fio_logs.thread_files(prefix, "iops")]
    if not per_thread:
        raise fio_logs.FioLogError(f"no fio IOPS log {prefix}_iops.N.log")
    out = []
    for k in range(min(len(rows) for rows in per_thread)):
        stamp = max(rows[k][0] for rows in per_thread)
        ios = sum(rows[k][1] for rows in per_thread) * window_ms / 1000
        out.append(WriteInterval(stamp / 1000 - window_ms / 1000, stamp / 1000, ios, None))
    return out
