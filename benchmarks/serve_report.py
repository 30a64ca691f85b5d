"""Benchmark (issue 22 "Fast"): the dashboard's HTML report of a full-size run, and the
server's idle CPU.

Builds the SYNTHETIC full-size run folder of benchmarks/report_render.py
(tests/support/synthetic/synthrun.py:
IOPS 56 cells x 25 rounds, Throughput, Latency with json+ bins, WSAT 1,440 samples), then:

1. `python -m pts serve` over it, as a user starts it: GET /runs/<id>/report twice (the
   first builds the HTML report, the second comes from the cache) and the runs list;
2. the same server left alone for --idle seconds with no page open: its CPU time over that
   time, in % of one core (from /proc/PID/stat);
3. a run in flight (an unfinished synthetic IOPS run beside it): its page's event stream
   (/runs/<id>/events) open, a round record appended to its ledger --rounds times; per
   record, the time until the stream says that round is done.

Goals: report < 10 s and cached; idle < 1 % of a core; a live update < 3 s after its
record. No device is touched.

    .venv/bin/python benchmarks/serve_report.py [--idle 30]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # tests.support.synthetic, when run as a script from anywhere

from tests.support.serve_runs import append, unfinished  # noqa: E402
from tests.support.synthetic.synthrun import FULL, build  # noqa: E402

LIVE = "Live_SN/20261125T000000"

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


def live_delays(base: str, folder: Path, rounds: int) -> list[float]:
    """Seconds from each appended round record to the event saying that round is done."""
    seen: queue.Queue = queue.Queue()

    def read() -> None:
        with urllib.request.urlopen(f"{base}/runs/{LIVE}/events", timeout=600) as r:
            for line in r:
                if line.startswith(b"data: {"):
                    seen.put((time.monotonic(), json.loads(line[6:])))

    threading.Thread(target=read, daemon=True).start()
    done = seen.get(timeout=30)[1]["rounds_done"]
    delays = []
    phases = random.Random(22)
    for n in range(done + 1, done + 1 + rounds):
        time.sleep(phases.uniform(0, 1))    # records land at any phase of the 1 s poll
        appended = time.monotonic()
        append(folder, type="round", test="iops", round=n,
               tracking={"RND 4KiB 0/100": 40000.0 + n},
               steady_state={"RND 4KiB 0/100": None}, steady=False)
        while True:
            when, state = seen.get(timeout=30)
            if state.get("rounds_done") == n:
                delays.append(when - appended)
                break
    # the run stops: the server ends the stream (no open stream at its shutdown)
    append(folder, type="test_end", test="iops", status="interrupted", rounds=None)
    return delays


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=float, default=30.0, help="idle seconds to measure")
    ap.add_argument("--rounds", type=int, default=10, help="live updates to time")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "reports"
        build(root / "Synthetic_SN" / "20261124T000000", FULL)
        live = unfinished(root, LIVE, age=None)
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
            delays = live_delays(base, live, args.rounds)
            print(f"live update, {len(delays)} round records: median "
                  f"{statistics.median(delays):.2f} s, max {max(delays):.2f} s after the record")
            print(f"goals: report < 10 s {'met' if first < 10 else 'NOT met'}, cached "
                  f"{'yes' if second < first / 10 else 'no'}, idle < 1 % "
                  f"{'met' if idle < 1 else 'NOT met'}, live < 3 s "
                  f"{'met' if max(delays) < 3 else 'NOT met'}; load average "
                  f"{os.getloadavg()[0]:.1f}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
