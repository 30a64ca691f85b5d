"""A lab meter simulated by a script (tests/power/test_host.py): prints one sample a line,
`<unix seconds> <watts>` or, with --csv, CSV under a header, every --period seconds; the
watts climb by --step from --watts; after --count lines it exits with --exit (0: runs on
until stopped when --count is 0)."""

import argparse
import signal
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--csv", action="store_true")
parser.add_argument("--count", type=int, default=0)
parser.add_argument("--period", type=float, default=0.05)
parser.add_argument("--watts", type=float, default=10.0)
parser.add_argument("--step", type=float, default=0.0)
parser.add_argument("--exit", type=int, default=0)
parser.add_argument("--garbage", action="store_true", help="print one line that is no sample")
parser.add_argument("--deaf", action="store_true", help="ignore SIGTERM (as a hung meter CLI)")
args = parser.parse_args()
if args.deaf:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if args.csv:
    print("channel,timestamp,voltage,power_w", flush=True)
n = 0
while args.count == 0 or n < args.count:
    watts = args.watts + n * args.step
    if args.garbage and n == 1:
        print("overload!", flush=True)
    elif args.csv:
        print(f"A,{time.time():.6f},12.0,{watts}", flush=True)
    else:
        print(f"{time.time():.6f} {watts}", flush=True)
    n += 1
    time.sleep(args.period)
print("meter: link lost", file=sys.stderr)
sys.exit(args.exit)
