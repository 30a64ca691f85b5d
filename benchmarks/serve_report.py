"""Benchmark (issue 22 "Fast"): the dashboard's HTML report of a full-size run, and the
server's idle CPU.

Builds the SYNTHETIC full-size run folder of benchmarks/report_render.py (tests/synthrun.py:
IOPS 56 cells x 25 rounds, Throughput, Latency with json+ bins, WSAT 1,440 samples), then:

1. `python -m pts serve` over it, as a user starts it: GET /runs/<id>/report twice (the
   first builds the HTML report, the second comes from the cache) and the runs list;
2. the same server left alone for --idle seconds with no page open: its CPU time over that
   time, in % of one core (from /proc/PID/stat).

Goals: report < 10 s and cached; idle < 1 % of a core. No device is touched.

    .venv/bin/python benchmarks/serve_report.py [--idle 30]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # tests.synthrun, when run as a script from anywhere

from tests.synthrun import FULL, build  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def get(url: str) -> tuple[float, int, int]:
    """Seconds, HTTP status and body size of one GET."""
    start = time.monotonic()
    with urllib.request.urlopen(url, timeout=600) as r:
        body = r.read()
        return time.monotonic() - start, r.status, len(body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=float, default=30.0, help="idle seconds to measure")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "reports"
        build(root / "Synthetic_SN" / "20261124T000000", FULL)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([sys.executable, "-m", "pts", "serve", str(root), "--port",
                                 str(port)], cwd=ROOT, stdout=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    get(base + "/metrics")
                    break
                except OSError:
                    time.sleep(0.1)
            report = f"{base}/runs/Synthetic_SN/20261124T000000/report"
            first, status, size = get(report)
            second, _, _ = get(report)
            listing, _, _ = get(base + "/")
            print(f"HTML report of the full-size SYNTHETIC run: first {first:.1f} s "
                  f"(HTTP {status}, {size / 1e6:.1f} MB), second {second:.2f} s (cached); "
                  f"runs list {listing:.2f} s")
            before, start = cpu_seconds(proc.pid), time.monotonic()
            time.sleep(args.idle)
            idle = 100 * (cpu_seconds(proc.pid) - before) / (time.monotonic() - start)
            print(f"idle, no page open, {args.idle:.0f} s: {idle:.2f} % of one core")
            print(f"goals: report < 10 s {'met' if first < 10 else 'NOT met'}, cached "
                  f"{'yes' if second < first / 10 else 'no'}, idle < 1 % "
                  f"{'met' if idle < 1 else 'NOT met'}; load average "
                  f"{os.getloadavg()[0]:.1f}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
