"""`python -m pts export RUN_DIR --ocptv`: the run as OCP Test & Validation (OCPTV) output,
line-delimited JSON of the OCPTV output specification 2.0 (opencomputeproject/ocp-diag-core,
json_spec/; the schema is kept in tests/data/ocptv-schema/ and every line is validated against
it in tests/export/test_export_ocptv.py), from the run folder's stored data only (pts.stored).

The lines are written here from the schema rather than through the `ocptv` package (0.1.7):
that package stamps every line with the clock at the moment it is emitted (its
output/emit.py calls time.time()), while an export of a stored run must carry the times the
run recorded; and it holds its writer and sequence in process-wide state.

The mapping (docs/results-format.md, "Export OCPTV"):
- the run is one testRun. testRunStart: name "snia-pts", version (run.json tools), the
  spec and the settings (run.json spec, options, run_id) as parameters, the drive as dutInfo
  (model, serial number, firmware as a FIRMWARE softwareInfo; capacity, sectors, transport,
  path, emulated in its metadata; the host as platformInfos). commandLine is "": run.json
  does not record the command the run was started with.
- run-level deviations (a test's own ones are on its step) and warnings: testRunArtifact
  logs (WARNING), report notes (INFO); the verdict and its reasons: a log before testRunEnd.
- each PTS test (ledger order) is a testStep named by the test ("iops", "wsat", ...): its
  status line and deviations as logs; the headline figures as measurements (below); per
  tracking variable its steady-state evidence as a diagnosis ("steady-state", PASS / FAIL)
  and the test's outcome as a diagnosis; a test that ended in error or never ended an error
  artifact.
- measurements: per tracking variable the window average and the data and slope excursions,
  each excursion with its limit as a LESS_THAN_OR_EQUAL validator (PTS 2.0.2 steady state:
  range within 20 % and slope excursion within 10 % of the window average, the limits
  recorded in the test_start parameters); per cell of the measurement window its mean of the
  family's figure (IOPS, MB/s, ART and MRT in us) as the report's tables show it
  (pts.stored.cells); WSAT's FOB IOPS, steady-state average and FOB / steady-state ratio;
  the test's write amplification from the drive's counters (pts.stored.waf) where it has
  one; DIRTH/CBW operating points, HIR's baseline and wait states, XSR's access groups
  (recovery_figures). A figure the run does not have is a log line saying so, never a 0.
- timestamps: testRunStart at run.json "started"; a step's start at its test_start
  record's time; its figures, diagnoses and end at its test_end record's time (a test that
  never ended: its last point's end); testRunEnd at the last ledger record's time. Where a
  record has no time the previous line's time is used.

The verdict's mapping (testRunEnd status / result):
- COMPLIANT RUN: COMPLETE / PASS.
- NOT A COMPLIANT RUN with every test ended: COMPLETE / FAIL. PTS judges the run, not the
  drive, and a deviation or a test that did not reach steady state makes the run fail to show
  what the specification asks; the reasons are in the log line before testRunEnd.
- incomplete (no test recorded, or a test ended in error or never ended, as after a killed
  run): ERROR / NOT_APPLICABLE: no verdict on the drive can be given from it.
"""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import datetime

from pts.config.ocp_all_ids import LOCATOR
from pts.export.json_doc import finite
from pts.results import records
from pts.stored import figures as catalogue
from pts.stored import ocp_every_id, waf
from pts.stored.cells import cell_label, window_statistics
from pts.stored.data import load_run
from pts.stored.figures import OCPTV, Figure, last_each
from pts.stored.model import COMPLETE, ERROR, INCOMPLETE, STEADY, RunView, TestResult
from pts.stored.ocptv_lines import SCHEMA_VERSION, Lines, log  # shared with the gate's answer

DUT_ID, FIRMWARE_ID = "dut", "dut-firmware"


# The kinds of read this export has a reader of (figures and recovery_figures).
READS = (catalogue.TRACKING, catalogue.CELL, catalogue.WSAT_RESULT, catalogue.WAF,
         catalogue.OPERATING_POINT, catalogue.HIR_BASELINE, catalogue.HIR_STATE,
         catalogue.XSR_GROUP)


def unit(figure: Figure) -> str:
    """A figure's unit as OCPTV writes it: a ratio (dimensionless) has the empty unit."""
    return "" if figure.unit == "ratio" else figure.unit


def epoch(text) -> float | None:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return None


