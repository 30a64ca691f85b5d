"""Benchmark: how much of a round's wall time is measurement, how faithful the figures are,
and what WIPC costs — the suite's own path against plain fio, in ONE run, on a loop device
it creates (tmpfs-backed, removed afterwards). Needs root and fio.

    .venv/bin/python benchmarks/round_efficiency.py [--seconds 1,5] [--points 56]
                                                    [--p2-points 12] [--p2-reps 3]
                                                    [--rounds 4] [--emulated default]

P1 harness efficiency: sum of the points' measured I/O time (each point's first I/O to last
   completion, from its fio timing log) / wall time of the round (fio, JSON split, ledger
   records), for the PTS-E IOPS round (56 points, TC 4 / QD 32) in each round mode.
   Goal: >= 97 % at 1 s points; at 60 s points it is extrapolated from the fixed cost.
   Then --rounds consecutive pipelined rounds through the suite's RoundMeasure (each point
   started when the one before it has completed its I/O; a point that overlaps anyway is
   measured again stonewalled): P1 per round (wall time includes the points measured
   again), where the round's wall time went (runtimes, drains, idle between points, the
   rest), the points recorded with an overlap over 1 % of a point (must be 0), the runs
   measured again, the largest drain and its change from the round before. A point's drain
   (its I/O in flight when its runtime ends) counts as measured I/O: fio waits for it
   before it stops the point's clock, so it is in the point's runtime and figures (checked:
   fio's own runtimes are printed beside it). Goal (issue 33): P1 >= 0.95 at 1 s points
   with 0 overlapping points.
P2 fidelity: IOPS the suite records per point / plain `fio` of the same job alone on the
   same device, median and worst over the points, at every point length, for each round
   mode (pipelined: through one RoundMeasure, as the suite records it). The modes and
   plain fio ALTERNATE (--p2-reps passes of: pipelined round, stonewalled round, per-point
   round, plain fio per point) and each figure is the median
   over the passes, so that a slow drift of the machine or device is not read as a
   difference between them; the noise floor is the spread of plain fio over its passes.
P3 WIPC: wall time of the suite's preconditioning / plain fio running the same job file
   (--p3-reps 0: not measured).

The device is filled once before anything is measured: a tmpfs-backed loop device's first
write of a block allocates memory (slow) and its never-written blocks read for free, so an
unfilled device changes under the measurements and favours whatever runs later.
--emulated PROFILE: the same on an emulated SSD (pts.emulate, --emulated-size, default
256M) instead of the tmpfs loop device: a drive whose large writes drain for seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from pts.conditioning.wipc import plan_wipc, run_wipc
from pts.config.settings import make_settings
from pts.config.spec import load_spec
from pts.device.identity import resolve
from pts.emulate import lifecycle
from pts.procedure.rounds import point_record
from pts.procedure.runner import MAX_OVERLAP, RoundMeasure
from pts.results import records
from pts.results.ledger import Ledger
from pts.testdefs import fields, iops
from pts.tools.fio import Fio, job_file, parse_output, summarize
from pts.tools.fio_round import run_round

SIZE = 1 << 30


def loop_device(folder: Path, size: int = SIZE) -> str:
    backing = folder / "bench.img"
    with open(backing, "wb") as fh:
        fh.truncate(size)
    return subprocess.run(["losetup", "--find", "--show", "--direct-io=on", str(backing)],
                          check=True, capture_output=True, text=True).stdout.strip()


def round_once(fio: Fio, dev, decl, points, mode: str, seconds: int, out: Path) -> dict:
    """One round through the suite's path; its efficiency and the points' IOPS."""
    ledger = Ledger(out / f"{mode}-{seconds}s.jsonl")
    start = time.monotonic()
    found = run_round(fio, dev.path, [decl.job(p) for p in points], out / f"{mode}-{seconds}s",
                      mode, timeout=len(points) * seconds * 3 + 120)
    for p, r in zip(points, found, strict=True):
        ledger.append(point_record(records.Point, "iops", 1, p, fields.basic(r.summary)
                                   | {"start": r.start, "end": r.end,
                                      "overlap_ms": r.overlap_ms, "raw": str(r.json_path)}))
    wall = time.monotonic() - start
    ledger.close()
    busy = sum(r.end - r.start for r in found)
    overlaps = [r.overlap_ms for r in found if r.overlap_ms is not None]
    return {"wall": wall, "busy": busy, "efficiency": busy / wall,
            "max_overlap_ms": max(overlaps, default=float("nan")),
            "iops": [r.summary.iops for r in found]}


def plain_fio(dev: str, job, out: Path) -> tuple[float, float]:
    """(IOPS, wall seconds) of plain fio running one job file."""
    path = out / f"plain-{job.name}.fio"
    path.write_text(job_file(dev, [job]))
    start = time.monotonic()
    res = subprocess.run(["fio", "--output-format=json", str(path)], check=True,
                         capture_output=True, text=True)
    return summarize(parse_output(res.stdout)).iops, time.monotonic() - start


class BenchRun:
    """What RoundMeasure uses of a pts.run.Run: settings, device, fio, a ledger, raw folders."""

    def __init__(self, settings, dev_path: str, fio: Fio, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.settings, self.spec, self.fio, self.folder = settings, settings.spec, fio, folder
        self.device, self.resume = SimpleNamespace(path=dev_path), None
        self.ledger = Ledger(folder / "ledger.jsonl")
        self.said: list[str] = []

    def write(self, line: str) -> None:
        self.said.append(line)
        print(f"    {line}", flush=True)

    def deviation(self, test: str, text: str) -> None:
        self.write(f"deviation {test}: {text}")

    def raw_dir(self, test: str, *parts: str) -> Path:
        return self.folder.joinpath("raw", test, *parts)

    def relative(self, path) -> str:
        return str(Path(path).relative_to(self.folder))


def consecutive_rounds(fio: Fio, dev_path: str, settings, decl, points, rounds: int,
                       out: Path) -> list[dict]:
    """`rounds` pipelined rounds through one RoundMeasure, each recorded as the suite
    records it; per round P1, the recorded points overlapping
    the previous one by more than the limit, the runs set aside, the largest drain."""
    run = BenchRun(settings, dev_path, fio, out / f"rounds-{settings.point_seconds}s")
    measure = RoundMeasure(run, decl)
    limit = MAX_OVERLAP * settings.point_seconds * 1000
    found, drains_before = [], {}
    for round_no in range(1, rounds + 1):
        said = len(run.said)
        start = time.monotonic()
        got = measure(points, round_no)
        for p in points:
            run.ledger.append(point_record(records.Point, decl.test, round_no, p, got[p.index]))
        wall = time.monotonic() - start
        r = where_time_goes(run, points, got, measure, wall, settings.point_seconds)
        overlaps = [x["overlap_ms"] for x in got.values() if x["overlap_ms"] is not None]
        drains = {i: d for i, d in measure.drains.items() if d is not None}
        grown = [drains[i] - drains_before[i] for i in drains
                 if i in drains_before and drains_before[i] >= 20]
        r |= {"round": round_no, "overlapping": sum(o > limit for o in overlaps),
              "max_overlap_ms": max(overlaps, default=float("nan")),
              "measured_again": sum("measured again" in line for line in run.said[said:]),
              "max_drain_ms": max(drains.values(), default=0.0),
              "max_drain_growth_ms": max(grown, default=0.0),
              "max_drain_growth_share": max((g / drains_before[i] for i, g in zip(
                  [i for i in drains if i in drains_before and drains_before[i] >= 20],
                  grown, strict=True)), default=0.0),
              "mode": measure.mode, "drains_ms": {i: round(d) for i, d in drains.items()}}
        drains_before = drains
        found.append(r)
        print(f"P1 round {round_no} ({r['mode']} next), {len(points)} x "
              f"{settings.point_seconds} s: wall {wall:.1f} s, measured I/O {r['busy']:.1f} s "
              f"(fio's own runtimes {r['fio_runtime_s']:.1f} s), efficiency "
              f"{r['efficiency']:.4f}; recorded points overlapping > {limit:.0f} ms: "
              f"{r['overlapping']} (largest overlap {r['max_overlap_ms']:.0f} ms); runs "
              f"measured again: {r['measured_again']}; largest drain {r['max_drain_ms']:.0f} "
              f"ms, largest growth from the round before {r['max_drain_growth_ms']:.0f} ms "
              f"({r['max_drain_growth_share']:.0%})", flush=True)
        print(f"    where the round's {wall:.1f} s went: runtimes {r['runtime_s']:.1f} s, "
              f"drains {r['drain_s']:.1f} s, idle between points {r['between_s']:.1f} s, "
              f"the rest (fio start and exit, JSON, records, points measured again) "
              f"{r['rest_s']:.1f} s", flush=True)
    run.ledger.close()
    return found


def where_time_goes(run: BenchRun, points, got: dict, measure, wall: float,
                    seconds: int) -> dict:
    """A round's wall time, split: the points' runtimes, their drains (I/O in flight after
    the runtime, completed before the next point starts: in fio's own runtime of the point,
    so in its figures), the idle between a point's last completion and the next one's start,
    and the rest. P1 = (runtimes + drains) / wall; fio's runtimes (its JSON, the longest
    section of each point) check that numerator against what fio measured."""
    busy = sum(x["end"] - x["start"] for x in got.values())
    drain = sum(max(0.0, measure.drains.get(p.index) or 0.0) for p in points) / 1000
    between = sum(max(0.0, -x["overlap_ms"]) for x in got.values()
                  if x["overlap_ms"] is not None) / 1000
    fio_runtime = 0.0
    for x in got.values():
        jobs = json.loads((run.folder / x["raw"]).read_text())["jobs"]
        fio_runtime += max(max(j[d]["runtime"] for d in ("read", "write") if d in j)
                           for j in jobs) / 1000
    return {"wall": wall, "busy": busy, "efficiency": busy / wall, "fio_runtime_s": fio_runtime,
            "runtime_s": len(points) * seconds, "drain_s": drain, "between_s": between,
            "rest_s": wall - busy - between}


MODES = ("pipelined", "stonewalled", "per-point")


def fidelity(fio: Fio, dev_path: str, decl, points, seconds: int, reps: int,
             out: Path, settings) -> dict:
    """P2: per mode, the median over `reps` alternating passes of each point's IOPS / the
    median of plain fio's; median and worst over the points. Noise: plain fio's spread
    (largest / smallest of its passes), median and worst over the points."""
    found: dict[str, list[list[float]]] = {m: [[] for _ in points]
                                           for m in (*MODES, "plain")}
    measure = RoundMeasure(BenchRun(settings, dev_path, fio, out / f"p2-{seconds}s"), decl)
    for rep in range(reps):
        for mode in MODES:
            if mode == "pipelined":       # as the suite records it
                got = measure(points, rep + 1)
                iops = [got[p.index]["iops"] for p in points]
            else:
                iops = [r.summary.iops for r in run_round(
                    fio, dev_path, [decl.job(p) for p in points],
                    out / f"p2-{seconds}s-{mode}-{rep}", mode,
                    timeout=len(points) * seconds * 3 + 120)]
            for k, value in enumerate(iops):
                found[mode][k].append(value)
        for k, p in enumerate(points):
            found["plain"][k].append(plain_fio(dev_path, decl.job(p), out)[0])
    plain = [statistics.median(v) for v in found["plain"]]

    def worst(xs: list[float]) -> float:
        return max(xs, key=lambda x: abs(x - 1))
    result = {}
    for mode in MODES:
        ratios = [statistics.median(v) / b for v, b in zip(found[mode], plain, strict=True)]
        result[mode] = {"median": statistics.median(ratios), "worst": worst(ratios)}
    spread = [max(v) / min(v) for v in found["plain"]]
    result["noise"] = {"median": statistics.median(spread), "worst": max(spread)}
    return result


def fill(dev_path: str) -> None:
    """Write the whole device once (not measured)."""
    subprocess.run(["fio", "--name=fill", f"--filename={dev_path}", "--rw=write", "--bs=1M",
                    "--direct=1", "--ioengine=libaio", "--iodepth=16"], check=True,
                   capture_output=True)


def spread_points(points: list, n: int) -> list:
    """`n` points spread evenly over the round (every block size and mix represented)."""
    step = max(1, len(points) // n)
    return points[::step][:n]


def wipc_ratio(fio: Fio, dev, dev_path: str, spec, out: Path, reps: int) -> dict:
    """P3: the suite's WIPC against plain fio running its job file, alternating `reps`
    times; the ratio of the medians (one pass of a small device is about a second, as
    noisy as the goal is tight)."""
    common = spec.common
    plan = plan_wipc(dev.capacity_bytes, spec.wipc.block_size, spec.wipc.capacity_multiple,
                     common.thread_count, common.queue_depth)
    path = out / "plain-wipc.fio"
    path.write_text(job_file(dev_path, list(plan.jobs)))
    suite, plain = [], []
    for rep in range(reps):
        start = time.monotonic()
        run_wipc(fio, dev_path, plan, out / f"wipc-{rep}")
        suite.append(time.monotonic() - start)
        start = time.monotonic()
        subprocess.run(["fio", "--output-format=json", str(path)], check=True,
                       capture_output=True)
        plain.append(time.monotonic() - start)
    suite_s, plain_s = statistics.median(suite), statistics.median(plain)
    print(f"P3 WIPC ({plan.bytes_expected / 2**30:.0f} GiB of SEQ 128 KiB writes, median of "
          f"{reps} alternating passes): suite {suite_s:.2f} s, plain fio {plain_s:.2f} s, "
          f"ratio {suite_s / plain_s:.3f} (passes: suite "
          f"{', '.join(f'{x:.2f}' for x in suite)}; plain "
          f"{', '.join(f'{x:.2f}' for x in plain)})", flush=True)
    return {"suite_s": suite_s, "plain_s": plain_s, "ratio": suite_s / plain_s}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", default="1,5",
                    help="point lengths to measure (default 1,5; '' = P3 only)")
    ap.add_argument("--points", type=int, default=56, help="points per round (default 56)")
    ap.add_argument("--p2-points", type=int, default=12,
                    help="P2: points spread over the round (default 12)")
    ap.add_argument("--p2-reps", type=int, default=3,
                    help="P2: alternating passes of every mode and plain fio (default 3; "
                         "0: not measured)")
    ap.add_argument("--p3-reps", type=int, default=5,
                    help="P3: alternating passes of the suite's WIPC and plain fio (default 5)")
    ap.add_argument("--gib", type=int, default=1, help="loop device size in GiB (default 1)")
    ap.add_argument("--rounds", type=int, default=4,
                    help="consecutive pipelined rounds through RoundMeasure (default 4)")
    ap.add_argument("--rounds-only", action="store_true",
                    help="P1 only from the consecutive rounds (not the single rounds per "
                         "point and pipelined)")
    ap.add_argument("--emulated", metavar="PROFILE", default=None,
                    help="an emulated SSD of this profile (pts.emulate) instead of the "
                         "tmpfs loop device")
    ap.add_argument("--emulated-size", default="256M",
                    help="the emulated SSD's size (default 256M)")
    args = ap.parse_args()
    lengths = [int(s) for s in args.seconds.split(",") if s.strip()]
    results: dict = {"P1": {}, "P2": {}, "P3": None, "rounds": {}}
    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm, \
            tempfile.TemporaryDirectory() as tmp:
        if args.emulated:
            dev_path = lifecycle.start(args.emulated_size, args.emulated).device
        else:
            dev_path = loop_device(Path(shm), args.gib << 30)
        out = Path(tmp)
        try:
            dev, fio = resolve(dev_path), Fio(log_file=out / "commands.log")
            spec = load_spec("pts-e-1.1")
            fill(dev_path)
            if args.p3_reps:
                results["P3"] = wipc_ratio(fio, dev, dev_path, spec, out, args.p3_reps)
            for seconds in lengths:
                settings = make_settings(spec, device=dev_path, destructive=True,
                                         point_seconds=seconds, max_rounds=None,
                                         purge="trim", reports_dir=out)
                decl = iops.declare(settings, dev)
                points = [p for p in decl.points if not p.na_reason][:args.points]
                results["rounds"][f"{seconds}s"] = consecutive_rounds(
                    fio, dev_path, settings, decl, points, args.rounds, out)
                for mode in ("per-point", "pipelined") if not args.rounds_only else ():
                    r = round_once(fio, dev, decl, points, mode, seconds, out)
                    results["P1"][f"{mode} {seconds}s"] = r
                    print(f"P1 {mode:9} (one round, nothing learned before it) "
                          f"{len(points)} x {seconds} s: wall {r['wall']:.1f} s, "
                          f"measured I/O {r['busy']:.1f} s, efficiency "
                          f"{r['efficiency']:.4f}, max overlap {r['max_overlap_ms']:.0f} ms",
                          flush=True)
                if not args.p2_reps:
                    continue
                some = spread_points(points, args.p2_points)
                results["P2"][f"{seconds}s"] = p2 = fidelity(
                    fio, dev_path, decl, some, seconds, args.p2_reps, out, settings)
                for mode in MODES:
                    print(f"P2 fidelity {mode:11} / plain fio, {len(some)} points of "
                          f"{seconds} s, median of {args.p2_reps} alternating passes: "
                          f"median {p2[mode]['median']:.3f}, worst {p2[mode]['worst']:.3f}",
                          flush=True)
                print(f"P2 noise floor (plain fio, largest / smallest of its passes): median "
                      f"{p2['noise']['median']:.3f}, worst {p2['noise']['worst']:.3f}",
                      flush=True)
            # The time that is not measurement (fio starts, gaps, JSON, records) does not grow
            # with the point length, so a round of 60 s points keeps the same fixed cost.
            for mode in ("per-point", "pipelined") if lengths and not args.rounds_only else ():
                r = results["P1"][f"{mode} {lengths[0]}s"]
                fixed, n = r["wall"] - r["busy"], len(r["iops"])
                print(f"P1 {mode} at 60 s points (extrapolated from the fixed cost "
                      f"{fixed:.1f} s per round): {n * 60 / (n * 60 + fixed):.4f}")
        finally:
            if args.emulated:
                lifecycle.stop(dev_path)
            else:
                subprocess.run(["losetup", "-d", dev_path], check=False)
    print(json.dumps({k: v for k, v in results.items() if k != "P1"}
                     | {"P1": {k: {kk: vv for kk, vv in v.items() if kk != "iops"}
                               for k, v in results["P1"].items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
