"""--fob-sweep: one informative round of a test's points on the purged, fresh-out-of-box
(FOB) device, before WIPC, so that FOB and steady-state figures of the same cells can be set
side by side (report, `python -m pts export`). Not part of the PTS flow: its records are
`fob_point`, never `point`, so no steady-state check or result ever uses them, and the
sweep is a declared deviation (pts.config.settings)."""

from __future__ import annotations

from collections.abc import Callable

from pts.procedure.rounds import TestPoint, point_record
from pts.results import records
from pts.run import Run

FOB_ROUND = 0   # raw output goes to raw/<test>/round-00/


def sweep(run: Run, test: str, points: list[TestPoint],
          measure: Callable[[list[TestPoint], int], dict[int, dict]]) -> None:
    """One round of the measurable points, measured as a round of the test is."""
    measured = [p for p in points if not p.na_reason]
    run.write(f"[pts {test}] FOB sweep (informative): {len(measured)} points before WIPC")
    found = measure(measured, FOB_ROUND)
    for point in measured:
        run.ledger.append(point_record(records.FobPoint, test, FOB_ROUND, point,
                                       found[point.index]))