def lines(run: RunView) -> list[dict]:
    started = epoch(run.started) if run.started else None
    if started is None:
        started = next((t.started for t in run.tests if t.started is not None), None)
    out = Lines(started)
    out.add({"schemaVersion": SCHEMA_VERSION})
    out.run("testRunStart", run_start(run))
    for dev in (d for d in run.deviations if d.test is None):   # a test's: on its step
        out.run("log", log("WARNING", f"deviation from the specification ({dev.source}): "
                                      f"{dev.text}"))
    for text in run.warnings:
        out.run("log", log("WARNING", text))
    for text in run.notes:
        out.run("log", log("INFO", text))
    for n, test in enumerate(run.tests, 1):
        step(out, str(n), run, test)
    ocp_step(out, str(len(run.tests) + 1), run)
    status, result = run_end(run)
    reasons = "".join(f"; {r}" for r in run.verdict.reasons)
    out.run("log", log("INFO" if run.verdict.compliant else "WARNING",
                       f"verdict: {run.verdict.text}{reasons}"), run.finished)
    out.run("testRunEnd", {"status": status, "result": result})
    return out.out


def run_end(run: RunView) -> tuple[str, str]:
    """(status, result) of testRunEnd from the run's verdict (the module's docstring)."""
    if not run.tests or any(t.state in (ERROR, INCOMPLETE) for t in run.tests):
        return "ERROR", "NOT_APPLICABLE"
    return "COMPLETE", "PASS" if run.verdict.compliant else "FAIL"


def run_start(run: RunView) -> dict:
    return {"name": "snia-pts", "version": str(run.tools.get("snia-pts") or "unknown"),
            "commandLine": "",
            "parameters": finite({"run_id": run.run_id, "spec": run.spec,
                                "options": run.options}),
            "dutInfo": dut_info(run),
            "metadata": finite({"folder": str(run.folder), "tools": run.tools,
                              "report_info": run.report_info})}


def dut_info(run: RunView) -> dict:
    dev, host = run.device, run.platform
    hardware = {"hardwareInfoId": DUT_ID, "name": dev.model, "serialNumber": dev.serial,
                "location": dev.path}
    firmware = {"softwareInfoId": FIRMWARE_ID, "name": f"{dev.model} firmware",
                "version": dev.firmware, "softwareType": "FIRMWARE"}
    system = {"softwareInfoId": "host-os", "name": str(host.get("os") or "unknown OS"),
              "version": str(host.get("kernel") or "unknown"), "softwareType": "SYSTEM"}
    platform = [f"{k}: {v}" for k, v in host.items() if v not in (None, "")]
    platform += [f"{k}: {v}" for k, v in (run.system.get("dmi") or {}).items() if v]
    return {"dutInfoId": f"{dev.model} {dev.serial}", "name": dev.model,
            "platformInfos": [{"info": p} for p in platform],
            "softwareInfos": [firmware, system], "hardwareInfos": [hardware],
            "metadata": finite({"capacity_bytes": dev.capacity_bytes,
                              "logical_sector": dev.logical_sector,
                              "physical_sector": dev.physical_sector,
                              "transport": dev.transport, "kname": dev.kname,
                              "identity_source": dev.identity_source,
                              "emulated": dev.emulated, "host": host.get("hostname"),
                              **run.device_extra})}


def step_end_time(test: TestResult) -> float | None:
    if test.end is not None and test.end.time is not None:
        return test.end.time
    ends = [p.end for p in test.points if p.end is not None]
    return max(ends) if ends else None


def step(out: Lines, sid: str, run: RunView, test: TestResult) -> None:
    out.step(sid, "testStepStart", {"name": test.name}, test.started)
    clause = f" ({test.clause})" if test.clause else ""
    out.step(sid, "log", log("INFO", f"{test.title}{clause}: {test.status}"))
    for dev in test.deviations:
        out.step(sid, "log", log("WARNING", f"deviation from the specification: {dev.text}"))
    when = step_end_time(test)
    for body in figures(run, test) + recovery_figures(test):
        out.step(sid, "measurement" if "value" in body else "log", body, when)
    for label, ev in test.window_evidence.items():
        out.step(sid, "diagnosis", evidence_diagnosis(label, ev), when)
    if test.state in (ERROR, INCOMPLETE):
        what = "ended in error" if test.state == ERROR else "has no test_end record"
        out.step(sid, "error", {"symptom": f"test-{test.state}",
                                "message": f"{test.title} {what}: {test.status}"}, when)
        status = "ERROR"
    else:
        passed = test.state in (STEADY, COMPLETE)
        out.step(sid, "diagnosis", {"verdict": f"pts-{test.state}".replace("_", "-"),
                                    "type": "PASS" if passed else "FAIL",
                                    "message": test.status, "hardwareInfoId": DUT_ID}, when)
        status = "COMPLETE"
    out.step(sid, "testStepEnd", {"status": status}, when)


