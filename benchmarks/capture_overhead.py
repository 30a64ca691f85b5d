"""Capture overhead (issue 32 §6, issue 40 §2): fio 4 KiB random reads at QD 32 on a RAM-backed loop
device, alternately traced by `python -m pts capture` and untraced, in one run; prints each
run's IOPS, the traced/untraced ratio and the events the capture lost. Not a test: run it by
hand as root (it makes its own loop device over /dev/shm and detaches it).

    .venv/bin/python benchmarks/capture_overhead.py [--seconds 4] [--alternations 3]
                                                    [--no-writeback-attribution]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.loopdev import loop_device  # noqa: E402
from pts.workload.capture import local, tracefs  # noqa: E402
from pts.workload.capture.events import open_capture  # noqa: E402


def fio_iops(dev: str, seconds: float) -> float:
    out = subprocess.run(
        ["fio", "--name=r", f"--filename={dev}", "--rw=randread", "--bs=4k", "--direct=1",
         "--ioengine=libaio", "--iodepth=32", "--time_based", f"--runtime={seconds}",
         "--randrepeat=0", "--norandommap", "--output-format=json"],
        check=True, capture_output=True, text=True).stdout
    return json.loads(out)["jobs"][0]["read"]["iops"]


def traced(dev: str, seconds: float, out: Path,
           writeback: bool = True) -> tuple[float, int, float, float]:
    proc = subprocess.Popen([sys.executable, "-m", "pts", "capture", dev, "--seconds",
                             str(seconds + 2), "-o", str(out)]
                            + ([] if writeback else ["--no-writeback-attribution"]), cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    inst = tracefs.find_tracefs() / "instances" / tracefs.instance_name(proc.pid)
    while not (inst / "trace_pipe").exists():
        if proc.poll() is not None:
            raise SystemExit(proc.stderr.read())
        time.sleep(0.05)
    time.sleep(0.5)
    iops = fio_iops(dev, seconds)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.read())
    info = open_capture(out).info
    # the capture's own CPU time per captured request: a figure the machine's other load
    # does not blur as much as the IOPS ratio. While tracing (the spool's own count: what
    # the traced workload competes with), and the whole process's (start-up and the
    # decoding after the tracing, at SCHED_IDLE, included)
    n = max(1, info.events)
    during_us = info.extra["spool"]["cpu_s"] * 1e6 / n
    total_us = (usage.ru_utime + usage.ru_stime) * 1e6 / n
    return iops, info.lost_events, during_us, total_us


def kernel_only(dev: str, seconds: float, writeback: bool = True) -> float:
    """fio's IOPS with the capture's tracepoints on (its instance, filters and buffer: the
    two request events and the writeback attribution's, tracefs.ATTRIBUTION_EVENTS) and
    nothing reading them: the kernel's own cost of recording the events, which no reader
    can take back."""
    rdev = os.stat(dev).st_rdev
    with tracefs.Instance(tracefs.find_tracefs(), local.kernel_dev_t(
            os.major(rdev), os.minor(rdev)), 8192, name=f"pts-bench-{os.getpid()}",
            writeback=writeback) as inst:
        inst.start()
        return fio_iops(dev, seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--alternations", type=int, default=3)
    ap.add_argument("--no-writeback-attribution", dest="writeback", action="store_false",
                    help="capture (and the control) without the writeback attribution's "
                    "events")
    args = ap.parse_args()
    tracefs.find_tracefs()
    with loop_device("256M") as dev:
        plain, trace, lost, bare = [], [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.alternations):
                plain.append(fio_iops(dev, args.seconds))
                iops, n, during_us, total_us = traced(dev, args.seconds,
                                                      Path(tmp) / f"c{i}.parquet",
                                                      args.writeback)
                trace.append(iops)
                lost.append(n)
                bare.append(kernel_only(dev, args.seconds, args.writeback))
                print(f"round {i + 1}: untraced {plain[-1]:,.0f} IOPS, traced {iops:,.0f} "
                      f"IOPS, lost events {n}, capture CPU per request {during_us:.3f} µs "
                      f"while tracing, {total_us:.2f} µs in all (start-up and the decoding "
                      "after the tracing included); tracepoints on and nothing read "
                      f"{bare[-1]:,.0f} IOPS")
        ratio = sum(trace) / sum(plain)
        print(f"traced / untraced IOPS: {ratio:.3f} (target >= 0.95); lost events {sum(lost)}; "
              f"tracepoints on, nothing read / untraced: {sum(bare) / sum(plain):.3f}")


if __name__ == "__main__":
    main()
