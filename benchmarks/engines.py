"""Benchmark: fio's I/O engines as the suite runs them (--ioengine, --io-poll: the job files
of pts.tools.fio with Fio.engine set), in ONE run on a RAM-backed block device, so that the
device costs next to nothing and what differs is the host's cost per I/O. Needs root and fio.

    .venv/bin/python benchmarks/engines.py [--seconds 3] [--passes 5] [--device /dev/nullb0]

Rows: libaio; io_uring with fixed buffers and registered files; io_uring + polled completion
(hipri) where the device has poll queues (/sys/block/DEV/queue/io_poll = 1: null_blk made
with poll_queues, an NVMe drive with the nvme module's poll_queues), else the row says
"not supported on this device" (a loop device has none).
Columns:
  IOPS/core  4 KiB random reads at QD 32, one thread: IOPS / (fio's usr + sys CPU % / 100),
             the I/Os one fully busy core drives (fio's own CPU accounting of its thread);
  IOPS       the same job's IOPS;
  QD1 mean, QD1 p99   4 KiB random reads at QD 1, one thread: total latency (slat + clat,
             fio lat_percentiles), µs.
The engines ALTERNATE (--passes passes of: each engine's QD 32 job then its QD 1 job) and each
figure is the median over the passes, so a drift of the machine is not read as a difference
between engines; `spread` is the largest / smallest IOPS/core over the passes.

Default device: a loop device over a file in /dev/shm (--direct-io=on; created, written once
so that reads do not hit holes, detached and removed afterwards). --device DEV: an existing
RAM-backed device instead (e.g. null_blk: `modprobe null_blk queue_mode=2 poll_queues=2`);
it is only read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pts.tools.fio import Fio, Job, engine_options

ROWS = (("libaio", "libaio", False),
        ("io_uring (fixedbufs, registerfiles)", "io_uring", False),
        ("io_uring + polling (hipri)", "io_uring", True))
SIZE = 256 << 20
BS = 4096


def io_poll(dev: str) -> str:
    """The device's /sys/block/DEV/queue/io_poll ("1": it has poll queues)."""
    path = Path("/sys/block") / Path(dev).resolve().name / "queue" / "io_poll"
    try:
        return path.read_text().strip()
    except OSError:
        return "unreadable"


def loop_device(folder: Path) -> str:
    backing = folder / "engines.img"
    with open(backing, "wb") as fh:
        fh.truncate(SIZE)
    dev = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                         check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run(["fio", "--name=fill", f"--filename={dev}", "--rw=write", "--bs=1M",
                    "--direct=1", "--ioengine=libaio", "--iodepth=16"], check=True,
                   capture_output=True)
    return dev


def measure(fio: Fio, dev: str, out: Path, name: str, iodepth: int, seconds: int) -> dict:
    """One 4 KiB random read job through the suite's Fio: IOPS, CPU, total latency."""
    job = Job(name, "randread", BS, iodepth, runtime=seconds, lat_percentiles=(99.0,))
    result = fio.run(dev, [job], out, name, timeout=seconds * 5 + 60)
    j = json.loads(result.json_path.read_text())["jobs"][0]
    lat = j["read"]["lat_ns"]
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100
    return {"iops": j["read"]["iops"], "cpu": cpu, "per_core": j["read"]["iops"] / cpu,
            "mean_us": lat["mean"] / 1000, "p99_us": lat["percentile"]["99.000000"] / 1000}


def run(dev: str, seconds: int, passes: int, out: Path) -> tuple[dict, str]:
    poll = io_poll(dev)
    rows = [r for r in ROWS if not r[2] or poll == "1"]
    found: dict[str, list[dict]] = {label: [] for label, _, _ in rows}
    fio = Fio(log_file=out / "commands.log")
    for n in range(passes):
        for label, engine, polled in rows:
            fio.engine = engine_options(engine, polled)
            tag = f"{engine}{'-poll' if polled else ''}-{n}"
            qd32 = measure(fio, dev, out, f"qd32-{tag}", 32, seconds)
            qd1 = measure(fio, dev, out, f"qd1-{tag}", 1, seconds)
            found[label].append({"per_core": qd32["per_core"], "iops": qd32["iops"],
                                 "cpu": qd32["cpu"], "mean_us": qd1["mean_us"],
                                 "p99_us": qd1["p99_us"]})
    result = {}
    for label, passes_ in found.items():
        med = {k: statistics.median(p[k] for p in passes_) for k in passes_[0]}
        per_core = [p["per_core"] for p in passes_]
        result[label] = med | {"spread": max(per_core) / min(per_core)}
    return result, poll


def table(result: dict, poll: str, dev: str) -> str:
    lines = [f"{'engine':38} {'IOPS/core':>10} {'IOPS':>9} {'CPU':>5} {'QD1 mean':>9} "
             f"{'QD1 p99':>8} {'spread':>6}"]
    for label, _, _ in ROWS:
        r = result.get(label)
        if r is None:
            lines.append(f"{label:38} not supported on this device ({dev}: "
                         f"/sys/block/.../queue/io_poll = {poll}, no poll queues)")
            continue
        lines.append(f"{label:38} {r['per_core']:10,.0f} {r['iops']:9,.0f} {r['cpu']:5.2f} "
                     f"{r['mean_us']:7.1f}µs {r['p99_us']:6.1f}µs {r['spread']:6.3f}")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=3, help="length of each job (default 3)")
    ap.add_argument("--passes", type=int, default=5, help="alternating passes (default 5)")
    ap.add_argument("--device", help="an existing RAM-backed block device (only read); "
                                     "default: a loop device over /dev/shm made here")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm, \
            tempfile.TemporaryDirectory() as tmp:
        dev = args.device or loop_device(Path(shm))
        try:
            result, poll = run(dev, args.seconds, args.passes, Path(tmp))
        finally:
            if not args.device:
                subprocess.run(["losetup", "-d", dev], check=False)
    print(f"device {dev} ({'given' if args.device else 'loop over /dev/shm'}), "
          f"{args.passes} passes of {args.seconds} s jobs, medians; fio "
          f"{Fio().version}, {len(os.sched_getaffinity(0))} CPUs")
    print(table(result, poll, dev))
    print(json.dumps({"device": dev, "io_poll": poll, "rows": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
