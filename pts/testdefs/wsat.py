"""The PTS Write Saturation test (pts-digest §7.4):

  1. purge;  2. write cache; NO preconditioning: the device starts fresh out of the box (FOB);
  3. RND 4 KiB writes (0/100) at the test's TC/QD, continuously, in ONE fio run, until
     `fills` x user capacity is written (fio io_size per thread) or the time limit passes
     (fio runtime), whichever comes first (PTS-E 1.1: 4 fills or 24 h).

One sample per interval of `point_seconds` comes from fio's own logs (fio.Logs): IOPS and
mean total latency per window (write_iops_log / write_lat_log, log_avg_msec), maximum and
99.999 % per window from the completion-latency histogram log (write_hist_log: fio logs clat
histograms only, so these two are of clat, not total latency; the whole run's total-latency
figures come from fio's JSON). fio leaves out the last, partial window; whatever was written
after the last complete window (per fio's JSON totals) becomes one last sample marked
partial, so the total written (TGBW) at the end is what fio wrote.

A sample's percentile whose I/O count cannot resolve it is left out (None), never replaced
by the slowest I/O. The QoS levels 99.99/99.999/99.9999 % with their I/O counts, for the whole
run and the final window, are recorded by pts.testdefs.wsat_qos (fio runs with json+ output).

The 5-sample steady-state rule is checked over every window of complete samples: the report
gives where it was first met, the FOB figure (first sample), the average of the final
window and their ratio. The WSAT needs no steady state: it ends "complete".

Its plan (the fio job and stop rule, --dry-run's lines, a run too short to report) is
pts.testdefs.wsat_plan.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass, field, replace

from pts.conditioning import prepare, purge_probe
from pts.config.spec import format_size
from pts.procedure import ceiling, plan, power_windows, resume, rounds, steady_state
from pts.procedure.runner import recorded_test
from pts.results import records
from pts.results.resume import ResumeState
from pts.run import Run
from pts.testdefs import fields, qos_levels, wsat_qos
from pts.testdefs.wsat_plan import (  # noqa: F401 - plan_lines: the registry's, through here
    TEST,
    Plan,
    ceiling_shapes,
    job,
    log_prefix,
    plan_lines,
    too_short,
    tracking_label,
    wsat_plan,
)
from pts.tools import fio_logs, histogram
from pts.tools.fio import FioResult

COMPLETE = "complete"


@dataclass(frozen=True)
class WsatInterval:
    number: int                      # 1-based
    start_s: float                   # since fio started
    end_s: float
    ios: float
    iops: float
    lat_mean_us: float | None        # total latency
    clat_max_us: float | None        # completion latency, histogram resolution
    clat_percentile_us: float | None
    bytes_written: float             # cumulative, all samples so far
    partial: bool = False
    clat_histogram: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    def record(self, capacity: int, steady: bool | None) -> records.Sample:
        return records.Sample(
            test=TEST, sample=self.number, start_s=self.start_s, end_s=self.end_s,
            ios=self.ios, iops=self.iops, lat_mean_us=self.lat_mean_us,
            clat_max_us=self.clat_max_us, clat_percentile_us=self.clat_percentile_us,
            bytes_written=self.bytes_written, tgbw_gb=self.bytes_written / 1e9,
            drive_fills=self.bytes_written / capacity, partial=self.partial, steady=steady)


def samples(prefix: str, res: FioResult, p: Plan, block_size: int,
            pct: float) -> list[WsatInterval]:
    """Complete windows from fio's logs, then the rest of the run as one partial sample."""
    out, done = [], 0.0
    for iv in fio_logs.intervals(prefix, p.interval_s * 1000):
        done += iv.ios * block_size
        hist = iv.clat_histogram
        out.append(WsatInterval(iv.index + 1, iv.index * p.interval_s,
                                (iv.index + 1) * p.interval_s,
                                iv.ios, iv.iops, fields.us(iv.lat_mean_ns),
                                fields.us(histogram.maximum(hist)),
                                fields.us(_resolved(hist, pct)), done,
                                clat_histogram=hist))
    return out + _tail(prefix, res, p, block_size, out)


def _resolved(hist: dict[int, int], pct: float) -> int | None:
    """The window's `pct` level (ns), or None when its I/O count cannot resolve it (the
    report shows no point there instead of the slowest I/O)."""
    if not hist or histogram.total(hist) < qos_levels.needed_ios(pct):
        return None
    return histogram.percentile(hist, pct)


