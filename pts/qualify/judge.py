"""Judge a run against a datasheet (pts.config.datasheet): per requirement met, not met,
error or not checked, with the figure measured and where it comes from. Stored data only.

A requirement is never passed by default: its test did not run, its cell does not exist or
is N/A, the metric was not recorded, the test did not reach steady state or did not finish
-> "error" or "not met" with the reason. A requirement on --power's figures (W, IOPS/W,
MB/s/W) of a test the run recorded no power of is "not checked": the run could not have
answered it, which is no fault of the drive (the pytest item is skipped; `qualify` counts it
as not met).
"""

from __future__ import annotations

from dataclasses import dataclass

from pts.config.datasheet import Requirement
from pts.results import records
from pts.results.parameters import RoundParameters, WsatParameters
from pts.stored import fmt, latency_qos
from pts.stored import power as stored_power
from pts.stored.cells import cells, fob
from pts.stored.figures import datasheet_vocabulary
from pts.stored.model import COMPLETE, NOT_STEADY, STEADY, RunView, TestResult
from pts.testdefs.qos_levels import needed_ios

MET, NOT_MET, ERROR, NOT_CHECKED = "met", "not met", "error", "not checked"
NO_POWER = "no power source was recorded (--power)"


@dataclass(frozen=True)
class Judgement:
    requirement: Requirement
    verdict: str                  # MET, NOT_MET, ERROR
    measured: float | None
    text: str                     # "measured M, required >= R (cell, test, window rounds a..b)"

    @property
    def met(self) -> bool:
        return self.verdict == MET


def judge_all(run: RunView, requirements) -> list[Judgement]:
    return [judge(run, r) for r in requirements]


def judge(run: RunView, req: Requirement) -> Judgement:
    test = next((t for t in run.tests if t.name == req.test), None)
    if test is None:
        ran = ", ".join(t.name for t in run.tests) or "none"
        return Judgement(req, ERROR, None, f"test {req.test} did not run in run {run.run_id} "
                                           f"(tests run: {ran})")
    if test.state not in (STEADY, NOT_STEADY, COMPLETE):
        return Judgement(req, ERROR, None, f"{req.test} did not finish: {test.status}")
    if req.metric in stored_power.FIELDS and not test.records_of(records.PointPower):
        return Judgement(req, NOT_CHECKED, None, _no_power(run, req.test))
    measured, where, problem = _measure(test, req)
    if problem:
        return Judgement(req, ERROR, None, problem)
    unit = "samples" if test.samples else "rounds"
    window = "no window" if test.window is None else \
        f"window {unit} {test.window[0]}..{test.window[1]}"
    text = (f"measured {fmt.num(measured)}, required {req.op} {fmt.num(req.value)} "
            f"({where}, {req.test}, {window})")
    if test.state == NOT_STEADY:
        return Judgement(req, NOT_MET, measured,
                         f"{req.test} did not reach steady state ({test.status}); {text}")
    return Judgement(req, MET if req.met_by(measured) else NOT_MET, measured, text)


def _no_power(run: RunView, test: str) -> str:
    """Why a test has no power figure: no --power, its sources not started, or none of its
    points measured with one."""
    sources = run.records_of(records.PowerSourceInfo)
    if not sources:
        return NO_POWER
    failed = [s for s in sources if s.error]
    if len(failed) == len(sources):
        return f"{NO_POWER}: " + "; ".join(f"{s.name} could not be started ({s.error})"
                                           for s in failed)
    return (f"no point of {test} was measured with a power source (sources of the run: "
            f"{', '.join(s.name for s in sources if not s.error)})")


def _measure(test: TestResult, req: Requirement) -> tuple[float | None, str, str | None]:
    """(value, where it comes from, problem or None)."""
    if req.metric == "ss_iops" or (req.metric == "fob_ss_ratio" and test.samples):
        key = "ss_average" if req.metric == "ss_iops" else "fob_ss_ratio"
        value = test.result.get(key)
        if value is None:
            return None, "", f"{req.test} holds no {key} (no wsat_result record)"
        return float(value), "whole test", None
    if req.metric == "fob_ss_ratio":
        found = {f["label"]: f for f in fob(test)}
        if req.cell not in found:
            return None, "", (f"no FOB figure for cell {req.cell!r} in {req.test} (FOB figures "
                              "need --fob-sweep; cells with one: "
                              f"{', '.join(found) or 'none'})")
        ratio = found[req.cell]["fob_ss_ratio"]
        if ratio is None:
            return None, "", f"cell {req.cell}: no steady-state IOPS to divide by"
        return ratio, req.cell, None
    by_label = {c["label"]: c for c in cells(test)}
    cell = by_label.get(req.cell)
    if cell is None:
        return None, "", (f"no cell {req.cell!r} in {req.test} (cells: "
                          f"{', '.join(by_label) or 'none'})")
    if cell["na"]:
        return None, "", f"cell {req.cell} is N/A: {cell['reason']}"
    metric = req.metric
    if metric == "lat_p99999_us":
        pct = _percentile(test)
        if pct is not None and float(pct) != 99.999:
            return None, "", f"{req.test} recorded the {pct} % percentile, not 99.999 %"
        metric = "lat_percentile_us"
    if metric == "lat_percentile_us" and _percentile(test) is not None:
        pct = float(_percentile(test))   # never the slowest I/O as a level
        if (cell["rw_mix"], cell["block_size"]) in latency_qos.short_cells(test, pct):
            return None, "", (f"cell {req.cell}: the {pct:g} % response time is not resolvable"
                              f" (a window point completed fewer than {needed_ios(pct):,} "
                              "I/Os; longer --point-seconds resolve it)")
    value = cell["metrics"].get(metric)
    if value is None:
        points = datasheet_vocabulary().point_metrics
        have = sorted(k for k in cell["metrics"] if k in points)
        return None, "", (f"{req.test} did not record {metric} for cell {req.cell} "
                          f"(recorded: {', '.join(have) or 'none'})")
    return value, req.cell, None


def _percentile(test: TestResult) -> float | None:
    """The latency percentile the test recorded (Latency, WSAT; None: another family)."""
    p = test.typed
    return p.percentile if isinstance(p, RoundParameters | WsatParameters) else None
