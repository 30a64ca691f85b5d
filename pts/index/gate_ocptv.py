"""The release gate's answer as OCP Test & Validation output (issue 50 §4): `python -m pts
history MODEL --firmware A --firmware B --gate --ocptv`, the same verdict as the command's
exit status, the history page, the index and /metrics, for a lab whose pipeline reads OCPTV.
The lines are pts.stored.ocptv_lines' (the writer of a run's export, pts.export.ocptv: the
same schema version and artifact shapes), from the answer pts.index.history_gate gives.

The mapping (docs/history.md, "The release gate", its OCPTV entry):
- one testRun named "release gate": testRunStart with the pair (model, firmware A and B),
  the level, the planner's power and each cell's margin in percent as parameters; the
  model with both firmwares (FIRMWARE softwareInfos) and every drive (serial) that ran
  either as dutInfo; the runs compared, the margins' sources and reasons and the index in
  metadata.
- one testStep "firmware B against A": per cell a measurement of B / A - 1 (its interval,
  margin, p-values and runs a side in the measurement's metadata) and a diagnosis whose
  verdict is the cell's class and whose message holds the same figures in words:
  equivalent, not worse, improved: PASS; regressed: FAIL; inconclusive, not on both sides,
  and a figure with no better direction that changed: UNKNOWN (OCPTV has no other type).
- the answer: a log with the gate's summary (the cells that regressed, or the cells not
  decided and the runs a side to add), then testRunEnd: pass (exit 0) COMPLETE / PASS,
  regressed (exit 1) COMPLETE / FAIL, inconclusive (exit 3) COMPLETE / NOT_APPLICABLE (the
  schema's testResult holds PASS, FAIL and NOT_APPLICABLE only: the gate ran to its end and
  gave no pass or fail).
- timestamps: every line at the start of the newest run compared (a stored time, so the
  same index gives the same lines); none dated: the epoch.
"""

from __future__ import annotations

import json

import pts
from pts.index import history, history_gate, release_gate
from pts.stored.ocptv_lines import SCHEMA_VERSION, Lines, log

NAME, STEP = "release gate", "firmware B against A"
RESULT = {release_gate.EXIT_PASS: "PASS", release_gate.EXIT_REGRESSED: "FAIL",
          release_gate.EXIT_INCONCLUSIVE: "NOT_APPLICABLE"}
TYPE = {release_gate.EQUIVALENT: "PASS", release_gate.NOT_WORSE: "PASS",
        release_gate.IMPROVED: "PASS", release_gate.REGRESSED: "FAIL"}


def lines(p: history_gate.PairGate, h: history.History, command: str = "",
          index: str = "") -> list[dict]:
    """The OCPTV lines of the gate's answer `p` over the history `h` it was worked out on."""
    compared = [r for r in h.runs if r.firmware in (p.a, p.b)]
    dated = [r.started_at for r in compared if r.started_at is not None]
    out = Lines(max(dated) if dated else None)
    out.add({"schemaVersion": SCHEMA_VERSION})
    out.run("testRunStart", run_start(p, compared, command, index))
    for note in h.notes:
        out.run("log", log("WARNING", note))
    out.step("1", "testStepStart", {"name": STEP})
    for c in p.answer.cells:
        margin = dict(p.margins)[c.name]
        if c.change is not None:
            out.step("1", "measurement", measurement(c, margin))
        out.step("1", "diagnosis", {"verdict": c.verdict, "type": TYPE.get(c.verdict, "UNKNOWN"),
                                    "message": message(c, margin)})
    out.step("1", "testStepEnd", {"status": "COMPLETE"})
    g = p.answer
    out.run("log", log("INFO" if g.status == release_gate.EXIT_PASS else "WARNING",
                       f"gate: {g.answer} (exit {g.status}): {g.summary}"))
    out.run("testRunEnd", {"status": "COMPLETE", "result": RESULT[g.status]})
    return out.out


def run_start(p: history_gate.PairGate, runs: list[history.Run], command: str,
              index: str) -> dict:
    g = p.answer
    firmware = [{"softwareInfoId": f"firmware-{side}", "name": f"{p.model} firmware {side}",
                 "version": fw, "softwareType": "FIRMWARE"}
                for side, fw in (("A", p.a), ("B", p.b))]
    drives = [{"hardwareInfoId": s, "name": p.model, "serialNumber": s}
              for s in sorted({r.serial for r in runs})]
    return {"name": NAME, "version": pts.__version__, "commandLine": command,
            "parameters": {"model": p.model, "firmware_a": p.a, "firmware_b": p.b,
                           "level": g.level, "power": g.power,
                           "margins_percent": {c: m.percent for c, m in p.margins}},
            "dutInfo": {"dutInfoId": p.model, "name": p.model, "softwareInfos": firmware,
                        "hardwareInfos": drives},
            "metadata": {"correction": g.correction, "index": index,
                         "margins": {c: {"source": m.where, "why": m.why}
                                     for c, m in p.margins},
                         "runs": [{"run_id": r.run_id, "firmware": r.firmware,
                                   "serial": r.serial, "started": r.started} for r in runs]}}


def figures(c: release_gate.CellAnswer) -> dict:
    """The cell's figures as the gate gave them (None where the gate has none)."""
    return {"method": c.method, "runs_a": c.n_a, "runs_b": c.n_b, "change": c.change,
            "interval_low": c.low, "interval_high": c.high, "margin": c.margin,
            "better": c.better, "holm_p_worse": c.p_worse, "holm_p_better": c.p_better,
            "p_not_worse": c.p_not_worse, "tost_p": c.p_equivalent,
            "runs_a_side_to_add": c.runs_a_side}


def measurement(c: release_gate.CellAnswer, margin) -> dict:
    return {"name": f"{c.name}: B / A - 1", "value": c.change, "unit": "",
            "metadata": figures(c) | {"margin_source": margin.where, "margin_why": margin.why}}


def message(c: release_gate.CellAnswer, margin) -> str:
    def pct(x):
        return "-" if x is None else f"{x * 100:+.2f} %"

    def pv(x):
        return "-" if x is None else f"{x:.3g}"

    interval = "-" if c.low is None else f"{pct(c.low)} .. {pct(c.high)}"
    runs = "-" if c.runs_a_side is None else f"{c.runs_a_side} more a side"
    return (f"{c.name}: {c.verdict} ({c.method}); runs A {c.n_a}, B {c.n_b}; B vs A "
            f"{pct(c.change)}, interval {interval}; margin {margin.percent:g} % "
            f"({margin.where}); Holm p worse {pv(c.p_worse)}, better {pv(c.p_better)}; "
            f"p not worse {pv(c.p_not_worse)}; TOST p {pv(c.p_equivalent)}; runs to add "
            f"{runs}; {c.why}")


def text(p: history_gate.PairGate, h: history.History, command: str = "",
         index: str = "") -> str:
    """The lines, one JSON object per line (as `pts export --ocptv` writes a run's)."""
    return "".join(json.dumps(line) + "\n" for line in lines(p, h, command, index))