def _tail(prefix: str, res: FioResult, p: Plan, block_size: int, complete: list[WsatInterval]):
    """What fio wrote after the last complete window. A sliver (< 5 % of an interval) is
    added to the last sample's total instead, where it cannot distort an IOPS figure."""
    total = res.summary.write.io_bytes
    start = len(complete) * p.interval_s
    seconds = res.summary.write.runtime_ms / 1000 - start
    rest = total - (complete[-1].bytes_written if complete else 0.0)
    if seconds < 0.05 * p.interval_s and complete:
        complete[-1] = replace(complete[-1], bytes_written=float(total))
        return []
    if rest <= 0 or seconds <= 0:
        return []
    ios = rest / block_size
    return [WsatInterval(len(complete) + 1, start, start + seconds, ios, ios / seconds,
                   fields.us(fio_logs.partial_lat_mean_ns(prefix, len(complete))),
                   None, None, float(total), partial=True)]


def steady_windows(values: list[float], rule) -> list[steady_state.SteadyStateResult | None]:
    """Per sample, the steady-state evidence of the window ending there (None before the
    first full window)."""
    w = rule.window_rounds
    return [None if k < w else steady_state.check(
        values[k - w:k], list(range(k - w + 1, k + 1)), window=w,
        max_data_excursion=rule.max_data_excursion,
        max_slope_excursion=rule.max_slope_excursion) for k in range(1, len(values) + 1)]


def parameters(run: Run, p: Plan) -> dict:
    spec, w = run.spec, run.spec.wsat
    return {
        "thread_count": w.thread_count, "queue_depth": w.queue_depth,
        "active_range_pct": spec.common.active_range_pct, "active_range_bytes": p.ar_bytes,
        "write_cache": spec.common.write_cache, "data_pattern": spec.common.data_pattern,
        "access": "RND",
        "rw_mixes": ["0/100"], "block_sizes": [w.block_size],
        "point_seconds": p.interval_s, "capacity_bytes": p.capacity,
        "stop_drive_fills": p.fills, "stop_hours": p.hours, "bytes_planned": p.bytes_planned,
        "window_rounds": spec.steady_state.window_rounds,
        "max_data_excursion": spec.steady_state.max_data_excursion,
        "max_slope_excursion": spec.steady_state.max_slope_excursion,
        "tracking": [{"label": tracking_label(run), "rw_mix": "0/100",
                      "block_size": w.block_size, "metric": "iops"}],
        "percentile": spec.latency.percentile,
        "latency": "per sample: mean = total latency (fio lat log); max and percentile = "
                   "completion latency (fio clat histogram log); whole run: total latency",
    }


def run_wsat(run: Run) -> rounds.Outcome:
    p = wsat_plan(run.settings, run.device)
    return recorded_test(run, TEST, "Write Saturation", run.spec.wsat.clause,
                         parameters(run, p), lambda: _body(run, p))


def _body(run: Run, p: Plan) -> rounds.Outcome:
    w = run.spec.wsat
    resume.go_on(run, TEST, _where)
    ceiling.measure(run, TEST, ceiling_shapes(run.settings, p))
    prepare.prepare(run, TEST, p.ar_bytes, None)   # its first sample is the purge probe
    out = run.raw_dir(TEST)
    prefix = log_prefix(out)
    run.write(f"[pts {TEST}] RND {format_size(w.block_size)} writes at TC {w.thread_count} / "
              f"QD {w.queue_depth} from FOB until {p.label}; one sample per "
              f"{p.interval_s} s from fio's logs (read when fio ends)")
    with _ticker(run, p), power_windows.phase(run, TEST, "run", 1):
        res = run.fio.run(run.device.path, [job(run.settings, p, prefix)], out, "wsat",
                          timeout=p.limit_s * 1.05 + 600, histograms=True)
    found = samples(prefix, res, p, w.block_size, run.spec.latency.percentile)
    if run.power:                       # --power: each sample's window (issue 51 §3)
        begun = job_start(res)
        for x in found:
            power_windows.span(run, TEST, "sample", x.number, begun + x.start_s,
                               begun + x.end_s)
    evidence = steady_windows([s.iops for s in found if not s.partial], run.spec.steady_state)
    padded = evidence + [None] * (len(found) - len(evidence))   # the partial sample
    for s, ev in zip(found, padded, strict=True):
        run.ledger.append(s.record(p.capacity, None if ev is None else ev.steady))
    return _finish(run, p, res, found, evidence)


def job_start(res: FioResult) -> float:
    """Unix s of the job's start, which fio's logs count their times from: fio's JSON
    timestamp is taken as fio ends (measured 3 ms after its job's runtime, fio 3.33), so that
    less the job's runtime."""
    text = res.json_path.read_text()
    doc = json.loads(text[text.index("{"):])
    return doc["timestamp_ms"] / 1000 - res.summary.write.runtime_ms / 1000


