"""Wall time of N devices in one session ÷ one device alone: `python benchmarks/multi_device.py`.

    python benchmarks/multi_device.py [--devices 2] [--size 128M] [--profile default]
                                      [--point-seconds 2]

Runs the same short IOPS test (pts-e-1.1, 2 x 2 matrix, at most 5 rounds, purge trim) as a
user does, `python -m pytest pts/ --device emulated:SIZE:PROFILE --destructive ...`: first on
one emulated SSD, then on N emulated SSDs in one session (several --device, pts.session).
The emulated SSDs are throttled by their FTL model (pts/emulate/README.md), so the drive,
not the CPU, should set the pace; on a machine with fewer free cores than devices the
emulator daemons and fio compete and the ratio says so. With --max-rounds equal to the
steady-state window every run does exactly 5 rounds, whether steady or not, so the runs do
the same work. Prints one JSON object: both wall times, the ratio (goal <= 1.15), the exit
statuses and the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEST = ("--destructive", "-k", "iops", "--spec", "pts-e-1.1", "--iops-block-sizes",
        "4KiB,1024KiB", "--iops-rw-mixes", "100/0,0/100", "--max-rounds", "5",
        "--purge", "trim", "-p", "no:cacheprovider", "-q")


def statuses(reports: Path) -> list[str]:
    """The IOPS test's end status in every run folder the session left."""
    out = []
    for ledger in sorted(reports.glob("*/*/ledger.jsonl")):
        ends = [json.loads(line) for line in ledger.read_text().splitlines()
                if '"test_end"' in line]
        out.append(ends[-1]["status"] if ends else "no test_end")
    return out


def session(devices: list[str], reports: Path, point_seconds: int) -> tuple[float, int]:
    argv = [sys.executable, "-m", "pytest", "pts/", *TEST, "--point-seconds",
            str(point_seconds), "--reports-dir", str(reports)]
    for d in devices:
        argv += ["--device", d]
    start = time.monotonic()
    p = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - start
    if p.returncode not in (0, 1):
        sys.exit(f"session failed (exit {p.returncode}):\n{p.stdout[-3000:]}\n{p.stderr}")
    return wall, p.returncode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--size", default="128M")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--point-seconds", type=int, default=2)
    a = ap.parse_args()
    device = f"emulated:{a.size}:{a.profile}"
    with tempfile.TemporaryDirectory(prefix="pts-bench-multi-") as tmp:
        one, rc_one = session([device], Path(tmp) / "one", a.point_seconds)
        many, rc_many = session([device] * a.devices, Path(tmp) / "many", a.point_seconds)
        runs = {"one": statuses(Path(tmp) / "one"), "many": statuses(Path(tmp) / "many")}
    if len(runs["one"]) != 1 or len(runs["many"]) != a.devices:
        sys.exit(f"expected 1 and {a.devices} run folders, found {runs}")
    print(json.dumps({"devices": a.devices, "device": device,
                      "point_seconds": a.point_seconds, "one_device_s": round(one, 1),
                      f"{a.devices}_devices_s": round(many, 1),
                      "ratio": round(many / one, 3), "goal": 1.15,
                      "exit_one": rc_one, "exit_many": rc_many, "test_end": runs,
                      "cpus": os.cpu_count(),
                      "loadavg": os.getloadavg()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
