"""`python -m pts export RUN_DIR --json`: every table of the report as one JSON document
(docs/results-format.md, "Export JSON"), from the run folder's stored data only.

Per test: state and status, parameters, the measurement window, per cell the mean of every
measured metric over the window rounds, the steady-state evidence of each tracking variable
over the window, the round-by-round tracking values, FOB figures where measured (--fob-sweep
points; WSAT's wsat_result), WSAT samples, device counters; Latency: the QoS table; WSAT,
DIRTH, CBW: the response-time histograms' QoS levels with their I/O counts; the host's
ceiling and the host-bound points of the measurement window (issue 33 §1). Run-wide (`ocp`):
every requirement ID of one OCP Datacenter NVMe SSD Specification text judged
(pts.stored.ocp_every_id, what `qualify --ocp` prints and the report's OCP page shows), with
the counts per verdict and per group; the newest text for a run on an NVMe drive, none for
another run (no report page either), or the text asked for any run.
"""

from __future__ import annotations

import dataclasses
import math

from pts.config.ocp_all_ids import LOCATOR
from pts.stored import host_ceiling, latency_qos, ocp_every_id, waf
from pts.stored.cells import cell_label, cells, fob
from pts.stored.data import load_run
from pts.stored.model import RunView, TestResult

SCHEMA = 2          # 2: `ocp` (every ID of one text) replaced `ocp_requirements` (the tables)


def test_document(test: TestResult) -> dict:
    end = test.end
    return {
        "name": test.name, "title": test.title, "clause": test.clause, "state": test.state,
        "status": test.status, "parameters": test.parameters,
        "rounds": end.rounds if end and end.rounds is not None else len(test.rounds),
        "steady_round": end.steady_round if end else None,
        "window": list(test.window) if test.window else None,
        "tracking": [dataclasses.asdict(t) for t in test.tracking],
        "steady_state": {label: None if ev is None else _evidence(ev)
                         for label, ev in test.window_evidence.items()},
        "round_values": [{"round": r.number, "tracking": r.tracking, "steady": r.steady}
                         for r in test.rounds],
        "cells": cells(test),
        "fob": fob(test),
        "samples": [dataclasses.asdict(s) for s in test.samples],
        "wsat_result": test.result or None,
        "deviations": [d.text for d in test.deviations],
        "counters": [dataclasses.asdict(c) for c in test.counters],
    }


def qos(run: RunView, test: TestResult) -> dict:
    """Latency: {"qos": the QoS table (pts.stored.latency_qos), one row per non-N/A cell};
    other tests: {}."""
    if not any(p.get("lat_percentile_us") is not None for p in test.points):
        return {}
    rows = latency_qos.cells(test, latency_qos.load_bins(run, test))
    return {"qos": [{"label": cell_label(test, c.rw_mix, c.block_size), "rw_mix": c.rw_mix,
                     "block_size": c.block_size, "fewest_ios": c.fewest_ios,
                     "points": c.points,
                     "levels": [{"pct": lv.pct, "state": lv.state, "us": lv.us,
                                 "ios_needed": latency_qos.needed_ios(lv.pct)}
                                for lv in c.levels]} for c in rows]}


def histograms(test: TestResult) -> dict:
    """DIRTH/CBW operating points, WSAT whole run and final window: {"histograms": their
    response_histogram records without the bins (those stay in the ledger)}; others: {}."""
    rows = [{k: v for k, v in r.to_json().items() if k not in ("bins", "type", "test")}
            for r in test.histograms]
    return {"histograms": rows} if rows else {}


def host(test: TestResult) -> dict:
    """{"host_ceiling": the test's host_ceiling record as written (null: none), "host_bound":
    {"window_points": M, "points": [each host-bound window point with its judgement],
    "outside_window": K}} (pts.stored.host_ceiling, as the report's page and warning)."""
    rec, hb = test.host_ceiling, host_ceiling.of_test(test)
    ceiling = None if rec is None else {k: v for k, v in rec.to_json().items()
                                        if k not in ("type", "test")}
    points = [dataclasses.asdict(b) for b in hb.window]
    return {"host_ceiling": ceiling,
            "host_bound": {"window_points": hb.window_points, "points": points,
                           "outside_window": hb.outside}}


def waf_doc(run: RunView, test: TestResult) -> dict:
    """{"waf": {value, media_bytes, host_bytes, drive_host_bytes, source, note, from, to,
    per_round, ..., sources}}: the test's write amplification from the drive's own counters
    (pts.stored.waf); value null and source null with the note where the drive reports
    none. `sources`: each media source's figures (log 09h's and C0h's on a drive with both),
    the headline's keys above being the finest-resolution one with a value."""
    return {"waf": waf.of_test(run, test).as_dict()}


def _evidence(ev) -> dict:
    d = dataclasses.asdict(ev)
    d["rounds"], d["values"] = list(d["rounds"]), list(d["values"])
    return d


def ocp(run: RunView, version: str | None = None) -> dict | None:
    """Every requirement ID of `version`'s text judged on the run (pts.stored.ocp_every_id:
    as `qualify --ocp VERSION`); None: the newest text, judged for a run on an NVMe drive
    only (ocp_every_id.summary, as the report's page, OCPTV and the index), else null."""
    found = ocp_every_id.judge_every(run, version) if version else ocp_every_id.summary(run)
    if found is None:
        return None
    return {"version": found.version, "spec_text": found.spec_text,
            "spec_locator": LOCATOR[found.version], "form_factor_note": found.form_factor_note,
            "facts_at": found.facts_at or None, "ids": len(found.verdicts),
            "counts": found.counts,
            "groups": [{"group": group, "subject": about, "ids": len(vs),
                        "counts": ocp_every_id.count(vs)} for group, about, vs in found.groups],
            "requirements": [v.as_dict() for v in found.verdicts]}


def run_document(run: RunView, ocp_version: str | None = None) -> dict:
    return {
        "schema": SCHEMA, "run_id": run.run_id, "folder": str(run.folder),
        "started": run.started, "device": dataclasses.asdict(run.device) | run.device_extra,
        "platform": run.platform, "tools": run.tools, "spec": run.spec, "options": run.options,
        "report_info": run.report_info, "system": run.system,
        "deviations": [{"text": d.text, "source": d.source, "test": d.test}
                       for d in run.deviations],
        "verdict": {"compliant": run.verdict.compliant, "text": run.verdict.text,
                    "reasons": list(run.verdict.reasons), "readings": run.verdict.readings},
        "readings": [dataclasses.asdict(r) for r in run.readings],   # the report's section
        "notes": list(run.notes),
        "ocp": ocp(run, ocp_version),
        "tests": [test_document(t) | qos(run, t) | histograms(t) | host(t) | waf_doc(run, t)
                  for t in run.tests],
    }


def document(run_dir, ocp_version: str | None = None) -> dict:
    """The export of `run_dir`, JSON-safe: a non-finite number (a NaN correlation) is null.
    `ocp_version`: the OCP text whose every ID `ocp` judges (None: as `ocp` says)."""
    return finite(run_document(load_run(run_dir), ocp_version))


def finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
