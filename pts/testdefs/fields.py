"""The measured fields of a `point` ledger record, from one fio run (docs/results-format.md).

Units: IOPS = read + write completions per second; MB/s decimal (10^6 bytes/s, PTS 2.0.2
§2.4.1); response times in microseconds, total latency (fio `lat` = slat + clat, the
host-observed response time, pts-digest §11.11).
"""

from __future__ import annotations

from pts.tools.fio import Direction, FioResult, Summary


def us(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e3


def basic(s: Summary) -> dict:
    """What every point records (the IOPS test's fields); `write_bytes`: the bytes it wrote
    (fio io_bytes), the host side of the test's write amplification (pts.stored.waf)."""
    return {"iops": s.iops, "read_iops": s.read.iops, "write_iops": s.write.iops,
            "mbps": s.mbps, "lat_mean_us": us(s.lat_mean_ns), "lat_max_us": us(s.lat_max_ns),
            "write_bytes": s.write.io_bytes}


def throughput(s: Summary) -> dict:
    """Plus MB/s per direction (the Throughput test tracks the write MB/s)."""
    return basic(s) | {"read_mbps": s.read.bw_bytes / 1e6, "write_mbps": s.write.bw_bytes / 1e6}


def capped(pct_ns: float | None, max_ns: float | None) -> float | None:
    """A histogram percentile is its bin's midpoint, which can lie above the exact maximum
    fio measured; no percentile is above the maximum, so it is capped there."""
    if pct_ns is None or max_ns is None:
        return pct_ns
    return min(pct_ns, max_ns)


def latency(s: Summary, pct: float) -> dict:
    """Plus the `pct` percentile and I/O counts, for all I/Os and per direction (a mixed
    point's reads and writes are also reported separately). A direction without I/O has
    None, not 0."""
    out = basic(s) | {"lat_percentile_us": us(capped(s.lat_percentile_ns(pct), s.lat_max_ns)),
                      "ios": s.read.total_ios + s.write.total_ios}
    for name, d in (("read", s.read), ("write", s.write)):
        out |= _direction(name, d, pct)
    return out


def _direction(name: str, d: Direction, pct: float) -> dict:
    busy = d.total_ios > 0
    return {f"{name}_ios": d.total_ios,
            f"{name}_lat_mean_us": us(d.lat_mean_ns) if busy else None,
            f"{name}_lat_max_us": us(d.lat_max_ns) if busy else None,
            f"{name}_lat_percentile_us":
                us(capped(d.lat_percentile_ns(pct), d.lat_max_ns)) if busy else None}


def timing(run, res: FioResult) -> dict:
    return {"start": res.start, "end": res.end, "raw": run.relative(res.json_path)}
