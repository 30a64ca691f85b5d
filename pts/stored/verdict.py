"""The run's verdict.

Design principle 6: a run is never called compliant when it is not. Any deviation, an
emulated device, a test that did not reach steady state, or a test that did not finish makes
it "NOT A COMPLIANT RUN"; the reasons are listed so the reader sees why. A compliant run
whose values include readings of the spec (values read from implementations, not from the
spec text: pts.config.spec_readings) reads "COMPLIANT RUN — N values are readings of the
specification (page X)", X the page of the report's section listing them. A test that needs no
steady state (WSAT: it runs to 4 fills or 24 h) counts when it is "complete".

Deviations have one source: the runner records each one it causes or finds (run.json for
those the options imply, ledger `deviation` records for the rest); the report lists them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pts.stored.model import COMPLETE, STEADY, DeviationView, Device, TestResult, Verdict

COMPLIANT, NOT_COMPLIANT = "COMPLIANT RUN", "NOT A COMPLIANT RUN"


def judge(device: Device, tests: Sequence[TestResult],
          deviations: Sequence[DeviationView], readings: int = 0) -> Verdict:
    """`readings`: how many values of the run are readings of the spec (pts.stored.readings):
    a compliant run resting on them says so, never a plain "COMPLIANT RUN"."""
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
    if readings:
        return Verdict(True, f"{COMPLIANT} — {readings} values are readings of the "
                             "specification", (), readings)
    return Verdict(True, COMPLIANT, ())


def on_page(v: Verdict, page: int | str | None) -> Verdict:
    """The verdict as a paged report prints it: a compliant run resting on readings points
    to the page of the "Readings of the specification" section."""
    if not (v.compliant and v.readings) or page is None:
        return v
    return dataclasses.replace(v, text=f"{v.text} (page {page})",
                               short=f"{COMPLIANT} — {v.readings} readings (page {page})")
