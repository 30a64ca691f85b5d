"""The WSAT's response-time QoS (issue 12, "QoS percentiles everywhere"): the levels of
qos_levels.QOS_LEVELS with the I/O count behind each, as two `response_histogram` records:

  Whole run     total latency, from fio's json+ bins of the one WSAT run (FOB to end);
  Final window  completion latency, the final 5-sample window's histograms from fio's
                per-interval histogram log (write_hist_log): fio logs per-interval
                histograms of clat only, so this is not total latency, and says so.

A level the I/O count cannot resolve is recorded as not resolvable (dirth_cbw_select).
"""

from __future__ import annotations

from pts.results import records
from pts.run import Run
from pts.testdefs import qos_levels
from pts.tools import histogram
from pts.tools.fio import FioResult

TEST = "wsat"
WHOLE_RUN_SOURCE = ("fio json+ total-latency bins of the whole run, FOB to end "
                    "(lat_percentiles=1: lat_ns bins)")
WINDOW_SOURCE = ("fio completion-latency histogram log (write_hist_log) of the final window's "
                 "samples: completion latency (clat), the only latency fio logs per-interval "
                 "histograms of, not total latency")


def records_of(run: Run, res: FioResult, window_hists: list[dict[int, int]],
               window_seconds: int, window_iops: float,
               window: tuple[int, int]) -> list[records.ResponseHistogram]:
    """The whole run's record (when fio gave json+ bins) and the final window's (when its
    samples have histograms)."""
    w, s = run.spec.wsat, res.summary
    raw = run.relative(res.json_path)

    def record(name, bins, seconds, iops, mean_ns, max_ns, source):
        return qos_levels.histogram_record(TEST, name, w.thread_count, w.queue_depth, seconds,
                                           bins, iops, mean_ns, max_ns, qos_levels.QOS_LEVELS,
                                           source, raw)

    out = []
    if s.write.lat_histogram:
        out.append(record("Whole run", s.write.lat_histogram,
                          round(s.write.runtime_ms / 1000), s.iops, s.write.lat_mean_ns,
                          s.write.lat_max_ns, WHOLE_RUN_SOURCE))
    bins = histogram.merge(*window_hists)
    if bins:
        out.append(record(f"Final window (samples {window[0]}-{window[1]})", bins,
                          window_seconds, window_iops, histogram.mean(bins),
                          histogram.maximum(bins), WINDOW_SOURCE))
    return out
