"""A long capture at a compressed rate (issue 40 §2: a day at 20 k IOPS is 1.7 G requests):
fio 4 KiB random reads and writes at QD 32 on a RAM-backed loop device at its full rate for
--seconds, captured by `python -m pts capture` with its spool on this machine's disk; then
the same again killed with SIGKILL in its last part and read by `python -m pts workload`.
Prints requests, the spool's and the capture file's bytes per request, the capture's peak
memory while spooling and in all (max RSS), its CPU per request while tracing and decoding,
and for the killed one the rows against the kernel's count at the kill. Not a test: run it
by hand as root (it makes its own loop device over /dev/shm and detaches it).

    .venv/bin/python benchmarks/capture_long.py [--seconds 120] [--part-seconds 30] [--dir D]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.loopdev import loop_device  # noqa: E402
from pts.workload.capture import spool, tracefs  # noqa: E402
from pts.workload.capture.unspool import open_capture  # noqa: E402


def fio(dev: str, seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        ["fio", "--name=rw", f"--filename={dev}", "--rw=randrw", "--rwmixread=70",
         "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=32", "--time_based",
         f"--runtime={int(seconds)}", "--randrepeat=0", "--norandommap",
         "--output=/dev/null"])


def ios(dev: str) -> int:
    f = (Path("/sys/block") / Path(dev).name / "stat").read_text().split()
    return int(f[0]) + int(f[4])


def capture(dev: str, out: Path, seconds: float, part_s: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pts", "capture", dev, "--seconds",
                             str(seconds), "--part-seconds", str(part_s), "--keep-spool",
                             "-o", str(out)], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def wait_tracing(proc: subprocess.Popen) -> None:
    inst = tracefs.find_tracefs() / "instances" / tracefs.instance_name(proc.pid)
    while not (inst / "trace_pipe").exists():
        if proc.poll() is not None:
            raise SystemExit(proc.stderr.read())
        time.sleep(0.05)
    time.sleep(0.5)


def waited(proc: subprocess.Popen) -> tuple[int, float, int, float]:
    """(exit status, CPU s, max RSS KiB, wall s from now)."""
    t = time.monotonic()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
            time.monotonic() - t)


def clean(dev: str, where: Path, seconds: float, part_s: float) -> None:
    out = where / "clean.parquet"
    before = ios(dev)
    proc = capture(dev, out, seconds + 2, part_s)
    wait_tracing(proc)
    load = fio(dev, seconds)
    load.wait()
    done = ios(dev) - before
    rc, cpu, rss, decode_wall = waited(proc)
    if rc != 0:
        raise SystemExit(proc.stderr.read())
    info = open_capture(out).info
    sp = info.extra["spool"]
    n = info.events
    print(f"clean capture of {seconds:g} s: {n:,} requests ({done:,} counted by the kernel "
          f"while fio ran), {n / seconds:,.0f} per s, lost events {info.lost_events}, "
          f"{sp['parts']} parts")
    print(f"  spool {sp['bytes']:,} B = {sp['bytes'] / n:.1f} B/request; capture file "
          f"{out.stat().st_size:,} B = {out.stat().st_size / n:.1f} B/request")
    print(f"  capture process: max RSS while spooling {sp['maxrss_kb'] / 1024:.0f} MiB, in "
          f"all (decoding included) {rss / 1024:.0f} MiB; CPU while tracing "
          f"{sp['cpu_s'] * 1e6 / n:.3f} µs/request, in all {cpu * 1e6 / n:.2f} µs/request; "
          f"decoding after the tracing {decode_wall:.1f} s wall")
    print(f"  a day at 20 k IOPS (1.728 G requests) at these rates: spool "
          f"{sp['bytes'] / n * 1.728e9 / 1e9:,.0f} GB, capture file "
          f"{out.stat().st_size / n * 1.728e9 / 1e9:,.0f} GB, decoding "
          f"{(cpu - sp['cpu_s']) / n * 1.728e9 / 3600:.1f} CPU hours")


def killed(dev: str, where: Path, seconds: float, part_s: float) -> None:
    out = where / "killed.parquet"
    before = ios(dev)
    proc = capture(dev, out, 4 * seconds, part_s)
    wait_tracing(proc)
    load = fio(dev, 4 * seconds)
    time.sleep(seconds)
    proc.send_signal(signal.SIGKILL)
    at_kill = ios(dev) - before
    proc.wait()
    load.send_signal(signal.SIGINT)
    load.wait()
    left = tracefs.find_tracefs() / "instances" / tracefs.instance_name(proc.pid)
    if left.exists():
        tracefs.remove_instance(left)
    sp = spool.open_spool(spool.spool_of(out))
    reader = subprocess.Popen([sys.executable, "-m", "pts", "workload", str(out)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t = time.monotonic()
    stdout = reader.stdout.read()
    rc, cpu, rss, _ = waited(reader)
    wall = time.monotonic() - t
    if rc != 0:
        raise SystemExit(reader.stderr.read())
    cap = open_capture(out)
    print(f"killed with SIGKILL {seconds:g} s into a {4 * seconds:g} s capture, in part "
          f"{sp.parts} ({part_s:g} s parts): {cap.rows:,} requests read from the spool, "
          f"the kernel counted {at_kill:,} at the kill: {at_kill - cap.rows:,} lost "
          f"({(at_kill - cap.rows) / at_kill * 100:.3f} %)")
    print(f"  `pts workload` on it: {wall:.1f} s wall, {cpu:.1f} s CPU, max RSS "
          f"{rss / 1024:.0f} MiB (decoding and characterising); its card's first lines:")
    print("\n".join("    " + line for line in stdout.splitlines()[:6]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--part-seconds", type=float, default=30)
    ap.add_argument("--dir", type=Path, default=Path("/var/tmp"),
                    help="where the spools and capture files go (a disk, not RAM)")
    args = ap.parse_args()
    tracefs.find_tracefs()
    with loop_device("1G") as dev, \
            tempfile.TemporaryDirectory(dir=args.dir, prefix="pts-long-") as tmp:
        clean(dev, Path(tmp), args.seconds, args.part_seconds)
        killed(dev, Path(tmp), args.seconds, args.part_seconds)

if __name__ == "__main__":
    main()
