"""A constructed run with --power's records (issue 51 §3), for the read side's tests: a copy
of the reference run (tests/data/reference-run, recorded without --power) with two
power_source records, a point_power record of each source for each IOPS point (the first
source: 5 W + 0.1 W x the point's index, one gap of 2 s in round 4's point 0; the second:
200 W) and a round_power record per IOPS round (500 J + the round's number). What it holds
is worked out by hand in the tests that read it (tests/power/test_power_page.py, the
datasheet's tests/qualify/test_qualify_power.py, /metrics' tests/serve)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support.helpers import DATA

REFERENCE = DATA / "reference-run"
FIRST, SECOND = "emulated", "ipmi:10.0.0.5,user=admin"


def watts(index: int) -> float:
    """The first source's mean W over each window of the point of this index."""
    return 5.0 + 0.1 * index


def build(folder: Path) -> Path:
    """The reference run copied to `folder` (which must not exist) with the power records."""
    shutil.copytree(REFERENCE, folder)
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text().splitlines()
    points = [json.loads(x) for x in lines if '"type": "point"' in x]
    added = [{"type": "power_source", "time": 1.0, "test": None, "name": name,
              "measures": measures, "interval_s": interval, "kind": kind, "detail": detail,
              "error": None}
             for name, measures, interval, kind, detail in (
                 (FIRST, "drive", 0.5, "energy", "the emulated SSD's power model"),
                 (SECOND, "server", 1.0, "power", "DCMI"))]
    for p in points:
        if p["test"] != "iops" or p["na"]:
            continue
        span = p["end"] - p["start"]
        gap = [[10.0, 12.0]] if (p["round"], p["index"]) == (4, 0) else []
        covered = span - sum(b - a for a, b in gap)
        for source, w in ((FIRST, watts(p["index"])), (SECOND, 200.0)):
            added.append({"type": "point_power", "time": p["time"], "test": "iops",
                          "round": p["round"], "index": p["index"], "source": source,
                          "start": p["start"], "end": p["end"], "energy_j": w * covered,
                          "covered_s": covered, "mean_w": w, "samples": 60,
                          "gaps": gap if source == FIRST else []})
    for rnd in sorted({p["round"] for p in points if p["test"] == "iops"}):
        added.append({"type": "round_power", "time": 2.0, "test": "iops", "round": rnd,
                      "source": FIRST, "start": 0.0, "end": 100.0,
                      "energy_j": 500.0 + rnd, "covered_s": 100.0, "mean_w": 5.0 + rnd / 100,
                      "samples": 200, "gaps": []})
    ledger.write_text("\n".join(lines + [json.dumps(a) for a in added]) + "\n")
    return folder


def phase_watts(phase: str, number: int) -> float:
    """The first source's mean W over each phase window added by add_phases."""
    return {"sample": 4.0 + 0.01 * number, "run": 4.5, "wait": 6.0 + number,
            "baseline": 5.0 + number, "wait state": 5.5 + number, "group": 3.0 + number}[phase]


def add_phases(folder: Path) -> Path:
    """phase_power records of one source (FIRST) for the reference run's WSAT (its run and
    each sample, 60 s each, covered whole), HIR (each wait state, its wait and baseline runs,
    10 s each) and XSR (each group, 120 s): energy = phase_watts x seconds."""
    ledger = folder / "ledger.jsonl"
    lines = ledger.read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    parts = [("wsat", "run", 1, 2400.0)]
    parts += [("wsat", "sample", r["sample"], r["end_s"] - r["start_s"]) for r in recs
              if r["type"] == "sample"]
    parts += [("hir", p, r["state"], 10.0) for r in recs if r["type"] == "hir_state"
              for p in ("wait", "baseline", "wait state")]
    parts += [("xsr", "group", r["group"], 120.0) for r in recs if r["type"] == "xsr_group"]
    added = [{"type": "power_source", "time": 1.0, "test": None, "name": FIRST,
              "measures": "drive", "interval_s": 0.5, "kind": "energy",
              "detail": "the emulated SSD's power model", "error": None}]
    for test, phase, number, seconds in parts:
        w = phase_watts(phase, number)
        added.append({"type": "phase_power", "time": 3.0, "test": test, "phase": phase,
                      "number": number, "source": FIRST, "start": 1000.0,
                      "end": 1000.0 + seconds, "energy_j": w * seconds,
                      "covered_s": seconds, "mean_w": w, "samples": 10, "gaps": []})
    ledger.write_text("\n".join(lines + [json.dumps(a) for a in added]) + "\n")
    return folder
