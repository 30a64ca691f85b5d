"""The run-to-run spread of the suite, cell by cell, from real repeated runs of the emulated
SSD (issue 50's benchmark input: benchmarks/release_gate.py draws its simulated runs from it).
Writes benchmarks/data/release_gate_spread.json.

    .venv/bin/python benchmarks/data/release_gate_spread.py --runs 5 --reports-dir DIR
    .venv/bin/python benchmarks/data/release_gate_spread.py --from DIR      # runs made before

--runs N: `python -m pts demo --reports-dir DIR` N times, one after another (the README's
command 1: the IOPS test on a fresh emulated SSD, 1 s points, 3 block sizes x 3 mixes, at most
12 rounds, --power emulated; about 2 to 6 minutes each on the 2-core machine), each run's
command line (the demo prints it), times and exit status appended to DIR/spread-runs.jsonl;
then as --from DIR. --from DIR: the run folders under DIR indexed (pts.index.build, into a
temporary SQLite file), the FINISHED runs' figures as the index holds them (the ones the
history and the gate compare), per cell (test, metric, cell): the values of every run, the
mean, and the sample standard deviation of the values' natural logs (the gate works on logs:
for small spreads about the relative standard deviation). Unfinished runs (a run stopped
before its last round) are listed with their state, not counted.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pts.index import build, db, history  # noqa: E402
from pts.index.rows import FINISHED, OK  # noqa: E402

OUT = Path(__file__).with_name("release_gate_spread.json")
LOG = "spread-runs.jsonl"


def stamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run_demo(reports: Path, n: int) -> None:
    """n demo runs one after another (never in parallel: they would share the 2 cores)."""
    reports.mkdir(parents=True, exist_ok=True)
    before = len((reports / LOG).read_text().splitlines()) if (reports / LOG).is_file() else 0
    for k in range(before, before + n):
        began = stamp()
        proc = subprocess.run([sys.executable, "-m", "pts", "demo", "--reports-dir",
                               str(reports)], cwd=ROOT, capture_output=True, text=True)
        command = next((line.removeprefix("running: ") for line in proc.stdout.splitlines()
                        if line.startswith("running: ")), "")
        with (reports / LOG).open("a") as f:
            f.write(json.dumps({"run": k + 1, "command": command, "started": began,
                                "ended": stamp(), "exit_status": proc.returncode,
                                "commit": commit()}) + "\n")
        print(f"run {k + 1} (of {before + n}): exit {proc.returncode}", flush=True)


def commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], text=True,
                              capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (no git)"


def spread(reports: Path) -> dict:
    """The data file's content from the run folders under `reports`."""
    with tempfile.TemporaryDirectory() as tmp:
        conn = db.connect(Path(tmp) / db.FILE_NAME)
        try:
            build.update(conn, [reports])
            runs = conn.rows("SELECT folder, serial, model, firmware, started, state FROM runs "
                             "ORDER BY started")
            tests = {r["folder"]: r for r in conn.rows(
                "SELECT folder, status, rounds, steady FROM tests WHERE name = 'iops'")}
            figures = conn.rows("SELECT f.folder, f.test, f.metric, f.cell, f.unit, f.value, "
                                "f.shown FROM figures f JOIN runs r ON r.folder = f.folder "
                                f"WHERE r.state = '{FINISHED}' ORDER BY r.started, f.position")
        finally:
            conn.close()
    counted = [r["folder"] for r in runs if r["state"] == FINISHED]
    cells: dict[tuple, dict] = {}
    for f in figures:
        if f["shown"] != OK or f["value"] is None or not math.isfinite(f["value"]):
            continue
        key = (f["test"], f["metric"], f["cell"])
        c = cells.setdefault(key, {"test": f["test"], "metric": f["metric"], "cell": f["cell"],
                                   "unit": f["unit"], "values": []})
        c["values"].append(float(f["value"]))
    out_cells = []
    for c in cells.values():
        v = c["values"]
        if len(v) != len(counted) or min(v) <= 0:
            continue            # a cell not in every run, or not positive: no log spread
        logs = [math.log(x) for x in v]
        out_cells.append(c | {"label": history.label_of(c["test"], c["metric"], c["cell"]),
                              "n": len(v), "mean": statistics.fmean(v),
                              "sd_log": statistics.stdev(logs)})
    log = reports / LOG
    made = [json.loads(x) for x in log.read_text().splitlines()] if log.is_file() else []
    return {
        "what": "per-cell run-to-run spread of the emulated SSD's IOPS test (python -m pts "
                "demo), from real repeated runs; written by "
                "benchmarks/data/release_gate_spread.py",
        "written": stamp(), "written_at_commit": commit(),
        "host": "the project's 2-core machine, shared with other work while the runs ran",
        "commands": made,           # each run's command, times, exit status, commit
        "runs": [{"folder": str(Path(r["folder"]).relative_to(reports)), "serial": r["serial"],
                  "started": r["started"], "state": r["state"],
                  "iops_test": {k: tests[r["folder"]][k] for k in ("status", "rounds",
                                                                   "steady")}
                  if r["folder"] in tests else None,
                  "counted": r["state"] == FINISHED} for r in runs],
        "cells": sorted(out_cells, key=lambda c: c["label"]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=0, help="demo runs to make first (default 0)")
    ap.add_argument("--reports-dir", type=Path, help="where --runs puts the run folders")
    ap.add_argument("--from", dest="source", type=Path, help="run folders made before")
    ap.add_argument("-o", "--output", type=Path, default=OUT)
    args = ap.parse_args()
    reports = args.source or args.reports_dir
    if reports is None or (args.runs and args.reports_dir is None):
        ap.error("give --runs N --reports-dir DIR, or --from DIR")
    if args.runs:
        run_demo(args.reports_dir, args.runs)
    data = spread(reports.resolve())
    counted = sum(r["counted"] for r in data["runs"])
    if counted < 2:
        raise SystemExit(f"{reports}: {counted} finished run(s): a spread needs 2 at least")
    args.output.write_text(json.dumps(data, indent=1) + "\n")
    sds = sorted(c["sd_log"] for c in data["cells"])
    print(f"{args.output}: {len(data['cells'])} cells from {counted} finished runs; sd of "
          f"logs: median {statistics.median(sds):.3f}, {sds[0]:.3f} .. {sds[-1]:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