def measurement(name: str, value, unit: str, validators=(), metadata=None) -> dict:
    """A measurement, or a log saying the figure is not given (OCPTV has no null value)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return log("INFO", f"{name}: not given by this run")
    body = {"name": name, "value": value, "unit": unit, "hardwareInfoId": DUT_ID}
    if validators:
        body["validators"] = list(validators)
    if metadata:
        body["metadata"] = finite(metadata)
    return body


def figures(run: RunView, test: TestResult) -> list[dict]:
    """The test's headline figures (measurement bodies; a log body where one is not given):
    those of its family the catalogue (pts.stored.figures) shows in OCPTV."""
    shown = catalogue.of(test, OCPTV)
    catalogue.check_readers((f.read for f in shown), READS, "pts/export/ocptv.py")
    out = []
    for f in (f for f in shown if f.read == catalogue.TRACKING):
        out += tracking(test, unit(f))
    cell_figures = [f for f in shown if f.read == catalogue.CELL]
    if test.window is not None and cell_figures:
        for cell in window_statistics(test):
            label = cell_label(test, cell.rw_mix, cell.block_size)
            if cell.na:
                out.append(log("INFO", f"{label}: N/A ({cell.reason or 'no reason recorded'})"))
                continue
            for f in cell_figures:
                out.append(measurement(f"{label} {f.name(OCPTV)}", cell.means.get(f.field),
                                       unit(f), (), {"window_rounds": list(cell.rounds)}))
    if test.samples:           # in the record's order (fob_iops, ss_average, fob_ss_ratio),
        order = [x.name for x in dataclasses.fields(records.WsatResult)]   # then --power's
        for f in sorted((f for f in shown if f.read == catalogue.WSAT_RESULT),
                        key=lambda f: order.index(f.field) if f.field in order else len(order)):
            out.append(measurement(f"wsat {f.name(OCPTV)}", test.result.get(f.field), unit(f)))
    for f in (f for f in shown if f.read == catalogue.WAF):
        found = waf.of_test(run, test)
        if found.value is not None:
            out.append(measurement(f.name(OCPTV), found.value, unit(f),
                                   metadata={"source": found.source}))
        elif test.counters:
            out.append(log("INFO", f"{f.name(OCPTV)}: not given ({found.note})"))
    return out


def tracking(test: TestResult, m_unit: str) -> list[dict]:
    """Per tracking variable its window average and data and slope excursions, each with its
    limit as a validator."""
    out = []
    for label, ev in test.window_evidence.items():
        if ev is None:
            out.append(log("INFO", f"{label}: no steady-state evidence (no full window)"))
            continue
        window = {"rounds": list(ev.rounds)}
        out.append(measurement(f"{label} window average", ev.average, m_unit, (), window))
        for what, value, limit, fraction in (
                ("data excursion", ev.data_excursion, ev.max_data_excursion,
                 ev.data_excursion_limit),
                ("slope excursion", ev.slope_excursion, ev.max_slope_excursion,
                 ev.slope_excursion_limit)):
            check = {"name": f"PTS steady state: {what} within {fraction:.0%} of the window "
                             "average", "type": "LESS_THAN_OR_EQUAL", "value": limit}
            out.append(measurement(f"{label} {what}", value, m_unit, [check], window))
    return out


def recovery_figures(test: TestResult) -> list[dict]:
    """The figures of the tests whose report tables are not a cell matrix, from their
    records as the report's pages read them (the last record of each point, state and group:
    pts.stored.figures' rule): DIRTH/CBW operating points (IOPS, ART at the chosen TC/QD),
    HIR's baseline and per wait state its IOPS and ratio to the baseline, XSR's per access
    group final level and recovery time."""
    shown = catalogue.of(test, OCPTV)

    def rows(read: str) -> list[Figure]:
        return [f for f in shown if f.read == read]

    out = []
    for r in last_each(test.records_of(records.OperatingPoint), lambda r: r.name).values():
        if not rows(catalogue.OPERATING_POINT):
            break
        if not r.selected:
            out.append(log("INFO", f"{r.name}: not selected ({r.rule})"))
            continue
        meta = {"thread_count": r.thread_count, "queue_depth": r.queue_depth,
                "rounds": list(r.rounds), "rule": r.rule}
        out += [measurement(f"{r.name} {f.name(OCPTV)}", getattr(r, f.field), unit(f), (), meta)
                for f in rows(catalogue.OPERATING_POINT)]
    base = test.records_of(records.HirBaseline)[-1:]
    for r, f in ((r, f) for r in base for f in rows(catalogue.HIR_BASELINE)):
        out.append(measurement(f"hir {f.name(OCPTV)}", getattr(r, f.field), unit(f), (),
                               {"window": list(r.window), "steady": r.steady}))
    states = last_each(test.records_of(records.HirState), lambda r: r.state)
    for _, r in sorted(states.items()):
        out += [measurement(f"hir state {r.state} ({r.idle_s} s idle) {f.name(OCPTV)}",
                            getattr(r, f.field), unit(f)) for f in rows(catalogue.HIR_STATE)]
    groups = last_each(test.records_of(records.XsrGroup), lambda r: r.group)
    for _, r in sorted(groups.items()):
        name = f"xsr group {r.group} ({r.pattern} {r.block_size / 1024:g}KiB)"
        for f in rows(catalogue.XSR_GROUP):
            if f.field != "recovery_s":
                out.append(measurement(f"{name} {f.name(OCPTV)}", getattr(r, f.field), unit(f)))
            elif r.group > 1:          # the first group recovers from nothing
                out.append(measurement(f"{name} {f.name(OCPTV)}", getattr(r, f.field), unit(f),
                                       (), {"recovered": r.recovered}))
    return out


def ocp_step(out: Lines, sid: str, run: RunView) -> None:
    """The OCP requirements (a run on an NVMe drive): one step, a diagnosis per requirement ID
    of the newest text (pts.stored.ocp_every_id, as `qualify --ocp`): PASS / FAIL, and NOT
    APPLICABLE / NOT CHECKED as UNKNOWN (OCPTV has no other type), the verdict word kept in
    the diagnosis' verdict."""
    found = ocp_every_id.summary(run)
    if found is None:
        return
    out.step(sid, "testStepStart", {"name": f"ocp-requirements-{found.version}"})
    for v in found.verdicts:
        e = v.entry
        message = (f"{e.group} ({e.section}): {e.subject}: {v.reason}"
                   + "".join(f" | {x}" for x in (*v.evidence, *v.readings))
                   + f" [{found.spec_text}, {LOCATOR[e.version]} {e.at}]")
        out.step(sid, "diagnosis", {
            "verdict": f"ocp-{e.version} {e.id} {v.verdict}",
            "type": v.verdict if v.verdict in ("PASS", "FAIL") else "UNKNOWN",
            "message": message, "hardwareInfoId": DUT_ID})
    out.step(sid, "log", log("INFO", f"OCP DC NVMe SSD {found.version}: {found.counts_text} "
                                     f"of {len(found.verdicts)} requirement IDs; "
                                     f"{found.form_factor_note}"))
    out.step(sid, "testStepEnd", {"status": "COMPLETE"})


def evidence_diagnosis(label: str, ev) -> dict:
    if ev is None:
        return {"verdict": "steady-state-not-judged", "type": "UNKNOWN",
                "message": f"{label}: no measurement window", "hardwareInfoId": DUT_ID}
    msg = (f"{label}: rounds {ev.window_first}..{ev.window_last}, average {ev.average:.6g}, "
           f"range {ev.minimum:.6g}..{ev.maximum:.6g} (data excursion {ev.data_excursion:.6g},"
           f" limit {ev.max_data_excursion:.6g}), slope {ev.slope:.6g} per round (slope "
           f"excursion {ev.slope_excursion:.6g}, limit {ev.max_slope_excursion:.6g})")
    return {"verdict": "steady-state" if ev.steady else "steady-state-not-reached",
            "type": "PASS" if ev.steady else "FAIL", "message": msg, "hardwareInfoId": DUT_ID}


def text(run_dir) -> str:
    """The OCPTV lines of `run_dir`, one JSON object per line."""
    return "".join(json.dumps(line) + "\n" for line in lines(load_run(run_dir)))
