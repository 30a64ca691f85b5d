"""fio's JSON result as typed figures: per direction IOPS, bytes, bandwidth, total latency
(mean, max, percentiles and the json+ histogram), summed over the jobs of a document."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from pts.tools import histogram


@dataclass(frozen=True)
class Direction:
    """One direction (read or write) of a fio result, summed over its jobs."""

    iops: float = 0.0
    io_bytes: int = 0
    bw_bytes: float = 0.0       # bytes/s
    total_ios: int = 0
    lat_mean_ns: float | None = None   # total latency (submission + completion)
    lat_max_ns: float | None = None
    runtime_ms: int = 0                 # longest thread's runtime
    # Total-latency percentiles {pct: ns} and histogram {bin midpoint ns: count}; only when
    # the job asked for lat_percentiles (the histogram only with json+ output).
    lat_percentiles_ns: dict[float, float] = field(default_factory=dict)
    lat_histogram: dict[int, int] = field(default_factory=dict)

    def lat_percentile_ns(self, pct: float) -> float | None:
        """fio's own figure if it reported this percentile, else from the histogram."""
        if pct in self.lat_percentiles_ns:
            return self.lat_percentiles_ns[pct]
        return histogram.percentile(self.lat_histogram, pct) if self.lat_histogram else None


@dataclass(frozen=True)
class Summary:
    read: Direction
    write: Direction
    fio_version: str = ""
    errors: tuple[int, ...] = field(default=())
    sys_cpu: float | None = None     # system CPU % (fio's per-job sys_cpu, mean over jobs)

    @property
    def iops(self) -> float:
        """PTS IOPS of a mix: read plus write completions per second (pts-digest §11.10)."""
        return self.read.iops + self.write.iops

    @property
    def mbps(self) -> float:
        """Decimal MB/s (PTS 2.0.2 §2.4.1), from fio's bytes/s."""
        return (self.read.bw_bytes + self.write.bw_bytes) / 1e6

    @property
    def lat_mean_ns(self) -> float | None:
        """IO-weighted mean response time of both directions (pts-digest §11.10)."""
        parts = [(d.lat_mean_ns, d.total_ios) for d in (self.read, self.write)
                 if d.lat_mean_ns is not None and d.total_ios]
        n = sum(k for _, k in parts)
        return sum(m * k for m, k in parts) / n if n else None

    @property
    def lat_max_ns(self) -> float | None:
        maxima = [d.lat_max_ns for d in (self.read, self.write) if d.lat_max_ns is not None]
        return max(maxima) if maxima else None

    def lat_percentile_ns(self, pct: float) -> float | None:
        """Total-latency percentile of all I/Os, reads and writes together: from the merged
        histograms of both directions (json+ output), or the one direction that did I/O.
        None when fio gave neither."""
        busy = [d for d in (self.read, self.write) if d.total_ios]
        if len(busy) == 1:
            return busy[0].lat_percentile_ns(pct)
        if busy and all(d.lat_histogram for d in busy):
            return histogram.percentile(histogram.merge(*(d.lat_histogram for d in busy)), pct)
        return None


def _latency_ns(d: dict) -> tuple[float | None, float | None]:
    """Total latency; fio >= 2.99 writes lat_ns, older versions lat in microseconds."""
    if isinstance(d.get("lat_ns"), dict):
        lat = d["lat_ns"]
        return lat.get("mean"), lat.get("max")
    if isinstance(d.get("lat"), dict):
        lat = d["lat"]
        return (None if lat.get("mean") is None else lat["mean"] * 1e3,
                None if lat.get("max") is None else lat["max"] * 1e3)
    return None, None


def _lat_distribution(jobs: list[dict], key: str) -> tuple[dict, dict]:
    """Total-latency percentiles and histogram ("lat_ns", present with lat_percentiles=1;
    never clat_ns: the PTS response time includes submission). Percentiles only for one
    job (fio's figures cannot be combined); histograms are summed over jobs."""
    lats = [(j.get(key) or {}).get("lat_ns") for j in jobs]
    lats = [lat for lat in lats if isinstance(lat, dict)]
    pcts = {}
    if len(lats) == 1 and isinstance(lats[0].get("percentile"), dict):
        pcts = {float(k): float(v) for k, v in lats[0]["percentile"].items()}
    bins = [histogram.parse_bins(lat["bins"]) for lat in lats if isinstance(lat.get("bins"), dict)]
    return pcts, histogram.merge(*bins) if bins else {}


def _direction(jobs: list[dict], key: str) -> Direction:
    iops = io_bytes = bw = total = runtime = 0
    lat_sum, lat_n, lat_max = 0.0, 0, None
    for job in jobs:
        d = job.get(key) or {}
        n = int(d.get("total_ios", 0))
        iops += float(d.get("iops", 0.0))
        io_bytes += int(d.get("io_bytes", int(d.get("io_kbytes", 0)) * 1024))
        bw += float(d.get("bw_bytes", float(d.get("bw", 0.0)) * 1024))
        total += n
        runtime = max(runtime, int(d.get("runtime", 0)))
        mean, mx = _latency_ns(d)
        if n and mean is not None:
            lat_sum, lat_n = lat_sum + mean * n, lat_n + n
        if n and mx is not None:
            lat_max = mx if lat_max is None else max(lat_max, mx)
    pcts, hist = _lat_distribution(jobs, key)
    return Direction(iops, io_bytes, bw, total, lat_sum / lat_n if lat_n else None, lat_max,
                     runtime, pcts, hist)


def summarize(doc: dict) -> Summary:
    """Sum over jobs (one job with group_reporting; several without)."""
    jobs = doc["jobs"]
    return Summary(read=_direction(jobs, "read"), write=_direction(jobs, "write"),
                   fio_version=str(doc.get("fio version", "")),
                   errors=tuple(int(j.get("error", 0)) for j in jobs if j.get("error")),
                   sys_cpu=_mean([j["sys_cpu"] for j in jobs
                                  if isinstance(j.get("sys_cpu"), int | float)]))


def errors_text(errors: tuple[int, ...]) -> str:
    """fio's per-job error numbers (errno values) with their names: "5 (Input/output error)"."""
    return ", ".join(f"{e} ({os.strerror(e)})" for e in dict.fromkeys(errors))


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
