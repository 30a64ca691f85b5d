"""Measure an emulated SSD's FOB -> steady-state curve: `python benchmarks/emulated_ssd.py`.

    python benchmarks/emulated_ssd.py --size 256M [--profile default] [--seconds 90]
                                [--precondition none|seq] [--round-s 5]

Starts an instance, discards it, runs RND 4 KiB writes at QD32 (libaio, direct, 4 jobs,
norandommap) for --seconds with a per-second IOPS log, discards the whole device and
measures again, then stops the instance. With --precondition seq one sequential 128 KiB
pass over the device (as in the PTS WIPC) runs before the random writes.

Steady state is judged with the suite's own PTS rule (pts.procedure.steady_state) over rounds of
--round-s seconds, once the level has left the FOB plateau (< 90 % of FOB). Prints one
JSON object: FOB IOPS, steady-state IOPS and ratio, bytes written until steady state (in
capacities too), IOPS after the discard, the per-second curve and the model's counters.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from pts.emulate import lifecycle
from pts.procedure import steady_state

RND_WRITE = ["--ioengine=libaio", "--direct=1", "--rw=randwrite", "--bs=4k", "--iodepth=32",
             "--numjobs=4", "--group_reporting", "--norandommap", "--randrepeat=0"]
FOB_SECONDS = 3
FOB_PLATEAU = 0.9      # a window still above this fraction of FOB is not "after the fall"


def fio(device: str, *options: str) -> dict:
    argv = ["fio", "--name=bench", f"--filename={device}", "--output-format=json", *options]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])


def per_second_iops(prefix: str) -> list[float]:
    """Sum the per-job 1 s IOPS logs (time_ms, value, ...) into one series."""
    buckets: dict[int, float] = {}
    for path in glob.glob(f"{prefix}_iops.*.log"):
        with open(path) as fh:
            for line in fh:
                fields = line.split(",")
                second = round(int(fields[0]) / 1000)
                buckets[second] = buckets.get(second, 0.0) + float(fields[1])
    return [buckets[s] for s in sorted(buckets)]


def find_steady_state(per_second: list[float], fob: float, round_s: int) -> int | None:
    """Index (0-based) of the first round closing a steady window after the fall."""
    rounds = [sum(per_second[i:i + round_s]) / round_s
              for i in range(0, len(per_second) - round_s + 1, round_s)]
    for last in range(steady_state.WINDOW_ROUNDS - 1, len(rounds)):
        window = rounds[:last + 1]
        if max(window[-steady_state.WINDOW_ROUNDS:]) < FOB_PLATEAU * fob and \
                steady_state.check(window).steady:
            return last
    return None


def rnd_write_iops(device: str, seconds: int) -> float:
    out = fio(device, *RND_WRITE, "--time_based", f"--runtime={seconds}")
    return out["jobs"][0]["write"]["iops"]


def measure(inst: lifecycle.Instance, seconds: int, round_s: int, precondition: str) -> dict:
    subprocess.run(["blkdiscard", inst.device], check=True)
    fob = rnd_write_iops(inst.device, FOB_SECONDS)
    subprocess.run(["blkdiscard", inst.device], check=True)
    pre_bytes = 0
    if precondition == "seq":
        fio(inst.device, "--ioengine=libaio", "--direct=1", "--rw=write", "--bs=128k",
            "--iodepth=32", "--size=100%")
        pre_bytes = inst.size
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "rnd")
        fio(inst.device, *RND_WRITE, "--time_based", f"--runtime={seconds}",
            f"--write_iops_log={prefix}", "--log_avg_msec=1000")
        curve = per_second_iops(prefix)
    model = lifecycle.read_stats(inst)
    last = find_steady_state(curve, fob, round_s)
    result = {"fob_iops": round(fob), "per_second_iops": [round(v) for v in curve],
              "precondition": precondition, "round_s": round_s, "model_after": model}
    if last is not None:
        end = (last + 1) * round_s
        window = curve[end - steady_state.WINDOW_ROUNDS * round_s:end]
        ss_iops = sum(window) / len(window)
        written = pre_bytes + sum(curve[:end]) * 4096
        result.update(steady_state_iops=round(ss_iops), ss_over_fob=round(ss_iops / fob, 3),
                      steady_after_s=end, bytes_until_steady=int(written),
                      capacities_until_steady=round(written / inst.size, 2))
    subprocess.run(["blkdiscard", inst.device], check=True)
    after = rnd_write_iops(inst.device, FOB_SECONDS)
    result.update(after_discard_iops=round(after), after_discard_over_fob=round(after / fob, 3))
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python benchmarks/emulated_ssd.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="256M")
    p.add_argument("--profile", default="default")
    p.add_argument("--seconds", type=int, default=90, help="random-write phase length")
    p.add_argument("--round-s", type=int, default=5, help="seconds per steady-state round")
    p.add_argument("--precondition", choices=("none", "seq"), default="none")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    inst = lifecycle.start(args.size, args.profile)
    try:
        result = measure(inst, args.seconds, args.round_s, args.precondition)
    finally:
        lifecycle.stop(inst.device)
    result.update(size=inst.size, profile=args.profile, wall_s=round(time.monotonic() - t0, 1))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
