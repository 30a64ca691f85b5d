"""Replay OIO fidelity (issue 32 §6: "replay: outstanding I/Os held within 10 % of each step's
captured figure"): a synthetic ATW whose capture steps have OIO 1, 2, 4, 8, 16 and 32 run
through the real rwsw-replay test (`pytest pts/ -k rwsw_replay`, as
tests/e2e/test_rwsw_integration.py runs it) on a loop device over /dev/shm it makes (and,
with --emulated, on an emulated SSD made for the session: `--device emulated:SIZE`); prints
per step the target OIO (the step's), the nominal (the threads x iodepth the step's fio
sections asked for), the achieved (Little's law: each section's IOPS x mean total latency,
summed, recomputed here from fio's JSON), achieved / target, the busy fraction (Little's law +
fio's user CPU share: fio's own per-I/O work outside the latency it reports, refill_buffers'
data for every write; at OIO 1 near 1 unless the replay idles, tests/e2e/
test_rwsw_integration.py BUSY_LOW; per OIO, as the ratio) and the worst stream's share miss
(points), for each [rwsw_replay] hold asked (--hold: "iolog", one job replaying a generated
iolog; "oio", one section per stream at share depths; "shares", fio flow), each in its own
copy of specs/ (PTS_SPECS_DIR). Not a test: run it by hand as root; it detaches its own loop
device and removes its backing file.

    sudo .venv/bin/python benchmarks/replay_oio.py [--seconds 2] [--emulated 256M]
        [--hold iolog,oio]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.helpers import loop_device  # noqa: E402
from tests.support.ptsrun import run_pts  # noqa: E402

OIOS = (1, 2, 4, 8, 16, 32)
HOLD_LINE = 'hold = "iolog"'
STREAMS = (("RND", "R", "4KiB", 60.0), ("RND", "W", "4KiB", 30.0), ("SEQ", "W", "128KiB", 10.0))
# a step's own mix: the low-OIO steps all three streams (most real captures: OIO 1-8, where
# one section per stream at depth >= 1 overshoots), the others the 60/30/10 or a variant
SHARES = ('"RND 4K R" = 60.0, "RND 4K W" = 30.0, "SEQ 128K W" = 10.0',
          '"RND 4K R" = 50.0, "RND 4K W" = 30.0, "SEQ 128K W" = 20.0',
          '"RND 4K R" = 80.0, "RND 4K W" = 20.0',
          '"RND 4K R" = 60.0, "RND 4K W" = 30.0, "SEQ 128K W" = 10.0',
          '"RND 4K R" = 50.0, "RND 4K W" = 40.0, "SEQ 128K W" = 10.0',
          '"RND 4K R" = 60.0, "RND 4K W" = 30.0, "SEQ 128K W" = 10.0')


def atw(seconds: float) -> str:
    head = ('[workload]\nformat = "snia-pts-atw"\nversion = 1\nname = "replay oio"\n'
            "thread_count = 2\nqueue_depth = 8\n")
    streams = "".join(f'\n[[stream]]\naccess = "{a}"\ndirection = "{d}"\nsize = "{s}"\n'
                      f"share_pct = {p}\n" for a, d, s, p in STREAMS)
    steps = "".join(f"\n[[step]]\nstart_s = {k * seconds}\nseconds = {seconds}\noio = {oio}\n"
                    f"shares = {{ {shares} }}\n"
                    for k, (oio, shares) in enumerate(zip(OIOS, SHARES, strict=True)))
    return head + streams + steps


def little(doc: dict) -> float:
    """Sum over sections and directions of IOPS x mean total latency (s)."""
    return sum(j[d]["iops"] * j[d]["lat_ns"]["mean"] / 1e9 for j in doc["jobs"]
               for d in ("read", "write") if j[d]["total_ios"])


def busy(doc: dict) -> float:
    """Little's law + fio's user CPU share (the work fio does between a completion and the
    next submission), per section, summed."""
    return little(doc) + sum(j["usr_cpu"] / 100 for j in doc["jobs"])


def specs(work: Path, hold: str) -> Path:
    """A copy of specs/ whose [rwsw_replay] hold is `hold`."""
    folder = work / f"specs-{hold}"
    folder.mkdir(exist_ok=True)
    for path in (REPO / "specs").glob("*.toml"):
        text = path.read_text(encoding="utf-8")
        if path.name == "rwsw-1.0.7.toml":
            assert HOLD_LINE in text, "the spec's hold line changed: update HOLD_LINE"
            text = text.replace(HOLD_LINE, f'hold = "{hold}"')
        (folder / path.name).write_text(text, encoding="utf-8")
    return folder


def replay(device: str, work: Path, seconds: float, hold: str) -> list[tuple]:
    path = work / "atw.toml"
    path.write_text(atw(seconds))
    reports = work / f"reports-{hold}-{Path(device).name.replace(':', '-')}"
    os.environ["PTS_SPECS_DIR"] = str(specs(work, hold))
    try:
        done = run_pts(device, reports, "-k", "rwsw_replay", "--workload", str(path),
                       "--point-seconds", "1", "--max-rounds", "5", "--purge", "trim")
    finally:
        os.environ.pop("PTS_SPECS_DIR")
    rows = []
    for p in done.of_type("point", "rwsw-replay"):
        doc = json.loads((done.folder / p["raw"]).read_text())
        nominal = sum(int(j["job options"].get("numjobs", 1)) * int(j["job options"]["iodepth"])
                      for j in doc["jobs"])
        achieved = little(doc)
        rows.append((p["step"], p["oio_target"], p["oio_nominal"], nominal, achieved,
                     p["oio_achieved"], busy(doc), p["iops"], p["share_miss_pts"]))
    return rows


def show(label: str, rows: list[tuple]) -> None:
    print(f"\n{label}")
    print(f"{'step':>4} {'target':>6} {'nominal':>7} {'achieved':>8} {'ratio':>6} "
          f"{'busy':>6} {'IOPS':>9} {'miss pts':>8}")
    for step, target, nominal, from_jobs, achieved, recorded, busy_, iops, miss in rows:
        assert nominal == from_jobs, (nominal, from_jobs)     # the record = fio's jobs
        assert abs(achieved - recorded) <= 1e-6 * max(1.0, achieved), (achieved, recorded)
        print(f"{step:>4} {target:>6} {nominal:>7} {achieved:>8.2f} "
              f"{achieved / target:>6.2f} {busy_ / target:>6.2f} {iops:>9,.0f} {miss:>8.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=2, help="each step's length (s)")
    ap.add_argument("--emulated", metavar="SIZE", default=None,
                    help="also run on an emulated SSD of SIZE (e.g. 256M)")
    ap.add_argument("--hold", default="iolog,oio",
                    help="[rwsw_replay] hold values to compare, comma-separated")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="replay-oio-") as tmp:
        work = Path(tmp)
        for hold in args.hold.split(","):
            with loop_device(256 << 20) as dev:
                show(f"hold {hold!r}: RAM-backed loop device {dev} (/dev/shm, direct I/O)",
                     replay(dev, work, args.seconds, hold))
            if args.emulated:
                show(f"hold {hold!r}: emulated SSD {args.emulated}",
                     replay(f"emulated:{args.emulated}", work, args.seconds, hold))


if __name__ == "__main__":
    main()
