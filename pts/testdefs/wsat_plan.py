"""The WSAT's plan (pts-digest §7.4; the test: pts.testdefs.wsat): its one fio job and the
stop rule it carries (`fills` x user capacity as fio io_size, or the time limit as fio
runtime), one sample per `point_seconds` from fio's logs, the host ceiling's shape, the
--dry-run lines, and the sizes that make a run too short to report (said before the run,
on a fast drive's estimate, and after it, with what to change).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from pts.conditioning import purge_probe
from pts.config.settings import Settings
from pts.config.spec import format_size
from pts.device.identity import BlockDevice, active_range_bytes
from pts.procedure import ceiling, plan
from pts.run import Run
from pts.testdefs import qos_levels
from pts.tools.fio import Job, Logs

TEST = "wsat"


@dataclass(frozen=True)
class Plan:
    capacity: int            # user capacity: one drive fill
    ar_bytes: int            # where the writes go
    fills: float
    hours: float
    per_thread: int          # fio io_size of each thread
    bytes_planned: int
    limit_s: int             # fio runtime
    interval_s: int

    @property
    def label(self) -> str:
        return f"{self.fills:g} drive fills ({self.bytes_planned / 1e9:,.3f} GB) or " \
               f"{self.hours:g} h"


def wsat_plan(settings: Settings, device: BlockDevice) -> Plan:
    w = settings.spec.wsat
    fills, hours = settings.wsat_stop
    capacity = device.capacity_bytes
    ar = active_range_bytes(device, settings.spec.common.active_range_pct)
    # Rounded up to whole blocks, so that at least `fills` capacities are written.
    per_thread = math.ceil(fills * capacity / w.thread_count / w.block_size) * w.block_size
    return Plan(capacity, ar, fills, hours, per_thread, per_thread * w.thread_count,
                max(1, round(hours * 3600)), settings.point_seconds)


def log_prefix(raw_dir: Path) -> str:
    """Path prefix of fio's per-interval log files in the test's raw folder."""
    return str(raw_dir / "wsat")


def job(settings: Settings, p: Plan, prefix: str) -> Job:
    w = settings.spec.wsat
    interval_ms = p.interval_s * 1000
    return Job("wsat", "randwrite", w.block_size, w.queue_depth, w.thread_count,
               size=p.ar_bytes, runtime=p.limit_s, time_based=False, io_size=p.per_thread,
               lat_percentiles=(settings.spec.latency.percentile,),
               logs=Logs(prefix, interval_ms, interval_ms))

def tracking_label(run: Run | Settings) -> str:
    return f"RND {format_size(run.spec.wsat.block_size).replace(' ', '')} 0/100"


def ceiling_shapes(settings: Settings, p: Plan) -> list[ceiling.Shape]:
    w = settings.spec.wsat          # the host ceiling's one job: the WSAT's own (issue 33 §1)
    return [ceiling.Shape(tracking_label(settings), w.block_size,
                          w.thread_count * w.queue_depth, job(settings, p, ""))]

FAST_RATE = 3e9     # bytes/s: the dry-run's fast drive (plan.fills_duration_lines' best case)


def too_short(p: Plan, seconds: float, written: float, window: int) -> str:
    """Why a run that ended within one sample interval has nothing to report, and what to
    change: more fills (or hours), or shorter samples (--point-seconds >= 1)."""
    target = window * p.interval_s
    if written >= p.bytes_planned:
        what = (f"WSAT: fio wrote the {p.fills:g} drive fills ({p.bytes_planned:,} bytes) in "
                f"{seconds:.1f} s")
        fills = _ceil_sig(p.fills * target / max(seconds, 1e-3))
        longer = (f"raise --wsat-fills (at this speed, --wsat-fills {fills:g} takes about "
                  f"{window} x {p.interval_s} s)")
    else:
        what = f"WSAT: fio ran {seconds:.1f} s (time limit {p.hours:g} h)"
        longer = (f"raise --wsat-hours (at least {_ceil_sig(target / 3600):g} h for "
                  f"{window} x {p.interval_s} s)")
    if seconds >= window:
        shorter = (f"or lower --point-seconds (--point-seconds {int(seconds // window)} gives "
                   f"{window} samples in the {seconds:.1f} s run)")
    elif seconds >= 1:
        shorter = (f"or lower --point-seconds (--point-seconds 1 gives {int(seconds)} "
                   f"samples in the {seconds:.1f} s run)")
    else:
        shorter = (f"--point-seconds cannot help (its minimum, 1 s, is longer than the "
                   f"{seconds:.1f} s run)")
    return (f"{what}, shorter than one {p.interval_s} s sample: nothing to report. Make the "
            f"run last at least {window} samples (one steady-state window): {longer}"
            f"{', ' if shorter.startswith('or') else '; '}{shorter}")


def few_samples_warning(p: Plan, window: int) -> list[str]:
    """--dry-run: a warning when a fast drive (FAST_RATE) would give fewer complete samples
    than one steady-state window."""
    fast = p.bytes_planned / FAST_RATE
    n = int(min(fast, p.limit_s) // p.interval_s)
    if n >= window:
        return []
    fewer = (f"{n} complete {p.interval_s} s samples, fewer than the {window} of one "
             "steady-state window" + (" (0: the run ends with nothing to report)" if n == 0
                                      else ""))
    if fast < p.limit_s:
        took = plan.hms(fast) if fast >= 60 else f"{fast:.1f} s"
        return [f"WARNING: at {FAST_RATE / 1e9:g} GB/s (a fast drive, the estimate's best "
                f"case) the {p.fills:g} drive fills ({p.bytes_planned:,} bytes) are written "
                f"in {took}, which is {fewer}: raise --wsat-fills or lower --point-seconds"]
    return [f"WARNING: the time limit ({p.hours:g} h, fio runtime {p.limit_s} s) ends the "
            f"run after {fewer}: raise --wsat-hours or lower --point-seconds"]


def _ceil_sig(x: float, digits: int = 3) -> float:
    """`x` rounded up to `digits` significant digits (a suggested option value)."""
    if x <= 0:
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.ceil(x / step - 1e-9) * step

def plan_lines(settings: Settings, device: BlockDevice) -> list[str]:
    """The WSAT's plan for --dry-run (nothing is run)."""
    spec, w = settings.spec, settings.spec.wsat
    p = wsat_plan(settings, device)
    j = job(settings, p, log_prefix(Path("RUN_DIR", "raw", TEST)))
    return [
        f"Write Saturation test ({w.clause})",
        *plan.setup_lines(settings, device, w.thread_count, w.queue_depth),
        *purge_probe.plan_lines(settings, w.thread_count, w.queue_depth, first_sample=True),
        "WIPC: none: the test starts fresh out of the box (FOB), right after the purge",
        *ceiling.shapes_plan_lines(settings, ceiling_shapes(settings, p)),
        f"fio: ONE run of RND {format_size(w.block_size)} writes (0/100) over the "
        "ActiveRange; fio job file (RUN_DIR: the run folder, made at run time):",
        *plan.job_lines(device, [j], settings),
        f"stop: {p.fills:g} drive fills = {p.bytes_planned:,} bytes (fio io_size "
        f"{p.per_thread:,} bytes per thread x TC {w.thread_count}; capacity "
        f"{p.capacity:,} bytes) or {p.hours:g} h (fio runtime {p.limit_s} s), whichever first",
        f"samples: one per {p.interval_s} s (fio log_avg_msec / log_hist_msec "
        f"{p.interval_s * 1000}): IOPS, mean total latency, max and "
        f"{spec.latency.percentile:g} % completion latency; at most "
        f"{p.limit_s // p.interval_s:,} complete samples; the "
        f"{spec.steady_state.window_rounds}-sample steady-state rule is evaluated over every "
        "window (steady state not required)",
        "QoS: " + ", ".join(f"{x:g} %" for x in qos_levels.QOS_LEVELS) + " with the I/O "
        "count behind each, for the whole run (total latency, fio json+ output) and the "
        "final window (completion latency, fio histogram log)",
        *few_samples_warning(p, spec.steady_state.window_rounds),
        *plan.fills_duration_lines(p.bytes_planned, p.limit_s),
    ]
