"""Benchmark: characterisation speed and memory (issue 32 §6: >= 1 M events/s on one core,
< 300 MiB for a 100 M-event capture).

Writes a synthetic capture of N million rows with pts.workload.events.CaptureWriter (a mix of
RND/SEQ reads and writes of 4/8/64/128 KiB at about 8 outstanding, 3 comms, 1 % flushes,
over a 1 TiB device), then times `characterise` on it (one process, one core: numpy's
sorts and bincounts do not thread). Prints one JSON object: rows, seconds, events/s, peak RSS
(resource.getrusage ru_maxrss; the capture is written by a child process) and the RSS before the
characterisation started. No device is touched.

    .venv/bin/python benchmarks/characterise.py [--millions 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pts.workload.capture.events import CaptureInfo, CaptureWriter  # noqa: E402
from pts.workload.characterise import characterise  # noqa: E402

CHUNK = 1_000_000
SIZES = np.array([4096, 8192, 65536, 131072])


def write(path: Path, rows: int, seed: int = 1) -> float:
    rng = np.random.default_rng(seed)
    t0, sector0, end = 0, 0, 0
    with CaptureWriter(path) as w:
        for done in range(0, rows, CHUNK):
            n = min(CHUNK, rows - done)
            gaps = rng.exponential(12_500, n).astype(np.int64)        # ~80 k IOPS
            issue = t0 + np.cumsum(gaps)
            complete = issue + rng.exponential(100_000, n).astype(np.int64)   # ~8 outstanding
            size = SIZES[rng.choice(4, n, p=[0.6, 0.25, 0.1, 0.05])]
            seq = rng.random(n) < 0.3
            sector = rng.integers(0, (1 << 40) // 512 - 256, n)
            starts = np.cumsum(size // 512) + sector0
            sector = np.where(seq, starts - size // 512, sector)
            op = np.where(rng.random(n) < 0.01, 2, (rng.random(n) < 0.35).astype(np.int64))
            comm = np.array(["db", "kworker/u8:1", "jbd2/loop0"])[rng.choice(3, n,
                                                                          p=[.8, .15, .05])]
            w.append({"issue_ns": issue, "complete_ns": complete, "sector": sector,
                      "bytes": np.where(op == 2, 0, size), "op": op.astype(np.uint8),
                      "pid": np.where(comm == "db", 4242, 17).astype(np.int32),
                      "comm": comm.tolist(), "error": np.zeros(n, np.int16)})
            t0, sector0 = int(issue[-1]), int(starts[-1])
            end = max(end, int(complete.max()))
        w.close(CaptureInfo("tracefs", "/dev/bench", 1.79e9, end / 1e9, events=rows,
                            capacity_bytes=1 << 40, lost_events=0))
    return end / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--millions", type=float, default=10)
    ap.add_argument("--step", type=float, default=1.0)
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--write-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_only:
        write(args.write_only, int(args.millions * 1e6))
        return
    rows = int(args.millions * 1e6)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="pts-bench-char-"))
    path = folder / "bench.capture"
    if not path.exists():    # in a child: the figure is the characterisation's RSS alone
        subprocess.run([sys.executable, __file__, "--millions", str(args.millions),
                        "--write-only", str(path)], check=True)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = time.perf_counter()
    ch = characterise(path, step_s=args.step)
    took = time.perf_counter() - t
    print(json.dumps({"rows": rows, "file_mib": round(path.stat().st_size / 2**20, 1),
                      "seconds": round(took, 2), "events_per_s": round(rows / took),
                      "peak_rss_mib": round(resource.getrusage(
                          resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                      "rss_before_mib": round(rss_before, 1), "steps": len(ch.steps),
                      "streams": len(ch.streams), "oio_median": ch.oio_median,
                      "coverage_pct": round(ch.coverage_pct, 1)}))
    if not args.keep:
        path.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
