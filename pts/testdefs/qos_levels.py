"""Response-time QoS levels (issue 12): the confidence levels every test that reports
response times gives, the I/O count each needs to be resolvable, and the response_histogram
record that carries them (WSAT's whole-run and window histograms, DIRTH/CBW's operating
points). Pure; no I/O.
"""

from __future__ import annotations

from pts.results import records
from pts.tools import histogram

# The QoS levels every test that reports response times gives (LAT, WSAT; DIRTH/CBW take
# theirs from the spec file): 4, 5 and 6 nines (issue 12; PTS 2.0.2 §7.3 asks for 5 nines).
QOS_LEVELS = (99.99, 99.999, 99.9999)


def percentile_rows(hist: dict[int, int], percentiles, max_ns: float | None,
                    percentile) -> list[dict]:
    """Each confidence level with the I/O count behind it: a p % level is resolvable when
    at least one I/O lies above it, i.e. N x (1 - p/100) >= 1 (99.9999 % needs 1,000,000
    I/Os); otherwise it is the slowest I/O, reported as not resolvable (value null)."""
    n = sum(hist.values())
    rows = []
    for pct in percentiles:
        needed = needed_ios(pct)
        ok = n >= needed
        value = percentile(hist, pct) if ok and n else None
        if value is not None and max_ns is not None:
            value = min(value, max_ns)
        rows.append({"pct": pct, "us": None if value is None else value / 1e3,
                     "ios": n, "ios_needed": needed, "resolvable": ok})
    return rows


def histogram_record(test: str, name: str, thread_count: int, queue_depth: int, seconds: int,
                     bins: dict[int, int], iops: float, mean_ns: float | None,
                     max_ns: float | None, levels, source: str, raw: str,
                     ios: int | None = None) -> records.ResponseHistogram:
    """The response_histogram record of `bins` {bin midpoint ns: I/Os}: each of `levels`
    with the I/Os behind it (percentile_rows), the bins, and where they come from. `ios`:
    the I/O count if fio reports it apart from the bins (default: the bins' total)."""
    return records.ResponseHistogram(
        test=test, name=name, thread_count=thread_count, queue_depth=queue_depth,
        seconds=seconds, ios=histogram.total(bins) if ios is None else ios, iops=iops,
        lat_mean_us=None if mean_ns is None else mean_ns / 1e3,
        lat_max_us=None if max_ns is None else max_ns / 1e3,
        percentiles=percentile_rows(bins, levels, max_ns, histogram.percentile),
        bins={str(k): v for k, v in sorted(bins.items())}, source=source, raw=raw)


def needed_ios(pct: float) -> int:
    """Fewest I/Os for which the p % level is not simply the slowest one."""
    return round(1 / (1 - pct / 100))
