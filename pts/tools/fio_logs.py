"""fio's per-interval log files (fio.Logs), read back as one series of intervals.

fio 3.33 writes, per thread N, when the job ends (formats verified on this machine):
  PREFIX_iops.N.log       "time_ms, iops, ddir, 0, 0"   IOPS averaged over each window
  PREFIX_lat.N.log        "time_ms, ns, ddir, 0, 0"     mean total latency (slat + clat)
  PREFIX_clat_hist.N.log  "time_ms, ddir, bs, c0, ..., c1855"   completion-latency
                          histogram of the window (counts per bin, not cumulative)
The IOPS and histogram logs leave out the last, partial window; the latency log keeps it.
So an interval here is a window that every thread's IOPS log has; what fio did after the
last one (the partial window, threads that ran longer) is left to the caller, who knows the
totals from fio's JSON (pts.testdefs.wsat).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pts.tools import histogram

WRITE = 1   # ddir column: 0 read, 1 write, 2 trim


class FioLogError(ValueError):
    """A log file is missing or unreadable; the message names it."""


@dataclass(frozen=True)
class Interval:
    index: int                      # 0-based window number
    end_s: float                    # end of the window, seconds since the job started
    ios: float                      # I/Os completed in the window, all threads
    iops: float                     # all threads
    lat_mean_ns: float | None       # total latency, I/O-weighted over threads
    clat_histogram: dict[int, int] = field(default_factory=dict)   # all threads merged


def thread_files(prefix: str | Path, kind: str) -> list[Path]:
    """PREFIX_KIND.N.log for every thread N, in thread order (`fio --client` writes the logs
    its server sends back as PREFIX_KIND.N.log.SERVER)."""
    prefix = Path(prefix)
    pattern = re.compile(re.escape(f"{prefix.name}_{kind}.") + r"(\d+)\.log(\.[^/]+)?$")
    found = [(int(m[1]), p) for p in prefix.parent.glob(f"{prefix.name}_{kind}.*.log*")
             if (m := pattern.match(p.name))]
    return [p for _, p in sorted(found)]


def read_rows(path: Path, ddir: int | None = WRITE) -> list[list[int]]:
    """The rows of one log of direction `ddir` (None: every direction), as integers."""
    rows = []
    try:
        text = path.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        raise FioLogError(f"cannot read fio log {path}: {exc}") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = [int(x) for x in line.split(",")]
        except ValueError:
            raise FioLogError(f"{path} line {n}: not a fio log line: {line[:60]!r}") from None
        # iops/lat logs: time, value, ddir, ...; histogram logs: time, ddir, bs, counts...
        direction = row[1] if path.name.count("_hist.") else row[2]
        if ddir is None or direction == ddir:
            rows.append(row)
    return rows


def intervals(prefix: str | Path, window_ms: int, ddir: int = WRITE) -> list[Interval]:
    """The complete windows every thread logged, summed over threads."""
    iops_logs = [read_rows(p, ddir) for p in thread_files(prefix, "iops")]
    if not iops_logs:
        raise FioLogError(f"no fio IOPS log {prefix}_iops.N.log")
    lat_logs = [read_rows(p, ddir) for p in thread_files(prefix, "lat")]
    hist_logs = [read_rows(p, ddir) for p in thread_files(prefix, "clat_hist")]
    seconds = window_ms / 1000
    out = []
    for k in range(min(len(log) for log in iops_logs)):
        per_thread = [log[k][1] for log in iops_logs]
        ios = [v * seconds for v in per_thread]
        lats = [(log[k][1], n) for log, n in zip(lat_logs, ios, strict=False) if k < len(log)]
        weight = sum(n for _, n in lats)
        hists = [histogram.from_counts(log[k][3:]) for log in hist_logs if k < len(log)]
        out.append(Interval(
            index=k, end_s=sum(log[k][0] for log in iops_logs) / len(iops_logs) / 1000,
            ios=sum(ios), iops=float(sum(per_thread)),
            lat_mean_ns=sum(v * n for v, n in lats) / weight if weight else None,
            clat_histogram=histogram.merge(*hists)))
    return out


def partial_lat_mean_ns(prefix: str | Path, complete: int, ddir: int = WRITE) -> float | None:
    """Mean total latency logged after the first `complete` windows (the partial last
    window the latency log keeps), threads weighted equally: their I/O counts there are not
    logged."""
    tail = [row[1] for p in thread_files(prefix, "lat") for row in read_rows(p, ddir)[complete:]]
    return sum(tail) / len(tail) if tail else None