def _where(state: ResumeState) -> resume.Restart | None:
    """A WSAT the stop interrupted starts again from purge: its one fio run cannot be
    continued (one it had not started yet just starts)."""
    if any(r.test == TEST for r in state.records):
        return resume.Restart("its one fio run cannot be continued")
    return None


@contextlib.contextmanager
def _ticker(run: Run, p: Plan):
    """A line every 10 intervals (10 min at spec settings) while the one fio run goes on:
    fio's samples can only be read when it ends, hours later."""
    stop, start = threading.Event(), time.monotonic()

    def tick() -> None:
        while not stop.wait(max(60, 10 * p.interval_s)):
            run.write(f"[pts {TEST}] running: {plan.hms(time.monotonic() - start)} "
                      f"elapsed; stops at {p.label}, at most {plan.hms(p.limit_s)}")
    thread = threading.Thread(target=tick, name="wsat-ticker", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _finish(run: Run, p: Plan, res: FioResult, found: list[WsatInterval],
            evidence) -> rounds.Outcome:
    label, s = tracking_label(run), res.summary
    complete = [x for x in found if not x.partial]
    if not complete:
        raise RuntimeError(too_short(p, s.write.runtime_ms / 1000, s.write.io_bytes,
                                     run.spec.steady_state.window_rounds))
    final = evidence[-1]
    first = next((k for k, ev in enumerate(evidence, 1) if ev is not None and ev.steady), None)
    steady_from = _steady_from(evidence)
    fob = complete[0].iops
    ss = final.average if final else sum(x.iops for x in complete) / len(complete)
    n = len(complete)
    window = (final.window_first, final.window_last) if final else (1, n)
    stop = "fills" if s.write.io_bytes >= p.bytes_planned else "time"
    run.ledger.append(records.WsatResult(
        test=TEST, stop=stop, bytes_written=s.write.io_bytes,
        bytes_planned=p.bytes_planned, seconds=s.write.runtime_ms / 1000,
        tgbw_gb=s.write.io_bytes / 1e9, drive_fills=s.write.io_bytes / p.capacity,
        samples=n, fob_iops=fob, ss_window=list(window), ss_average=ss,
        fob_ss_ratio=fob / ss if ss else None, final_window_steady=bool(final and final.steady),
        first_steady_sample=first, steady_from_sample=steady_from,
        ss_evidence=final.as_dict() if final else None,
        iops=s.iops, **{k: v for k, v in fields.basic(s).items()
                        if k.startswith("lat_")},
        lat_percentile_us=fields.us(fields.capped(
            s.write.lat_percentile_ns(run.spec.latency.percentile), s.write.lat_max_ns)),
        raw=run.relative(res.json_path), host_bound=ceiling.mark(run, TEST, fields.basic(s) | {
            "block_size": run.spec.wsat.block_size})))
    inside = [x for x in complete if window[0] <= x.number <= window[1]]
    for rec in wsat_qos.records_of(run, res, [x.clat_histogram for x in inside],
                                   len(inside) * p.interval_s,
                                   sum(x.iops for x in inside) / len(inside), window):
        run.ledger.append(rec)
    if run.settings.purge_probe:        # the first sample: writes on the purged drive
        purge_probe.record(run, TEST, run.spec.wsat.block_size, run.spec.wsat.thread_count,
                           run.spec.wsat.queue_depth, p.interval_s, fob,
                           run.relative(res.json_path))
    why = (f"{p.fills:g} drive fills written" if stop == "fills"
           else f"time limit {p.hours:g} h reached")
    steady = (f"5-sample steady state first met at sample {first}" if first
              else "5-sample steady state never met")
    message = (f"{why} after {s.write.runtime_ms / 1000:,.0f} s ({n} samples, "
               f"{s.write.io_bytes / p.capacity:.2f} fills); FOB {fob:,.0f} IOPS, final "
               f"window {window[0]}-{window[1]} average {ss:,.0f} IOPS (FOB/SS "
               f"{fob / ss if ss else float('nan'):.2f}); {steady}")
    run.write(f"[pts {TEST}] {message}")
    return rounds.Outcome(COMPLETE, n, first, window, {label: final} if final else {}, message)


def _steady_from(evidence) -> int | None:
    """The final unbroken run of steady windows starts with the window ending at this
    sample (None: the final window is not steady)."""
    k = len(evidence)
    if not k or evidence[-1] is None or not evidence[-1].steady:
        return None
    while k > 1 and evidence[k - 2] is not None and evidence[k - 2].steady:
        k -= 1
    return k
