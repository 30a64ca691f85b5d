"""Replay at native length (issue 40 §3): a long synthetic capture (benchmarks/characterise.py's
writer: N million I/Os at ~80 k IOPS in situ, ~8 outstanding, RND/SEQ reads and writes of
4-128 KiB) characterised into an ATW with STEP-second steps (`python -m pts workload CAPTURE
-o ATW --step STEP`), then replayed by the real rwsw-replay test at native length (time scale
1, [rwsw_replay] hold "iolog": each step's log made as fio reads it, through a Unix socket)
on a loop device over /dev/shm that it makes. Prints per step: the capture's seconds, fio's
runtime of the step, the idle gap before it (from the points' I/O windows), the in-situ and
the replayed IOPS and their ratio, the I/O lines made for it and the time spent making them
(raw/rwsw-replay/iolog-feed.json); then the replay's wall time against the capture's (the
drift), and the peak disk the logs took (regular files in the sockets' folder, sampled every
0.2 s while the suite ran; the former way wrote every step's log before the replay).
Numbers only, no asserts on time. Run it as root; it detaches only its own loop device.

    sudo .venv/bin/python benchmarks/replay_native.py [--millions 20] [--step 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from characterise import write as write_capture  # noqa: E402

from tests.support.helpers import loop_device  # noqa: E402
from tests.support.ptsrun import run_pts  # noqa: E402


def disk_watch(folder: Path, stop: threading.Event, peak: dict) -> None:
    """The largest total of regular files (and count of sockets) seen in `folder`."""
    while not stop.wait(0.2):
        files = sockets = 0
        try:
            for entry in folder.iterdir():
                st = entry.lstat()
                if entry.is_socket():
                    sockets += 1
                else:
                    files += st.st_size
        except FileNotFoundError:
            pass
        peak["bytes"] = max(peak["bytes"], files)
        peak["sockets"] = max(peak["sockets"], sockets)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--millions", type=float, default=20, help="capture I/Os (millions)")
    ap.add_argument("--step", type=float, default=5, help="the ATW's step (s)")
    ap.add_argument("--size", default="1G", help="the loop device's size (e.g. 1G)")
    args = ap.parse_args()
    size = int(args.size[:-1]) << {"M": 20, "G": 30}[args.size[-1]]
    with tempfile.TemporaryDirectory(prefix="replay-native-") as tmp:
        work = Path(tmp)
        capture, atw = work / "synthetic.capture", work / "atw.toml"
        t = time.perf_counter()
        seconds = write_capture(capture, int(args.millions * 1e6))
        made = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pts", "workload", str(capture), "-o", str(atw),
                        "--step", str(args.step)], check=True, cwd=REPO,
                       stdout=subprocess.DEVNULL)
        print(f"capture: {args.millions:g} M I/Os, {seconds:.1f} s, written in {made:.1f} s, "
              f"{capture.stat().st_size / 2**20:.0f} MiB; ATW in {time.perf_counter() - t:.1f} s")
        sockets = Path(tempfile.gettempdir()).resolve() / f"pts-iolog-{os.getuid()}"
        peak, stop = {"bytes": 0, "sockets": 0}, threading.Event()
        watcher = threading.Thread(target=disk_watch, args=(sockets, stop, peak), daemon=True)
        watcher.start()
        try:
            with loop_device(size) as dev:
                done = run_pts(dev, work / "reports", "-k", "rwsw_replay", "--workload",
                               str(atw), "--point-seconds", "1", "--max-rounds", "5",
                               "--purge", "trim", timeout=4 * 3600)
        finally:
            stop.set()
            watcher.join()
        points = done.of_type("point", "rwsw-replay")
        fed = json.loads((done.folder / "raw" / "rwsw-replay" / "iolog-feed.json").read_text())
        print(f"\n{'step':>4} {'native s':>8} {'fio s':>6} {'gap ms':>7} {'in-situ':>9} "
              f"{'replayed':>9} {'ratio':>6} {'OIO':>4} {'lines made':>11} {'make s':>7} "
              f"{'prep s':>7}")
        ratios, gaps = [], []
        for p, f in zip(points, fed["steps"], strict=True):
            doc = json.loads((done.folder / p["raw"]).read_text())
            runtime = doc["jobs"][0]["job_runtime"] / 1000
            gap = -(p["overlap_ms"] or 0.0) if p["overlap_ms"] is not None else None
            ratio = p["iops"] / p["insitu_iops"] if p["insitu_iops"] else None
            if ratio:
                ratios.append(ratio)
            if gap is not None:
                gaps.append(gap)
            print(f"{p['step']:>4} {p['step_seconds']:>8.1f} {runtime:>6.2f} "
                  f"{'-' if gap is None else f'{gap:.0f}':>7} {p['insitu_iops'] or 0:>9,.0f} "
                  f"{p['iops']:>9,.0f} {ratio or 0:>6.2f} {p['oio_target']:>4} "
                  f"{f['lines_made']:>11,} {f['make_s']:>7.2f} {f.get('prepare_s', 0):>7.2f}")
        native = sum(p["step_seconds"] for p in points)
        wall = points[-1]["end"] - points[0]["start"]
        lines = sum(f["lines_made"] for f in fed["steps"])
        make = sum(f["make_s"] for f in fed["steps"])
        print(f"\nsteps {len(points)}; capture {native:.1f} s, replay wall {wall:.1f} s "
              f"(first I/O to last completion): drift {wall - native:+.1f} s "
              f"({100 * (wall - native) / native:+.1f} %); gaps between steps median "
              f"{statistics.median(gaps):.0f} ms, max {max(gaps):.0f} ms")
        print(f"replayed / in-situ IOPS: median {statistics.median(ratios):.2f}, min "
              f"{min(ratios):.2f}, max {max(ratios):.2f}")
        print(f"logs: {lines:,} lines made in {make:.1f} s ({lines / make / 1e6:.2f} M lines/s), "
              f"prepare max {max(f.get('prepare_s', 0) for f in fed['steps']):.2f} s; peak disk "
              f"of the logs {peak['bytes']:,} bytes (sockets seen at once: {peak['sockets']}); "
              f"the former way: {sum(p['iolog_ios'] for p in points) * 40 / 2**30:.1f} GiB "
              "written before the replay (about 40 bytes a line)")


if __name__ == "__main__":
    main()
