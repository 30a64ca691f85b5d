"""The key figures of a PTS test's outcome as junit properties (name, value): what a CI
system reading pytest's --junitxml sees of a test item (pts.session.plugin records them on the item
with the same mechanism as pytest's `record_property`).

    pts.status          steady / not_steady / complete
    pts.rounds          rounds (WSAT: samples) run
    pts.steady_round    the round steady state was reached at ("" if not reached)
    pts.window          "first..last" rounds of the measurement window
    pts.steady          "true" / "false"
    pts.window_average[LABEL]    per tracking variable: its average over the window
    pts.window_range_pct[LABEL]  its data excursion, % of that average
    pts.window_slope_pct[LABEL]  its slope excursion, % of that average
    pts.run_folder      where the run's data is
"""

from __future__ import annotations

from pathlib import Path

from pts.procedure.rounds import Outcome


def junit_properties(outcome: Outcome, run_folder: Path | None = None) -> list[tuple[str, str]]:
    props = [("pts.status", outcome.status), ("pts.rounds", str(outcome.rounds)),
             ("pts.steady_round", "" if outcome.steady_round is None
              else str(outcome.steady_round)),
             ("pts.window", f"{outcome.window[0]}..{outcome.window[1]}"),
             ("pts.steady", "true" if outcome.steady else "false")]
    for label, ev in sorted(outcome.evidence.items()):
        if ev is None:
            continue
        props.append((f"pts.window_average[{label}]", f"{ev.average:.6g}"))
        if ev.average:
            props.append((f"pts.window_range_pct[{label}]",
                          f"{100 * ev.data_excursion / ev.average:.3f}"))
            props.append((f"pts.window_slope_pct[{label}]",
                          f"{100 * ev.slope_excursion / ev.average:.3f}"))
    if run_folder is not None:
        props.append(("pts.run_folder", str(run_folder)))
    return props
