"""Small capture files built from rows a test writes down (pts.workload.events.CaptureWriter),
so every figure of the characterisation has a hand-computable answer."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pts.workload.capture.events import NO_TIME, CaptureInfo, CaptureWriter, Op

MS = 1_000_000          # ns
R, W, F, D = Op.READ, Op.WRITE, Op.FLUSH, Op.DISCARD


def rows(*ios) -> dict[str, list]:
    """ios: (issue_ms, complete_ms or None, sector, bytes, op[, pid, comm]) tuples."""
    cols: dict[str, list] = {k: [] for k in ("issue_ns", "complete_ns", "sector", "bytes",
                                             "op", "pid", "comm", "error")}
    for io in ios:
        issue, complete, sector, nbytes, op = io[:5]
        pid, comm = (io[5], io[6]) if len(io) > 5 else (100, "app")
        cols["issue_ns"].append(int(round(issue * MS)))
        cols["complete_ns"].append(NO_TIME if complete is None else int(round(complete * MS)))
        cols["sector"].append(sector)
        cols["bytes"].append(nbytes)
        cols["op"].append(int(op))
        cols["pid"].append(pid)
        cols["comm"].append(comm)
        cols["error"].append(0)
    return cols


def write(path: Path, *batches: dict, seconds: float, **info) -> Path:
    """A capture file of the given batches (each from `rows`), one append per batch."""
    n = 0
    with CaptureWriter(path) as w:
        for b in batches:
            w.append({k: np.asarray(v) if k != "comm" else v for k, v in b.items()})
            n += len(b["issue_ns"])
        info.setdefault("source", "tracefs")
        info.setdefault("device", "/dev/synthetic")
        info.setdefault("started_unix", 1_790_000_000.0)
        return w.close(CaptureInfo(seconds=seconds, events=n, **info))
