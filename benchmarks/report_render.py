"""Benchmark: render time and peak memory of the report PDF of a full-size run folder.

Builds a SYNTHETIC run folder of the full PTS-E 2.0.2 size with tests/support/synthetic/synthrun.py
(the
project's own record types and test parameters; made-up figures): IOPS 56 cells x 25
rounds, Throughput 128 KiB and 1024 KiB x 25 rounds, Latency 9 cells x 25 rounds with fio
json+ latency bins, WSAT 1,440 one-minute samples. Then renders its PDF in a child process,
`python -m pts report RUN_DIR -o OUT` (what a user runs), and prints the child's wall time
and peak RSS (os.wait4's resource usage of the child). Goal (issue 11): < 30 s and < 1 GiB.
No device is touched.

    .venv/bin/python benchmarks/report_render.py [--runs 3] [--keep DIR] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))      # tests.support.synthetic, when run as a script from anywhere

from tests.support.synthetic.synthrun import FULL, build  # noqa: E402

GOAL_S, GOAL_BYTES = 30.0, 1 << 30


def render_child(folder: Path, out: Path, profile: Path | None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (bytes) of one
    `python -m pts report` child process."""
    argv = [sys.executable] + (["-m", "cProfile", "-o", str(profile)] if profile else [])
    argv += ["-m", "pts", "report", str(folder), "-o", str(out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.monotonic()
    pid = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL).pid
    _, status, usage = os.wait4(pid, 0)
    seconds = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"render failed (exit {os.waitstatus_to_exitcode(status)}): "
                         f"{' '.join(argv)}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024   # Linux: KiB


def describe(folder: Path) -> str:
    counts: dict[str, int] = {}
    with open(folder / "ledger.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            key = f"{rec['test']} {rec['type']}"
            counts[key] = counts.get(key, 0) + 1
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    parts = ", ".join(f"{k} {v:,}" for k, v in counts.items()
                      if k.endswith((" point", " sample")))
    return f"{parts}; {size / 1e6:.1f} MB on disk"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="renders to time (default 1)")
    ap.add_argument("--keep", metavar="DIR", help="build the run folder in DIR and keep it")
    ap.add_argument("--profile", action="store_true",
                    help="one more render under cProfile; prints the 25 costliest functions")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "run"
        start = time.monotonic()
        build(folder, FULL)
        print(f"run folder (SYNTHETIC figures): {folder}  built in "
              f"{time.monotonic() - start:.1f} s\n  {describe(folder)}")
        out = Path(tmp) / "report.pdf"
        results = [render_child(folder, out, None) for _ in range(args.runs)]
        try:                                   # pdfinfo: poppler-utils
            info = subprocess.run(["pdfinfo", str(out)], capture_output=True, text=True,
                                  check=False).stdout
        except FileNotFoundError:
            info = ""
        pages = next((line.split()[-1] for line in info.splitlines()
                      if line.startswith("Pages:")), "?")
        secs = [s for s, _, _ in results]
        cpu = [c for _, c, _ in results]
        rss = max(r for _, _, r in results)
        print(f"render (python -m pts report, child process): {pages} pages, "
              f"{out.stat().st_size / 1e6:.2f} MB PDF")
        print(f"  seconds: {', '.join(f'{s:.1f}' for s in secs)}  (median "
              f"{statistics.median(secs):.1f}; goal < {GOAL_S:.0f}); CPU seconds: "
              f"{', '.join(f'{c:.1f}' for c in cpu)}; load average {os.getloadavg()[0]:.1f}")
        print(f"  peak RSS: {rss / 2**20:.0f} MiB  (goal < {GOAL_BYTES / 2**30:.0f} GiB)")
        if args.profile:
            prof = Path(tmp) / "render.prof"
            render_child(folder, out, prof)
            import pstats
            pstats.Stats(str(prof)).sort_stats("cumulative").print_stats(25)
        met = statistics.median(secs) < GOAL_S and rss < GOAL_BYTES
        print("goal met" if met else "goal NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
