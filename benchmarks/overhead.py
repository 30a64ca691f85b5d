"""Benchmark: the suite's time between test points, against plain fio in the same run.

Runs the same N one-second RND points twice on a loop device made for the purpose: once as
plain `fio JOBFILE` invocations, once through the suite's path (pts.tools.fio wrapper: job file and
command written first, JSON parsed, ledger record appended and fsynced). Prints wall times
and the ratio; the suite's overhead per point is the difference. Needs root and fio.

    .venv/bin/python benchmarks/overhead.py [--points 10] [--seconds 1]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from pts.results import records
from pts.results.ledger import Ledger
from pts.tools.fio import Fio, job_file, random_job


def loop_device(size: int, where: Path) -> tuple[str, Path]:
    backing = where / "bench.img"
    with open(backing, "wb") as fh:
        fh.truncate(size)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                         check=True, capture_output=True, text=True).stdout.strip()
    return dev, backing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=10)
    ap.add_argument("--seconds", type=int, default=1)
    args = ap.parse_args()
    size = 256 << 20
    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm, \
            tempfile.TemporaryDirectory() as tmp:
        dev, _ = loop_device(size, Path(shm))
        try:
            jobs = [random_job(f"p{i:02d}", (0, 65, 100)[i % 3], 4096, 32, 4, args.seconds,
                               size) for i in range(args.points)]
            out = Path(tmp)
            start = time.monotonic()
            for job in jobs:                              # plain fio
                path = out / f"plain-{job.name}.fio"
                path.write_text(job_file(dev, [job]))
                subprocess.run(["fio", "--output-format=json", f"--output={path}.json",
                                str(path)], check=True, capture_output=True)
            plain = time.monotonic() - start
            fio, ledger = Fio(log_file=out / "commands.log"), Ledger(out / "ledger.jsonl")
            start = time.monotonic()
            for job in jobs:                              # the suite's path
                res = fio.run(dev, [job], out / "suite", job.name)
                ledger.append(records.Point(
                    test="benchmark", round=1, index=0, rw_mix="65/35", read_pct=65,
                    block_size=4096, na=False,
                    measured={"iops": res.summary.iops, "raw": str(res.json_path)}))
            suite = time.monotonic() - start
            ledger.close()
        finally:
            subprocess.run(["losetup", "-d", dev], check=False)
    n = args.points
    print(f"{n} points of {args.seconds} s on a tmpfs loop device ({fio.version}):")
    print(f"  plain fio : {plain:7.2f} s  ({plain / n:.3f} s per point)")
    print(f"  snia-pts  : {suite:7.2f} s  ({suite / n:.3f} s per point)")
    print(f"  ratio snia-pts / plain fio: {suite / plain:.3f}; "
          f"overhead per point {(suite - plain) / n * 1000:+.0f} ms")


if __name__ == "__main__":
    main()
