"""The run's verdict.

Design principle 6: a run is never called compliant when it is not. Any deviation, an
emulated device, a test that did not reach steady state, or a test that did not finish makes
it "NOT A COMPLIANT RUN"; the reasons are listed so the reader sees why. A test that needs no
steady state (WSAT: it runs to 4 fills or 24 h) counts when it is "complete".

Deviations have one source: the runner records each one it causes or finds (run.json for
those the options imply, ledger `deviation` records for the rest); the report lists them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pts.report.model import COMPLETE, STEADY, DeviationView, Device, TestResult, Verdict

COMPLIANT, NOT_COMPLIANT = "COMPLIANT RUN", "NOT A COMPLIANT RUN"


def judge(device: Device, tests: Sequence[TestResult],
          deviations: Sequence[DeviationView]) -> Verdict:
    reasons = []
    if deviations:
        reasons.append(f"{len(deviations)} deviation(s) from the specification (listed)")
    if device.emulated:
        reasons.append("the device under test is emulated, not a real SSD")
    elif device.emulated is None:
        # A run is never called compliant on a guess.
        reasons.append("run.json does not say whether the device under test is emulated")
    if not tests:
        reasons.append("no PTS test result is recorded in the ledger")
    reasons += [f"{t.title}: {t.status}" for t in tests if t.state not in (STEADY, COMPLETE)]
    if reasons:
        return Verdict(False, NOT_COMPLIANT, tuple(reasons))
    return Verdict(True, COMPLIANT, ())
